"""Board pictures for the page and for papers: a seat's view becomes a *scene* (plain data), drawn as SVG or PNG.

A scene is a JSON-friendly dict built from a view (``saboteur_env.api.player_view``) only, so a picture cannot show
more than the seat may see; ``private=False`` leaves the seat's own secrets out (the public view). Cells carry their
arms (open, connected, dead-end stub, door colour), the card's fill and a centre glyph; the scene also carries row
and column labels in frame coordinates (as the moves name cells), a legend and one line per seat.

:func:`to_svg` draws it at any scale (vector, for papers and the page: every cell is a ``<g data-cell=i>`` the page
clicks); :func:`to_png` rasterises the same drawing with Pillow at ``scale`` (DejaVu Sans when installed).
"""

from __future__ import annotations

import html
from typing import Any

from experiments.web.words import card_info, path_spec, seat_name
from saboteur_env import GameConfig
from saboteur_env.common.cards import EDGE_PAIRS, TOOL_NAMES, PathCardSpec, make_shape
from saboteur_env.common.geometry import geometry

__all__ = ["UNIT", "board_scene", "card_svg", "to_png", "to_svg"]

UNIT = 48  # cell size at scale 1 (SVG user units = pixels)
ARM = ((0, -1), (1, 0), (0, 1), (-1, 0))
PALETTE = {
    "background": "#1e1e24", "empty": "#3a3a42", "card": "#78543a", "tunnel": "#d6be8c", "connected": "#ffe25c",
    "cap": "#28180e", "start": "#3c9650", "facedown": "#283c78", "gold": "#e6b428", "stone": "#8c8c8c",
    "text": "#ebebeb", "blue": "#4682e6", "green": "#46be5a", "crystal": "#5adce6", "troll": "#e6463c",
    "broken": "#e6463c", "legal": "#ff5cf0", "grid": "#55555f",
}  # fmt: skip
LEGENDS = {
    "base": [("connected", "tunnel joined to the start"), ("tunnel", "tunnel"), ("cap", "dead end"),
             ("start", "S start"), ("facedown", "? face-down goal (g/s: known)"), ("gold", "gold"),
             ("stone", "stone")],
    "sab2": [("connected", "tunnel joined to the start"), ("tunnel", "tunnel"), ("blue", "blue door"),
             ("green", "green door"), ("crystal", "crystal"), ("start", "S start, L ladder"),
             ("facedown", "? face-down goal (g/s: known)"), ("gold", "gold"), ("stone", "stone")],
    "duel": [("connected", "tunnel you reach"), ("tunnel", "tunnel"), ("blue", "blue door / start / counter"),
             ("green", "green door / start / counter"), ("troll", "T troll (t bribed)"), ("gold", "gold nugget"),
             ("facedown", "? face-down goal (! peeked)"), ("text", "k key, L ladder")],
}  # fmt: skip


def _arm(open_: bool, conn: bool = False, stub: bool = False, door: str | None = None) -> dict[str, Any] | None:
    return {"conn": conn, "stub": stub, "door": door} if open_ else None


def _cell(r: int, c: int, fill: str = "empty", arms: list | None = None, hub: bool = False, glyph: str = "",
          badges: list | None = None, tip: str = "") -> dict[str, Any]:  # fmt: skip
    return {"r": r, "c": c, "fill": fill, "arms": arms or [None] * 4, "hub": hub, "glyph": glyph,
            "badges": badges or [], "tip": tip}  # fmt: skip


def _joined(join_bits: int) -> list[bool]:
    joined = [False] * 4
    for i, (a, b) in enumerate(EDGE_PAIRS):
        if (join_bits >> i) & 1:
            joined[a] = joined[b] = True
    return joined


def board_scene(view: Any, seat: int | None, private: bool = True, names: list[str] | None = None,
                title: str = "") -> dict[str, Any]:  # fmt: skip
    """The scene of a seat's view (``seat``: its absolute seat; ``private``: show its own secrets)."""
    cfg: GameConfig = view.config
    game = cfg.game
    build = {"duel": _duel_cells, "sab2": _sab2_cells}.get(game, _base_cells)
    cells, seats, status = build(view, seat or 0, private, names)
    return {
        "game": game, "rows": cfg.rows, "cols": cfg.cols,
        "row_labels": [cfg.cell_coords(r * cfg.cols)[0] for r in range(cfg.rows)],
        "col_labels": [cfg.cell_coords(c)[1] for c in range(cfg.cols)],
        "cells": cells, "seats": seats, "status": status, "title": title, "legend": LEGENDS.get(game, []),
    }  # fmt: skip


