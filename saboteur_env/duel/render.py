"""Text and image pictures of a duel, drawn from a seat's :class:`DuelView` (never more than it may see).

Text: each cell is a 3x3 block. Arms ``│``/``─`` (heavy when the viewer reaches them), a door arm shows ``b``/``g``
(upper case once keyed); centre: ``B``/``R`` start (blue / green), ``T`` troll (``t`` once bribed), ``L`` ladder,
``$`` gold (``1``/``2``... counter of the viewer, ``o`` the opponent's), else the tunnels joined through the card
(``─`` straight ... ``┼`` crossroads, ``■`` dead end; ``saboteur_env.common.notation.centre_char``), ``?``
face-down goal (``!`` when the viewer peeked it), ``·`` empty. ``viewer=None`` is the public view (relative to blue),
``"omniscient"`` adds hands and every face-down goal.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.cards import TOOL_NAMES
from saboteur_env.common.notation import cell_text, centre_char
from saboteur_env.duel import board
from saboteur_env.duel import cards as dc
from saboteur_env.duel.state import DuelEvent, DuelState
from saboteur_env.duel.view import PLANE, DuelView, duel_view

COLOUR_NAMES = ("blue", "green")


def _cell_block(view: DuelView, cell: int, peek: bool) -> list[str]:
    p = view.planes
    ob = sum(int(p[PLANE["open_N"] + e, cell] > 0.5) << e for e in range(4))
    rb = sum(int(p[PLANE["reach_me_N"] + e, cell] > 0.5) << e for e in range(4))
    doors = sum(int(p[PLANE["door_mine_N"] + e, cell] > 0.5 or p[PLANE["door_other_N"] + e, cell] > 0.5) << e
                for e in range(4))  # fmt: skip
    keyed = p[PLANE["key"], cell] > 0.5

    def arm(d: int, thin: str, heavy: str) -> str:
        if not (ob >> d) & 1:
            return " "
        if (doors >> d) & 1:
            mine = p[PLANE["door_mine_N"] + d, cell] > 0.5
            colour = COLOUR_NAMES[view.seat if mine else 1 - view.seat][0]
            return colour.upper() if keyed else colour
        return heavy if (rb >> d) & 1 else thin

    if p[PLANE["start_me"], cell] > 0.5 or p[PLANE["start_opp"], cell] > 0.5:
        mine = p[PLANE["start_me"], cell] > 0.5
        centre = "BR"[view.seat if mine else 1 - view.seat]
    elif p[PLANE["goal_facedown"], cell] > 0.5:
        centre = "!" if peek else "?"
    elif p[PLANE["troll"], cell] > 0.5:
        centre = "t" if (p[PLANE["bribed_me"], cell] > 0.5 or p[PLANE["bribed_opp"], cell] > 0.5) else "T"
    elif p[PLANE["nuggets"], cell] > 0:
        n = round(float(p[PLANE["nuggets"], cell]) * 3)
        centre = str(n) if p[PLANE["counter_me"], cell] > 0.5 else "o" if p[PLANE["counter_opp"], cell] > 0.5 else "$"
    elif p[PLANE["ladder_me"], cell] > 0.5 or p[PLANE["ladder_opp"], cell] > 0.5:
        centre = "L"
    elif ob:
        centre = centre_char(sum(int(p[PLANE[f"join_{i}"], cell] > 0.5) << i for i in range(6)))
    else:
        centre = "·"
    return [f" {arm(0, '│', '┃')} ", f"{arm(3, '─', '━')}{centre}{arm(1, '─', '━')}", f" {arm(2, '│', '┃')} "]


def _event_text(ev: tuple[int, bool, int, int, float], view: DuelView) -> str:
    etype, mine, kind, cell, arg = ev
    who = "me" if mine else "opponent"
    cfg = view.config
    where = f" at {cell_text(*cfg.cell_coords(cell))}" if cell >= 0 else ""
    name = dc.KIND_CODES[kind] if kind >= 0 else "a card"
    n = round(arg)
    texts = {
        DuelEvent.PLACE: lambda: f"{who} placed {name}{where}",
        DuelEvent.BRIBE: lambda: f"{who} bribed the troll{where}",
        DuelEvent.BREAK: lambda: f"{who} played {name}",
        DuelEvent.REPAIR: lambda: f"{who} played {name}",
        DuelEvent.ROCKFALL: lambda: f"{who} rockfall{where} removed {name}",
        DuelEvent.MAP: lambda: f"{who} used a map on goal slot {n}",
        DuelEvent.KEY: lambda: f"{who} put a key{where}",
        DuelEvent.REPAIR_DISCARD: lambda: f"{who} discarded 2 cards to repair {TOOL_NAMES[n]}",
        DuelEvent.PASS: lambda: f"{who} passed, discarding {n}",
        DuelEvent.REVEAL: lambda: f"goal{where} revealed: {name}",
        DuelEvent.SECURE: lambda: f"{who} secured {n} nugget(s){where}",
        DuelEvent.ROUND_END: lambda: "round ended",
        DuelEvent.PAY: lambda: f"{who} paid {n} nugget(s) to a troll",
    }
    return texts[DuelEvent(etype)]()


def render_view(view: DuelView, title: str, extra: list[str] | None = None, private: bool = True,
                events: int = 6) -> str:
    """Draw a view; ``events``: how many recent public events to list (0: none, for a caller reporting them)."""
    cfg = view.config
    geo = board.geometry(cfg)
    peeked_cells = {geo.goal_cells[s] for s in np.flatnonzero(view.my_peeks >= 0)} if private else set()
    lines = [f"== {title} | round {view.round + 1} | draw pile {view.deck_size} | counters {view.counters_left} | "
             f"keys {view.keys_left} | goals in pool {view.goals_in_pool} =="]  # fmt: skip
    m = cfg.margin
    lines.append("    " + "".join(f"{c - m:^3d}" for c in range(cfg.cols)))  # frame columns, as moves name cells
    for r in range(cfg.rows):
        blocks = [_cell_block(view, r * cfg.cols + c, r * cfg.cols + c in peeked_cells) for c in range(cfg.cols)]
        for k in range(3):
            lines.append((f"{r - m:>3d} " if k == 1 else "    ") + "".join(b[k] for b in blocks))
    me, opp = ("me", "opponent") if private else (COLOUR_NAMES[view.seat], COLOUR_NAMES[1 - view.seat])
    for i, name in enumerate((me, opp)):
        broken = ", ".join(TOOL_NAMES[t] for t in range(3) if view.tools[i, t]) or "none"
        lines.append(f"{name} ({COLOUR_NAMES[view.seat if i == 0 else 1 - view.seat]}): {view.nuggets[i]} nuggets, "
                     f"hand {view.hand_sizes[i]}, broken: {broken}")  # fmt: skip
    if private:
        hand = ", ".join(f"{dc.KIND_CODES[k]}x{int(n)}" for k, n in enumerate(view.hand) if n)
        lines.append(f"my hand: {hand or '(empty)'}")
        for slot in np.flatnonzero(view.my_peeks >= 0):
            lines.append(f"peeked goal slot {slot}: {dc.GOAL_CARDS[view.my_peeks[slot]].name}")
        lines.append("my turn" if view.my_turn else "opponent's turn")
    for ev in view.events[len(view.events) - events :] if events > 0 else ():
        lines.append("  > " + _event_text(ev, view))
    lines.extend(extra or [])
    return "\n".join(lines)


def render_text(state: DuelState, viewer: int | str | None = None) -> str:
    if isinstance(viewer, int) and not isinstance(viewer, bool):
        if viewer not in (0, 1):
            raise ValueError(f"viewer={viewer} out of range; valid: 0..1")
        return render_view(duel_view(state, viewer), f"view of seat {viewer} ({COLOUR_NAMES[viewer]})")
    if viewer is None:
        return render_view(duel_view(state, 0), "spectator view", private=False)
    if viewer != "omniscient":
        raise ValueError(f"viewer={viewer!r} must be a seat index, None or 'omniscient'")
    extra = ["goals: " + ", ".join(dc.GOAL_CARDS[g].code + (" (up)" if up else "")
                                   for g, up in zip(state.goal_card, state.goal_revealed, strict=True))]  # fmt: skip
    for seat in (0, 1):
        hand = ", ".join(f"{dc.KIND_CODES[k]}x{int(n)}" for k, n in enumerate(state.hands[seat]) if n)
        extra.append(f"  {COLOUR_NAMES[seat]} hand: {hand or '(empty)'}")
    return render_view(duel_view(state, 0), "omniscient view", extra=extra, private=False)


# ---- images --------------------------------------------------------------------------------------------------------
_DOOR_RGB = ((70, 130, 230), (70, 190, 90))


def render_image(state: DuelState, viewer: int | str | None = None) -> NDArray[np.uint8]:
    """``(H, W, 3)`` uint8 picture: cards, tunnels (bright where the viewer reaches them), doors in their colour,
    trolls, ladders, gold with counters, face-down goals, and a status line per player."""
    from PIL import Image, ImageDraw

    from saboteur_env.common.draw import ARM, CELL, COLOURS, PAD, ROW, default_font

    if isinstance(viewer, int) and not isinstance(viewer, bool):
        if viewer not in (0, 1):
            raise ValueError(f"viewer={viewer} out of range; valid: 0..1")
        view, private = duel_view(state, viewer), True
    elif viewer is None or viewer == "omniscient":
        view, private = duel_view(state, 0), False
    else:
        raise ValueError(f"viewer={viewer!r} must be a seat index, None or 'omniscient'")
    cfg = view.config
    width = cfg.cols * CELL + 2 * PAD
    height = cfg.rows * CELL + 2 * PAD + 3 * ROW
    img = Image.new("RGB", (width, height), COLOURS["background"])
    d = ImageDraw.Draw(img)
    font = default_font()
    p = view.planes
    half = CELL // 2
    for cell in range(cfg.num_cells):
        r, c = divmod(cell, cfg.cols)
        x0, y0 = PAD + c * CELL, PAD + r * CELL
        cx, cy = x0 + half, y0 + half
        facedown = p[PLANE["goal_facedown"], cell] > 0.5
        has = any(p[PLANE["open_N"] + e, cell] > 0.5 for e in range(4))
        fill = COLOURS["facedown"] if facedown else COLOURS["card"] if has else COLOURS["empty"]
        d.rectangle((x0 + 1, y0 + 1, x0 + CELL - 2, y0 + CELL - 2), fill=fill)
        if facedown:
            omni = viewer == "omniscient"
            slot = board.geometry(cfg).goal_slot[cell]
            mark = "!" if (private and view.my_peeks[slot] >= 0) else "?"
            if omni:
                mark = str(int(dc.GOAL_NUGGETS[state.goal_card[slot]]))
            d.text((cx - 3, cy - 6), mark, fill=COLOURS["text"], font=font)
            continue
        for e in range(4):
            if p[PLANE["open_N"] + e, cell] < 0.5:
                continue
            dx, dy = ARM[e]
            reach = p[PLANE["reach_me_N"] + e, cell] > 0.5 and private
            colour = COLOURS["connected"] if reach else COLOURS["tunnel"]
            if p[PLANE["door_mine_N"] + e, cell] > 0.5 or p[PLANE["door_other_N"] + e, cell] > 0.5:
                mine = p[PLANE["door_mine_N"] + e, cell] > 0.5
                colour = _DOOR_RGB[view.seat if mine else 1 - view.seat]
            d.line((cx, cy, cx + dx * half, cy + dy * half), fill=colour, width=5)
        if p[PLANE["start_me"], cell] > 0.5 or p[PLANE["start_opp"], cell] > 0.5:
            mine = p[PLANE["start_me"], cell] > 0.5
            d.ellipse((cx - 7, cy - 7, cx + 7, cy + 7), fill=_DOOR_RGB[view.seat if mine else 1 - view.seat])
        if p[PLANE["troll"], cell] > 0.5:
            d.text((cx - 3, cy - 6), "T", fill=COLOURS["broken"], font=font)
        if p[PLANE["nuggets"], cell] > 0:
            d.ellipse((cx - 5, cy - 5, cx + 5, cy + 5), fill=COLOURS["gold"])
        for name, colour_seat in (("counter_me", view.seat), ("counter_opp", 1 - view.seat),
                                  ("bribed_me", view.seat), ("bribed_opp", 1 - view.seat)):  # fmt: skip
            if p[PLANE[name], cell] > 0.5:
                d.rectangle((x0 + 3, y0 + 3, x0 + 10, y0 + 10), fill=_DOOR_RGB[colour_seat])
        if p[PLANE["key"], cell] > 0.5:
            d.text((x0 + CELL - 10, y0 + 2), "k", fill=COLOURS["text"], font=font)
    y = PAD + cfg.rows * CELL + 2
    for i, seat in enumerate((view.seat, 1 - view.seat)):
        broken = "".join("PLC"[t] for t in range(3) if view.tools[i, t]) or "-"
        text = f"{COLOUR_NAMES[seat]}: {view.nuggets[i]} nuggets  hand {view.hand_sizes[i]}  broken {broken}"
        d.text((PAD, y + i * ROW), text, fill=COLOURS["text"], font=font)
    d.text((PAD, y + 2 * ROW), f"round {view.round + 1}  pile {view.deck_size}  counters {view.counters_left}",
           fill=COLOURS["text"], font=font)  # fmt: skip
    return np.asarray(img, dtype=np.uint8).copy()


