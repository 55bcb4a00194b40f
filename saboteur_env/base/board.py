"""Board geometry, tunnel connectivity (docs/rules.md §0.4-§0.5) and goal reveals (§1.10).

Connectivity is kept per **arm** (open edge of a maze card): ``cell_reach`` holds, per cell, the bits of the arms
whose tunnel is connected to the start. A placement can only add links, so it extends the reachable set with a
small flood fill from the new card; a rockfall removes links, so it recomputes from the start.

The placement legality predicate is one lookup table over a 12-bit *cell code* built from the four neighbours:

* ``cons`` (bits 0-3): the neighbour in direction d is a maze card (face-down goals and empty cells: 0);
* ``req`` (bits 4-7): that neighbour's facing edge ``opp(d)`` is open;
* ``conn`` (bits 8-11): that neighbour's facing arm is connected to the start.

An oriented card with open bits ``o`` is legal at a cell when ``(o & cons) == req`` (edge matching, §0.4) and
``o & conn != 0`` (connection, §1.9.1 rule 4). Codes for all cells are computed in numpy and the table gives the
``(cells, orientations)`` legality in one gather; mask and transition both read it.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.base.cards import (
    GOAL_KINDS,
    KIND_GOAL_GOLD,
    KIND_START,
    NUM_PATH_KINDS,
    PLACEABLE_OPEN,
    SHAPE_ID,
    SHAPE_KIND,
    SHAPE_OPEN,
    SHAPES,
)
from saboteur_env.base.state import GameState
from saboteur_env.common import reveal
from saboteur_env.common.config import GameConfig
from saboteur_env.common.geometry import Geometry, geometry

NOT_PLACEABLE_CODE = 4096
START_SHAPE = SHAPE_ID[(KIND_START, 0)]

# Python-side shape tables for the flood fill (list indexing is faster than numpy scalars).
_GROUPS = [s.groups for s in SHAPES]
_GROUP_OF_EDGE = [s.group_of_edge for s in SHAPES]
_GROUP_BITS = [[sum(1 << e for e in g) for g in s.groups] for s in SHAPES]
_SHAPE_IS_PATH = SHAPE_KIND < NUM_PATH_KINDS


# Public board planes (observation planes 0-23, see observation.PLANES), kept up to date by put/remove:
# one static column per shape, plus columns for an empty cell and a face-down goal; rows 4-7 (arms connected to
# the start) are written from cell_reach.
_BITS4 = ((np.arange(16)[:, None] >> np.arange(4)) & 1).astype(np.float32)
_BITS6 = ((np.arange(64)[:, None] >> np.arange(6)) & 1).astype(np.float32)
NUM_PUBLIC_PLANES = 24
_EMPTY_COL = len(SHAPES)
_FACEDOWN_COL = len(SHAPES) + 1


def _build_plane_columns() -> NDArray[np.float32]:
    cols = np.zeros((len(SHAPES) + 2, NUM_PUBLIC_PLANES), dtype=np.float32)
    for i, shape in enumerate(SHAPES):
        cols[i, 0:4] = _BITS4[shape.open_bits]
        cols[i, 8:14] = _BITS6[shape.join_bits]
        cols[i, 14:18] = _BITS4[shape.stub_bits]
        cols[i, 18] = shape.kind == KIND_START
        cols[i, 19] = shape.kind < NUM_PATH_KINDS
        cols[i, 21] = shape.kind == KIND_GOAL_GOLD
        cols[i, 22] = shape.kind in GOAL_KINDS[1:]
    cols[_EMPTY_COL, 23] = 1.0
    cols[_FACEDOWN_COL, 20] = 1.0
    return cols


_PLANE_COLUMNS = _build_plane_columns()


def refresh_planes(state: GameState) -> None:
    """Recompute every public plane (after a rockfall or when a board is laid out)."""
    geo = geometry(state.config)
    shape = state.cell_shape
    col = np.where(shape >= 0, shape, np.where(geo.is_goal_cell, _FACEDOWN_COL, _EMPTY_COL))
    state.planes[:] = _PLANE_COLUMNS[col].T
    state.planes[4:8] = _BITS4[state.cell_reach].T


def _build_legal_table() -> NDArray[np.bool_]:
    codes = np.arange(4096)
    cons, req, conn = codes & 15, (codes >> 4) & 15, (codes >> 8) & 15
    o = PLACEABLE_OPEN.astype(np.int64)[None, :]
    table = ((o & cons[:, None]) == req[:, None]) & ((o & conn[:, None]) != 0)
    return np.vstack([table, np.zeros((1, len(PLACEABLE_OPEN)), dtype=bool)])


LEGAL_TABLE = _build_legal_table()  # (4097, orientations)


def _build_contrib() -> NDArray[np.int64]:
    """CONTRIB[d, nstate]: code bits contributed by the neighbour in direction d with state ``nstate``.

    ``nstate = maze | open << 1 | reach << 5``.
    """
    nstate = np.arange(512)
    maze, open_, reach = nstate & 1, (nstate >> 1) & 15, (nstate >> 5) & 15
    out = np.zeros((4, 512), dtype=np.int64)
    for d in range(4):
        od = (d + 2) % 4
        out[d] = (maze << d) | (((open_ >> od) & 1 & maze) << (4 + d)) | (((reach >> od) & 1 & maze) << (8 + d))
    return out


_CONTRIB = _build_contrib()
_D4 = np.arange(4)[:, None]


# ---- connectivity -----------------------------------------------------------------------------------------------
def _flood(state: GameState, geo: Geometry, stack: list[tuple[int, int]]) -> list[int]:
    """Spread reachability from the (cell, group) pairs on ``stack`` (their arms already marked).

    Returns the cells whose reach bits changed.
    """
    changed = []
    shape_of = state.cell_shape
    reach = state.cell_reach
    nbr = geo.nbr_list
    while stack:
        cell, g = stack.pop()
        for e in _GROUPS[shape_of[cell]][g]:
            j = nbr[cell][e]
            if j < 0:
                continue
            sj = shape_of[j]
            if sj < 0:
                continue
            oe = (e + 2) & 3
            gj = _GROUP_OF_EDGE[sj][oe]
            if gj < 0 or (reach[j] >> oe) & 1:
                continue
            reach[j] |= _GROUP_BITS[sj][gj]
            stack.append((j, gj))
            changed.append(j)
    return changed


def _build_closure() -> NDArray[np.uint8]:
    """CLOSURE[shape, bits]: the arms joined through the card to any arm in ``bits`` (last row: no card)."""
    out = np.zeros((len(SHAPES) + 1, 16), dtype=np.uint8)
    for s, group_bits in enumerate(_GROUP_BITS):
        for bits in range(16):
            out[s, bits] = sum(g for g in group_bits if g & bits)
    return out


_CLOSURE = _build_closure()
_OPEN_PAD = np.append(SHAPE_OPEN, 0).astype(np.uint8)


def reach_fixpoint(state: GameState) -> NDArray[np.uint8]:
    """Arms connected to the start of ``state``'s board (see :func:`connected_arms`)."""
    return connected_arms(state.config, state.cell_shape)


