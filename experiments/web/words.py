"""Words for people: card names and descriptions, legal moves as (card, cell, rotation, target), public events.

Everything here reads public data only: the card tables, the action layout (a move of the seat itself) and the
events of a seat's view (``saboteur_env.api.player_view``), so nothing hidden can reach a page or a caption through
it. Seats are absolute numbers here (views count in offsets from the observer). Moves and events are written in the
move notation of docs/text.md: card codes, ``rot180`` for a turned card, cells ``(row,col)`` in frame coordinates.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from saboteur_env import GameConfig, action_layout
from saboteur_env.common.cards import BASE_PATH_CARDS, TOOL_NAMES, PathCardSpec
from saboteur_env.common.geometry import geometry
from saboteur_env.common.notation import cell_text
from saboteur_env.pictures import seat_name

__all__ = ["Move", "card_info", "event_lines", "hand_kinds", "map_cells", "moves", "new_events", "path_spec",
           "reveals", "seat_name", "view_events"]

_ACTION_TEXT = {
    "broken pickaxe": "Play on a player (yourself included): while a tool is broken they cannot lay path cards.",
    "broken lantern": "Play on a player (yourself included): while a tool is broken they cannot lay path cards.",
    "broken cart": "Play on a player (yourself included): while a tool is broken they cannot lay path cards.",
    "repair pickaxe": "Repairs a broken pickaxe.",
    "repair lantern": "Repairs a broken lantern.",
    "repair cart": "Repairs a broken cart.",
    "repair pickaxe/lantern": "Repairs one of the two tools shown.",
    "repair pickaxe/cart": "Repairs one of the two tools shown.",
    "repair lantern/cart": "Repairs one of the two tools shown.",
    "rockfall": "Removes one path card from the maze (never the start or a goal).",
    "rockfall (expansion)": "Removes one path card from the maze (never the start or a goal).",
    "map": "Look at one face-down goal card; only you see it.",
    "key": "Put a key on a door: from then on it is open for both players.",
    "theft": "Lay it in front of you: after the round's payouts you steal 1 gold from a player.",
    "hands off": "Discard a Theft lying in front of a player.",
    "swap your hand": "Swap your remaining hand with another player's.",
    "inspection": "Look at another player's role card.",
    "swap your hats": "A player (you too) swaps their role card with one from the reserve.",
    "trapped!": "The player may not lay path cards and is not paid until freed.",
    "free at last!": "Removes Trapped! from a player.",
}
_DUEL_DOUBLE = {"repair pickaxe/lantern", "repair pickaxe/cart", "repair lantern/cart"}


def hand_kinds(config: GameConfig) -> int:
    """Number of card kinds a hand can hold."""
    if config.game == "duel":
        from saboteur_env.duel import cards as dc

        return dc.NUM_DECK_KINDS
    if config.game == "sab2":
        from saboteur_env.sab2 import cards as sc

        return sc.NUM_DECK_KINDS
    from saboteur_env.base import cards as bc

    return bc.NUM_DECK_KINDS


def path_spec(config: GameConfig, kind: int) -> PathCardSpec | None:
    """The tunnel data of a path kind (None for an action card)."""
    if config.game == "duel":
        from saboteur_env.duel import cards as dc

        return dc.PATH_CARDS[kind] if 0 <= kind < dc.NUM_PATH_KINDS else None
    if config.game == "sab2":
        from saboteur_env.sab2 import cards as sc

        return sc.PATH_CARDS[kind] if 0 <= kind < sc.NUM_PATH_KINDS else None
    return BASE_PATH_CARDS[kind] if 0 <= kind < len(BASE_PATH_CARDS) else None


def _action_name(config: GameConfig, kind: int) -> str:
    if config.game == "duel":
        from saboteur_env.duel import cards as dc

        return dc.KIND_NAMES[kind]
    if config.game == "sab2":
        from saboteur_env.sab2 import cards as sc

        if kind < sc.FIRST_EXPANSION_ACTION:
            from saboteur_env.common.cards import ACTION_CARD_NAMES

            return ACTION_CARD_NAMES[kind - sc.FIRST_BASE_ACTION]
        return sc.EXPANSION_ACTION_NAMES[kind - sc.FIRST_EXPANSION_ACTION]
    from saboteur_env.base import cards as bc

    return bc.ACTION_CARD_NAMES[kind - bc.FIRST_ACTION_KIND]


def _features(spec: PathCardSpec) -> str:
    parts = ["tunnels " + ", ".join("-".join(g) if len(g) > 1 else f"{g} stub" for g in spec.groups)]
    if spec.dead_end:
        parts.append("dead end: tunnels stop on the card")
    for edge, colour in spec.doors:
        parts.append(f"{colour} door on the {'NESW'[edge]} arm")
    if spec.ladder:
        parts.append(f"{spec.ladder_colour + ' ' if spec.ladder_colour else ''}ladder (joined to the start)")
    if spec.crystals:
        parts.append(f"{spec.crystals} crystal")
    if spec.troll:
        parts.append("troll: blocks the card until bribed")
    for group, n in spec.gold:
        parts.append(f"{n} gold on the {spec.groups[group]} tunnel")
    return "; ".join(parts)


def card_info(config: GameConfig, kind: int) -> dict[str, Any]:
    """``{"kind", "code", "name", "text", "path"}`` of a hand kind (``path``: a tunnel card)."""
    spec = path_spec(config, kind)
    if spec is not None:
        return {"kind": kind, "code": spec.code, "name": spec.name, "text": f"{spec.name}: {_features(spec)}.",
                "path": True}  # fmt: skip
    name = _action_name(config, kind)
    text = _ACTION_TEXT.get(name, "")
    if config.game == "duel" and name.startswith("broken"):
        text = "Play on your opponent: while a tool is broken they cannot lay path cards."
    if config.game == "duel" and name in _DUEL_DOUBLE:
        text = "Repairs one of the two tools shown, or both."
    if config.game == "duel" and name == "rockfall":
        text = "Removes one path card from the maze (not a start, goal or gold card with a counter)."
    return {"kind": kind, "code": _code(config, kind), "name": name, "text": text, "path": False}


def _code(config: GameConfig, kind: int) -> str:
    """The game's own code of a hand kind (as its hands and text pictures name it)."""
    if config.game == "duel":
        from saboteur_env.duel import cards as dc

        return dc.KIND_CODES[kind]
    if config.game == "sab2":
        from saboteur_env.sab2 import cards as sc

        return sc.HAND_CODES[kind]
    from saboteur_env.base import cards as bc

    return bc.KIND_CODES[kind]


