"""Kernels every game's core shares: the action check against a mask and the uniform legal-action sampler."""

from __future__ import annotations

import numba as nb
import numpy as np

from saboteur_env.common.errors import ActionError
from saboteur_env.core import rng as crng
from saboteur_env.core.jit import helper, inline_helper, kernel


@nb.njit(cache=True, nogil=True)
def check(mask, actions, num_actions, b0, b1):
    """The first slot whose action is out of range or not set in its ``mask`` row, or -1."""
    for b in range(b0, b1):
        a = actions[b]
        if a < 0 or a >= num_actions or mask[b, a] == 0:
            return b
    return -1


@kernel
def sample(mask, num_legal, words, b0, b1, out):
    """A uniform legal action per slot from int8 ``mask`` rows (padded to whole 8-byte words) with each slot's
    own generator words; -1 where nothing is legal."""
    rows = mask.view(np.uint64)  # one (B, nw) view for the call: a view per slot costs atomic reference counts
    for b in range(b0, b1):
        n = num_legal[b]
        if n <= 0:
            out[b] = -1
            continue
        out[b] = kth_legal(mask, rows, b, crng.interval_at(words, b, n - 1))


@kernel
def sample_listed(lst, mask, num_legal, words, b0, b1, out):
    """``sample`` (the same draws, the same actions) on a lock-step's own mask rows whose legal actions the game
    keeps as a sorted list (``lst[b]``: ``[0]`` 1 + their count, 0 unknown; see :func:`keep_list`): the ``k``-th
    legal action is the list's ``k``-th entry, no mask byte is read."""
    rows = mask.view(np.uint64)
    for b in range(b0, b1):
        n = num_legal[b]
        if n <= 0:
            out[b] = -1
            continue
        k = crng.interval_at(words, b, n - 1)
        out[b] = lst[b, 1 + k] if lst[b, 0] == n + 1 else kth_legal(mask, rows, b, k)


@helper
def clear_rows(masks, words, lst, b0, b1, incremental):
    """Clear mask rows ``b0..b1`` before they are written: with ``incremental`` (the lock-step's own buffer) and a
    known list only the actions listed (those set last time), otherwise the whole row, word by word. One call per
    range: a call per row would pay reference counts for its three arrays per row."""
    for b in range(b0, b1):
        if incremental and lst[b, 0] > 0:
            for i in range(lst[b, 0] - 1):
                masks[b, lst[b, 1 + i]] = 0
        else:
            for w in range(words.shape[1]):
                words[b, w] = 0
        if incremental:
            lst[b, 0] = 1  # an empty list, until keep_list


@inline_helper
def keep_list(lst, b, pos, n, incremental):
    """With ``incremental``: keep the ``n`` actions set in row ``b`` (``pos``, in the order they were set) as its
    sorted list, or mark it unknown when more than the list holds."""
    if not incremental:
        return
    if n > lst.shape[1] - 1:
        lst[b, 0] = 0
        return
    for i in range(n):  # insertion sort: the actions are set nearly in order
        a = pos[i]
        j = i
        while j > 0 and lst[b, j] > a:
            lst[b, j + 1] = lst[b, j]
            j -= 1
        lst[b, j + 1] = a
    lst[b, 0] = n + 1


@helper
def kth_legal(mask, rows, b, k):
    """The index of the ``k``-th (from 0) legal byte of ``mask[b]`` (``rows``: the mask as uint64 words). Counts
    legal bytes word by word (each byte is 0 or 1)."""
    nw = rows.shape[1]
    w = 0
    # Eight words (64 actions) at a time while the k-th legal action lies beyond them: per byte the sum of
    # eight 0/1 bytes is at most 8 (64 in all), so one multiply adds all 64 bytes without carries between them.
    while w + 8 <= nw:
        octet = (rows[b, w] + rows[b, w + 1] + rows[b, w + 2] + rows[b, w + 3] + rows[b, w + 4] + rows[b, w + 5]
                 + rows[b, w + 6] + rows[b, w + 7])  # fmt: skip
        if octet == 0:
            w += 8
            continue
        cnt = int((octet * np.uint64(0x0101010101010101)) >> np.uint64(56))
        if k < cnt:
            break
        k -= cnt
        w += 8
    while w < nw:
        if rows[b, w] == 0:
            w += 1
            continue
        cnt = int((rows[b, w] * np.uint64(0x0101010101010101)) >> np.uint64(56))
        if k < cnt:
            break
        k -= cnt
        w += 1
    i = w * 8
    while True:
        if mask[b, i]:
            if k == 0:
                break
            k -= 1
        i += 1
    return i


