"""Grid geometry of a configuration: storage cells, neighbour tables, start and goal cells of the variant's frame.

Storage coordinates are frame coordinates plus ``margin``; cell ``i`` is at ``divmod(i, cols)``. Directions are
``N=0, E=1, S=2, W=3``.
"""

from __future__ import annotations

import numpy as np

from saboteur_env.common.config import GameConfig

STEPS = ((-1, 0), (0, 1), (1, 0), (0, -1))  # (d_row, d_col) per direction N, E, S, W


class Geometry:
    """Static geometry of a configuration: neighbour tables, start and goal cells (from ``config.frame``)."""

    def __init__(self, config: GameConfig) -> None:
        self.rows, self.cols, self.num_cells = config.rows, config.cols, config.num_cells
        hw = self.num_cells
        nbr = np.full((hw, 4), -1, dtype=np.int64)
        for i in range(hw):
            r, c = divmod(i, self.cols)
            for d, (dr, dc) in enumerate(STEPS):
                rr, cc = r + dr, c + dc
                if 0 <= rr < self.rows and 0 <= cc < self.cols:
                    nbr[i, d] = rr * self.cols + cc
        self.nbr = nbr
        self.nbr_list: list[tuple[int, ...]] = [tuple(int(x) for x in row) for row in nbr]
        self.nbr_pad = np.where(nbr < 0, hw, nbr).T.copy()  # (4, HW) with sentinel HW for off-area
        frame = config.frame
        self.start_cells = tuple(config.cell_index(*s) for s in frame.start_cells)
        self.start_cell = self.start_cells[0]
        self.goal_cells = tuple(config.cell_index(*g) for g in frame.goal_cells)
        self.is_goal_cell = np.zeros(hw, dtype=bool)
        self.is_goal_cell[list(self.goal_cells)] = True
        self.row_of = np.arange(hw) // self.cols
        self.col_of = np.arange(hw) % self.cols


def geometry(config: GameConfig) -> Geometry:
    """The geometry of a configuration (built once per config object)."""
    return config.cached("_geometry", Geometry)