def _poss(name: str) -> str:
    return "your" if name == "you" else f"{name}'s"


@dataclass(frozen=True)
class Move:
    """One legal move of the seat to act, as the page offers it."""

    id: int
    text: str
    card: int | None  # hand kind played or discarded (None: a choice without a card)
    cell: int | None  # flat board cell it points at (a placement, rockfall, key, bribe, map's goal)
    rot: int  # orientation of a placed card (0, or 1 = 180°)
    target: int | None  # absolute seat it is aimed at
    discard: bool  # a face-down discard / pass
    cards: tuple[int, ...] = ()  # every hand kind the move uses (both of a duel's discarded pair)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cards": list(self.cards)}  # JSON has no tuples: the page sees the same lists


def moves(config: GameConfig, legal: list[int], seat: int, names: list[str] | None = None) -> list[Move]:
    """The legal action ids of ``seat`` (the seat to act) as :class:`Move` rows."""
    layout = action_layout(config)
    p = config.num_players
    goal_cells = geometry(config).goal_cells
    out = []
    for a in legal:
        d = layout.decode(int(a))
        text = layout.to_string(int(a))
        card: int | None = None
        cell: int | None = None
        rot, target, discard = 0, None, False
        pair: tuple[int, ...] = ()
        if config.game == "base":
            from saboteur_env import ActionType

            card = int(d.kind) if d.kind >= 0 else None
            cell = int(d.cell) if d.cell >= 0 else None
            rot = max(0, int(d.rotation))
            if d.type == ActionType.MAP:
                cell = int(goal_cells[d.goal])
            if d.target >= 0:
                target = (seat + int(d.target)) % p
            discard = d.type == ActionType.DISCARD
        elif config.game == "sab2":
            from saboteur_env.sab2.actions import PLACEABLE

            seg = d.segment
            card = int(d.kind) if d.kind >= 0 else None
            cell = int(d.cell) if d.cell >= 0 else None
            if seg == "place":
                rot = PLACEABLE[d.orientation][1]
            if seg == "map":
                cell = int(goal_cells[d.slot])
            if d.target >= 0 and seg != "theft":
                target = (seat + int(d.target)) % p
            discard = seg == "discard"
        else:
            from saboteur_env.duel import cards as dc

            seg = d.segment
            card = int(d.kind) if d.kind >= 0 else None
            cell = int(d.cell) if d.cell >= 0 else None
            if seg in ("place", "place_bribe"):
                rot = dc.PLACEABLE[d.orientation][1]
            if seg == "map":
                cell = int(goal_cells[d.slot])
            if seg == "break":
                target = 1 - seat
            discard = seg in ("pass", "repair_discard")
            if d.pair >= 0:
                from saboteur_env.duel.actions import PAIRS

                pair = tuple(sorted(set(PAIRS[d.pair])))
        if pair == () and card is not None:
            pair = (card,)
        if target is not None and config.game != "duel":
            # The name keeps its seat offset (it is what one types); the absolute seat follows, for the reader.
            text = f"{text} ({seat_name(target, seat, names)})"
        out.append(Move(int(a), text, card, cell, rot, target, discard, pair))
    return out


