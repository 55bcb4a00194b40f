"""A seat's view as a *scene*: plain, JSON-friendly data that :mod:`saboteur_env.pictures.draw` turns into SVG/PNG.

A scene is built from a view (``saboteur_env.api.player_view``) only, so a picture cannot show more than the seat
may see; ``private=False`` leaves the seat's own secrets out (the public view). Cells carry their arms (open,
connected, dead-end stub, door colour), the card's fill and a centre glyph; the scene also carries row and column
labels in frame coordinates (as the moves name cells), a legend and one line per seat.
"""

from __future__ import annotations

from typing import Any

from saboteur_env.common.cards import EDGE_PAIRS, TOOL_NAMES, PathCardSpec, make_shape
from saboteur_env.common.config import GameConfig
from saboteur_env.common.geometry import geometry

__all__ = ["LEGENDS", "board_scene", "path_spec", "seat_name", "spec_cell"]


def seat_name(seat: int, me: int | None, names: list[str] | None = None) -> str:
    """How a picture names an absolute seat (``me``: the viewer, called "you")."""
    if me is not None and seat == me:
        return "you"
    return names[seat] if names else f"seat {seat}"


def path_spec(config: GameConfig, kind: int) -> PathCardSpec | None:
    """The tunnel data of a card kind that lies on the board (path, start or goal card; None for an action card)."""
    if config.game == "duel":
        from saboteur_env.duel import cards as dc

        return dc.SPECS[kind] if 0 <= kind < len(dc.SPECS) else None
    if config.game == "sab2":
        from saboteur_env.sab2 import cards as sc

        return sc.SPECS[kind] if 0 <= kind < len(sc.SPECS) else None
    from saboteur_env.base import cards as bc

    return bc.SHAPE_SPECS[kind] if 0 <= kind < len(bc.SHAPE_SPECS) else None


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


def spec_cell(spec: PathCardSpec, kind: int, rot: int) -> dict[str, Any]:
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
