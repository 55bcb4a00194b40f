"""Text and image pictures of a Saboteur 2 game, drawn from a seat's observation (never more than it may see).

Each cell is a 3x3 block: arms ``│``/``─`` (heavy when connected to the start; ``b``/``g`` for a blue / green door
arm); centre ``S`` start, ``L`` ladder, ``*`` crystal, ``┼`` tunnel, ``?`` face-down goal (``g``/``s`` once the
viewer peeked it), ``G`` revealed gold, ``x`` revealed stone, ``·`` empty. The image is the same text drawn with
Pillow. ``viewer=None`` is the public view (offsets from seat 0); ``"omniscient"`` adds roles, hands and goals.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.actions import _CODE
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
        hand = ", ".join(f"{_CODE[k]}x{int(n)}" for k, n in enumerate(v["hand"]) if n)
        lines.append(f"my hand: {hand or '(empty)'}")
        for i in np.flatnonzero(v["inspected"].max(1) > 0.5):
            lines.append(f"inspected seat+{i}: {sc.ROLE_NAMES[int(v['inspected'][i].argmax())]}")
    lines.append(f"phase: {Phase(state.phase).name.lower()}")
    if viewer == "omniscient":
        lines.append("roles: " + ", ".join(sc.ROLE_NAMES[r] for r in state.roles))
        lines.append("goals: " + ", ".join(sc.KIND_CODES[k] for k in state.goal_kind))
    return "\n".join(lines)


def render_image(state: Sab2State, viewer: int | str | None = None) -> NDArray[np.uint8]:
    """The text picture drawn as an ``(H, W, 3)`` uint8 image."""
    from PIL import Image, ImageDraw

    from saboteur_env.image import COLOURS, _font

    text = render_text(state, viewer)
    lines = text.splitlines()
    width = 8 + 7 * max(len(line) for line in lines)
    height = 8 + 12 * len(lines)
    img = Image.new("RGB", (width, height), COLOURS["background"])
    draw = ImageDraw.Draw(img)
    font = _font()
    for i, line in enumerate(lines):
        draw.text((4, 4 + 12 * i), line, fill=COLOURS["text"], font=font)
    return np.asarray(img, dtype=np.uint8).copy()
