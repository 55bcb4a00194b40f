"""The compact network's reader: the vector env's compact observation (``obs_format="compact"``, the ``COMPACT_DOC`` of
each game's kernel module) as token ids and a few scaled counts, in numpy (no torch).

A *token* is one categorical fact at one place: the shape on board cell 12, the arms of cell 12 that reach the
start, "event row 3 was a PLAY by seat offset 2", the role. Each place has its own vocabulary, so the network's
first layer is a sum of embedding rows (one per token) plus a small dense layer over the counts (hand, seat table,
deck sizes), the same function class as a dense layer over the one-hot float observation, at a cost that grows
with the number of tokens (~50-150) instead of the float observation's size (~2,600-3,400).

A token's value is its place's reference value (an empty cell, no reached arm, an unused event row, an unknown
role) is *no token* (id -1): the first layer's bias stands for it, so the sum runs over the facts that are there.
Two sub-fields may share one token (an event's type with its actor): a product vocabulary.

:meth:`CompactReader.pack` writes the network input of a batch: ``dense`` scaled counts, then ``tokens`` ids (as
float32, exact below 2**24), then the head index (the role; 0 without roles), ``D + K + 1`` floats per row.
:func:`compress_base` rebuilds a base game's compact observation from its float one (the learned agent sees floats).
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numba
import numpy as np
from numpy.typing import NDArray

from saboteur_env import GameConfig, observation_layout

READER_VERSION = 1  # bump when the token or dense layout changes: files record it and are refused otherwise
_ALL = 15  # bits of a whole int16 field


class CompactReader:
    """Token and dense layout of one configuration's compact observation (see the module doc)."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self._f: list[tuple[int, int, int, int, int, int, int, int, int]] = []
        self.num_tokens = 0
        self._dense: list[tuple[int, float]] = []
        self.role_col, self.num_roles = -1, 1
        lay = observation_layout(config)
        self._high = np.asarray(lay.high, dtype=np.float64)
        self._slices = lay.slices
        {"base": self._base, "sab2": self._sab2, "duel": self._duel}[config.game]()
        f = np.array(self._f, dtype=np.int64).reshape(-1, 9).T
        self.c1, self.sh1, self.m1, self.mx1, self.skip, self.c2, self.sh2, self.m2, self.mx2 = f
        self.n2 = np.where(self.c2 >= 0, self.mx2 + 2, 1)
        sizes = (self.mx1 + 1) * self.n2
        self.offset = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        self.num_tokens = int(sizes.sum())
        self.dense_cols = np.array([c for c, _ in self._dense], dtype=np.int64)
        self.dense_scale = np.array([s for _, s in self._dense], dtype=np.float32)
        self.num_places, self.num_dense = len(self._f), len(self._dense)
        self.width = self.num_dense + self.num_places + 1  # the packed row

    # ---- layout builders -------------------------------------------------------------------------------------------
    def tok(self, col: int, mx: int, *, bits: int = _ALL, shift: int = 0, skip: int = -1, col2: int = -1,
            mx2: int = 0, bits2: int = _ALL, shift2: int = 0) -> None:  # fmt: skip
        """One place: value ``min((c[col] >> shift) & mask, mx)``, none when negative or ``skip`` (with no second
        value); ``col2``: a second sub-field (0 = negative, else 1 + its value), a product vocabulary."""
        self._f.append((col, shift, (1 << bits) - 1, mx, skip, col2, shift2, (1 << bits2) - 1, mx2))

    def dense(self, col: int, n: int, name: str, at: int = 0) -> None:
        """``n`` count columns from ``col``, scaled like the float layout's ``name`` slice (from entry ``at``)."""
        sl = self._slices[name]
        assert isinstance(sl, slice)
        high = self._high[sl.start + at : sl.start + at + n]
        self._dense += [(col + i, float(1.0 / h) if h > 0 else 1.0) for i, h in enumerate(high)]

    def _history(self, src: int, width: int, rows: int, p: int, kinds: int, hw: int) -> None:
        for i in range(rows):
            e = src + width * i
            if width == 6:  # (type, actor offset, kind, target offset, cell, arg)
                self.tok(e, 31, col2=e + 1, mx2=p - 1)
                self.tok(e + 2, kinds, col2=e + 3, mx2=p - 1)
                # cell 0 is no token: the float observation's history row cannot tell it from "no cell"
                self.tok(e + 4, hw - 1, skip=0)
                self.tok(e + 5, 63)
            else:  # the Duel: (type, actor is me, kind, cell, arg)
                self.tok(e, 31, col2=e + 1, mx2=1)
                self.tok(e + 2, kinds)
                self.tok(e + 3, hw - 1, skip=0)
                self.tok(e + 4, 63)

    def _base(self) -> None:
        cfg = self.config
        p, hw, L = cfg.num_players, cfg.num_cells, cfg.history_length
        for c in range(hw):
            self.tok(c, 63, bits=6, skip=0)  # 0 empty, 1 face-down goal, 2 + shape id
            self.tok(c, 63, bits=6, shift=6, skip=0)  # reached arms (4 bits), peeked gold, stone
        self.role_col, self.num_roles = hw, 2
        self.tok(hw, 1)
        src = hw + 1
        self.dense(src, 27, "hand")
        self.dense(src + 27, 11 * p, "seats")
        s = src + 27 + 11 * p
        self.dense(s, 1, "deck_size")
        self.dense(s + 1, 1, "gold_deck_size")
        self.tok(s + 2, 2)
        self.tok(s + 3, p - 1)
        self.dense(s + 4, 1, "my_nuggets")
        self.dense(s + 5, 1, "event_count")
        self._history(s + 6, 6, L, p, 31, hw)

    def _sab2(self) -> None:
        cfg = self.config
        p, hw, L = cfg.num_players, cfg.num_cells, cfg.history_length
        for c in range(hw):
            self.tok(c, 119, bits=7, skip=118)  # shape id, 118 empty, 119 face-down goal
            self.tok(c, 63, bits=6, shift=7, skip=0)  # reached arms, peeked gold, stone
        self.role_col, self.num_roles = hw, 6
        self.tok(hw, 5)
        self.dense(hw + 1, 55, "hand")
        self.dense(hw + 56, 14 * p, "seats")
        s = hw + 56 + 14 * p
        for c in range(s, s + 2 * p):  # the role I saw at each seat offset; roles revealed at the last round end
            self.tok(c, 5)
        for c in range(s + 2 * p, s + 3 * p):  # who inspected whom this round (bits)
            self.tok(c, (1 << p) - 1, bits=p, skip=0)
        st = s + 3 * p
        self.dense(st, 3, "status")  # deck, reserve, thieves pending
        self.tok(st + 3, 2)  # round (2: third or later)
        self.tok(st + 4, p - 1)  # seat offset to act
        self.tok(st + 5, 3)  # phase
        self.dense(st + 6, 1, "status", at=10 + p)  # my pending discards
        self.tok(st + 7, p - 1)  # my option C target
        self._history(st + 8, 6, L, p, 63, hw)

    def _duel(self) -> None:
        cfg = self.config
        hw, L = cfg.num_cells, cfg.history_length
        for c in range(hw):
            self.tok(2 * c, 118, bits=7, skip=118)  # shape id, 118 no card
            self.tok(2 * c, 31, bits=5, shift=7, skip=0)  # key, counter (2 bits), face-down, revealed goal
            self.tok(2 * c + 1, 255, bits=8, skip=0)  # arms I reach, arms the opponent reaches
        src = 2 * hw
        self.dense(src, 39, "hand")
        src += 39
        for c in range(src, src + 6):  # the goal I saw on each slot
            self.tok(c, 17)
        src += 6
        self.tok(src, 63, bits=6, skip=0)  # slots peeked by me / the opponent
        self.tok(src + 1, 63, bits=6, skip=0)
        self.tok(src + 2, 7, bits=3, skip=0)  # broken tools, me / the opponent
        self.tok(src + 3, 7, bits=3, skip=0)
        src += 4
        for name, n in (("hand_sizes", 2), ("supply", 4), ("nuggets", 2), ("pile_cards", 2)):
            self.dense(src, n, name)
            src += n
        self.tok(src, 2)  # round
        self.tok(src + 1, 1)  # I am to act
        self.tok(src + 2, 1)  # my colour is green
        self._history(src + 3, 5, L, 2, 63, hw)

    # ---- reading ---------------------------------------------------------------------------------------------------
    def tokens(self, compact: NDArray[np.integer]) -> NDArray[np.int64]:
        """Token ids (batch x places), -1 where a place holds its reference value."""
        c = np.asarray(compact)
        c = c.reshape(1, -1) if c.ndim == 1 else c
        v1 = c[:, self.c1].astype(np.int64)
        s1 = np.minimum((v1 >> self.sh1) & self.m1, self.mx1)
        has2 = self.c2 >= 0
        v2 = c[:, np.where(has2, self.c2, 0)].astype(np.int64)
        s2 = np.where(has2 & (v2 >= 0), np.minimum((v2 >> self.sh2) & self.m2, self.mx2) + 1, 0)
        tok = self.offset + s1 * self.n2 + s2
        none = (v1 < 0) | ((s1 == self.skip) & (s2 == 0))
        return np.where(none, -1, tok)

    def counts(self, compact: NDArray[np.integer]) -> NDArray[np.float32]:
        c = np.asarray(compact)
        c = c.reshape(1, -1) if c.ndim == 1 else c
        return c[:, self.dense_cols].astype(np.float32) * self.dense_scale

    def heads(self, compact: NDArray[np.integer]) -> NDArray[np.int64]:
        """The head of each row: its role with roles, else 0."""
        c = np.asarray(compact)
        c = c.reshape(1, -1) if c.ndim == 1 else c
        if self.role_col < 0:
            return np.zeros(c.shape[0], dtype=np.int64)
        return c[:, self.role_col].astype(np.int64)

    def pack(self, compact: NDArray[Any], out: NDArray[np.float32] | None = None) -> NDArray[np.float32]:
        """The network input (batch x ``width``): counts, token ids, head index; into ``out`` when given. One
        compiled pass (the numpy of :meth:`tokens`, :meth:`counts`, :meth:`heads` cost more than the network's
        forward at 256 rows); tested equal to them."""
        c = np.asarray(compact)
        c = np.ascontiguousarray(c.reshape(1, -1) if c.ndim == 1 else c, dtype=np.int16)
        if out is None:
            out = np.empty((c.shape[0], self.width), dtype=np.float32)
        _pack(c, self._table, self.dense_cols, self.dense_scale, self.role_col, out)
        return out

    @property
    def _table(self) -> NDArray[np.int64]:
        if not hasattr(self, "_tab"):
            self._tab = np.ascontiguousarray(
                np.stack(
                    [
                        self.c1,
                        self.sh1,
                        self.m1,
                        self.mx1,
                        self.skip,
                        self.c2,
                        self.sh2,
                        self.m2,
                        self.mx2,
                        self.n2,
                        self.offset,
                    ],
                    axis=1,
                )
            )
        return self._tab

    def header(self) -> dict[str, int]:
        """The sizes a policy file records (checked against the reader of the game it is loaded for)."""
        return {"reader_version": READER_VERSION, "num_tokens": self.num_tokens, "num_places": self.num_places,
                "num_dense": self.num_dense, "num_roles": self.num_roles}  # fmt: skip


