"""A seat's view as JSON and as text, and the JSON read back into the observation vector.

``describe(config, observation, mask)`` is built from the seat's observation only (the one gate for hidden
information), so it cannot say more than the seat may know; ``observation_from_description`` inverts it exactly,
so it says everything the seat knows (both tested over random games of all three games).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env import api
from saboteur_env.common.config import GameConfig
from saboteur_env.common.errors import check_seat
from saboteur_env.common.geometry import geometry
from saboteur_env.text.codec import Board, DescriptionError, Json, cell_name, parse_cell
from saboteur_env.text.games import game_format
from saboteur_env.text.moves import legal_moves

__all__ = ["describe", "describe_state", "group_moves", "observation_from_description", "render", "seat_text"]

TITLES = {"base": "Saboteur", "sab2": "Saboteur 2", "duel": "Saboteur: The Duel"}


def _obs(config: GameConfig, observation: object) -> NDArray[np.float32]:
    obs = np.asarray(observation, dtype=np.float32)
    size = api.observation_layout(config).size
    if obs.shape != (size,):
        raise DescriptionError(f"observation has shape {obs.shape}; expected ({size},) for {config.game}")
    return obs


def describe(config: GameConfig, observation: object, mask: object = None, *, seat: int | None = None) -> dict:
    """The JSON description of one seat's observation; with ``mask``, its legal moves by name.

    ``seat`` (the absolute seat, if the caller knows it) is shown but not needed: seats are offsets from the
    viewer, as in the observation and the action layout.
    """
    if config.claims:  # the game's description, then the claims block (saboteur_env.text.claims)
        from saboteur_env.text.claims import describe_claims

        full = np.asarray(observation, dtype=np.float32)
        size = claims_size(config)
        if full.ndim != 1 or full.shape[0] <= size:
            raise DescriptionError(f"observation has shape {full.shape}; expected "
                                   f"({api.observation_layout(config.game_config).size + size},) for {config.game} "
                                   "with claims")  # fmt: skip
        d = describe(config.game_config, full[:-size], None, seat=seat)
        d["claims"] = describe_claims(config, full[-size:])
        if mask is not None:
            d["legal_moves"] = legal_moves(config, mask)
        return d
    fmt = game_format(config)
    obs = _obs(config, observation)
    layout = api.observation_layout(config)
    out: dict[str, Json] = {"game": fmt.game, "variant": config.game, "players": config.num_players,
                            "rounds": config.rounds}  # fmt: skip
    if seat is not None:
        out["seat"] = check_seat(seat, config.num_players)
    context = None
    if fmt.game == "duel":  # labels need the viewer's colour (doors and ladders are "yours" / "opponent's")
        context = int(obs[layout.slices["status"]][1] > 0.5)
    for key, name, spec in fmt.slices:
        part = obs[layout.slices[name]]
        out[key] = spec.encode(part, key, context) if isinstance(spec, Board) else spec.encode(part, key)
    out["goals"] = _goals(fmt.game, config, out)
    if mask is not None:
        out["legal_moves"] = legal_moves(config, mask)
    return out


def observation_from_description(config: GameConfig, description: dict) -> NDArray[np.float32]:
    """The observation vector a description was made from (bit-exact); ``DescriptionError`` for a bad one."""
    if config.claims:
        from saboteur_env.text.claims import claims_block

        if not isinstance(description, dict) or "claims" not in description:
            raise DescriptionError("description: key 'claims' is missing (the config has claims=True)")
        game = observation_from_description(config.game_config, description)
        return np.concatenate([game, claims_block(config, description["claims"])])
    fmt = game_format(config)
    if not isinstance(description, dict):
        raise DescriptionError(f"a description must be a JSON object, got {type(description).__name__}")
    if description.get("game") != fmt.game or description.get("players") != config.num_players:
        raise DescriptionError(f"description of game {description.get('game')!r} with "
                               f"{description.get('players')!r} players; expected {fmt.game!r} with "
                               f"{config.num_players}")  # fmt: skip
    layout = api.observation_layout(config)
    out = np.zeros(layout.size, dtype=np.float32)
    for key, name, spec in fmt.slices:
        if key not in description:
            raise DescriptionError(f"description: key {key!r} is missing")
        spec.decode(description[key], out[layout.slices[name]], key)
    return out


def claims_size(config: GameConfig) -> int:
    """Length of the claims block at the end of a claims config's observations (0 without claims)."""
    if not config.claims:
        return 0
    from saboteur_env.claims import layout

    return layout(config).size


