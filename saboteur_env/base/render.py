"""Text rendering. A seat's perspective is drawn from its :class:`PlayerView` (built from its observation), so a
rendering can never show more than the seat may see. ``viewer=None`` draws the public (spectator) view and
``viewer="omniscient"`` adds every hidden element for debugging.

Each cell is a 3x3 block: arms ``│``/``─`` (heavy ``┃``/``━`` when connected to the start); the centre of a path
card is drawn by its shape (``saboteur_env.common.notation.centre_char``: the tunnels joined through it, ``─``
straight, ``└`` curve, ``┴`` T, ``┼`` crossroads; ``■`` a dead end, whose arms stop at the centre), ``S`` start,
``G`` revealed gold, ``x`` revealed stone, ``?`` face-down goal (``g``/``s`` when the viewer peeked it, or in the
omniscient view), ``·`` empty. Events are written in the move notation (docs/text.md): cards by code,
``rot180``, cells ``(row,col)``.
"""

from __future__ import annotations

from saboteur_env.base import board
from saboteur_env.base.cards import KIND_CODES, KIND_GOAL_GOLD, NUM_DECK_KINDS, ROLE_NAMES, TOOL_NAMES
from saboteur_env.base.observation import Event, PlayerView, player_view
from saboteur_env.base.state import EventType, GameState
from saboteur_env.common.notation import cell_text, centre_char


def _cell_block(view: PlayerView, r: int, c: int, goal_mark: str | None) -> list[str]:
    ob, cb = int(view.open_bits[r, c]), int(view.conn_bits[r, c])

    def arm(d: int, thin: str, heavy: str) -> str:
        if not (ob >> d) & 1:
            return " "
        return heavy if (cb >> d) & 1 else thin

    if view.start[r, c]:
        centre = "S"
    elif view.goal_gold[r, c]:
        centre = "G"
    elif view.goal_stone[r, c]:
        centre = "x"
    elif view.goal_facedown[r, c]:
        centre = goal_mark or "?"
    elif view.path[r, c]:
        centre = centre_char(int(view.join_bits[r, c]))
    else:
        centre = "·"
    return [f" {arm(0, '│', '┃')} ", f"{arm(3, '─', '━')}{centre}{arm(1, '─', '━')}", f" {arm(2, '│', '┃')} "]


def _event_text(ev: Event, name: str) -> str:
    actor = name if ev.actor == 0 else f"seat+{ev.actor}"
    kind = KIND_CODES[ev.kind] if ev.kind >= 0 else "a card"
    if ev.type == EventType.PLACE:
        return f"{actor} placed {kind}{' rot180' if ev.arg else ''} at {cell_text(ev.row, ev.col)}"
    if ev.type == EventType.BREAK:
        return f"{actor} broke seat+{ev.target}'s {TOOL_NAMES[ev.arg]}"
    if ev.type == EventType.REPAIR:
        return f"{actor} repaired seat+{ev.target}'s {TOOL_NAMES[ev.arg]}"
    if ev.type == EventType.ROCKFALL:
        return f"{actor} rockfall at {cell_text(ev.row, ev.col)} removed {KIND_CODES[ev.arg]}"
    if ev.type == EventType.MAP:
        return f"{actor} used a map on goal {ev.arg}"
    if ev.type == EventType.DISCARD:
        return f"{actor} discarded {kind}"
    if ev.type == EventType.REVEAL:
        return f"goal at {cell_text(ev.row, ev.col)} revealed: {KIND_CODES[ev.kind]}"
    return f"round ended: {'gold-diggers' if ev.arg == 0 else 'saboteurs'} won"


