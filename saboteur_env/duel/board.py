"""The Duel's maze: geometry, per-player arm reachability (docs/rules.md §3.5) and placement legality.

Reachability works on arms (open edges of maze cards), as the base engine does, with the Duel's blocks: for player
``p`` an arm is **blocked** when it carries a door of the other colour without a key, and every arm of an unbribed
troll is blocked for both. Unblocked arms of one group are joined within a card; facing open arms are joined
across cells; a ladder's tunnel is joined to the start card of its colour. ``p`` starts from its own start card.

Placement legality is one table lookup per (cell, orientation): a 12-bit code per cell and player (arms facing the
cell that are open / closed on neighbouring maze cards, and facing arms reachable for the player) indexes
``LEGAL[p]`` (4096 x orientations), shared by the mask and the transition.
"""

from __future__ import annotations

from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.arms import OPP, reach_from
from saboteur_env.common.config import GameConfig
from saboteur_env.common.geometry import Geometry
from saboteur_env.duel import cards as dc


class DuelGeometry(Geometry):
    """The shared grid geometry plus the Duel's goal slots and the cells next to a goal (storage indices)."""

    def __init__(self, config: GameConfig) -> None:
        super().__init__(config)
        self.config = config
        self.goal_slot = {cell: i for i, cell in enumerate(self.goal_cells)}
        # Cells next to a goal cell: ladders may never go there (§3.5 step 3).
        self.next_to_goal = np.zeros(self.num_cells, dtype=bool)
        for cell in self.goal_cells:
            for j in self.nbr_list[cell]:
                if j >= 0:
                    self.next_to_goal[j] = True

    @cached_property
    def nbr_safe(self) -> NDArray[np.int64]:
        return np.where(self.nbr >= 0, self.nbr, 0)


def geometry(config: GameConfig) -> DuelGeometry:
    return config.cached("_duel_geometry", DuelGeometry)


def blocked_bits(state, player: int) -> NDArray[np.uint8]:
    """(HW,) arms closed to ``player``: other colour's doors without a key, every arm of an unbribed troll."""
    shape = state.cell_shape
    sid = np.where(shape >= 0, shape, 0)
    door = np.where(state.cell_key, 0, dc.SHAPE_DOOR[1 - player][sid])
    troll = dc.SHAPE_TROLL[sid] & (state.cell_counter < 0)
    bits = np.where(troll, 15, door).astype(np.uint8)
    return np.where(shape >= 0, bits, 0).astype(np.uint8)


_ARM_GROUP: list[list[int]] = dc.SHAPE_ARM_GROUP.tolist()
_LADDER_OF: list[int] = dc.SHAPE_LADDER.tolist()


def compute_reach(state, player: int) -> NDArray[np.uint8]:
    """(HW,) arms reachable for ``player`` from its own start card (ladders joined to their colour's start)."""
    geo = geometry(state.config)
    shape = state.cell_shape.tolist()
    usable = (np.where(state.cell_shape >= 0, dc.SHAPE_OPEN[np.maximum(state.cell_shape, 0)], 0)
              & ~blocked_bits(state, player)).tolist()  # fmt: skip
    links: tuple[list[int], list[int]] = ([geo.start_cells[0]], [geo.start_cells[1]])
    for cell, s in enumerate(shape):
        if s >= 0 and _LADDER_OF[s] >= 0:
            links[_LADDER_OF[s]].append(cell)
    return reach_from(shape, usable, _ARM_GROUP, geo.nbr_list, geo.start_cells[player], links)


def refresh_reach(state) -> None:
    state.reach = np.stack([compute_reach(state, 0), compute_reach(state, 1)])
    state.board_changed()


def _build_legal_table() -> NDArray[np.bool_]:
    """LEGAL[p, code, o]: orientation o may be placed by p on an empty cell with neighbour code ``code``.

    code = must_open | must_closed << 4 | reach_facing << 8 (bits by direction from the cell). Ordinary cards
    need edge matching and one open arm facing a reachable arm, with no door closed to p on that arm; ladders
    need edge matching and adjacency here (their other conditions are per cell, see ``placement_table``).
    """
    codes = np.arange(4096)
    must_open, must_closed, facing = codes & 15, (codes >> 4) & 15, (codes >> 8) & 15
    out = np.zeros((2, 4096, len(dc.PLACEABLE)), dtype=bool)
    for o, sid in enumerate(dc.PLACEABLE_SHAPE.tolist()):
        op = int(dc.SHAPE_OPEN[sid])
        match = ((op & must_closed) == 0) & ((must_open & ~op & 15) == 0)
        for p in (0, 1):
            if dc.SHAPE_LADDER[sid] >= 0:
                out[p, :, o] = match & ((must_open | must_closed) != 0)
            else:
                closed = int(dc.SHAPE_DOOR[1 - p][sid])
                out[p, :, o] = match & ((op & facing & ~closed & 15) != 0)
    return out