def connected_arms(config: GameConfig, cell_shape: NDArray[np.int16]) -> NDArray[np.uint8]:
    """Arms connected to the start for a board given as shape ids, by vectorised propagation to a fixpoint.

    Each sweep joins facing open arms of neighbouring maze cards and closes over each card's tunnels (one table
    lookup). Used for full recomputations (rockfall, hand-built positions); placements extend the reachable set
    incrementally with :func:`_flood`, and the tests check that both agree.
    """
    geo = geometry(config)
    shape = np.where(cell_shape >= 0, cell_shape, len(SHAPES))
    open_ = _OPEN_PAD[shape]
    reach = np.zeros(geo.num_cells + 1, dtype=np.uint8)  # last entry: off-area sentinel
    reach[geo.start_cell] = _CLOSURE[shape[geo.start_cell], 15]
    while True:
        incoming = np.zeros(geo.num_cells, dtype=np.uint8)
        for d in range(4):
            incoming |= ((reach[geo.nbr_pad[d]] >> ((d + 2) % 4)) & 1) << d
        new = _CLOSURE[shape, (reach[:-1] | incoming) & open_]
        if np.array_equal(new, reach[:-1]):
            return new
        reach[:-1] = new


def recompute_reach(state: GameState) -> None:
    """Full recomputation from the start card (after a rockfall or when building a position)."""
    state.cell_reach[:] = reach_fixpoint(state)


def _connect_new_card(state: GameState, geo: Geometry, cell: int) -> list[int]:
    """Mark the groups of the card at ``cell`` that touch a connected facing arm, then flood from them.

    Returns the other cells whose reach bits changed.
    """
    shape = state.cell_shape[cell]
    stack = []
    for gi, group in enumerate(_GROUPS[shape]):
        for e in group:
            j = geo.nbr_list[cell][e]
            if j >= 0 and state.cell_shape[j] >= 0 and (state.cell_reach[j] >> ((e + 2) & 3)) & 1:
                state.cell_reach[cell] |= _GROUP_BITS[shape][gi]
                stack.append((cell, gi))
                break
    return _flood(state, geo, stack)


