"""Drawing kit shared by every game's images: cell size, margins, palette, arm vectors and the font.

Each game draws its own cards with these pieces (Pillow is imported on first use).
"""

from __future__ import annotations

from typing import Any

CELL = 36
PAD = 8
ROW = 16
COLOURS = {
    "background": (30, 30, 36),
    "empty": (58, 58, 66),
    "card": (120, 84, 52),
    "tunnel": (214, 190, 140),
    "connected": (255, 226, 92),
    "cap": (40, 24, 14),
    "start": (60, 150, 80),
    "facedown": (40, 60, 120),
    "gold": (230, 180, 40),
    "stone": (140, 140, 140),
    "text": (235, 235, 235),
    "broken": (230, 70, 60),
    "ok": (120, 200, 120),
    "turn": (255, 226, 92),
}
ARM = ((0, -1), (1, 0), (0, 1), (-1, 0))  # unit vectors N, E, S, W in image coordinates (x, y)
EDGE_PAIRS = ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3))


def default_font() -> Any:
    """Pillow's built-in font."""
    from PIL import ImageFont

    return ImageFont.load_default()