LEGAL = _build_legal_table()
LADDER_ORIENTATIONS = np.array([dc.SHAPE_LADDER[s] >= 0 for s in dc.PLACEABLE_SHAPE])
LADDER_COLOUR = np.array([dc.SHAPE_LADDER[s] for s in dc.PLACEABLE_SHAPE])
FACING_REACH_BITS = np.array([int(dc.SHAPE_OPEN[s]) for s in dc.PLACEABLE_SHAPE])


def neighbour_codes(state, player: int) -> NDArray[np.int64]:
    """(HW,) 12-bit neighbour code of every cell for ``player`` (see :data:`LEGAL`)."""
    geo = geometry(state.config)
    nbr, safe = geo.nbr, geo.nbr_safe
    shape = state.cell_shape[safe]  # (HW, 4)
    has = (nbr >= 0) & (shape >= 0)
    sid = np.maximum(shape, 0)
    opp = np.array(OPP)
    open_facing = ((dc.SHAPE_OPEN[sid] >> opp) & 1).astype(bool)
    reach_facing = ((state.reach[player][safe] >> opp) & 1).astype(bool)
    weights = 1 << np.arange(4)
    must_open = ((has & open_facing) * weights).sum(1)
    must_closed = ((has & ~open_facing) * weights).sum(1)
    facing = ((has & open_facing & reach_facing) * weights).sum(1)
    return must_open | must_closed << 4 | facing << 8


def placement_table(state, player: int) -> NDArray[np.bool_]:
    """(HW, orientations) legal placements for ``player`` ignoring hand and tools (cached per board)."""
    key = ("place", player)
    cached = state._cache.get(key)
    if cached is not None:
        return cached
    geo = geometry(state.config)
    codes = neighbour_codes(state, player)
    table = LEGAL[player][codes]  # (HW, O)
    empty = (state.cell_shape < 0) & ~geo.is_goal_cell
    table &= empty[:, None]
    # Ladders: never next to a goal or a card with gold; reachable after placement for the player.
    shape = state.cell_shape[geo.nbr_safe]
    gold_next = ((geo.nbr >= 0) & (shape >= 0) & (dc.SHAPE_NUGGETS[np.maximum(shape, 0)] > 0)).any(1)
    ladder_cells = ~geo.next_to_goal & ~gold_next
    facing = (codes >> 8) & 15
    for o in np.flatnonzero(LADDER_ORIENTATIONS):
        colour = int(LADDER_COLOUR[o])
        joins_start = colour == player or state.reach[player][geo.start_cells[colour]] != 0
        reachable = joins_start | ((FACING_REACH_BITS[o] & facing) != 0)
        table[:, o] &= ladder_cells & reachable
    state._cache[key] = table
    return table


def gold_items(state) -> NDArray[np.int64]:
    """Cells holding an unsecured gold item (a gold path card or revealed goal with nuggets and no counter)."""
    shape = state.cell_shape
    has_gold = (shape >= 0) & (dc.SHAPE_NUGGETS[np.maximum(shape, 0)] > 0) & (state.cell_counter < 0)
    return np.flatnonzero(has_gold)


def reachable_gold(state, player: int) -> list[int]:
    """Unsecured gold cells reachable for ``player``, highest nuggets first, then by (row, col)."""
    cells = gold_items(state)
    shape = state.cell_shape[cells]
    ok = (state.reach[player][cells] & dc.SHAPE_GOLD_BITS[shape]) != 0
    cells, shape = cells[ok], shape[ok]
    order = np.lexsort((cells, -dc.SHAPE_NUGGETS[shape].astype(np.int64)))
    return cells[order].tolist()


def reached_goal_slots(state) -> list[int]:
    """Face-down goal slots with a neighbouring open arm facing them that either player reaches."""
    geo = geometry(state.config)
    either = state.reach[0] | state.reach[1]
    out = []
    for slot, cell in enumerate(geo.goal_cells):
        if state.goal_revealed[slot]:
            continue
        for d, j in enumerate(geo.nbr_list[cell]):
            if j >= 0 and state.cell_shape[j] >= 0 and (either[j] >> OPP[d]) & 1:
                out.append(slot)
                break
    return out


def removable_cells(state) -> NDArray[np.bool_]:
    """Rockfall targets: placed path cards that are not starts, goals, trolls or cards with gold (§3.8)."""
    geo = geometry(state.config)
    shape = state.cell_shape
    sid = np.maximum(shape, 0)
    kind = dc.SHAPE_KIND[sid]
    ok = (shape >= 0) & (kind < dc.NUM_PATH_KINDS) & ~dc.SHAPE_TROLL[sid] & (dc.SHAPE_NUGGETS[sid] == 0)
    ok[list(geo.start_cells)] = False
    return ok


def door_cells(state) -> NDArray[np.bool_]:
    """Cells with a door (either colour) and no key yet: key targets (§3.8, D15)."""
    shape = state.cell_shape
    sid = np.maximum(shape, 0)
    return (shape >= 0) & ((dc.SHAPE_DOOR[0][sid] | dc.SHAPE_DOOR[1][sid]) != 0) & ~state.cell_key


def unbribed_trolls(state) -> NDArray[np.bool_]:
    shape = state.cell_shape
    return (shape >= 0) & dc.SHAPE_TROLL[np.maximum(shape, 0)] & (state.cell_counter < 0)