def _base_cells(view: Any, seat: int, private: bool, names: list[str] | None) -> tuple[list, list, str]:
    from saboteur_env.base.cards import ROLE_NAMES

    cfg = view.config
    goal_slot = {divmod(cell, cfg.cols): g for g, cell in enumerate(geometry(cfg).goal_cells)}
    cells = []
    for r in range(cfg.rows):
        for c in range(cfg.cols):
            if view.empty[r, c]:
                cells.append(_cell(r, c))
                continue
            if view.goal_facedown[r, c]:
                known = view.goal_knowledge[goal_slot[(r, c)]] if private else None
                mark = {"gold": "g", "stone": "s"}.get(known or "", "?")
                cells.append(_cell(r, c, "facedown", glyph=mark, tip=f"goal {goal_slot[(r, c)]}, face down"))
                continue
            ob, cb, sb = int(view.open_bits[r, c]), int(view.conn_bits[r, c]), int(view.stub_bits[r, c])
            arms = [_arm(bool(ob >> e & 1), bool(cb >> e & 1), bool(sb >> e & 1)) for e in range(4)]
            fill = ("gold" if view.goal_gold[r, c] else "stone" if view.goal_stone[r, c]
                    else "start" if view.start[r, c] else "card")  # fmt: skip
            glyph = "S" if view.start[r, c] else ""
            cells.append(_cell(r, c, fill, arms, any(_joined(int(view.join_bits[r, c]))), glyph,
                               tip={"gold": "goal: gold", "stone": "goal: stone", "start": "start"}.get(fill, "")))
    p = cfg.num_players
    seats = []
    for off in range(p):
        s = (seat + off) % p
        broken = [TOOL_NAMES[t] for t in range(3) if view.broken[off, t]]
        row = {"seat": s, "name": seat_name(s, seat if private else None, names), "to_act": off == view.to_act,
               "hand": int(view.hand_size[off]), "broken": broken, "gold": f"{int(view.gold_cards[off])} gold cards",
               "role": ROLE_NAMES[view.last_round_roles[off]] if view.last_round_roles[off] >= 0 else "",
               "marks": []}  # fmt: skip
        seats.append(row)
    status = f"round {view.round + 1}/{cfg.rounds} · draw pile {view.deck_size} · gold deck {view.gold_deck_size}"
    return cells, seats, status


def _sab2_cells(view: Any, seat: int, private: bool, names: list[str] | None) -> tuple[list, list, str]:
    from saboteur_env.sab2 import cards as sc

    cfg = view.config
    goal_slot = {divmod(cell, cfg.cols): g for g, cell in enumerate(geometry(cfg).goal_cells)}
    cells = []
    for r in range(cfg.rows):
        for c in range(cfg.cols):
            ob = int(view.open_bits[r, c])
            if view.goal_facedown[r, c]:
                mark = "?"
                if private and view.peeked_gold[r, c]:
                    mark = "g"
                elif private and view.peeked_stone[r, c]:
                    mark = "s"
                cells.append(_cell(r, c, "facedown", glyph=mark, tip=f"goal {goal_slot[(r, c)]}, face down"))
                continue
            if not ob and not view.start[r, c]:
                cells.append(_cell(r, c))
                continue
            cb, jb = int(view.conn_bits[r, c]), int(view.join_bits[r, c])
            bd, gd = int(view.blue_door_bits[r, c]), int(view.green_door_bits[r, c])
            joined = _joined(jb)
            arms = [_arm(bool(ob >> e & 1), bool(cb >> e & 1), bool(view.path[r, c]) and not joined[e]
                         and not view.ladder[r, c],
                         "blue" if bd >> e & 1 else "green" if gd >> e & 1 else None) for e in range(4)]  # fmt: skip
            fill = ("gold" if view.goal_gold[r, c] else "stone" if view.goal_stone[r, c]
                    else "start" if view.start[r, c] else "card")  # fmt: skip
            glyph = "S" if view.start[r, c] else ""
            badges = []
            if view.ladder[r, c]:
                badges.append(["L", "text"])
            if view.crystal[r, c]:
                badges.append(["◆", "crystal"])
            cells.append(_cell(r, c, fill, arms, any(joined), glyph, badges))
    p = cfg.num_players
    seats = []
    for off in range(p):
        s = (seat + off) % p
        marks = [n for n, flag in (("TRAPPED", view.trapped), ("theft", view.theft), ("hats swapped",
                                                                                      view.hats_swapped)) if flag[off]]
        role = sc.ROLE_NAMES[view.last_roles[off]] if view.last_roles is not None else ""
        if private and view.inspected_roles[off] is not None and off:
            marks.append(f"inspected: {sc.ROLE_NAMES[view.inspected_roles[off]]}")
        seats.append({"seat": s, "name": seat_name(s, seat if private else None, names), "to_act": off == view.to_act,
                      "hand": int(view.hand_sizes[off]), "broken": [TOOL_NAMES[t] for t in range(3)
                                                                    if view.broken[off, t]],
                      "gold": f"{int(view.gold[off])} gold", "role": role, "marks": marks})  # fmt: skip
    status = (f"round {view.round + 1}/{cfg.rounds} · draw pile {view.deck_size} · role reserve {view.reserve_size}"
              f" · phase {view.phase.name.lower()}")  # fmt: skip
    return cells, seats, status


