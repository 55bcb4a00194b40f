"""Board pictures for papers and pages, drawn from one seat's view only (all three games).

    from saboteur_env.pictures import board_png, board_svg
    svg = board_svg(state, 2, scale=2)           # seat 2's view: its own secrets shown, nothing hidden
    png = board_png(state, None, scale=3)        # the public view (no seat's secrets), PNG bytes

``board_svg`` / ``board_png`` / ``board_array`` take a game state (the picture goes through
``saboteur_env.api.player_view``) or a view (``player_view``'s result), and draw the board with row and column
coordinates as the moves name cells, a legend and one line per seat. :func:`round_end_view` rebuilds the exact board
at the end of a round from the view before the round's last move and the public events of that move (the engine
deals the next round in the same step).
"""

from __future__ import annotations

import io
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.pictures.draw import PALETTE, UNIT, check_scale, seat_line, svg_cell, to_png, to_svg
from saboteur_env.pictures.round_end import round_end_view
from saboteur_env.pictures.scene import LEGENDS, board_scene, path_spec, seat_name, spec_cell

__all__ = ["LEGENDS", "PALETTE", "UNIT", "board_array", "board_png", "board_scene", "board_svg", "check_scale",
           "path_spec", "round_end_view", "scene_of", "seat_line", "seat_name", "spec_cell", "svg_cell", "to_png",
           "to_svg"]  # fmt: skip


def _is_view(obj: Any) -> bool:
    from saboteur_env.base.observation import PlayerView
    from saboteur_env.duel.view import DuelView
    from saboteur_env.sab2.view import Sab2View

    return isinstance(obj, PlayerView | Sab2View | DuelView)


def scene_of(source: Any, viewer: int | None = None, title: str = "", names: list[str] | None = None) -> dict[str, Any]:
    """The scene of a state seen by ``viewer`` (a seat: its view with its secrets; None: the public view), or of a
    view (``viewer``: the absolute seat whose view it is; None: drawn as the public view, without its secrets)."""
    if viewer is not None and (isinstance(viewer, bool) or not isinstance(viewer, int | np.integer)):
        raise ValueError(f"viewer={viewer!r} must be a seat index or None")
    if _is_view(source):
        seat = int(viewer) if viewer is not None else int(getattr(source, "seat", None) or 0)
        if viewer is not None and not 0 <= seat < source.config.num_players:
            raise ValueError(f"viewer={viewer} is out of range; valid: 0..{source.config.num_players - 1}")
        return board_scene(source, seat, viewer is not None, names, title)
    config = getattr(source, "config", None)
    if config is None or not hasattr(config, "num_players"):
        raise ValueError(f"expected a game state or a seat's view, not {type(source).__name__}")
    from saboteur_env.api import player_view

    seat = 0 if viewer is None else int(viewer)
    if not 0 <= seat < config.num_players:
        raise ValueError(f"viewer={viewer} is out of range; valid: None or 0..{config.num_players - 1}")
    return board_scene(player_view(source, seat), seat, viewer is not None, names, title)


def board_svg(source: Any, viewer: int | None = None, scale: float = 1.0, *, legend: bool = True,
              seats: bool = True, title: str = "", names: list[str] | None = None) -> str:  # fmt: skip
    """The board as an SVG document (1 = 48 user units per cell); see :func:`scene_of` for ``source``/``viewer``."""
    check_scale(scale)
    return to_svg(scene_of(source, viewer, title, names), scale, legend, seats)


def board_image(source: Any, viewer: int | None = None, scale: float = 2.0, *, legend: bool = True,
                seats: bool = True, title: str = "", names: list[str] | None = None) -> Any:  # fmt: skip
    """The board as a Pillow image at ``scale`` (48 * scale px per cell)."""
    check_scale(scale)
    return to_png(scene_of(source, viewer, title, names), scale, legend, seats)


def board_png(source: Any, viewer: int | None = None, scale: float = 2.0, *, legend: bool = True,
              seats: bool = True, title: str = "", names: list[str] | None = None) -> bytes:  # fmt: skip
    """The board as PNG bytes at ``scale`` (48 * scale px per cell)."""
    buf = io.BytesIO()
    board_image(source, viewer, scale, legend=legend, seats=seats, title=title, names=names).save(buf, format="PNG")
    return buf.getvalue()


def board_array(source: Any, viewer: int | None = None, scale: float = 2.0, *, legend: bool = True,
                seats: bool = True, title: str = "", names: list[str] | None = None) -> NDArray[np.uint8]:  # fmt: skip
    """The board as an ``(H, W, 3)`` uint8 array at ``scale``."""
    img = board_image(source, viewer, scale, legend=legend, seats=seats, title=title, names=names)
    return np.asarray(img, dtype=np.uint8)