# ---- public events ---------------------------------------------------------------------------------------------
def _where(config: GameConfig, cell: int | None) -> str:
    if cell is None or cell < 0:
        return ""
    return f" at {cell_text(*config.cell_coords(cell))}"


def view_events(view: Any) -> list[Any]:
    """The public events a view holds (the last ``history_length``), oldest first."""
    return list(view.history if view.config.game == "base" else view.events)


def new_events(before: list[Any], after: list[Any]) -> list[Any]:
    """The events of ``after`` that follow ``before`` (both windows of the same history, ``after`` later)."""
    for k in range(min(len(before), len(after)), 0, -1):
        if before[len(before) - k :] == after[:k]:
            return after[k:]
    return after


def event_lines(config: GameConfig, events: list[Any], seat: int, names: list[str] | None = None,
                private: bool = True) -> list[str]:  # fmt: skip
    """Events of ``seat``'s view (:func:`view_events`) in words with absolute seats; with ``private=False`` the
    seat is not "you" and its own discarded cards are not named either (a public caption)."""
    if config.game == "duel":
        return [_duel_event(config, ev, seat, names, private) for ev in events]
    if config.game == "sab2":
        return [_sab2_event(config, ev, seat, names, private) for ev in events]
    return [_base_event(config, ev, seat, names, private) for ev in events]


