"""The text notation the three games share: cell names in the move notation and the centre of a path card on a text
board (docs/text.md). Shared ground, so that no game's text reads another game's module."""

from __future__ import annotations

from saboteur_env.common.cards import EDGE_PAIRS

# Box-drawing character of a set of arms, indexed by the 4-bit mask N=1, E=2, S=4, W=8.
_BOX = " ╵╶└╷│┌├╴┘─┴┐┤┬┼"
DEAD_END = "■"


def cell_text(row: int, col: int) -> str:
    """A cell in the move notation: frame coordinates ``(row,col)``, as the text boards label their rows and columns
    (the rulebook frame's top-left card is (0,0); with a margin, cells outside the frame have negative or larger
    numbers)."""
    return f"({row},{col})"


def centre_char(join_bits: int) -> str:
    """The centre of a path card drawn by its shape: the box character of the arms its tunnels join (6-bit mask over
    ``EDGE_PAIRS``), so a straight tunnel is ``─`` and only a crossroads is ``┼``; ``■`` when nothing is joined
    (a dead end: every arm stops at the centre)."""
    arms = 0
    for i, (a, b) in enumerate(EDGE_PAIRS):
        if (join_bits >> i) & 1:
            arms |= (1 << a) | (1 << b)
    return _BOX[arms] if arms else DEAD_END
