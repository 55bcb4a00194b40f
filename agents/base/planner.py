"""Multi-step route planning for the base game, from public information and one seat's cards.

The planner measures how far the tunnel is from each goal in **placements still needed**, honouring edge matching
with the cards already in the maze and the path cards that can still turn up (the seat's hand plus the unseen
cards: the deck minus what is public and what the seat holds or discarded). It works on *arm states*: state
``4 * cell + e`` is an open tunnel arm on ``cell`` pointing in direction ``e`` (N, E, S, W). From an arm facing an
empty cell, one placement continues through any pair of arms that some still-available card joins in one tunnel
(and that matches the cell's maze neighbours); from an arm facing a maze card, the tunnel continues for free
through that card's tunnel. A goal is reached from an arm facing its face-down card.

:func:`cost_to_go` is that search run backwards from the goals for every arm state at once (a vectorised
Bellman iteration; a few hundred states), so the distance of the board is the minimum over its connected arms, and
a candidate placement is first scored cheaply from the same table (:func:`placement_estimates`) and then, for the
few best, exactly on the board after the placement (:func:`board_distance`). Results are memoised per board.

Everything here reads only the public maze, the seat's own cards and card counts: no hidden state.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
from numpy.typing import NDArray

from saboteur_env import GameConfig
from saboteur_env.base.cards import NUM_DECK_KINDS, NUM_PATH_KINDS, PLACEABLE, SHAPE_ID, SHAPE_OPEN, SHAPES, deck_counts
from saboteur_env.common.geometry import geometry

INF = 99
OPP = np.array([2, 3, 0, 1])


def _pair_bits(groups: tuple[tuple[int, ...], ...]) -> int:
    """Bit ``4 * d + f`` for every pair of distinct arms d, f joined in one tunnel."""
    bits = 0
    for group in groups:
        for d in group:
            for f in group:
                if d != f:
                    bits |= 1 << (4 * d + f)
    return bits


SHAPE_PAIRS = np.array([_pair_bits(s.groups) for s in SHAPES] + [0], dtype=np.int64)  # index -1: no card
ORIENT_PAIRS = np.array([SHAPE_PAIRS[SHAPE_ID[p]] for p in PLACEABLE], dtype=np.int64)
ORIENT_OPEN = np.array([SHAPE_OPEN[SHAPE_ID[p]] for p in PLACEABLE], dtype=np.int64)
ORIENT_KIND = np.array([k for k, _ in PLACEABLE], dtype=np.int64)
ORIENT_SHAPE = np.array([SHAPE_ID[p] for p in PLACEABLE], dtype=np.int64)
OPEN_PAD = np.append(SHAPE_OPEN, 0).astype(np.int64)


def _groups_touching() -> NDArray[np.int64]:
    """TOUCH[orientation, conn4]: arms of the card's tunnels that contain an arm in ``conn4``."""
    out = np.zeros((len(PLACEABLE), 16), dtype=np.int64)
    for o, p in enumerate(PLACEABLE):
        for conn in range(16):
            for group in SHAPES[SHAPE_ID[p]].groups:
                if any((conn >> e) & 1 for e in group):
                    out[o, conn] |= sum(1 << e for e in group)
    return out


TOUCH = _groups_touching()
_BITS4 = (np.arange(16)[:, None] >> np.arange(4)) & 1  # (16, 4)


