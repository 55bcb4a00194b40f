"""Text and image pictures of a Saboteur 2 game, drawn from a seat's :class:`Sab2View` (never more than it may see).

Each cell is a 3x3 block: arms ``│``/``─`` (heavy when connected to the start; ``b``/``g`` for a blue / green door
arm); centre ``S`` start, ``L`` ladder, ``*`` crystal, else the tunnels joined through the card (``─`` straight
... ``┼`` crossroads, ``■`` dead end; ``saboteur_env.common.notation.centre_char``), ``?`` face-down goal (``g``/``s``
once the viewer peeked it), ``G`` revealed gold, ``x`` revealed stone, ``·`` empty. The image draws the same view with
Pillow. ``viewer=None`` is the public view (offsets from seat 0); ``"omniscient"`` adds roles, hands and goals.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.geometry import geometry
from saboteur_env.common.notation import centre_char
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.state import Sab2State
from saboteur_env.sab2.view import Sab2View, sab2_view

TOOLS = ("pickaxe", "lantern", "cart")


def _view(state: Sab2State, viewer: int | str | None) -> tuple[Sab2View, bool]:
    """The view to draw and whether its private parts (role, hand, inspections, peeks) may be shown: a seat sees its
    own; the public and omniscient pictures use seat 0's view less those parts (omniscient adds state facts)."""
    p = state.config.num_players
    if isinstance(viewer, int) and not isinstance(viewer, bool):
        if not 0 <= viewer < p:
            raise ValueError(f"viewer={viewer} out of range; valid: 0..{p - 1}")
        return sab2_view(state, viewer), True
    if viewer is None or viewer == "omniscient":
        return sab2_view(state, 0), False
    raise ValueError(f"viewer={viewer!r} must be a seat index, None or 'omniscient'")


def _block(view: Sab2View, r: int, c: int, private: bool) -> list[str]:
    def arm(d: int, thin: str, heavy: str) -> str:
        if not (view.open_bits[r, c] >> d) & 1:
            return " "
        if (view.blue_door_bits[r, c] >> d) & 1:
            return "b"
        if (view.green_door_bits[r, c] >> d) & 1:
            return "g"
        return heavy if (view.conn_bits[r, c] >> d) & 1 else thin

    if view.start[r, c]:
        centre = "S"
    elif view.goal_gold[r, c]:
        centre = "G"
    elif view.goal_stone[r, c]:
        centre = "x"
    elif view.goal_facedown[r, c]:
        centre = "?"
        if private and view.peeked_gold[r, c]:
            centre = "g"
        elif private and view.peeked_stone[r, c]:
            centre = "s"
    elif view.ladder[r, c]:
        centre = "L"
    elif view.crystal[r, c]:
        centre = "*"
    elif view.path[r, c]:
        centre = centre_char(int(view.join_bits[r, c]))
    else:
        centre = "·"
    return [f" {arm(0, '│', '┃')} ", f"{arm(3, '─', '━')}{centre}{arm(1, '─', '━')}", f" {arm(2, '│', '┃')} "]


def render_text(state: Sab2State, viewer: int | str | None = None) -> str:
    cfg = state.config
    view, private = _view(state, viewer)
    if private:
        title = f"view of seat {viewer}"
    else:
        title = "omniscient view" if viewer else "spectator view (offsets from seat 0)"
    lines = [f"== {title} | round {view.round + 1} | draw pile {view.deck_size} | role reserve {view.reserve_size} =="]
    m = cfg.margin
    lines.append("    " + "".join(f"{c - m:^3d}" for c in range(cfg.cols)))  # frame columns, as moves name cells
    for r in range(cfg.rows):
        blocks = [_block(view, r, c, private) for c in range(cfg.cols)]
        lines.extend((f"{r - m:>3d} " if k == 1 else "    ") + "".join(b[k] for b in blocks) for k in range(3))
    for i in range(cfg.num_players):
        broken = ", ".join(TOOLS[t] for t in range(3) if view.broken[i, t]) or "none"
        flags = (("TRAPPED", view.trapped), ("theft", view.theft), ("hats swapped", view.hats_swapped))
        marks = [name for name, flag in flags if flag[i]]
        name = "me" if private and i == 0 else f"seat+{i}"
        lines.append(f"  {name}: gold {view.gold[i]}, hand {view.hand_sizes[i]}, broken: {broken}"
                     + (f", {', '.join(marks)}" if marks else ""))  # fmt: skip
    if private:
        lines.append(f"my role: {sc.ROLE_NAMES[view.role]}")
        hand = ", ".join(f"{sc.HAND_CODES[k]}x{n}" for k, n in enumerate(view.hand.tolist()) if n)
        lines.append(f"my hand: {hand or '(empty)'}")
        for i, seen in enumerate(view.inspected_roles):
            if seen is not None:
                lines.append(f"inspected seat+{i}: {sc.ROLE_NAMES[seen]}")
    lines.append(f"phase: {view.phase.name.lower()}")
    if viewer == "omniscient":
        lines.append("roles: " + ", ".join(sc.ROLE_NAMES[r] for r in state.roles))
        lines.append("goals: " + ", ".join(sc.KIND_CODES[k] for k in state.goal_kind))
    return "\n".join(lines)