def put_card(state: GameState, cell: int, shape: int) -> None:
    """Put a face-up card on ``cell`` and extend connectivity (no legality check)."""
    geo = state.geo
    state.cell_shape[cell] = shape
    state.cell_open[cell] = SHAPE_OPEN[shape]
    state.cell_reach[cell] = 0
    changed = _connect_new_card(state, geo, cell)
    planes = state.planes
    planes[:, cell] = _PLANE_COLUMNS[shape]
    planes[4:8, cell] = _BITS4[state.cell_reach[cell]]
    for j in changed:
        planes[4:8, j] = _BITS4[state.cell_reach[j]]
    state.board_changed()


def remove_card(state: GameState, cell: int) -> int:
    """Remove the card on ``cell`` (rockfall) and recompute connectivity; returns the removed kind."""
    kind = int(SHAPE_KIND[state.cell_shape[cell]])
    state.cell_shape[cell] = -1
    state.cell_open[cell] = 0
    recompute_reach(state)
    refresh_planes(state)
    state.board_changed()
    return kind


# ---- placement legality -------------------------------------------------------------------------------------------
def cell_codes(state: GameState) -> NDArray[np.int64]:
    """The 12-bit neighbour code of every cell (NOT_PLACEABLE_CODE where the cell is not empty)."""
    geo = geometry(state.config)
    maze = state.cell_shape >= 0
    nstate = np.zeros(geo.num_cells + 1, dtype=np.int64)
    nstate[:-1] = maze | (state.cell_open.astype(np.int64) << 1) | (state.cell_reach.astype(np.int64) << 5)
    code = _CONTRIB[_D4, nstate[geo.nbr_pad]].sum(axis=0)
    code[maze | geo.is_goal_cell] = NOT_PLACEABLE_CODE
    return code


def placement_table(state: GameState) -> NDArray[np.bool_]:
    """``(cells, orientations)`` bool: where each placeable orientation may go (ignoring hands and tools)."""
    cached = state._cache.get("place")
    if cached is not None and cached[0] == state.board_version:
        return cached[1]
    table = LEGAL_TABLE[cell_codes(state)]
    state._cache["place"] = (state.board_version, table)
    return table


def removable_cells(state: GameState) -> NDArray[np.bool_]:
    """Cells holding a placed path card (rockfall targets; never the start or a goal)."""
    cached = state._cache.get("removable")
    if cached is not None and cached[0] == state.board_version:
        return cached[1]
    shape = state.cell_shape
    out = (shape >= 0) & _SHAPE_IS_PATH[np.maximum(shape, 0)]
    state._cache["removable"] = (state.board_version, out)
    return out


# ---- goals ---------------------------------------------------------------------------------------------------------
def reaching_directions(state: GameState, cell: int) -> list[int]:
    """Directions d from ``cell`` whose neighbour is a maze card with a connected arm facing ``cell``."""
    geo = geometry(state.config)
    out = []
    for d, j in enumerate(geo.nbr_list[cell]):
        if j >= 0 and state.cell_shape[j] >= 0 and (state.cell_reach[j] >> ((d + 2) & 3)) & 1:
            out.append(d)
    return out


def goal_rotation(state: GameState, cell: int, kind: int, placed_cell: int) -> int:
    """Rotation of a goal being revealed on ``cell``: the tie-breaks of ``saboteur_env.common.reveal``."""
    geo = geometry(state.config)
    nbrs = geo.nbr_list[cell]
    facing, placed_dir = reveal.facing_of(nbrs, state.cell_shape, SHAPE_OPEN, state.cell_reach, placed_cell)
    return reveal.goal_rotation([int(SHAPE_OPEN[SHAPE_ID[(kind, rot)]]) for rot in (0, 1)], facing, placed_dir)


def reveal_reached_goals(state: GameState, placed_cell: int) -> list[int]:
    """Turn up every face-down goal that is reached, repeating until nothing changes; returns the goal slots."""
    geo = geometry(state.config)
    revealed: list[int] = []
    while True:
        newly = [
            slot
            for slot, cell in enumerate(geo.goal_cells)
            if not state.goal_revealed[slot] and reaching_directions(state, cell)
        ]
        if not newly:
            return revealed
        for slot in newly:
            cell = geo.goal_cells[slot]
            kind = int(state.goal_kind[slot])
            rot = 0 if kind == KIND_GOAL_GOLD else goal_rotation(state, cell, kind, placed_cell)
            state.goal_revealed[slot] = True
            put_card(state, cell, SHAPE_ID[(kind, rot)])
            revealed.append(slot)


def init_board(state: GameState) -> None:
    """Empty board with the start card and three face-down goals (goal kinds already in ``state.goal_kind``)."""
    geo = geometry(state.config)
    state.cell_shape[:] = -1
    state.cell_open[:] = 0
    state.cell_reach[:] = 0
    state.goal_revealed[:] = False
    state.cell_shape[geo.start_cell] = START_SHAPE
    state.cell_open[geo.start_cell] = SHAPE_OPEN[START_SHAPE]
    recompute_reach(state)
    refresh_planes(state)
    state.board_changed()