def reveals(config: GameConfig, events: list[Any]) -> list[tuple[int, bool, str]]:
    """``(cell, gold, name)`` of every goal turned up in ``events`` (of a seat's view)."""
    out = []
    for ev in events:
        if config.game == "base":
            from saboteur_env.base.cards import KIND_GOAL_GOLD, KIND_NAMES
            from saboteur_env.base.state import EventType

            if ev.type == EventType.REVEAL:
                out.append((config.cell_index(ev.row, ev.col), ev.kind == KIND_GOAL_GOLD, KIND_NAMES[ev.kind]))
        elif config.game == "sab2":
            from saboteur_env.sab2 import cards as sc
            from saboteur_env.sab2.state import Sab2Event

            if ev.type == Sab2Event.REVEAL and ev.cell is not None and ev.kind is not None:
                out.append((ev.cell, ev.kind == sc.KIND_GOALS[0], sc.KIND_CODES[ev.kind]))
        else:
            from saboteur_env.duel import cards as dc
            from saboteur_env.duel.state import DuelEvent

            etype, _, kind, cell, _ = ev
            if etype == DuelEvent.REVEAL and cell >= 0 and kind >= dc.FIRST_GOAL_KIND:
                out.append((cell, bool(dc.GOAL_NUGGETS[kind - dc.FIRST_GOAL_KIND] > 0), dc.KIND_NAMES[kind]))
    return out


def map_cells(config: GameConfig, events: list[Any]) -> list[int]:
    """The goal cells looked at with a map in ``events`` (of a seat's view; which goal is public, not what it is)."""
    goal_cells = geometry(config).goal_cells
    out = []
    for ev in events:
        if config.game == "base":
            from saboteur_env.base.state import EventType

            slot = int(ev.arg) if ev.type == EventType.MAP else -1
        elif config.game == "sab2":
            from saboteur_env.sab2.state import Sab2Event

            slot = int(ev.arg) if ev.type == Sab2Event.MAP and ev.arg is not None else -1
        else:
            from saboteur_env.duel.state import DuelEvent

            slot = round(ev[4]) if ev[0] == DuelEvent.MAP else -1
        if 0 <= slot < len(goal_cells):
            out.append(int(goal_cells[slot]))
    return out


def _base_event(cfg: GameConfig, ev: Any, seat: int, names: list[str] | None, private: bool) -> str:
    from saboteur_env.base.cards import KIND_CODES, KIND_NAMES
    from saboteur_env.base.state import EventType

    p = cfg.num_players
    me = seat if private else None
    who = seat_name((seat + ev.actor) % p, me, names) if ev.actor >= 0 else ""
    whom = seat_name((seat + ev.target) % p, me, names) if ev.target >= 0 else ""
    where = f" at {cell_text(ev.row, ev.col)}"
    t = ev.type
    if t == EventType.PLACE:
        return f"{who} placed {KIND_CODES[ev.kind]}{' rot180' if ev.arg else ''}{where}"
    if t == EventType.BREAK:
        return f"{who} broke {_poss(whom)} {TOOL_NAMES[ev.arg]}"
    if t == EventType.REPAIR:
        return f"{who} repaired {_poss(whom)} {TOOL_NAMES[ev.arg]}"
    if t == EventType.ROCKFALL:
        return f"{who} played a rockfall{where}, removing {KIND_CODES[ev.arg]}"
    if t == EventType.MAP:
        return f"{who} looked at goal {ev.arg} with a map"
    if t == EventType.DISCARD:
        shown = private and ev.actor == 0 and ev.kind >= 0
        return f"{who} discarded {KIND_CODES[ev.kind] if shown else 'a card face down'}"
    if t == EventType.REVEAL:
        return f"goal{where} turned up: {KIND_NAMES[ev.kind]}"
    return f"round over: the {'gold-diggers' if ev.arg == 0 else 'saboteurs'} won"


