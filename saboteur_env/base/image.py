"""Board images (``render_mode="rgb_array"``), drawn with Pillow from the cards' tunnel data.

A seat's perspective is drawn from its :class:`~saboteur_env.base.observation.PlayerView` (so an image can never show
more than the seat may see: its own peeked goals are marked, nothing else hidden is); ``viewer=None`` draws the
public view and ``viewer="omniscient"`` also shows every face-down goal and every role.

Legend: brown cards; tunnels in sand colour, bright yellow where connected to the start; a dark cap ends a dead-end
stub; ``S`` start (green); face-down goals dark blue with ``?`` (``g``/``s`` once known to the viewer); revealed
gold in gold, revealed stone in grey. Under the board: one row per seat with its broken tools (P, L, C in red),
hand size, gold cards and a marker on the seat to act.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.base.cards import KIND_GOAL_GOLD, TOOL_NAMES
from saboteur_env.base.observation import PlayerView, player_view
from saboteur_env.base.state import GameState
from saboteur_env.common.draw import ARM, CELL, COLOURS, EDGE_PAIRS, PAD, ROW, default_font
from saboteur_env.common.geometry import geometry


def draw_view(
    view: PlayerView, private: bool = True, goal_marks: tuple[str | None, ...] = (None, None, None),
    roles: list[int] | None = None, title: str = "",
) -> NDArray[np.uint8]:  # fmt: skip
    """Draw a player view as an ``(H, W, 3)`` uint8 image."""
    from PIL import Image, ImageDraw

    cfg = view.config
    p = cfg.num_players
    width = max(PAD * 2 + cfg.cols * CELL, 330)
    height = PAD * 2 + ROW + cfg.rows * CELL + PAD + (p + 1) * ROW
    img = Image.new("RGB", (width, height), COLOURS["background"])
    d = ImageDraw.Draw(img)
    font = default_font()
    heading = title or f"round {view.round + 1}/{cfg.rounds}   draw pile {view.deck_size}"
    d.text((PAD, PAD), heading, fill=COLOURS["text"], font=font)
    top = PAD + ROW
    geo = geometry(cfg)
    goal_slot = {divmod(c, cfg.cols): g for g, c in enumerate(geo.goal_cells)}
    for r in range(cfg.rows):
        for c in range(cfg.cols):
            x0, y0 = PAD + c * CELL, top + r * CELL
            box = (x0 + 1, y0 + 1, x0 + CELL - 2, y0 + CELL - 2)
            cx, cy = x0 + CELL // 2, y0 + CELL // 2
            if view.empty[r, c]:
                d.rectangle(box, fill=COLOURS["empty"])
                continue
            if view.goal_facedown[r, c]:
                slot = goal_slot[(r, c)]
                known = goal_marks[slot] or ({"gold": "g", "stone": "s"}.get(view.goal_knowledge[slot] or "")
                                              if private else None)  # fmt: skip
                fill = {"g": COLOURS["gold"], "s": COLOURS["stone"]}.get(known or "", COLOURS["facedown"])
                d.rectangle(box, fill=COLOURS["facedown"], outline=fill, width=3)
                d.text((cx - 3, cy - 6), known or "?", fill=COLOURS["text"], font=font)
                continue
            fill = COLOURS["card"]
            if view.goal_gold[r, c]:
                fill = COLOURS["gold"]
            elif view.goal_stone[r, c]:
                fill = COLOURS["stone"]
            elif view.start[r, c]:
                fill = COLOURS["start"]
            d.rectangle(box, fill=fill)
            _draw_tunnels(d, view, r, c, cx, cy)
            if view.start[r, c]:
                d.text((cx - 3, cy - 6), "S", fill=COLOURS["text"], font=font)
    y = top + cfg.rows * CELL + PAD
    for off in range(p):
        who = "me" if off == 0 and private else f"seat+{off}"
        x = PAD
        if off == view.to_act:
            d.rectangle((x, y + 3, x + 6, y + 9), fill=COLOURS["turn"])
        d.text((x + 10, y), who, fill=COLOURS["text"], font=font)
        x += 60
        for t, name in enumerate(TOOL_NAMES):
            colour = COLOURS["broken"] if view.broken[off, t] else COLOURS["ok"]
            d.text((x, y), name[0].upper(), fill=colour, font=font)
            x += 12
        extra = f"hand {view.hand_size[off]}  gold cards {view.gold_cards[off]}"
        if roles is not None:
            extra += "  saboteur" if roles[off] else "  digger"
        d.text((x + 8, y), extra, fill=COLOURS["text"], font=font)
        y += ROW
    return np.asarray(img, dtype=np.uint8).copy()


def _draw_tunnels(d, view: PlayerView, r: int, c: int, cx: int, cy: int) -> None:
    ob, cb = int(view.open_bits[r, c]), int(view.conn_bits[r, c])
    jb, sb = int(view.join_bits[r, c]), int(view.stub_bits[r, c])
    half = CELL // 2 - 1
    joined = [False] * 4
    for i, (a, b) in enumerate(EDGE_PAIRS):
        if (jb >> i) & 1:
            joined[a] = joined[b] = True
    for e in range(4):
        if not (ob >> e) & 1:
            continue
        colour = COLOURS["connected"] if (cb >> e) & 1 else COLOURS["tunnel"]
        ux, uy = ARM[e]
        end = (cx + ux * half, cy + uy * half)
        if (sb >> e) & 1:  # dead-end stub: stops short of the centre with a cap
            start = (cx + ux * half // 3, cy + uy * half // 3)
            d.line([start, end], fill=colour, width=6)
            d.ellipse((start[0] - 4, start[1] - 4, start[0] + 4, start[1] + 4), fill=COLOURS["cap"])
        else:
            d.line([(cx, cy), end], fill=colour, width=6)
    if any(joined):
        centre_colour = COLOURS["connected"] if cb else COLOURS["tunnel"]
        d.ellipse((cx - 3, cy - 3, cx + 3, cy + 3), fill=centre_colour)


def render_image(state: GameState, viewer: int | str | None = None) -> NDArray[np.uint8]:
    """Image of the game: ``viewer`` = a seat (its perspective), None (public view) or ``"omniscient"``."""
    if isinstance(viewer, int) and not isinstance(viewer, bool):
        if not 0 <= viewer < state.config.num_players:
            raise ValueError(f"viewer={viewer} out of range; valid: 0..{state.config.num_players - 1}")
        return draw_view(player_view(state, viewer), title=f"seat {viewer}  round {state.round + 1}  "
                         f"draw pile {state.deck_size}")  # fmt: skip
    if viewer is None:
        return draw_view(player_view(state, 0), private=False)
    if viewer != "omniscient":
        raise ValueError(f"viewer={viewer!r} must be a seat index, None or 'omniscient'")
    marks = tuple(
        None if state.goal_revealed[g] else ("g" if state.goal_kind[g] == KIND_GOAL_GOLD else "s") for g in range(3)
    )
    return draw_view(player_view(state, 0), private=False, goal_marks=marks, roles=state.roles.tolist(),
                     title=f"omniscient  round {state.round + 1}  draw pile {state.deck_size}")  # fmt: skip
