"""Arm-level reachability shared by the expansion games (the Duel, Saboteur 2).

An **arm** is an open edge of a maze card. Arms of one group (tunnel) are joined within a card, facing open arms
are joined across cells, and a **link group** (a start card and the ladder cards joined to it) joins the whole
tunnels of its cells to each other. Blocked arms (the Duel's closed doors and unbribed trolls, Saboteur 2's doors
of one colour when checking a team's route) are left out of ``usable``: they can neither be entered nor left.
The base game keeps its own vectorised fixpoint (``saboteur_env.base.board``), which has no blocks or ladders.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

OPP = (2, 3, 0, 1)


def reach_from(
    shape: Sequence[int],
    usable: Sequence[int],
    arm_group: Sequence[Sequence[int]],
    nbr: Sequence[Sequence[int]],
    start: int,
    links: Sequence[Sequence[int]] = (),
) -> NDArray[np.uint8]:
    """(cells,) bit mask of the arms reachable from every usable arm of cell ``start``.

    Args:
        shape: shape id per cell (-1 empty or face-down).
        usable: per cell, open arms that are not blocked.
        arm_group: per shape id and edge, the bits of the arms in that edge's group.
        nbr: per cell, the neighbour cell in each direction N, E, S, W (-1 off the board).
        start: the cell to start from (its usable arms are all reached).
        links: groups of cells whose tunnels are joined to each other (e.g. a start and its ladders).
    """
    reach = [0] * len(shape)
    stack: list[tuple[int, int]] = []
    link_of: dict[int, int] = {}
    for i, group in enumerate(links):
        for cell in group:
            link_of[cell] = i
    linked = [False] * len(links)

    def enter(cell: int, arm_bits: int) -> None:
        groups = arm_group[shape[cell]]
        bits = 0
        for e in range(4):
            if (arm_bits >> e) & 1:
                bits |= groups[e]
        new = bits & usable[cell] & ~reach[cell]
        if new:
            reach[cell] |= new
            stack.append((cell, new))

    enter(start, usable[start])
    while stack:
        cell, new = stack.pop()
        link = link_of.get(cell)
        if link is not None and not linked[link]:
            linked[link] = True
            for other in links[link]:
                enter(other, usable[other])
        for d in range(4):
            if (new >> d) & 1:
                j = nbr[cell][d]
                if j >= 0 and shape[j] >= 0 and (usable[j] >> OPP[d]) & 1:
                    enter(j, 1 << OPP[d])
    return np.array(reach, dtype=np.uint8)
