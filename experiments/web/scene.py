"""Board pictures for the page: the drawing itself lives in the library (:mod:`saboteur_env.pictures`, a seat's
view only); this module adds the hand cards of the page (:func:`card_svg`) and re-exports the scene API.
"""

from __future__ import annotations

import html

from experiments.web.words import card_info, path_spec
from saboteur_env import GameConfig
from saboteur_env.pictures import UNIT, board_scene, round_end_view, seat_line, spec_cell, svg_cell, to_png, to_svg

__all__ = ["UNIT", "board_scene", "card_svg", "round_end_view", "seat_line", "to_png", "to_svg"]


def card_svg(config: GameConfig, kind: int, rot: int = 0, size: float = 56) -> str:
    """A hand card drawn from its tunnel data (path cards) or as a labelled action card, as an SVG document."""
    info = card_info(config, kind)
    spec = path_spec(config, kind)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size:.0f}" height="{size * 1.3:.0f}" '
           f'viewBox="0 0 {size:.1f} {size * 1.3:.1f}" font-family="DejaVu Sans, Arial, sans-serif">']  # fmt: skip
    if spec is not None:
        out.extend(svg_cell(spec_cell(spec, kind, rot), 0, 0, size, None))
    else:
        out.append(f'<rect x="1" y="1" width="{size - 2:.1f}" height="{size - 2:.1f}" rx="{size / 12:.1f}" '
                   f'fill="#4b3a64"/>')  # fmt: skip
        words = info["name"].replace("/", "/ ").split()
        for i, word in enumerate(words[:4]):
            out.append(f'<text x="{size / 2:.1f}" y="{size * (0.3 + 0.2 * i):.1f}" font-size="{size * 0.17:.1f}" '
                       f'text-anchor="middle" fill="#ebebeb">{html.escape(word)}</text>')  # fmt: skip
    out.append(f'<text x="{size / 2:.1f}" y="{size * 1.22:.1f}" font-size="{size * 0.2:.1f}" text-anchor="middle" '
               f'fill="#ebebeb">{html.escape(info["code"] if info["path"] else "")}</text>')  # fmt: skip
    out.append("</svg>")
    return "\n".join(out)