def describe_state(state: Any, seat: int) -> dict:
    """``describe`` for ``seat`` of a state: its observation, and its legal moves when it is to act."""
    config = state.config
    seat = check_seat(seat, config.num_players)
    mask = api.legal_action_mask(state) if not state.game_over and int(state.current) == seat else None
    return describe(config, api.encode_observation(state, seat), mask, seat=seat)


def seat_text(state: Any, seat: int) -> str:
    """The text description of ``seat`` of a state."""
    return render(describe_state(state, seat))


# ---- goals (a summary of board cells, for the text and for readers of the JSON) -----------------------------------
def _goals(game: str, config: GameConfig, d: dict) -> list[dict]:
    cells = {c["at"]: c for c in d["board"]["cells"]}
    out = []
    for slot, cell in enumerate(geometry(config).goal_cells):
        at = cell_name(*divmod(cell, config.cols), config.margin)
        c = cells.get(at, {})
        flags = c.get("is", [])
        if game == "duel":
            state = "face up" if "goal_revealed" in flags else "face down" if "goal_facedown" in flags else "gone"
            seen = d["my_peeks"][slot]
            out.append({"goal": slot, "at": at, "state": state, "card": c.get("card") or seen})
            continue
        if "goal_gold" in flags:
            state = "gold (face up)"
        elif "goal_stone" in flags:
            state = "stone (face up)"
        elif "peeked_gold" in flags:
            state = "face down; you saw gold"
        elif "peeked_stone" in flags:
            state = "face down; you saw stone"
        else:
            state = "face down; unknown"
        out.append({"goal": slot, "at": at, "state": state})
    return out


# ---- text ---------------------------------------------------------------------------------------------------------
def _seat(offset: int | None) -> str:
    if offset is None:
        return "nobody"
    return "you" if offset == 0 else f"seat+{offset}"


def _grid(d: dict, short: bool = False) -> list[str]:
    """The board as a grid of card codes; ``short``: a face-up goal card is ``G`` (the goals line names it), so that
    the columns stay narrow."""
    board = d["board"]
    rows, cols, m = board["rows"], board["cols"], board.get("margin", 0)
    tokens = [["." for _ in range(cols)] for _ in range(rows)]
    for c in board["cells"]:
        r, col = parse_cell(c["at"], rows, cols, "board.cells", m)
        flags = c.get("is", [])
        card = c.get("card")
        if "goal_facedown" in flags:
            tok = "?"
        elif card:
            tok = card.split(" or ")[0].replace(" rot180", "'")
            tok = {"START": "S", "START_BLUE": "SB", "START_GREEN": "SG"}.get(tok, tok)
            if short and tok.startswith("GOAL"):
                tok = "G"
        elif c.get("open"):
            tok = "#"
        else:
            tok = "+"
        tokens[r][col] = tok
    width = max(3 if short else 4, *(len(t) for row in tokens for t in row)) + 1
    # Labels in frame coordinates: the numbers a move's "(row,col)" uses.
    lines = [("     " + "".join(f"{j - m}".ljust(width) for j in range(cols))).rstrip()]
    for i, row in enumerate(tokens):
        lines.append(f"{i - m}".ljust(5) + "".join(t.ljust(width) for t in row).rstrip())
    return lines


def _cell_line(c: dict) -> str:
    parts = [c["at"]]
    if c.get("card"):
        parts.append(c["card"])
    for key, value in c.items():
        if key in ("at", "card", "is"):
            continue
        parts.append(f"{key.replace('_', ' ')} {' '.join(value) if isinstance(value, list) else value}")
    if c.get("is"):
        parts.append("[" + ", ".join(f.replace("_", " ") for f in c["is"]) + "]")
    return "  " + "; ".join(parts)