def _duel_cells(view: Any, seat: int, private: bool, names: list[str] | None) -> tuple[list, list, str]:
    from saboteur_env.duel.view import PLANE

    cfg = view.config
    pl = view.planes
    me, opp = view.seat, 1 - view.seat
    colour = ("blue", "green")
    slot_of = {cell: i for i, cell in enumerate(geometry(cfg).goal_cells)}
    cells = []

    def on(name: str, cell: int) -> bool:
        return bool(pl[PLANE[name], cell] > 0.5)

    for cell in range(cfg.num_cells):
        r, c = divmod(cell, cfg.cols)
        if on("goal_facedown", cell):
            slot = slot_of.get(cell, -1)
            mark = "!" if private and slot >= 0 and view.my_peeks[slot] >= 0 else "?"
            tip = f"goal slot {slot}, face down"
            if mark == "!":
                from saboteur_env.duel import cards as dc

                tip += f" (you peeked: {dc.GOAL_CARDS[view.my_peeks[slot]].name})"
            cells.append(_cell(r, c, "facedown", glyph=mark, tip=tip))
            continue
        opens = [on(f"open_{e}", cell) for e in "NESW"]
        if not any(opens):
            cells.append(_cell(r, c))
            continue
        arms = []
        for e, d in enumerate("NESW"):
            door = colour[me] if on(f"door_mine_{d}", cell) else colour[opp] if on(f"door_other_{d}", cell) else None
            arms.append(_arm(opens[e], private and on(f"reach_me_{d}", cell), False, door))
        joined = _joined(sum(int(on(f"join_{i}", cell)) << i for i in range(6)))
        for e, arm in enumerate(arms):
            if arm is not None and not joined[e] and sum(opens) > 1:  # a one-arm tunnel on a card of several
                arm["stub"] = True
        fill, glyph, badges = "card", "", []
        if on("start_me", cell) or on("start_opp", cell):
            fill, glyph = colour[me] if on("start_me", cell) else colour[opp], "S"
        if on("goal_revealed", cell):
            fill = "stone"
        if on("troll", cell):
            glyph = "t" if on("bribed_me", cell) or on("bribed_opp", cell) else "T"
        if pl[PLANE["nuggets"], cell] > 0:
            badges.append([f"{round(float(pl[PLANE['nuggets'], cell]) * 3)}$", "gold"])
        for name, who in (("counter_me", me), ("counter_opp", opp), ("bribed_me", me), ("bribed_opp", opp)):
            if on(name, cell):
                badges.append(["■", colour[who]])
        if on("ladder_me", cell) or on("ladder_opp", cell):
            badges.append(["L", colour[me] if on("ladder_me", cell) else colour[opp]])
        if on("key", cell):
            badges.append(["k", "text"])
        cells.append(_cell(r, c, fill, arms, any(joined), glyph, badges))
    seats = []
    for i, s in enumerate((me, opp)):
        name = seat_name(s, seat if private else None, names or ["blue", "green"])
        label = name if colour[s] in name else f"{name} ({colour[s]})"
        seats.append({"seat": s, "name": label, "to_act": view.my_turn == (i == 0),
                      "hand": int(view.hand_sizes[i]), "broken": [TOOL_NAMES[t] for t in range(3) if view.tools[i, t]],
                      "gold": f"{int(view.nuggets[i])} nuggets", "role": "", "marks": []})  # fmt: skip
    status = (f"round {view.round + 1}/{cfg.rounds} · draw pile {view.deck_size} · counters {view.counters_left} · "
              f"keys {view.keys_left} · goals in pool {view.goals_in_pool}")  # fmt: skip
    return cells, seats, status


