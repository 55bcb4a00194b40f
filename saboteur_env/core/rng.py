"""numpy's PCG64 generator and ``Generator.permutation`` inside numba kernels, bit-exact.

The set-up of a game is drawn inside the compiled core from the same stream as the reference engine's
``rng.permutation`` calls, so a seed gives the same game everywhere. A generator is six ``uint64`` words:

=====  ==============================================================
word   meaning
=====  ==============================================================
0, 1   the 128-bit LCG state (high, low)
2, 3   the 128-bit increment (high, low)
4      ``has_uint32``: the upper half of the last 64-bit draw is buffered
5      ``uinteger``: that buffered half
=====  ==============================================================

``next64`` is PCG64's XSL-RR output of the advanced state (numpy's multiplier); ``next32`` reproduces numpy's
buffering of 32-bit draws; ``interval`` is numpy's masked rejection sampler (``random_interval``); ``shuffle`` is
Fisher-Yates from the end, what ``Generator.shuffle`` and ``Generator.permutation`` do for 1-D input. NEP 19 lets
numpy change its streams between versions: :func:`self_check` compares this port with the installed numpy, and
the core falls back to drawing the set-up with numpy calls when it fails (``tests/test_core_rng.py`` runs both).

These are helpers (``core.jit``): only kernels call them (they have no Python wrapper and are compiled into the
kernels that use them, not cached on their own).
"""

from __future__ import annotations

import functools

import numba as nb
import numpy as np
from numpy.typing import NDArray

from saboteur_env.core.jit import helper, inline_helper

MUL_HI = np.uint64(2549297995355413924)  # numpy's 128-bit PCG64 multiplier, high and low words
MUL_LO = np.uint64(4865540595714422341)
M32 = np.uint64(0xFFFFFFFF)
U32 = np.uint64(32)
ONE = np.uint64(1)
MASK64 = (1 << 64) - 1


@inline_helper
def _mul64(a: np.uint64, b: np.uint64) -> tuple[np.uint64, np.uint64]:
    """64 x 64 -> 128-bit product as (high, low)."""
    a_lo, a_hi, b_lo, b_hi = a & M32, a >> U32, b & M32, b >> U32
    p0, p1, p2, p3 = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    mid = (p0 >> U32) + (p1 & M32) + (p2 & M32)
    lo = (p0 & M32) | ((mid & M32) << U32)
    hi = p3 + (p1 >> U32) + (p2 >> U32) + (mid >> U32)
    return hi, lo


@inline_helper
def next64(w: NDArray[np.uint64], b: int) -> np.uint64:
    """Advance the LCG of generator ``w[b]`` (state = state * MUL + inc mod 2^128) and return XSL-RR of the new
    state. Generators are rows of a 2-D array indexed here: a row view per call costs atomic reference counts."""
    hi, lo = _mul64(w[b, 1], MUL_LO)
    hi = hi + w[b, 1] * MUL_HI + w[b, 0] * MUL_LO
    lo2 = lo + w[b, 3]
    w[b, 0] = hi + w[b, 2] + (ONE if lo2 < lo else np.uint64(0))
    w[b, 1] = lo2
    x = w[b, 0] ^ w[b, 1]
    rot = w[b, 0] >> np.uint64(58)
    return (x >> rot) | (x << ((np.uint64(64) - rot) & np.uint64(63)))


@inline_helper
def next32(w: NDArray[np.uint64], b: int) -> np.uint64:
    """numpy's 32-bit draw: the low half of a 64-bit draw, its high half buffered for the next call."""
    if w[b, 4]:
        w[b, 4] = 0
        return w[b, 5]
    v = next64(w, b)
    w[b, 4] = 1
    w[b, 5] = v >> U32
    return v & M32


@helper
def interval_at(w: NDArray[np.uint64], b: int, mx: int) -> np.int64:
    """A uniform integer in ``0..mx`` (mx < 2^32) from generator ``w[b]``, numpy's masked rejection on 32-bit
    draws."""
    if mx == 0:
        return np.int64(0)  # int64 throughout: numba unifies int64 with uint64 as float64
    mask = np.uint64(mx)
    mask |= mask >> np.uint64(1)
    mask |= mask >> np.uint64(2)
    mask |= mask >> np.uint64(4)
    mask |= mask >> np.uint64(8)
    mask |= mask >> np.uint64(16)
    while True:
        v = next32(w, b) & mask
        if v <= np.uint64(mx):
            return np.int64(v)


@helper
def interval(st: NDArray[np.uint64], mx: int) -> np.int64:
    """``interval_at`` of one generator's six words."""
    return interval_at(st.reshape((1, 6)), 0, mx)


@helper
def shuffle(st: NDArray[np.uint64], arr: NDArray[np.int8]) -> None:
    """In place, the same result as ``Generator.shuffle(arr)`` / ``arr[:] = Generator.permutation(arr)``."""
    w = st.reshape((1, 6))
    for i in range(arr.shape[0] - 1, 0, -1):
        j = interval_at(w, 0, i)
        t = arr[i]
        arr[i] = arr[j]
        arr[j] = t


def words_of(rng: np.random.Generator) -> NDArray[np.uint64]:
    """The six words of a PCG64 ``Generator`` (``ValueError`` for another bit generator)."""
    s = rng.bit_generator.state
    if s.get("bit_generator") != "PCG64":
        raise ValueError(f"bit generator {s.get('bit_generator')!r} is not PCG64")
    st, inc = int(s["state"]["state"]), int(s["state"]["inc"])
    return np.array(
        [st >> 64, st & MASK64, inc >> 64, inc & MASK64, int(s["has_uint32"]), int(s["uinteger"])], dtype=np.uint64
    )


def set_words(rng: np.random.Generator, w: NDArray[np.uint64]) -> None:
    """Write six words back into a PCG64 ``Generator`` (it then continues exactly where the kernel stopped)."""
    rng.bit_generator.state = {
        "bit_generator": "PCG64",
        "state": {"state": (int(w[0]) << 64) | int(w[1]), "inc": (int(w[2]) << 64) | int(w[3])},
        "has_uint32": int(w[4]),
        "uinteger": int(w[5]),
    }


def seed_words(seeds: NDArray[np.int64] | list[int]) -> NDArray[np.uint64]:
    """``(len(seeds), 6)`` words of ``np.random.default_rng(seed)`` for each seed."""
    return np.stack([words_of(np.random.default_rng(int(s))) for s in seeds])


@nb.njit(cache=True, nogil=True)
def _check_kernel(words: NDArray[np.uint64], n: int, out: NDArray[np.int8]) -> None:
    for k in range(out.shape[0]):
        for i in range(n):
            out[k, i] = i % 127
        shuffle(words, out[k, :n])


@functools.cache
def self_check() -> bool:
    """True when this port reproduces the installed numpy's ``permutation`` stream (checked once per process)."""
    rng = np.random.default_rng(20261201)
    words = words_of(rng)
    out = np.zeros((4, 67), dtype=np.int8)
    _check_kernel(words, 67, out)
    expected = np.stack([rng.permutation(np.arange(67, dtype=np.int8) % 127) for _ in range(4)])
    return bool(np.array_equal(out, expected) and np.array_equal(words, words_of(rng)))
