"""The orientation of a goal card being turned face up (rules reference §1.10, decision A5; Duel §3.6).

A goal card offers two rotations (0° and 180°). Seeds 000 and 004 say to turn it to fit the card just played, so
the rotation is chosen by these tie-breaks, in order:

1. open towards the card just placed, when that card is one of the reaching cards;
2. open towards as many reaching cards as possible;
3. fewest mismatches (open against closed) with the other neighbouring maze cards;
4. a game's own preference, if any (the Duel: a rotation whose gold the revealing player then reaches);
5. 0°.

A *reaching* card is a neighbouring maze card whose arm facing the goal is open and connected (to the start, or
for the Duel to a player's start).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

Facing = tuple[bool, bool] | None  # per direction: None (no maze card) or (facing arm open, reaching)


def goal_rotation(
    open_bits: Sequence[int], facing: Sequence[Facing], placed_dir: int, prefer: Sequence[bool] | None = None
) -> int:
    """Index into ``open_bits`` (open-edge bits per rotation) chosen by the tie-breaks above.

    Args:
        open_bits: the goal's open edges (bit d = direction d) for each rotation, 0° first.
        facing: for directions N, E, S, W from the goal cell: ``None`` when no maze card lies there, else
            ``(the neighbour's facing arm is open, it is reaching)``.
        placed_dir: direction of the card just placed, or -1 when it is not next to this goal.
        prefer: the game's own preference per rotation (tie-break 4), or ``None``.
    """
    best_key: tuple[int, int, int, int, int] | None = None
    best = 0
    for rot, ob in enumerate(open_bits):
        towards_placed = 0
        towards = 0
        mismatches = 0
        for d, f in enumerate(facing):
            if f is None:
                continue
            theirs_open, reaching = f
            mine = (ob >> d) & 1
            if reaching:
                towards += mine
                if d == placed_dir:
                    towards_placed = mine
            elif mine != int(theirs_open):
                mismatches += 1
        preferred = int(bool(prefer[rot])) if prefer is not None else 0
        key = (-towards_placed, -towards, mismatches, -preferred, rot)
        if best_key is None or key < best_key:
            best_key, best = key, rot
    return best


def facing_of(
    neighbours: Sequence[int],
    cell_shape: NDArray[np.int16],
    shape_open: NDArray[np.uint8],
    reach: NDArray[np.uint8],
    placed_cell: int,
) -> tuple[list[Facing], int]:
    """The ``facing`` and ``placed_dir`` arguments of :func:`goal_rotation` for a goal cell.

    Args:
        neighbours: the goal cell's neighbour in directions N, E, S, W (-1 off the board).
        cell_shape: shape id per cell (-1 empty or face down); ``shape_open``: open-edge bits per shape id.
        reach: per cell, the arms connected (to the start; in the Duel, to either player's start).
        placed_cell: the cell of the card just placed.
    """
    facing: list[Facing] = []
    placed_dir = -1
    for d, j in enumerate(neighbours):
        if j < 0 or cell_shape[j] < 0:
            facing.append(None)
            continue
        o = (d + 2) & 3
        theirs = bool((int(shape_open[cell_shape[j]]) >> o) & 1)
        facing.append((theirs, theirs and bool((int(reach[j]) >> o) & 1)))
        if j == placed_cell:
            placed_dir = d
    return facing, placed_dir