def _hand(hand: dict[str, int]) -> str:
    if not hand:
        return "no cards"
    return ", ".join(f"{k} x{n}" if n > 1 else k for k, n in hand.items())


def _list(xs: list) -> str:
    return ", ".join(str(x) for x in xs) if xs else "none"


def _event(e: dict, game: str) -> str:
    who = ("you" if e.get("by_you") else "opponent") if game == "duel" else _seat(e.get("actor"))
    parts = [f"{who}: {e['type'].replace('_', ' ')}"]
    arg = e.get("arg")
    placed = e["type"] == "place"  # written as the move notation writes it: "place T06 rot180 at (2,3)"
    if e.get("card"):
        parts.append(e["card"] + (" rot180" if placed and arg else ""))
    if e.get("target") is not None:
        parts.append(f"on {_seat(e['target'])}")
    if e.get("at"):
        parts.append(f"at {e['at']}")
    meaning = ARGS[game].get(e["type"])
    if arg is not None and meaning is not None and not placed:
        parts.append(f"({meaning(arg)})")
    return "  " + " ".join(parts)


def _rot(a: int) -> str:
    return f"rot{180 * a}"


def _tool(a: int) -> str:
    return ("pickaxe", "lantern", "cart", "trapped")[a] if 0 <= a < 4 else str(a)


def _tool_bits(a: int) -> str:
    return "+".join(t for i, t in enumerate(("pickaxe", "lantern", "cart")) if (a >> i) & 1) or "nothing"


def _removed(game: str) -> Callable[[int], str]:
    from saboteur_env.base.cards import KIND_CODES as BASE_CODES
    from saboteur_env.text.games import SAB2_CARDS

    codes = BASE_CODES if game == "base" else SAB2_CARDS
    return lambda a: f"removed {codes[a]}" if 0 <= a < len(codes) else f"removed {a}"


# What an event's ``arg`` means, per game and event type (types not listed carry none worth showing).
ARGS: dict[str, dict[str, Callable[[int], str]]] = {
    "base": {"place": _rot, "reveal": _rot, "break": _tool, "repair": _tool, "map": lambda a: f"goal {a}",
             "rockfall": _removed("base"),
             "round_end": lambda a: "gold-diggers won" if a == 0 else "saboteurs won"},
    "sab2": {"place": _rot, "break": _tool, "repair": _tool, "map": lambda a: f"goal {a}", "free": _tool,
             "rockfall": _removed("sab2"), "round_end": lambda a: "gold reached" if a == 0 else "gold not reached",
             "payout": lambda a: f"{a} gold", "pass_end": lambda a: f"{a} cards discarded"},
    "duel": {"place": _rot, "reveal": _rot, "break": _tool, "repair": _tool_bits, "map": lambda a: f"goal {a}",
             "repair_discard": _tool, "pass": lambda a: f"{a} cards discarded",
             "bribe": lambda a: "with its placement" if a else "later", "secure": lambda a: f"{a} nuggets",
             "round_end": lambda a: ("all goals up", "counters used up", "cards exhausted")[min(a, 2)],
             "pay": lambda a: f"pays {a} nuggets"},
}  # fmt: skip