def render_view(view: PlayerView, private: bool = True, goal_marks: tuple[str | None, ...] = (None,) * 3,
                extra: list[str] | None = None, title: str = "", events: int = 6) -> str:
    """Draw a player view. ``private=False`` leaves out the viewer's private information (spectator); ``events``:
    how many recent public events to list (0: none, for a caller that reports them itself)."""
    cfg = view.config
    m = cfg.margin
    geo = board.geometry(cfg)
    marks: dict[tuple[int, int], str | None] = {}
    for slot, cell in enumerate(geo.goal_cells):
        rc = divmod(cell, cfg.cols)
        known = view.goal_knowledge[slot] if private else None
        marks[rc] = goal_marks[slot] or ({"gold": "g", "stone": "s"}.get(known) if known else None)
    p = cfg.num_players
    lines = [title] if title else []
    lines.append(
        f"round {view.round + 1}/{cfg.rounds} | to act: seat+{view.to_act} | draw pile {view.deck_size} | "
        f"gold deck {view.gold_deck_size}"
    )
    lines.append("    " + "".join(f"{c - m:^3d}" for c in range(cfg.cols)))
    for r in range(cfg.rows):
        blocks = [_cell_block(view, r, c, marks.get((r, c))) for c in range(cfg.cols)]
        for k in range(3):
            label = f"{r - m:>3d} " if k == 1 else "    "
            lines.append(label + "".join(b[k] for b in blocks).rstrip())
    for off in range(p):
        tools = ",".join(TOOL_NAMES[t] for t in range(3) if view.broken[off, t]) or "-"
        who = "me" if off == 0 and private else f"seat+{off}"
        role = ""
        if view.last_round_roles[off] >= 0:
            role = f" | last round: {ROLE_NAMES[view.last_round_roles[off]]}"
        lines.append(
            f"  {who:>7}: hand {view.hand_size[off]} | broken {tools} | gold cards {view.gold_cards[off]} | "
            f"discarded {view.discarded[off]}{role}"
        )
    if private:
        hand = ", ".join(f"{KIND_CODES[k]}x{int(n)}" for k, n in enumerate(view.hand[:NUM_DECK_KINDS]) if n)
        lines.append(f"my role: {ROLE_NAMES[view.role]} | my gold: {view.my_nuggets} nuggets")
        lines.append(f"my hand: {hand or '(empty)'}")
    for ev in view.history[len(view.history) - events :] if events > 0 else ():
        if not private and ev.type == EventType.DISCARD:
            ev = Event(ev.type, ev.actor, -1, ev.target, ev.row, ev.col, ev.arg)
        lines.append("  > " + _event_text(ev, "me" if private else "seat+0"))
    lines.extend(extra or [])
    return "\n".join(lines)


def render_text(state: GameState, viewer: int | str | None = None) -> str:
    """Text picture of the game: ``viewer`` = a seat (its perspective), None (spectator) or ``"omniscient"``."""
    if isinstance(viewer, int) and not isinstance(viewer, bool):
        if not 0 <= viewer < state.config.num_players:
            raise ValueError(f"viewer={viewer} out of range; valid: 0..{state.config.num_players - 1}")
        return render_view(player_view(state, viewer), title=f"view of seat {viewer}")
    if viewer is None:
        # Public information only; seat offsets are relative to seat 0.
        return render_view(player_view(state, 0), private=False, title="spectator view (offsets from seat 0)")
    if viewer != "omniscient":
        raise ValueError(f"viewer={viewer!r} must be a seat index, None or 'omniscient'")
    marks = tuple(
        None if state.goal_revealed[g] else ("g" if state.goal_kind[g] == KIND_GOAL_GOLD else "s") for g in range(3)
    )
    extra = [f"goals (top, middle, bottom): {', '.join(KIND_CODES[k] for k in state.goal_kind)}"]
    for seat in range(state.config.num_players):
        hand = ", ".join(f"{KIND_CODES[k]}x{int(n)}" for k, n in enumerate(state.hands[seat]) if n)
        extra.append(f"  seat {seat}: {ROLE_NAMES[state.roles[seat]]}, {state.gold_nuggets[seat]} nuggets | {hand}")
    extra.append(f"left-over role: {ROLE_NAMES[state.leftover_role]}")
    return render_view(player_view(state, 0), private=False, goal_marks=marks, extra=extra,
                       title="omniscient view (offsets from seat 0)")