# ---- drawing -----------------------------------------------------------------------------------------------------
def _svg_cell(cell: dict[str, Any], x: float, y: float, u: float, index: int | None) -> list[str]:
    p = PALETTE
    attrs = f' data-cell="{index}"' if index is not None else ""
    out = [f'<g class="cell"{attrs}>']
    if cell.get("tip"):
        out.append(f"<title>{html.escape(cell['tip'])}</title>")
    out.append(f'<rect x="{x + 1:.1f}" y="{y + 1:.1f}" width="{u - 2:.1f}" height="{u - 2:.1f}" rx="{u / 12:.1f}" '
               f'fill="{p[cell["fill"]]}"/>')  # fmt: skip
    cx, cy, half, w = x + u / 2, y + u / 2, u / 2 - 1, u / 6
    for e, arm in enumerate(cell["arms"]):
        if arm is None:
            continue
        dx, dy = ARM[e]
        colour = p["connected"] if arm["conn"] else p["tunnel"]
        start = u / 6 if arm["stub"] else 0
        out.append(f'<line x1="{cx + dx * start:.1f}" y1="{cy + dy * start:.1f}" x2="{cx + dx * half:.1f}" '
                   f'y2="{cy + dy * half:.1f}" stroke="{colour}" stroke-width="{w:.1f}"/>')  # fmt: skip
        if arm["stub"]:
            out.append(f'<circle cx="{cx + dx * start:.1f}" cy="{cy + dy * start:.1f}" r="{w * 0.7:.1f}" '
                       f'fill="{p["cap"]}"/>')  # fmt: skip
        if arm["door"]:
            bx, by = cx + dx * half * 0.62, cy + dy * half * 0.62
            ww, hh = (w * 2.2, w * 0.9) if dx == 0 else (w * 0.9, w * 2.2)
            out.append(f'<rect x="{bx - ww / 2:.1f}" y="{by - hh / 2:.1f}" width="{ww:.1f}" height="{hh:.1f}" '
                       f'fill="{p[arm["door"]]}" stroke="#000" stroke-width="0.5"/>')  # fmt: skip
    if cell["hub"]:
        conn = any(a and a["conn"] and not a["stub"] for a in cell["arms"])  # a joined tunnel
        out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{w * 0.5:.1f}" '
                   f'fill="{p["connected"] if conn else p["tunnel"]}"/>')  # fmt: skip
    fs = u * 0.36
    if cell["glyph"]:
        out.append(f'<text x="{cx:.1f}" y="{cy + fs * 0.35:.1f}" font-size="{fs:.1f}" text-anchor="middle" '
                   f'font-weight="bold" fill="{p["text"]}" stroke="#000" stroke-width="{fs / 14:.2f}">'
                   f"{html.escape(cell['glyph'])}</text>")  # fmt: skip
    for i, (text, colour) in enumerate(cell["badges"]):
        bx = x + u * (0.18 + 0.62 * (i % 2))
        by = y + u * (0.24 + 0.66 * (i // 2))
        out.append(f'<text x="{bx:.1f}" y="{by:.1f}" font-size="{fs * 0.7:.1f}" text-anchor="middle" '
                   f'fill="{p[colour]}">{html.escape(text)}</text>')  # fmt: skip
    out.append("</g>")
    return out


def _layout(scene: dict[str, Any], scale: float, legend: bool, seats: bool) -> dict[str, float]:
    u = UNIT * scale
    label = u * 0.6
    board_w, board_h = scene["cols"] * u, scene["rows"] * u
    line = u * 0.42
    width = label + board_w + u * 0.3
    top = line * (1.4 if scene["title"] else 0) + line * 1.3
    legend_rows = -(-len(scene["legend"]) // 2) if legend else 0
    seat_rows = len(scene["seats"]) if seats else 0
    height = top + label + board_h + line * 0.6 + (legend_rows + seat_rows) * line + line * 0.6
    fs = line * 0.8
    texts = [len(scene["status"]) * fs * 0.58, len(scene["title"]) * fs * 0.7]
    if seats:
        texts += [len(seat_line(r)) * fs * 0.9 * 0.58 for r in scene["seats"]]
    col = max((len(t) for _, t in scene["legend"]), default=0) * fs * 0.9 * 0.58 + fs * 2 if legend else 0
    width = max(width, label + u * 0.3 + max(texts), label + 2 * col)
    return {"u": u, "label": label, "line": line, "width": width, "height": height, "top": top, "col": col}


def to_svg(scene: dict[str, Any], scale: float = 1.0, legend: bool = True, seats: bool = True,
           clickable: bool = False) -> str:  # fmt: skip
    """The scene as a standalone SVG document (``clickable``: cells carry ``data-cell`` for the page)."""
    if not 0.1 <= scale <= 20:
        raise ValueError(f"scale={scale} must be in 0.1..20")
    g = _layout(scene, scale, legend, seats)
    u, label, line, top = g["u"], g["label"], g["line"], g["top"]
    p = PALETTE
    fs = line * 0.8
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{g["width"]:.0f}" height="{g["height"]:.0f}" '
           f'viewBox="0 0 {g["width"]:.1f} {g["height"]:.1f}" font-family="DejaVu Sans, Arial, sans-serif">',
           f'<rect width="100%" height="100%" fill="{p["background"]}"/>']  # fmt: skip
    y = line * 1.1
    if scene["title"]:
        out.append(f'<text x="{label:.1f}" y="{y:.1f}" font-size="{fs * 1.15:.1f}" font-weight="bold" '
                   f'fill="{p["text"]}">{html.escape(scene["title"])}</text>')  # fmt: skip
        y += line * 1.4
    out.append(f'<text x="{label:.1f}" y="{y:.1f}" font-size="{fs:.1f}" fill="{p["text"]}">'
               f"{html.escape(scene['status'])}</text>")  # fmt: skip
    bx, by = label, top + label
    for c, text in enumerate(scene["col_labels"]):
        out.append(f'<text x="{bx + c * u + u / 2:.1f}" y="{by - label * 0.3:.1f}" font-size="{fs:.1f}" '
                   f'text-anchor="middle" fill="{p["text"]}">{text}</text>')  # fmt: skip
    for r, text in enumerate(scene["row_labels"]):
        out.append(f'<text x="{label * 0.55:.1f}" y="{by + r * u + u / 2 + fs * 0.35:.1f}" font-size="{fs:.1f}" '
                   f'text-anchor="middle" fill="{p["text"]}">{text}</text>')  # fmt: skip
    cols = scene["cols"]
    for cell in scene["cells"]:
        index = cell["r"] * cols + cell["c"] if clickable else None
        out.extend(_svg_cell(cell, bx + cell["c"] * u, by + cell["r"] * u, u, index))
    y = by + scene["rows"] * u + line * 1.2
    if legend:
        for i, (colour, text) in enumerate(scene["legend"]):
            lx = label + (i % 2) * g["col"]
            ly = y + (i // 2) * line
            out.append(f'<rect x="{lx:.1f}" y="{ly - fs * 0.8:.1f}" width="{fs:.1f}" height="{fs:.1f}" '
                       f'fill="{p[colour]}"/>')  # fmt: skip
            out.append(f'<text x="{lx + fs * 1.4:.1f}" y="{ly:.1f}" font-size="{fs * 0.9:.1f}" fill="{p["text"]}">'
                       f"{html.escape(text)}</text>")  # fmt: skip
        y += -(-len(scene["legend"]) // 2) * line
    if seats:
        for row in scene["seats"]:
            out.append(f'<text x="{label:.1f}" y="{y:.1f}" font-size="{fs * 0.9:.1f}" fill="{p["text"]}">'
                       f"{html.escape(seat_line(row))}</text>")  # fmt: skip
            y += line
    out.append("</svg>")
    return "\n".join(out)


def seat_line(row: dict[str, Any]) -> str:
    parts = [("▶ " if row["to_act"] else "  ") + row["name"], f"hand {row['hand']}", row["gold"],
             "broken: " + (", ".join(row["broken"]) or "none")]  # fmt: skip
    if row["role"]:
        parts.append(f"last round: {row['role']}")
    parts.extend(row["marks"])
    return " · ".join(parts)


def _font(size: float) -> Any:
    from PIL import ImageFont

    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, max(6, round(size)))
        except OSError:
            continue
    return ImageFont.load_default(size=max(6, round(size)))


def _rgb(hex_colour: str) -> tuple[int, int, int]:
    return int(hex_colour[1:3], 16), int(hex_colour[3:5], 16), int(hex_colour[5:7], 16)


def to_png(scene: dict[str, Any], scale: float = 2.0, legend: bool = True, seats: bool = True) -> Any:
    """The scene as a Pillow image, the same drawing as :func:`to_svg` rasterised at ``scale``."""
    from PIL import Image, ImageDraw

    if not 0.1 <= scale <= 20:
        raise ValueError(f"scale={scale} must be in 0.1..20")
    g = _layout(scene, scale, legend, seats)
    u, label, line, top = g["u"], g["label"], g["line"], g["top"]
    p = {k: _rgb(v) for k, v in PALETTE.items()}
    img = Image.new("RGB", (round(g["width"]), round(g["height"])), p["background"])
    d = ImageDraw.Draw(img)
    fs = line * 0.8
    font, small, glyph_font = _font(fs), _font(fs * 0.9), _font(u * 0.36)
    y = line * 1.1
    if scene["title"]:
        d.text((label, y), scene["title"], fill=p["text"], font=_font(fs * 1.15), anchor="ls")
        y += line * 1.4
    d.text((label, y), scene["status"], fill=p["text"], font=font, anchor="ls")
    bx, by = label, top + label
    for c, text in enumerate(scene["col_labels"]):
        d.text((bx + c * u + u / 2, by - label * 0.3), str(text), fill=p["text"], font=font, anchor="ms")
    for r, text in enumerate(scene["row_labels"]):
        d.text((label * 0.55, by + r * u + u / 2), str(text), fill=p["text"], font=font, anchor="mm")
    w = max(2, round(u / 6))
    for cell in scene["cells"]:
        x0, y0 = bx + cell["c"] * u, by + cell["r"] * u
        d.rounded_rectangle((x0 + 1, y0 + 1, x0 + u - 2, y0 + u - 2), radius=u / 12, fill=p[cell["fill"]])
        cx, cy, half = x0 + u / 2, y0 + u / 2, u / 2 - 1
        for e, arm in enumerate(cell["arms"]):
            if arm is None:
                continue
            dx, dy = ARM[e]
            start = u / 6 if arm["stub"] else 0
            colour = p["connected"] if arm["conn"] else p["tunnel"]
            d.line((cx + dx * start, cy + dy * start, cx + dx * half, cy + dy * half), fill=colour, width=w)
            if arm["stub"]:
                rr = w * 0.7
                d.ellipse((cx + dx * start - rr, cy + dy * start - rr, cx + dx * start + rr, cy + dy * start + rr),
                          fill=p["cap"])  # fmt: skip
            if arm["door"]:
                ddx, ddy = cx + dx * half * 0.62, cy + dy * half * 0.62
                ww, hh = (w * 2.2, w * 0.9) if dx == 0 else (w * 0.9, w * 2.2)
                d.rectangle((ddx - ww / 2, ddy - hh / 2, ddx + ww / 2, ddy + hh / 2), fill=p[arm["door"]],
                            outline=(0, 0, 0))  # fmt: skip
        if cell["hub"]:
            conn = any(a and a["conn"] and not a["stub"] for a in cell["arms"])  # a joined tunnel
            rr = w * 0.5
            d.ellipse((cx - rr, cy - rr, cx + rr, cy + rr), fill=p["connected"] if conn else p["tunnel"])
        if cell["glyph"]:
            d.text((cx, cy), cell["glyph"], fill=p["text"], font=glyph_font, anchor="mm", stroke_width=1,
                   stroke_fill=(0, 0, 0))  # fmt: skip
        for i, (text, colour) in enumerate(cell["badges"]):
            d.text((x0 + u * (0.18 + 0.62 * (i % 2)), y0 + u * (0.24 + 0.66 * (i // 2))), text, fill=p[colour],
                   font=_font(fs * 0.7), anchor="ms")  # fmt: skip
    y = by + scene["rows"] * u + line * 1.2
    if legend:
        for i, (colour, text) in enumerate(scene["legend"]):
            lx = label + (i % 2) * g["col"]
            ly = y + (i // 2) * line
            d.rectangle((lx, ly - fs * 0.8, lx + fs, ly + fs * 0.2), fill=p[colour])
            d.text((lx + fs * 1.4, ly), text, fill=p["text"], font=small, anchor="ls")
        y += -(-len(scene["legend"]) // 2) * line
    if seats:
        for row in scene["seats"]:
            d.text((label, y), seat_line(row), fill=p["text"], font=small, anchor="ls")
            y += line
    return img


def card_svg(config: GameConfig, kind: int, rot: int = 0, size: float = 56) -> str:
    """A hand card drawn from its tunnel data (path cards) or as a labelled action card, as an SVG document."""
    info = card_info(config, kind)
    spec = path_spec(config, kind)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{size:.0f}" height="{size * 1.3:.0f}" '
           f'viewBox="0 0 {size:.1f} {size * 1.3:.1f}" font-family="DejaVu Sans, Arial, sans-serif">']  # fmt: skip
    if spec is not None:
        out.extend(_svg_cell(_spec_cell(spec, kind, rot), 0, 0, size, None))
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


def _spec_cell(spec: PathCardSpec, kind: int, rot: int) -> dict[str, Any]:
    shape = make_shape(kind, rot, spec)
    doors = {((e + 2 * rot) % 4): colour for e, colour in spec.doors}
    arms = [_arm(bool(shape.open_bits >> e & 1), False, bool(shape.stub_bits >> e & 1)
                 or (len(spec.groups) > 1 and shape.group_of_edge[e] >= 0
                     and len(shape.groups[shape.group_of_edge[e]]) == 1), doors.get(e)) for e in range(4)]  # fmt: skip
    badges = []
    if spec.ladder:
        badges.append(["L", spec.ladder_colour or "text"])
    if spec.crystals:
        badges.append(["◆", "crystal"])
    for _, n in spec.gold:
        badges.append([f"{n}$", "gold"])
    return _cell(0, 0, "card", arms, bool(shape.join_bits), "T" if spec.troll else "", badges)


def overlay_end(scene: dict[str, Any], config: GameConfig, card: int | None, cell: int | None, rot: int,
                discard: bool, rockfall: bool, turned: list[tuple[int, bool, str]]) -> dict[str, Any]:
    """The board at a round's end, drawn on the scene before its last move: the engine deals the next round in
    the same step, so the last card laid (or removed by a rockfall) and the goals it turned up are added here."""
    out = {**scene, "cells": [dict(c) for c in scene["cells"]]}
    cols = scene["cols"]
    spec = path_spec(config, card) if card is not None else None
    if cell is not None and not discard:
        r, c = divmod(cell, cols)
        if spec is not None:
            new = _spec_cell(spec, card or 0, rot)
            new["arms"] = [dict(a, conn=True) if a else None for a in new["arms"]]
            out["cells"][cell] = {**new, "r": r, "c": c, "tip": "last card of the round"}
        elif rockfall:
            out["cells"][cell] = _cell(r, c)
    for goal_cell, gold, name in turned:
        r, c = divmod(goal_cell, cols)
        arms = [_arm(True, True) for _ in range(4)] if gold else [None] * 4
        out["cells"][goal_cell] = _cell(r, c, "gold" if gold else "stone", arms, gold, "G" if gold else "x",
                                        tip=name)  # fmt: skip
    return out