def render(d: dict, *, compact: bool = False) -> str:
    """The text description from a JSON description (one section per part; every JSON fact appears).

    ``compact=True`` is the short form for models with small context windows: no per-cell list (the grid stays),
    the last ``COMPACT_EVENTS`` events, and the legal moves grouped by their words before the last one
    (:func:`group_moves`); well under 2,000 tokens for five players."""
    if compact:
        return _render_compact(d)
    game, p = d["game"], d["players"]
    lines: list[str] = []
    seat = f" (absolute seat {d['seat']})" if "seat" in d else ""
    lines.append(f"{TITLES[game]}, {p} players, round {_round(d)} of {d['rounds']}. You are seat+0{seat}.")
    if game != "duel":
        lines.append("Other players are named by offset clockwise from you: seat+1 is the next player.")
    lines.append(_turn(d))
    lines.append("Cells are (row,col) as the grid labels them: rows down, columns right, (0,0) the top-left card of "
                 "the rulebook's frame; moves name cells the same way.")
    if game == "base":
        lines.append(f"Your role: {d['role']}. Your gold: {d['my_nuggets']} nuggets.")
    elif game == "sab2":
        lines.append(f"Your role: {d['role']}.")
    else:
        lines.append(f"Your colour: {d['status']['your_colour']}. Nuggets: you {d['nuggets']['you']}, opponent "
                     f"{d['nuggets']['opponent']} (score pile cards: you {d['score_pile_cards']['you']}, opponent "
                     f"{d['score_pile_cards']['opponent']}).")  # fmt: skip
    lines.append(f"Your hand: {_hand(d['hand'])}.")
    lines.append("Goals:")
    for g in d["goals"]:
        card = f" {g['card']}" if g.get("card") else ""
        lines.append(f"  goal {g['goal']} at {g['at']}: {g['state']}{card}")
    lines.append("Board ('.' empty, '?' face-down goal, S start (SB/SG blue/green), card codes; ' = turned 180"
                 " degrees):")
    lines.extend("  " + s for s in _grid(d))
    lines.append("Cards on the board (open arms, tunnels = joined arm pairs, arms connected to the start, ...):")
    lines.extend(_cell_line(c) for c in d["board"]["cells"])
    lines.extend(_players(d))
    lines.extend(_supply(d))
    events = d["events"]
    count = f" of {d['event_count']} so far" if "event_count" in d else ""
    lines.append(f"Recent public events (oldest first, {len(events)}{count}):")
    lines.extend(_event(e, game) for e in events)
    if "claims" in d:
        from saboteur_env.text.claims import render_claims

        lines.extend(render_claims(d["claims"]))
    if "legal_moves" in d:
        moves = d["legal_moves"]
        lines.append(f"Legal moves ({len(moves)}):")
        lines.extend("  " + m for m in moves)
        lines.append("Reply with exactly one legal move name, e.g. " + (repr(moves[0]) if moves else "''") + ".")
    return "\n".join(lines)


COMPACT_EVENTS = 6


def group_moves(names: list[str]) -> list[tuple[str, list[str]]]:
    """Move names grouped by all but their last word, in first-seen order: ``place T02 at (0,0)`` and ``place T02
    at (1,1)`` become ``("place T02 at", ["(0,0)", "(1,1)"])``; a one-word move has the prefix ``""``."""
    groups: dict[str, list[str]] = {}
    for name in names:
        head, _, last = name.rpartition(" ")
        groups.setdefault(head, []).append(last)
    return list(groups.items())


def _render_compact(d: dict) -> str:
    game, p = d["game"], d["players"]
    lines = [f"{TITLES[game]}, {p} players, round {_round(d)} of {d['rounds']}. " + _turn(d)]
    if game == "base":
        lines.append(f"Your role: {d['role']}. Your gold: {d['my_nuggets']} nuggets.")
    elif game == "sab2":
        lines.append(f"Your role: {d['role']}.")
    else:
        lines.append(f"Your colour: {d['status']['your_colour']}. Nuggets: you {d['nuggets']['you']}, opponent "
                     f"{d['nuggets']['opponent']}.")  # fmt: skip
    lines.append(f"Your hand: {_hand(d['hand'])}.")
    lines.append("Goals: " + "; ".join(f"{g['goal']} at {g['at']} {g['state']}" + (f" {g['card']}" if g.get("card")
                                       else "") for g in d["goals"]) + ".")  # fmt: skip
    lines.append("Board ('.' empty, '?' face-down goal, G face-up goal, ' turned; rows left, columns on top):")
    lines.extend(_grid(d, short=True))
    lines.extend(_players(d))
    lines.extend(_supply(d))
    events = d["events"][-COMPACT_EVENTS:]
    if events:
        lines.append("Last events: " + "; ".join(_event(e, game).strip() for e in events) + ".")
    if "claims" in d:
        from saboteur_env.text.claims import render_claims

        lines.extend(render_claims(d["claims"]))
    if "legal_moves" in d:
        moves = d["legal_moves"]
        lines.append(f"Legal moves ({len(moves)}), grouped: a move is a group's words and one of its endings:")
        lines.extend(f"  {head}: {' | '.join(ends)}" if head else f"  {' | '.join(ends)}"
                     for head, ends in group_moves(moves))  # fmt: skip
        lines.append("Reply with one whole move, e.g. " + (repr(moves[0]) if moves else "''") + ".")
    return "\n".join(lines)