@numba.njit(cache=True, nogil=True)
def _pack(c: Any, tab: Any, dcols: Any, dscale: Any, role_col: int, out: Any) -> None:  # pragma: no cover
    d, k = dcols.shape[0], tab.shape[0]
    for b in range(c.shape[0]):
        for i in range(d):
            out[b, i] = c[b, dcols[i]] * dscale[i]
        for i in range(k):
            v1 = np.int64(c[b, tab[i, 0]])
            tok = -1
            if v1 >= 0:
                s1 = min((v1 >> tab[i, 1]) & tab[i, 2], tab[i, 3])
                s2 = 0
                if tab[i, 5] >= 0:
                    v2 = np.int64(c[b, tab[i, 5]])
                    if v2 >= 0:
                        s2 = min((v2 >> tab[i, 6]) & tab[i, 7], tab[i, 8]) + 1
                if not (s1 == tab[i, 4] and s2 == 0):
                    tok = tab[i, 10] + s1 * tab[i, 9] + s2
            out[b, d + i] = tok
        out[b, d + k] = c[b, role_col] if role_col >= 0 else 0


@cache
def reader(config: GameConfig) -> CompactReader:
    return CompactReader(config)


@cache
def _base_cell_codes(config: GameConfig) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """Each cell code's 26 binary float planes packed as bits, sorted, and the (smallest) code of each pattern."""
    from saboteur_env.base.kernels import NO_SHAPE, expand_compact

    codes = np.arange(1 << 12, dtype=np.int64)
    codes = codes[(codes & 63) < NO_SHAPE + 2]
    c = np.zeros((codes.size, _base_compact_size(config)), dtype=np.int16)
    c[:, 0] = codes
    hw = config.num_cells
    planes = expand_compact(c, config)[:, : 26 * hw].reshape(codes.size, 26, hw)[:, :, 0]
    keys = (planes > 0.5).astype(np.int64) @ (1 << np.arange(26, dtype=np.int64))
    keys, first = np.unique(keys, return_index=True)  # codes ascend: the first is the smallest
    return keys, codes[first]