_DOOR_RGB = ((70, 130, 230), (70, 190, 90))


def render_image(state: Sab2State, viewer: int | str | None = None) -> NDArray[np.uint8]:
    """``(H, W, 3)`` uint8 picture drawn from the viewer's observation: cards, tunnels (bright where connected to
    the start), door arms in their colour, ladders (``L``), crystals (cyan), start, goals (face-down with the
    viewer's peeks marked ``g``/``s``, revealed gold or stone), then one line per seat (gold, hand, broken tools,
    Trapped!, Theft) and the round / pile / phase."""
    from PIL import Image, ImageDraw

    from saboteur_env.common.draw import ARM, CELL, COLOURS, PAD, ROW, default_font

    cfg = state.config
    p = cfg.num_players
    view, private = _view(state, viewer)
    width = cfg.cols * CELL + 2 * PAD
    height = cfg.rows * CELL + 2 * PAD + (p + 1) * ROW
    img = Image.new("RGB", (width, height), COLOURS["background"])
    d = ImageDraw.Draw(img)
    font = default_font()
    half = CELL // 2
    goal_cells = geometry(cfg).goal_cells
    for cell in range(cfg.num_cells):
        r, c = divmod(cell, cfg.cols)
        x0, y0 = PAD + c * CELL, PAD + r * CELL
        cx, cy = x0 + half, y0 + half
        facedown = view.goal_facedown[r, c]
        fill = COLOURS["facedown"] if facedown else COLOURS["card"] if view.open_bits[r, c] else COLOURS["empty"]
        if view.goal_gold[r, c]:
            fill = COLOURS["gold"]
        elif view.goal_stone[r, c]:
            fill = COLOURS["stone"]
        d.rectangle((x0 + 1, y0 + 1, x0 + CELL - 2, y0 + CELL - 2), fill=fill)
        if facedown:
            mark = "?"
            if private and view.peeked_gold[r, c]:
                mark = "g"
            elif private and view.peeked_stone[r, c]:
                mark = "s"
            if viewer == "omniscient":
                mark = "g" if state.goal_kind[goal_cells.index(cell)] == sc.KIND_GOALS[0] else "s"
            d.text((cx - 3, cy - 6), mark, fill=COLOURS["text"], font=font)
            continue
        for e in range(4):
            if not (view.open_bits[r, c] >> e) & 1:
                continue
            dx, dy = ARM[e]
            colour = COLOURS["connected"] if (view.conn_bits[r, c] >> e) & 1 else COLOURS["tunnel"]
            if (view.blue_door_bits[r, c] >> e) & 1:
                colour = _DOOR_RGB[0]
            elif (view.green_door_bits[r, c] >> e) & 1:
                colour = _DOOR_RGB[1]
            d.line((cx, cy, cx + dx * half, cy + dy * half), fill=colour, width=5)
        if view.start[r, c]:
            d.text((cx - 3, cy - 6), "S", fill=COLOURS["text"], font=font)
        if view.ladder[r, c]:
            d.text((x0 + 3, y0 + 2), "L", fill=COLOURS["text"], font=font)
        if view.crystal[r, c]:
            d.ellipse((cx - 4, cy - 4, cx + 4, cy + 4), fill=(90, 220, 230))
    y = PAD + cfg.rows * CELL + 2
    for i in range(p):
        broken = "".join("PLC"[t] for t in range(3) if view.broken[i, t]) or "-"
        marks = ("  TRAPPED" if view.trapped[i] else "") + ("  theft" if view.theft[i] else "")
        name = "me" if private and i == 0 else f"+{i}"
        text = f"{name}: gold {view.gold[i]}  hand {view.hand_sizes[i]}  broken {broken}{marks}"
        d.text((PAD, y + i * ROW), text, fill=COLOURS["text"], font=font)
    status = f"round {view.round + 1}  pile {view.deck_size}  phase {view.phase.name.lower()}"
    d.text((PAD, y + p * ROW), status, fill=COLOURS["text"], font=font)
    return np.asarray(img, dtype=np.uint8).copy()