def _round(d: dict) -> Any:
    return d["status"]["round"] if d["game"] == "sab2" else d["round"]


def _turn(d: dict) -> str:
    if d["game"] == "duel":
        return "It is your turn." if d["status"]["your_turn"] else "It is the opponent's turn (or the game is over)."
    to_act = d["status"]["to_act"] if d["game"] == "sab2" else d["to_act"]
    where = f" Phase: {d['status']['phase']}." if d["game"] == "sab2" else ""
    if to_act is None:
        return "Nobody is to act (the game is over)." + where
    return ("It is your turn." if to_act == 0 else f"It is {_seat(to_act)}'s turn.") + where


def _players(d: dict) -> list[str]:
    game = d["game"]
    if game == "duel":
        return [f"Broken tools: you {_list(d['broken']['you'])}; opponent {_list(d['broken']['opponent'])}.",
                f"Hand sizes: you {d['hand_sizes']['you']}, opponent {d['hand_sizes']['opponent']}.",
                f"Maps used on goal slots: you {_list(d['maps_on_goals']['you'])}; opponent "
                f"{_list(d['maps_on_goals']['opponent'])}.",
                "Goal cards you saw with maps: " + _list([f"goal {i}: {g}" for i, g in enumerate(d["my_peeks"])
                                                          if g]) + "."]  # fmt: skip
    out = ["Players:"]
    for s in d["seats"]:
        i = s["offset"]
        facts = [f"{s['hand_size']} cards", f"broken {'+'.join(s['broken']) or 'none'}",
                 f"maps on goals {_list(s['maps_on_goals'])}", f"discarded {s['discarded']} face down this round"]
        if game == "base":
            facts.insert(2, f"{s['gold_cards']} gold cards")
            if s["last_round_role"]:
                facts.append(f"last round: {s['last_round_role']}")
        else:
            facts.insert(2, f"{s['gold']} gold")
            facts.extend(k.replace("_", " ") for k in ("trapped", "theft", "hats_swapped", "inspected_by_me",
                                                       "inspected_me") if s[k])  # fmt: skip
            if d["inspected_roles"][i]:
                facts.append(f"you inspected: {d['inspected_roles'][i]}")
            if d["last_round_roles"][i]:
                facts.append(f"role at the last round end: {d['last_round_roles'][i]}")
        out.append(f"  {_seat(i)}: " + ", ".join(facts))
    if game == "sab2" and d["inspections"]:
        out.append("Inspections this round: " + ", ".join(f"{_seat(i)} inspected {_seat(j)}"
                                                         for i, j in d["inspections"]) + ".")  # fmt: skip
    return out


def _supply(d: dict) -> list[str]:
    game = d["game"]
    if game == "base":
        return [f"Draw pile: {d['deck_size']} cards. Gold cards left: {d['gold_deck_size']}."]
    if game == "sab2":
        s = d["status"]
        free = f", option C target {s['free_target']}" if s["free_target"] else ""
        return [f"Draw pile: {s['deck_size']} cards. Role cards in reserve: {s['reserve_size']}. Thieves to steal: "
                f"{s['thieves_pending']}. Pending (cards discarded in this pass / still to discard): {s['pending']}"
                f"{free}."]  # fmt: skip
    s = d["supply"]
    return [f"Draw pile: {s['deck_size']} cards. Counters left: {s['counters_left']}. Keys left: {s['keys_left']}. "
            f"Goals in the pool: {s['goals_in_pool']}."]  # fmt: skip