class _Memo:
    """A small process-wide LRU (agents of one game, and of the next, share boards)."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.data: OrderedDict[bytes, object] = OrderedDict()

    def get(self, key: bytes) -> object | None:
        hit = self.data.get(key)
        if hit is not None:
            self.data.move_to_end(key)
        return hit

    def put(self, key: bytes, value: object) -> None:
        self.data[key] = value
        if len(self.data) > self.size:
            self.data.popitem(last=False)


_H_MEMO = _Memo(8192)


def available_orientations(counts: NDArray[np.int64]) -> NDArray[np.bool_]:
    """Orientations whose card kind still has a copy in ``counts`` (per deck kind)."""
    return counts[ORIENT_KIND] > 0


_PAIR_TABLES: dict[bytes, NDArray[np.int64]] = {}
_CODES = np.arange(256)


def _pair_table(avail: NDArray[np.bool_]) -> NDArray[np.int64]:
    """PAIRS[cons | req << 4]: arm pairs some available orientation joins on an empty cell whose maze neighbours
    are the directions in ``cons``, those with an open facing edge in ``req``."""
    key = np.packbits(avail).tobytes()
    table = _PAIR_TABLES.get(key)
    if table is None:
        if len(_PAIR_TABLES) > 4096:
            _PAIR_TABLES.clear()
        cons, req = _CODES & 15, _CODES >> 4
        fits = ((ORIENT_OPEN[None, :] & cons[:, None]) == req[:, None]) & avail[None, :]
        table = np.bitwise_or.reduce(np.where(fits, ORIENT_PAIRS[None, :], 0), axis=1)
        _PAIR_TABLES[key] = table
    return table


def cost_to_go_batch(config: GameConfig, shapes: NDArray[np.int16], avail: NDArray[np.bool_]) -> NDArray[np.int64]:
    """(k, 3, 4 * cells): placements still needed to reach each face-down goal from an open arm at each state, for
    ``k`` boards at once (``shapes``: (k, cells) shape ids, -1 empty or face-down goal; ``avail``: the placeable
    orientations that may still be played). Revealed goals are no targets (``INF``)."""
    geo = geometry(config)
    hw = geo.num_cells
    k = shapes.shape[0]
    ns = hw * 4
    maze = shapes >= 0  # (k, HW)
    facedown = geo.is_goal_cell[None, :] & ~maze
    empty = ~maze & ~geo.is_goal_cell[None, :]
    # Edge matching with the maze neighbours, as the engine's placement table (face-down goals impose nothing).
    open_ = OPEN_PAD[np.where(maze, shapes, -1)]
    nbr = geo.nbr
    valid = nbr >= 0
    nb = np.where(valid, nbr, 0)
    cons = np.zeros((k, hw), dtype=np.int64)
    req = np.zeros((k, hw), dtype=np.int64)
    for d in range(4):
        there = valid[None, :, d] & maze[:, nb[:, d]]
        cons |= there.astype(np.int64) << d
        req |= (there & ((open_[:, nb[:, d]] >> OPP[d]) & 1).astype(bool)).astype(np.int64) << d
    pairs = _pair_table(avail)[cons | req << 4]
    cell_pairs = np.where(empty, pairs, SHAPE_PAIRS[np.where(maze, shapes, -1)])  # face-down goals: 0
    s_cell, s_dir = np.repeat(np.arange(hw), 4), np.tile(np.arange(4), hw)
    n = nbr[s_cell, s_dir]
    ok = n >= 0
    n0 = np.where(ok, n, 0)
    entry = OPP[s_dir]
    # Transitions of state s = (c, e): into n = nbr(c, e) through n's arm opp(e), out through f. Board b's states
    # are b * ns + s; index k * ns is the INF sentinel.
    base = (np.arange(k) * ns)[:, None]
    sentinel = k * ns
    succ = np.empty((4, k, ns), dtype=np.int64)  # (4, ...): the reduction below runs over the outer axis
    for f in range(4):
        allowed = ok[None, :] & (((cell_pairs[:, n0] >> (4 * entry + f)[None, :]) & 1) == 1)
        succ[f] = np.where(allowed, base + n0 * 4 + f, sentinel)
    succ_flat = succ.reshape(4, k * ns)
    step = np.where(ok[None, :] & empty[:, n0], 1, 0).reshape(-1).astype(np.int16)
    out = np.full((3, sentinel + 1), INF, dtype=np.int16)
    for g, gcell in enumerate(geo.goal_cells):
        term = (ok & (n0 == gcell))[None, :] & facedown[:, gcell][:, None]
        out[g, :-1][term.reshape(-1)] = 0
    # Bellman iteration to the fixpoint (costs 0 through maze cards, 1 per placement; INF + 1 never wins).
    cur = out[:, :-1]
    while True:
        nxt = np.minimum(cur, step + np.minimum.reduce(np.take(out, succ_flat, axis=1), axis=1))
        if np.array_equal(nxt, cur):
            break
        cur[:] = nxt
    return cur.reshape(3, k, ns).transpose(1, 0, 2).astype(np.int64)


def cost_to_go(config: GameConfig, shape: NDArray[np.int16], avail: NDArray[np.bool_]) -> NDArray[np.int64]:
    """(3, 4 * cells): :func:`cost_to_go_batch` for one board, memoised per (board, available orientations)."""
    key = b"H" + shape.tobytes() + np.packbits(avail).tobytes()
    hit = _H_MEMO.get(key)
    if hit is not None:
        return hit  # type: ignore[return-value]
    result = cost_to_go_batch(config, shape[None, :], avail)[0]
    result.setflags(write=False)
    _H_MEMO.put(key, result)
    return result


def source_states(reach: NDArray[np.uint8]) -> NDArray[np.int64]:
    """Arm states connected to the start (``reach``: connected arm bits per cell)."""
    bits = _BITS4[reach.astype(np.int64)]  # (HW, 4)
    return np.flatnonzero(bits.ravel())


def board_distance(config: GameConfig, shape: NDArray[np.int16], avail: NDArray[np.bool_]) -> NDArray[np.int64]:
    """(3,): placements still needed to reach each face-down goal (``INF`` when impossible or revealed)."""
    return boards_distance(config, shape[None, :], avail)[0]


def boards_distance(config: GameConfig, shapes: NDArray[np.int16], avail: NDArray[np.bool_]) -> NDArray[np.int64]:
    """(k, 3): :func:`board_distance` for ``k`` boards at once (memoised per board)."""
    geo = geometry(config)
    start = geo.start_cell * 4 + np.arange(4)  # the start card is a crossroads: the tunnel begins at its arms
    keys = [b"D" + sh.tobytes() + np.packbits(avail).tobytes() for sh in shapes]
    out = np.empty((shapes.shape[0], 3), dtype=np.int64)
    todo = []
    for i, key in enumerate(keys):
        hit = _H_MEMO.get(key)
        if isinstance(hit, np.ndarray):
            out[i] = hit
        else:
            todo.append(i)
    if todo:
        h = cost_to_go_batch(config, shapes[todo], avail)
        dist = h[:, :, start].min(axis=2)
        for j, i in enumerate(todo):
            out[i] = dist[j]
            _H_MEMO.put(keys[i], dist[j].copy())
    return out


def placement_estimates(
    config: GameConfig,
    shape: NDArray[np.int16],
    reach: NDArray[np.uint8],
    avail: NDArray[np.bool_],
    cells: NDArray[np.int64],
    orients: NDArray[np.int64],
) -> NDArray[np.int64]:
    """(k, 3): cheap estimate of the distances after placing ``orients[i]`` at ``cells[i]``.

    The rest of the network keeps its cost-to-go (minus the arms that faced the filled cell); the new card adds
    the arms of its tunnels that join a connected neighbour. :func:`board_distance` on the new board is exact.
    """
    if cells.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    geo = geometry(config)
    h = cost_to_go(config, shape, avail)
    src = source_states(reach)
    nbr = geo.nbr[cells]
    valid = nbr >= 0
    nb = np.where(valid, nbr, 0)
    conn = np.zeros(cells.size, dtype=np.int64)
    for d in range(4):
        conn |= (valid[:, d] & (shape[nb[:, d]] >= 0) & (((reach[nb[:, d]] >> OPP[d]) & 1) == 1)).astype(
            np.int64
        ) << d
    new_arms = TOUCH[orients, conn] & ~conn
    result = np.full((cells.size, 3), INF, dtype=np.int64)
    src_target = geo.nbr.ravel()[src]  # the cell each connected arm faces
    for g in range(3):
        vals = h[g, src]
        # best value over sources, excluding those facing the filled cell: best and best-of-other-cells
        per_cell = np.full(geo.num_cells + 1, INF, dtype=np.int64)
        np.minimum.at(per_cell, np.where(src_target >= 0, src_target, geo.num_cells), vals)
        order = np.argsort(per_cell[:-1], kind="stable")
        best_cell, best = order[0], per_cell[order[0]]
        second = per_cell[order[1]] if order.size > 1 else INF
        rest = np.where(cells == best_cell, second, best)
        new = np.full(cells.size, INF, dtype=np.int64)
        for f in range(4):
            arm = ((new_arms >> f) & 1).astype(bool)
            new = np.minimum(new, np.where(arm, h[g, cells * 4 + f], INF))
        result[:, g] = np.minimum(rest, new)
    return result


def placed(shape: NDArray[np.int16], cell: int, orient: int) -> NDArray[np.int16]:
    out = shape.copy()
    out[cell] = ORIENT_SHAPE[orient]
    return out


def removed(shape: NDArray[np.int16], cell: int) -> NDArray[np.int16]:
    out = shape.copy()
    out[cell] = -1
    return out


class CardCounter:
    """The path and action cards a seat has not seen this round: deck minus public plays, its hand and its
    own discards. Fed with :class:`~agents.base.tracker.PublicEvent` records and the seat's own discards."""

    def __init__(self, config: GameConfig) -> None:
        self.config = config
        self.deck = deck_counts(config).astype(np.int64)
        self.reset()

    def reset(self) -> None:
        self.gone = np.zeros(NUM_DECK_KINDS, dtype=np.int64)  # played action cards, removed path cards, my discards

    def played(self, kind: int, count: int = 1) -> None:
        """``count`` more copies of ``kind`` gone (-1: take back a discard that was not played after all)."""
        if 0 <= kind < NUM_DECK_KINDS:
            self.gone[kind] += count

    def unseen(self, shape: NDArray[np.int16], hand: NDArray[np.int64]) -> NDArray[np.int64]:
        """Copies per deck kind that may still be in the pile or in other hands."""
        on_board = np.zeros(NUM_DECK_KINDS, dtype=np.int64)
        kinds = np.array([SHAPES[s].kind for s in shape[shape >= 0]], dtype=np.int64)
        kinds = kinds[kinds < NUM_PATH_KINDS]
        np.add.at(on_board, kinds, 1)
        return np.maximum(self.deck - on_board - self.gone - hand[:NUM_DECK_KINDS], 0)


__all__ = [
    "INF",
    "CardCounter",
    "available_orientations",
    "board_distance",
    "boards_distance",
    "cost_to_go",
    "cost_to_go_batch",
    "placed",
    "placement_estimates",
    "removed",
    "source_states",
]
