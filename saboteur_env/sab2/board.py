"""Saboteur 2 maze analysis: connectivity with ladder links (§2.5) and the door-avoiding routes of §2.8.

Doors do not affect placement, connectivity or reaching goals (E8); they only decide which team wins. Ladder cards'
tunnels are joined to the start card and to each other. ``team_routes`` answers, for a reached gold goal, whether a
route from the start avoids every tunnel with a green door (``open_blue``) / a blue door (``open_green``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.arms import reach_from
from saboteur_env.sab2 import cards as sc

_ARM_GROUP: list[list[int]] = sc.SHAPE_ARM_GROUP.tolist()


def reach(cell_shape: NDArray[np.int16], nbr: Sequence[Sequence[int]], start: int,
          blocked: NDArray[np.uint8] | None = None) -> NDArray[np.uint8]:  # fmt: skip
    """(cells,) arms connected to the start card, ladders linked to the start; ``blocked`` arms left out."""
    sid = np.maximum(cell_shape, 0)
    usable = np.where(cell_shape >= 0, sc.SHAPE_OPEN[sid], 0)
    if blocked is not None:
        usable = usable & ~blocked
    shape = cell_shape.tolist()
    ladders = [start] + [c for c, s in enumerate(shape) if s >= 0 and sc.SHAPE_LADDER[s]]
    return reach_from(shape, usable.tolist(), _ARM_GROUP, nbr, start, (ladders,))


def team_routes(cell_shape: NDArray[np.int16], nbr: Sequence[Sequence[int]], start: int,
                gold_cell: int) -> tuple[bool, bool]:  # fmt: skip
    """(open_blue, open_green): the gold goal's tunnel connects to the start avoiding every tunnel that carries a
    green door / a blue door (§2.8)."""
    sid = np.maximum(cell_shape, 0)
    has = cell_shape >= 0
    out = []
    for avoid in (1, 0):  # blue routes avoid green doors, green routes avoid blue doors
        blocked = np.where(has, sc.SHAPE_DOOR[avoid][sid], 0).astype(np.uint8)
        out.append(bool(reach(cell_shape, nbr, start, blocked)[gold_cell]))
    return out[0], out[1]


def crystals_on_board(cell_shape: NDArray[np.int16]) -> int:
    """Crystals on maze cards (what the geologists share, §2.9)."""
    return int(sc.SHAPE_CRYSTALS[cell_shape[cell_shape >= 0]].sum())