def _base_compact_size(config: GameConfig) -> int:
    p, hw = config.num_players, config.num_cells
    return hw + 1 + 27 + 11 * p + 6 + 6 * config.history_length


def compress_base(obs: NDArray[np.float32], config: GameConfig) -> NDArray[np.int16]:
    """A base game's compact observation(s) rebuilt from float one(s): the inverse of ``expand_compact``."""
    from saboteur_env.base.kernels import rowcol_table

    x = np.atleast_2d(np.asarray(obs, dtype=np.float32))
    p, hw, L = config.num_players, config.num_cells, config.history_length
    n = x.shape[0]
    out = np.full((n, _base_compact_size(config)), -1, dtype=np.int16)
    keys, codes = _base_cell_codes(config)
    board = x[:, : 26 * hw].reshape(n, 26, hw).transpose(0, 2, 1)  # (n, hw, 26), binary
    key = (board > 0.5).astype(np.int64) @ (1 << np.arange(26, dtype=np.int64))
    out[:, :hw] = codes[np.minimum(np.searchsorted(keys, key), keys.size - 1)]
    pos, src = 26 * hw, hw
    out[:, src] = x[:, pos : pos + 2].argmax(axis=1)
    pos, src = pos + 2, src + 1
    out[:, src : src + 27 + 11 * p] = np.rint(x[:, pos : pos + 27 + 11 * p])
    pos, src = pos + 27 + 11 * p, src + 27 + 11 * p
    out[:, src] = np.rint(x[:, pos])
    out[:, src + 1] = np.rint(x[:, pos + 1])
    out[:, src + 2] = x[:, pos + 2 : pos + 5].argmax(axis=1)
    out[:, src + 3] = x[:, pos + 5 : pos + 5 + p].argmax(axis=1)
    out[:, src + 4] = np.rint(x[:, pos + 5 + p])
    out[:, src + 5] = np.rint(x[:, pos + 6 + p])
    pos, src = pos + 7 + p, src + 6
    rowcol = rowcol_table(config)
    f = 73 + 2 * p
    for i in range(L):
        row = x[:, pos + i * f : pos + (i + 1) * f]
        ev = out[:, src + 6 * i : src + 6 * i + 6]
        ok = row[:, 0] > 0.5
        one = [(1, 9), (9, 9 + p), (9 + p, 40 + p), (40 + p, 40 + 2 * p), (42 + 2 * p, f)]
        vals = [np.where(row[:, a:b].max(axis=1) > 0.5, row[:, a:b].argmax(axis=1), -1) for a, b in one]
        d = ((row[:, None, 40 + 2 * p : 42 + 2 * p] - rowcol[None]) ** 2).sum(axis=2)
        cell = np.where(np.abs(row[:, 40 + 2 * p : 42 + 2 * p]).sum(axis=1) > 0, d.argmin(axis=1), -1)
        for j, v in zip((0, 1, 2, 3, 5), vals, strict=True):
            ev[:, j] = np.where(ok, v, -1)
        ev[:, 4] = np.where(ok, cell, -1)
    return out
