"""Board analysis for agents, from public information only.

:class:`PublicBoard` is the public maze as shape ids (what every player sees), with its connectivity and the
**tile distance** to each goal: ``distance[g]`` is the fewest path cards still needed to connect the start network to
goal slot ``g`` (BFS through empty cells from the frontier, ignoring edge matching; 0 once a connected arm faces
the goal). :func:`placement_outcomes` evaluates every legal placement at once: the distance to each goal after
the placement, vectorised over the candidates.
"""

from __future__ import annotations

from collections import deque
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from saboteur_env import GameConfig, PlayerView
from saboteur_env.base.board import START_SHAPE, connected_arms, geometry
from saboteur_env.base.cards import PLACEABLE, SHAPE_ID, SHAPE_SPECS, SHAPES
from saboteur_env.base.state import GameState

INF = 99


def expectation(values: NDArray, weights: NDArray[np.float64]) -> NDArray[np.float64]:
    """``values @ weights`` over the last axis (the goal slots), added left to right: the same bits on every
    machine. A BLAS dot product rounds by the processor's kernels (an AVX-512 machine's differ in the last bits),
    and these expected distances meet ties and thresholds that turn a last bit into another move."""
    prod = np.asarray(values, dtype=np.float64) * weights
    out = prod[..., 0].copy()
    for i in range(1, prod.shape[-1]):
        out += prod[..., i]
    return out


_OPP = (2, 3, 0, 1)


def _onward_table() -> NDArray[np.uint8]:
    """ONWARD[orientation, conn4]: arms of the placed card in groups that touch a connected facing arm."""
    out = np.zeros((len(PLACEABLE), 16), dtype=np.uint8)
    for o, (kind, rot) in enumerate(PLACEABLE):
        shape = SHAPES[SHAPE_ID[(kind, rot)]]
        for conn in range(16):
            bits = 0
            for group in shape.groups:
                if any((conn >> e) & 1 for e in group):
                    bits |= sum(1 << e for e in group)
            out[o, conn] = bits
    return out


ONWARD = _onward_table()
DEAD_END_ORIENTATION = np.array([SHAPE_SPECS[k].dead_end for k, _ in PLACEABLE])
DEAD_END_KIND = np.array([SHAPE_SPECS[k].dead_end if k < 16 else False for k in range(27)])


class PublicBoard:
    """The public maze (shape id per storage cell; -1 for empty cells and face-down goals)."""

    def __init__(self, config: GameConfig, shape: NDArray[np.int16] | None = None) -> None:
        self.config = config
        self.geo = geometry(config)
        if shape is None:
            shape = np.full(config.num_cells, -1, dtype=np.int16)
            shape[self.geo.start_cell] = START_SHAPE
        self.shape = shape

    @classmethod
    def from_state(cls, state: GameState) -> PublicBoard:
        """The public part of an engine state (the maze is public)."""
        return cls(state.config, state.cell_shape.copy())

    def copy(self) -> PublicBoard:
        return PublicBoard(self.config, self.shape.copy())

    # ---- changes (invalidate the cached analysis) ----
    def _changed(self) -> None:
        for name in ("reach", "distance_maps", "frontier", "distance"):
            self.__dict__.pop(name, None)

    def place(self, cell: int, kind: int, rotation: int) -> None:
        self.shape[cell] = SHAPE_ID[(kind, rotation)]
        self._changed()

    def remove(self, cell: int) -> None:
        self.shape[cell] = -1
        self._changed()

    # ---- analysis ----
    @cached_property
    def reach(self) -> NDArray[np.uint8]:
        return connected_arms(self.config, self.shape)

    @cached_property
    def frontier(self) -> list[int]:
        """Empty cells (or face-down goal cells) that a connected arm points at."""
        out = []
        nbr = self.geo.nbr_list
        reach = self.reach.tolist()
        shape = self.shape.tolist()
        for cell in range(self.geo.num_cells):
            if shape[cell] >= 0:
                continue
            for d, j in enumerate(nbr[cell]):
                if j >= 0 and (reach[j] >> _OPP[d]) & 1:
                    out.append(cell)
                    break
        return out

    @cached_property
    def distance_maps(self) -> NDArray[np.int64]:
        """(3, HW): tiles to connect goal slot g once the tunnel reaches cell x (x counted); INF elsewhere."""
        geo = self.geo
        shape = self.shape.tolist()
        goal_cells = set(geo.goal_cells)
        out = np.full((3, geo.num_cells), INF, dtype=np.int64)
        for g, gcell in enumerate(geo.goal_cells):
            dist = out[g]
            queue: deque[int] = deque()
            for j in geo.nbr_list[gcell]:
                if j >= 0 and shape[j] < 0 and j not in goal_cells:
                    dist[j] = 1
                    queue.append(j)
            while queue:
                x = queue.popleft()
                for j in geo.nbr_list[x]:
                    if j >= 0 and shape[j] < 0 and j not in goal_cells and dist[j] == INF:
                        dist[j] = dist[x] + 1
                        queue.append(j)
        return out

    @cached_property
    def distance(self) -> NDArray[np.int64]:
        """(3,): tiles still needed to reach each goal slot (0 when a connected arm faces it)."""
        out = np.full(3, INF, dtype=np.int64)
        maps = self.distance_maps
        frontier = self.frontier
        for g, gcell in enumerate(self.geo.goal_cells):
            if gcell in frontier:
                out[g] = 0
            elif frontier:
                out[g] = int(maps[g, frontier].min())
        return out