def _sab2_event(cfg: GameConfig, ev: Any, seat: int, names: list[str] | None, private: bool) -> str:
    from saboteur_env.sab2 import cards as sc
    from saboteur_env.sab2.state import Sab2Event as E

    p = cfg.num_players
    me = seat if private else None
    who = seat_name((seat + ev.actor) % p, me, names) if ev.actor is not None else ""
    whom = seat_name((seat + ev.target) % p, me, names) if ev.target is not None else ""

    def kind() -> str:
        if ev.kind is None:
            return "a card"
        if ev.kind < sc.NUM_DECK_KINDS:
            return str(card_info(cfg, ev.kind)["name"]) if ev.kind >= sc.NUM_PATH_KINDS else sc.KIND_CODES[ev.kind]
        return sc.KIND_CODES[ev.kind]

    where = _where(cfg, ev.cell)
    texts = {
        E.PLACE: lambda: f"{who} placed {kind()}{' rot180' if ev.arg else ''}{where}",
        E.BREAK: lambda: f"{who} broke {_poss(whom)} {TOOL_NAMES[ev.arg]}",
        E.REPAIR: lambda: f"{who} repaired {_poss(whom)} {TOOL_NAMES[ev.arg]}",
        E.ROCKFALL: lambda: f"{who} played a rockfall{where}",
        E.MAP: lambda: f"{who} looked at goal {ev.arg} with a map",
        E.THEFT: lambda: f"{who} laid a Theft",
        E.HANDS_OFF: lambda: f"{who} played Hands off on {whom}",
        E.SWAP_HAND: lambda: f"{who} swapped hands with {whom}",
        E.INSPECTION: lambda: f"{who} inspected {_poss(whom)} role",
        E.SWAP_HATS: lambda: f"{who} made {whom} swap their role card",
        E.TRAPPED: lambda: f"{who} trapped {whom}",
        E.FREE_AT_LAST: lambda: f"{who} freed {whom}",
        E.DISCARD: lambda: f"{who} discarded a card face down",
        E.FREE: lambda: f"{who} freed themself of {(*TOOL_NAMES, 'Trapped!')[min(ev.arg, 3)]}",
        E.REVEAL: lambda: f"goal{where} turned up: {kind()}",
        E.ROUND_END: lambda: f"round over: the gold was {'reached' if ev.arg == 0 else 'not reached'}",
        E.PAYOUT: lambda: f"{whom} was paid {ev.arg} gold",
        E.STEAL: lambda: f"{who} stole 1 gold from {whom}",
        E.PASS_END: lambda: f"{who} passed ({ev.arg} card(s) face down)",
    }
    return texts[ev.type]()


def _duel_event(cfg: GameConfig, ev: Any, seat: int, names: list[str] | None, private: bool) -> str:
    from saboteur_env.duel import cards as dc
    from saboteur_env.duel.state import DuelEvent as E

    etype, mine, kind, cell, arg = ev
    actor = seat if mine else 1 - seat
    who = seat_name(actor, seat if private else None, names or ["blue", "green"])
    name = dc.KIND_NAMES[kind] if kind >= 0 else "a card"
    where = _where(cfg, cell)
    n = round(arg)
    texts = {
        E.PLACE: lambda: f"{who} placed {dc.KIND_CODES[kind]}{' rot180' if n else ''}{where}",
        E.BRIBE: lambda: f"{who} bribed the troll{where}",
        E.BREAK: lambda: f"{who} played {name}",
        E.REPAIR: lambda: f"{who} played {name}",
        E.ROCKFALL: lambda: f"{who} played a rockfall{where}, removing {name}",
        E.MAP: lambda: f"{who} looked at goal slot {n} with a map",
        E.KEY: lambda: f"{who} put a key on the door{where}",
        E.REPAIR_DISCARD: lambda: f"{who} discarded 2 cards to repair their {TOOL_NAMES[min(n, 2)]}",
        E.PASS: lambda: f"{who} passed, discarding {n} card(s)",
        E.REVEAL: lambda: f"goal{where} turned up: {name}",
        E.SECURE: lambda: f"{who} secured {n} nugget(s){where}",
        E.ROUND_END: lambda: "round over: " + ("all goals up", "all counters used", "cards exhausted")[min(n, 2)],
        E.PAY: lambda: f"{who} paid {n} nugget(s) to a troll",
    }
    return texts[E(etype)]()
