"""Text and image pictures of a Saboteur 2 game, drawn from a seat's observation (never more than it may see).

Each cell is a 3x3 block: arms ``│``/``─`` (heavy when connected to the start; ``b``/``g`` for a blue / green door
arm); centre ``S`` start, ``L`` ladder, ``*`` crystal, ``┼`` tunnel, ``?`` face-down goal (``g``/``s`` once the
viewer peeked it), ``G`` revealed gold, ``x`` revealed stone, ``·`` empty. The image draws the same view with
Pillow. ``viewer=None`` is the public view (offsets from seat 0); ``"omniscient"`` adds roles, hands and goals.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.geometry import geometry
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.observation import SEAT_COLUMNS, encode_observation, sab2_observation_layout
from saboteur_env.sab2.state import Phase, Sab2State

TOOLS = ("pickaxe", "lantern", "cart")


def _block(planes: NDArray[np.float32], cell: int) -> list[str]:
    def on(i: int) -> bool:
        return bool(planes[i, cell] > 0.5)

    def arm(d: int, thin: str, heavy: str) -> str:
        if not on(d):
            return " "
        if on(14 + d):
            return "b"
        if on(18 + d):
            return "g"
        return heavy if on(4 + d) else thin

    if on(24):
        centre = "S"
    elif on(27):
        centre = "G"
    elif on(28):
        centre = "x"
    elif on(26):
        centre = "g" if on(29) else "s" if on(30) else "?"
    elif on(22):
        centre = "L"
    elif on(23):
        centre = "*"
    elif on(25):
        centre = "┼" if planes[8:14, cell].any() else "•"
    else:
        centre = "·"
    return [f" {arm(0, '│', '┃')} ", f"{arm(3, '─', '━')}{centre}{arm(1, '─', '━')}", f" {arm(2, '│', '┃')} "]


def render_text(state: Sab2State, viewer: int | str | None = None) -> str:
    cfg = state.config
    p = cfg.num_players
    if isinstance(viewer, int) and not isinstance(viewer, bool):
        if not 0 <= viewer < p:
            raise ValueError(f"viewer={viewer} out of range; valid: 0..{p - 1}")
        seat, private, title = viewer, True, f"view of seat {viewer}"
    elif viewer is None or viewer == "omniscient":
        seat, private, title = 0, False, "omniscient view" if viewer else "spectator view (offsets from seat 0)"
    else:
        raise ValueError(f"viewer={viewer!r} must be a seat index, None or 'omniscient'")
    lay = sab2_observation_layout(cfg)
    v = lay.split(encode_observation(state, seat))
    planes = v["board"].reshape(v["board"].shape[0], -1)
    if not private:
        planes = planes.copy()
        planes[29:31] = 0  # the observing seat's peeks are private
    status = v["status"]
    lines = [f"== {title} | round {state.round + 1} | draw pile {int(status[0])} | role reserve {int(status[1])} =="]
    for r in range(cfg.rows):
        blocks = [_block(planes, r * cfg.cols + c) for c in range(cfg.cols)]
        lines.extend("".join(b[k] for b in blocks) for k in range(3))
    for i in range(p):
        row = v["seats"][i]
        broken = ", ".join(TOOLS[t] for t in range(3) if row[t] > 0.5) or "none"
        marks = [name for name, col in (("TRAPPED", 3), ("theft", 4), ("hats swapped", 7)) if row[col] > 0.5]
        name = "me" if private and i == 0 else f"seat+{i}"
        lines.append(f"  {name}: gold {int(row[SEAT_COLUMNS.index('gold')])}, hand {int(row[5])}, broken: {broken}"
                     + (f", {', '.join(marks)}" if marks else ""))  # fmt: skip
    if private:
        lines.append(f"my role: {sc.ROLE_NAMES[int(v['role'].argmax())]}")
        hand = ", ".join(f"{sc.HAND_CODES[k]}x{int(n)}" for k, n in enumerate(v["hand"]) if n)
        lines.append(f"my hand: {hand or '(empty)'}")
        for i in np.flatnonzero(v["inspected"].max(1) > 0.5):
            lines.append(f"inspected seat+{i}: {sc.ROLE_NAMES[int(v['inspected'][i].argmax())]}")
    lines.append(f"phase: {Phase(state.phase).name.lower()}")
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
    if isinstance(viewer, int) and not isinstance(viewer, bool):
        if not 0 <= viewer < p:
            raise ValueError(f"viewer={viewer} out of range; valid: 0..{p - 1}")
        seat, private = viewer, True
    elif viewer is None or viewer == "omniscient":
        seat, private = 0, False
    else:
        raise ValueError(f"viewer={viewer!r} must be a seat index, None or 'omniscient'")
    lay = sab2_observation_layout(cfg)
    v = lay.split(encode_observation(state, seat))
    planes = v["board"].reshape(v["board"].shape[0], -1)
    width = cfg.cols * CELL + 2 * PAD
    height = cfg.rows * CELL + 2 * PAD + (p + 1) * ROW
    img = Image.new("RGB", (width, height), COLOURS["background"])
    d = ImageDraw.Draw(img)
    font = default_font()
    half = CELL // 2
    for cell in range(cfg.num_cells):
        r, c = divmod(cell, cfg.cols)
        x0, y0 = PAD + c * CELL, PAD + r * CELL
        cx, cy = x0 + half, y0 + half
        facedown = planes[26, cell] > 0.5
        has = planes[0:4, cell].any()
        fill = COLOURS["facedown"] if facedown else COLOURS["card"] if has else COLOURS["empty"]
        if planes[27, cell] > 0.5:
            fill = COLOURS["gold"]
        elif planes[28, cell] > 0.5:
            fill = COLOURS["stone"]
        d.rectangle((x0 + 1, y0 + 1, x0 + CELL - 2, y0 + CELL - 2), fill=fill)
        if facedown:
            mark = "?"
            if private and planes[29, cell] > 0.5:
                mark = "g"
            elif private and planes[30, cell] > 0.5:
                mark = "s"
            if viewer == "omniscient":
                slot = geometry(cfg).goal_cells.index(cell)
                mark = "g" if state.goal_kind[slot] == sc.KIND_GOALS[0] else "s"
            d.text((cx - 3, cy - 6), mark, fill=COLOURS["text"], font=font)
            continue
        for e in range(4):
            if planes[e, cell] < 0.5:
                continue
            dx, dy = ARM[e]
            colour = COLOURS["connected"] if planes[4 + e, cell] > 0.5 else COLOURS["tunnel"]
            if planes[14 + e, cell] > 0.5:
                colour = _DOOR_RGB[0]
            elif planes[18 + e, cell] > 0.5:
                colour = _DOOR_RGB[1]
            d.line((cx, cy, cx + dx * half, cy + dy * half), fill=colour, width=5)
        if planes[24, cell] > 0.5:
            d.text((cx - 3, cy - 6), "S", fill=COLOURS["text"], font=font)
        if planes[22, cell] > 0.5:
            d.text((x0 + 3, y0 + 2), "L", fill=COLOURS["text"], font=font)
        if planes[23, cell] > 0.5:
            d.ellipse((cx - 4, cy - 4, cx + 4, cy + 4), fill=(90, 220, 230))
    y = PAD + cfg.rows * CELL + 2
    for i in range(p):
        row = v["seats"][i]
        broken = "".join("PLC"[t] for t in range(3) if row[t] > 0.5) or "-"
        marks = ("  TRAPPED" if row[3] > 0.5 else "") + ("  theft" if row[4] > 0.5 else "")
        name = "me" if private and i == 0 else f"+{i}"
        text = f"{name}: gold {int(row[SEAT_COLUMNS.index('gold')])}  hand {int(row[5])}  broken {broken}{marks}"
        d.text((PAD, y + i * ROW), text, fill=COLOURS["text"], font=font)
    status = f"round {state.round + 1}  pile {state.deck_size}  phase {Phase(state.phase).name.lower()}"
    d.text((PAD, y + p * ROW), status, fill=COLOURS["text"], font=font)
    return np.asarray(img, dtype=np.uint8).copy()