def board_from_view(view: PlayerView) -> PublicBoard:
    """Rebuild the public maze from a player's view (shape ids from open/joined/stub bits and card types)."""
    cfg = view.config
    shape = np.full(cfg.num_cells, -1, dtype=np.int16)
    rows, cols = cfg.rows, cfg.cols
    for r in range(rows):
        for c in range(cols):
            if view.empty[r, c] or view.goal_facedown[r, c]:
                continue
            key = (int(view.open_bits[r, c]), int(view.join_bits[r, c]), int(view.stub_bits[r, c]),
                   _cell_class(view, r, c))  # fmt: skip
            shape[r * cols + c] = _SHAPE_BY_KEY[key]
    return PublicBoard(cfg, shape)


def _cell_class(view: PlayerView, r: int, c: int) -> int:
    if view.start[r, c]:
        return 1
    if view.goal_gold[r, c]:
        return 2
    if view.goal_stone[r, c]:
        return 3
    return 0


def _shape_keys() -> dict[tuple[int, int, int, int], int]:
    from saboteur_env.base.cards import GOAL_KINDS, KIND_GOAL_GOLD, KIND_START

    out: dict[tuple[int, int, int, int], int] = {}
    for i, s in enumerate(SHAPES):
        cls = 1 if s.kind == KIND_START else 2 if s.kind == KIND_GOAL_GOLD else 3 if s.kind in GOAL_KINDS else 0
        out.setdefault((s.open_bits, s.join_bits, s.stub_bits, cls), i)
    return out


_SHAPE_BY_KEY = _shape_keys()


def placement_outcomes(board: PublicBoard, cells: NDArray[np.int64], orients: NDArray[np.int64]) -> NDArray[np.int64]:
    """(k, 3): distance to each goal slot after placing orientation ``orients[i]`` at ``cells[i]``.

    Approximation used by every agent: the other frontier cells keep their distances, the new card extends the
    tunnel through the arms of its groups that meet a connected facing arm.
    """
    geo = board.geo
    if cells.size == 0:
        return np.zeros((0, 3), dtype=np.int64)
    reach = board.reach
    nbr = geo.nbr[cells]  # (k, 4)
    valid = nbr >= 0
    nb = np.where(valid, nbr, 0)
    conn = np.zeros(cells.size, dtype=np.int64)
    for d in range(4):
        conn |= (valid[:, d] & ((reach[nb[:, d]] >> _OPP[d]) & 1).astype(bool)).astype(np.int64) << d
    onward = ONWARD[orients, conn]
    maps = board.distance_maps  # (3, HW)
    empty = board.shape < 0
    result = np.empty((cells.size, 3), dtype=np.int64)
    frontier = np.array(board.frontier, dtype=np.int64)
    for g, gcell in enumerate(geo.goal_cells):
        # Best distance over the frontier without the cell being filled.
        if frontier.size:
            fd = maps[g, frontier]
            order = np.argsort(fd, kind="stable")
            best_cell, best, second = frontier[order[0]], fd[order[0]], (fd[order[1]] if frontier.size > 1 else INF)
            rest = np.where(cells == best_cell, second, best)
        else:
            rest = np.full(cells.size, INF)
        new = np.full(cells.size, INF, dtype=np.int64)
        for d in range(4):
            arm = ((onward >> d) & 1).astype(bool) & valid[:, d]
            n = nb[:, d]
            val = np.where(n == gcell, 0, np.where(empty[n] & ~geo.is_goal_cell[n], maps[g, n], INF))
            new = np.minimum(new, np.where(arm, val, INF))
        result[:, g] = np.minimum(rest, new)
    return result