@nb.njit(cache=True, nogil=True)
def pack_bits(mask, num_actions, out):
    """``np.packbits(mask[:, :num_actions], axis=1, bitorder="little")`` for int8 0/1 rows padded to whole 8-byte
    words (bytes past ``num_actions`` are 0): one multiply gathers the eight 0/1 bytes of a word into one byte."""
    nbytes = (num_actions + 7) // 8
    for b in range(mask.shape[0]):
        row = mask[b].view(np.uint64)
        for j in range(nbytes):
            out[b, j] = np.uint8(((row[j] * np.uint64(0x0102040810204080)) >> np.uint64(56)) & np.uint64(0xFF))


@nb.njit(cache=True, nogil=True)
def nonzero_flat(flat, width, rows, cols):
    """``np.nonzero`` of a C-ordered ``(M, width)`` 0/1 byte array given as its flat bytes: the row and column of
    every nonzero entry, row-major, into ``rows``/``cols`` (sized by the caller with ``np.count_nonzero``). Skips
    zero 8-byte words (a mask row holds a dozen legal actions among hundreds). Returns the count written."""
    n8 = flat.size // 8
    words = flat[: n8 * 8].view(np.uint64)
    k = 0
    for w in range(n8):
        if words[w] == 0:
            continue
        for i in range(w * 8, w * 8 + 8):
            if flat[i]:
                r = i // width
                rows[k] = r
                cols[k] = i - r * width
                k += 1
    for i in range(n8 * 8, flat.size):
        if flat[i]:
            r = i // width
            rows[k] = r
            cols[k] = i - r * width
            k += 1
    return k


_TOP63 = (1 << 63) - 1
# Bit generators whose ``random_raw()`` gives 64 uniform bits (MT19937's gives 32: it draws with ``integers``).
RAW64 = (np.random.PCG64, np.random.PCG64DXSM, np.random.Philox, np.random.SFC64)


@nb.njit(cache=True, nogil=True)
def _pick(mask, raw):
    """The ``raw % n``-th non-zero entry of a 1-D mask with ``n`` non-zero entries, given 63 uniform random bits
    ``raw`` (a Python int below 2**63, typed int64): -1 when ``n`` is 0, -2 when ``raw`` falls in the top
    ``2**63 % n`` values (draw again: ``raw % n`` is then exactly uniform). With ``raw < n`` it is the ``raw``-th."""
    n = 0
    for i in range(mask.shape[0]):
        n += mask[i] != 0
    if n == 0:
        return -1
    rem = (_TOP63 % n + 1) % n  # 2**63 mod n, in int64
    if raw > _TOP63 - rem:
        return -2
    k = raw % n
    for i in range(mask.shape[0]):
        if mask[i]:
            if k == 0:
                return i
            k -= 1
    return -1


def sample_legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random legal action of one mask (bool or int8 0/1, e.g. ``obs["action_mask"]``): a cheap
    replacement for ``np.flatnonzero(mask)[rng.integers(...)]``. Exactly uniform: with a 64-bit bit generator
    (numpy's default PCG64, PCG64DXSM, Philox, SFC64) 63 of its raw bits reduced modulo the number of legal actions,
    drawing again in the (vanishingly rare) partial top block; with any other, ``rng.integers``.

    Raises ``ActionError`` (a ``ValueError``) when nothing is legal.
    """
    m = mask if type(mask) is np.ndarray else np.asarray(mask)
    if m.ndim != 1:
        raise ActionError(f"mask must be 1-D, got shape {m.shape}")
    if m.dtype != np.int8:
        m = m.view(np.int8) if m.dtype == np.bool_ or m.dtype == np.uint8 else (m != 0).view(np.int8)
    bits = rng.bit_generator
    if isinstance(bits, RAW64):
        while True:
            a = int(_pick(m, bits.random_raw() >> 1))
            if a != -2:
                break
    else:
        n = int(np.count_nonzero(m))
        a = int(_pick(m, int(rng.integers(n)))) if n else -1
    if a < 0:
        raise ActionError("no legal action in the mask")
    return a
