"""Per-game text formats: the JSON spec of each observation layout, card labels for board cells, and move names.

A game's format is found from its variant class (so a variant built on a game's rules, e.g. the tests' 58-card
``base-lite``, uses that game's format). Everything here reads public tables only: observation layouts and plane
names, card tables, and the action layouts' ``decode``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from saboteur_env import api
from saboteur_env.base import cards as bc
from saboteur_env.base.observation import PLANES as BASE_PLANES
from saboteur_env.base.observation import SEAT_COLUMNS as BASE_SEAT_COLUMNS
from saboteur_env.base.state import EventType
from saboteur_env.base.variant import BaseVariant
from saboteur_env.common.cards import EDGE_PAIRS, TOOL_NAMES
from saboteur_env.common.config import GameConfig
from saboteur_env.duel import cards as dc
from saboteur_env.duel.state import DuelEvent
from saboteur_env.duel.variant import DuelVariant
from saboteur_env.duel.view import PLANE_NAMES as DUEL_PLANES
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.actions import FREE_TARGETS
from saboteur_env.sab2.actions import PLACEABLE as SAB2_PLACEABLE
from saboteur_env.sab2.observation import SEAT_COLUMNS as SAB2_SEAT_COLUMNS
from saboteur_env.sab2.state import Phase, Sab2Event
from saboteur_env.sab2.variant import Sab2Variant
from saboteur_env.sab2.view import PLANE_NAMES as SAB2_PLANES
from saboteur_env.text.codec import (
    Board,
    Bool,
    Cell,
    Choice,
    Counts,
    DescriptionError,
    Flags,
    History,
    Int,
    Json,
    OneHot,
    Pairs,
    Rows,
    Scaled,
    Spec,
    Struct,
    arms,
    pairs,
)

TOOLS = tuple(TOOL_NAMES)
PLACED = frozenset({"place", "rockfall", "reveal"})  # event types that always have a cell
ROUNDS = (1, 2, 3)


@dataclass(frozen=True)
class GameFormat:
    """The text format of one configuration: JSON spec per observation slice, and every action's move name."""

    game: str  # "base", "sab2" or "duel": which format (not the variant name)
    config: GameConfig
    slices: tuple[tuple[str, str, Spec], ...]  # (JSON key, observation slice name, spec), in layout order
    names: tuple[str, ...]  # move name per action id

    @property
    def board(self) -> Board:
        spec = self.slices[0][2]
        assert isinstance(spec, Board)
        return spec


# ---- board groups from the engine's plane names -----------------------------------------------------------------
def board_groups(planes: Sequence[str], rename: dict[str, str], scaled: dict[str, float]) -> list[tuple[Any, ...]]:
    """Walk the plane names: ``x_N x_E x_S x_W`` (any case) -> an arm group, six ``join_*`` -> pairs, else flags."""
    out: list[tuple[Any, ...]] = []
    i = 0
    while i < len(planes):
        name = planes[i]
        prefix = name.rsplit("_", 1)[0]
        quad = [p.lower() for p in planes[i : i + 4]]
        if quad == [f"{prefix}_{e}".lower() for e in "nesw"]:
            out.append(("arms", rename.get(prefix, prefix)))
            i += 4
        elif prefix == "join":
            out.append(("pairs", rename.get("join", "join")))
            i += 6
        elif name in scaled:
            out.append(("scaled", rename.get(name, name), scaled[name]))
            i += 1
        else:
            out.append(("flag", rename.get(name, name)))
            i += 1
    return out


def _key(feats: dict[str, Json], keys: Sequence[str]) -> tuple[Any, ...]:
    return tuple(tuple(v) if isinstance(v, list) else v for v in (feats.get(k) for k in keys))


Labeller = Callable[[dict[str, Json], Any], str | None]


def _labeller(entries: list[tuple[str, dict[str, Json], str]], keys: Sequence[str], category: Labeller) -> Labeller:
    """A cell labeller from (category, features, label) rows: the card(s) whose public features match the cell."""
    table: dict[tuple[Any, ...], list[str]] = {}
    for cat, feats, label in entries:
        names = table.setdefault((cat, *_key(feats, keys)), [])
        # Both turns of a card in one entry: the card is symmetric, so its name needs no turn.
        if label.split(" ")[0] not in {n.split(" ")[0] for n in names}:
            names.append(label)

    def lookup(feats: dict[str, Json], context: Any) -> str | None:
        cat = category(feats, context)
        if cat is None:
            return None
        if cat.startswith("="):
            return cat[1:]
        found = table.get((cat, *_key(feats, keys)))
        return " or ".join(found) if found else None

    return lookup


def _card(code: str, rotation: int) -> str:
    return f"{code} rot180" if rotation else code


def _feats(open_bits: int, join_bits: int, **arm_groups: int) -> dict[str, Json]:
    out: dict[str, Json] = {}
    if open_bits:
        out["open"] = arms(open_bits)
    if join_bits:
        out["tunnels"] = pairs(join_bits)
    for key, bits in arm_groups.items():
        if bits:
            out[key] = arms(bits)
    return out


def _names(config: GameConfig) -> tuple[str, ...]:
    """Every action id's move name: the game's ``action_to_string``, the one notation (docs/text.md)."""
    layout = api.action_layout(config)
    return tuple(layout.to_string(a) for a in range(layout.num_actions))


# ---- the base game ------------------------------------------------------------------------------------------------
BASE_RENAME = {"conn": "connected", "join": "tunnels", "stub": "dead_ends"}
BASE_SEATS = ("broken_pickaxe", "broken_lantern", "broken_cart", "hand_size", "gold_cards", "peeked_0", "peeked_1",
              "peeked_2", "last_role_digger", "last_role_saboteur", "discarded")  # fmt: skip


def _base_label() -> Callable[[dict[str, Json], Any], str | None]:
    entries = []
    for shape in bc.SHAPES:
        kind = shape.kind
        symmetric = kind < bc.NUM_PATH_KINDS and bc.is_symmetric(kind)
        cat = "path" if kind < bc.NUM_PATH_KINDS else "goal" if kind in bc.GOAL_KINDS else None
        if cat is None:
            continue
        label = _card(bc.KIND_CODES[kind], 0 if symmetric else shape.rotation)
        entries.append((cat, _feats(shape.open_bits, shape.join_bits, dead_ends=shape.stub_bits), label))

    def category(feats: dict[str, Json], _: Any) -> str | None:
        flags = feats.get("is", [])
        if "start" in flags:
            return "=START"
        if "goal_gold" in flags or "goal_stone" in flags:
            return "goal"
        return "path" if "path" in flags else None

    return _labeller(entries, ("open", "tunnels", "dead_ends"), category)


def _base_format(config: GameConfig) -> GameFormat:
    if tuple(BASE_SEAT_COLUMNS) != BASE_SEATS:
        raise DescriptionError(f"the base observation's seat columns changed ({BASE_SEAT_COLUMNS}); update text")
    p, m = config.num_players, config.margin
    groups = board_groups(BASE_PLANES, BASE_RENAME, {})
    seat = Struct([("broken", Flags(TOOLS)), ("hand_size", Int()), ("gold_cards", Int()),
                   ("maps_on_goals", Flags([0, 1, 2])), ("last_round_role", OneHot(bc.ROLE_NAMES)),
                   ("discarded", Int())])  # fmt: skip
    event = Struct([("type", OneHot([e.name.lower() for e in EventType])), ("actor", OneHot(range(p))),
                    ("card", OneHot(bc.KIND_CODES)), ("target", OneHot(range(p))),
                    ("at", Cell(config.rows, config.cols, m)), ("arg", OneHot(range(bc.NUM_KINDS)))])  # fmt: skip
    slices: list[tuple[str, str, Spec]] = [
        ("board", "board", Board(config.rows, config.cols, groups, frozenset({"empty"}), _base_label(), m)),
        ("role", "role", OneHot(bc.ROLE_NAMES)),
        ("hand", "hand", Counts(bc.KIND_CODES[: bc.NUM_DECK_KINDS])),
        ("seats", "seats", Rows(p, seat, label="offset")),
        ("deck_size", "deck_size", Int()),
        ("gold_deck_size", "gold_deck_size", Int()),
        ("round", "round", OneHot(ROUNDS)),
        ("to_act", "to_act", OneHot(range(p))),
        ("my_nuggets", "my_nuggets", Int()),
        ("event_count", "event_count", Int()),
        ("events", "history", History(config.history_length, event, PLACED, m)),
    ]
    return GameFormat("base", config, tuple(slices), _names(config))


# ---- Saboteur 2 ---------------------------------------------------------------------------------------------------
SAB2_RENAME = {"conn": "connected", "join": "tunnels"}
SAB2_SEATS = ("broken_pickaxe", "broken_lantern", "broken_cart", "trapped", "theft", "hand_size", "gold",
              "hats_swapped", "peeked_0", "peeked_1", "peeked_2", "discarded", "inspected_by_me",
              "inspected_me")  # fmt: skip
SAB2_CARDS = sc.HAND_CODES + sc.KIND_CODES[sc.NUM_DECK_KINDS :]  # every kind: hand codes, then start and goals


def _sab2_label() -> Callable[[dict[str, Json], Any], str | None]:
    entries = []
    symmetric = {k for k in range(sc.NUM_PATH_KINDS) if (k, 1) not in SAB2_PLACEABLE}
    for kind, spec in enumerate(sc.SPECS):
        if spec is None or kind == sc.KIND_START:
            continue
        cat = "path" if kind < sc.NUM_PATH_KINDS else "goal"
        for rot in (0, 1):
            sid = 2 * kind + rot
            groups = sc.SHAPE_ARM_GROUP[sid]
            join = sum(1 << i for i, (a, b) in enumerate(EDGE_PAIRS) if (int(groups[a]) >> b) & 1)
            feats = _feats(int(sc.SHAPE_OPEN[sid]), join, blue_door=int(sc.SHAPE_DOOR[0, sid]),
                           green_door=int(sc.SHAPE_DOOR[1, sid]))  # fmt: skip
            flags = [f for f, on in (("ladder", sc.SHAPE_LADDER[sid]), ("crystal", sc.SHAPE_CRYSTALS[sid])) if on]
            feats["flags"] = flags
            entries.append((cat, feats, _card(sc.KIND_CODES[kind], 0 if kind in symmetric else rot)))

    def category(feats: dict[str, Json], _: Any) -> str | None:
        flags = feats.get("is", [])
        feats["flags"] = [f for f in flags if f in ("ladder", "crystal")]
        if "start" in flags:
            return "=START"
        if "goal_gold" in flags or "goal_stone" in flags:
            return "goal"
        return "path" if "path" in flags else None

    label = _labeller(entries, ("open", "tunnels", "blue_door", "green_door", "flags"), category)

    def clean(feats: dict[str, Json], context: Any) -> str | None:
        out = label(feats, context)
        feats.pop("flags", None)
        return out

    return clean


def _sab2_format(config: GameConfig) -> GameFormat:
    if tuple(SAB2_SEAT_COLUMNS) != SAB2_SEATS:
        raise DescriptionError(f"the Saboteur 2 seat columns changed ({SAB2_SEAT_COLUMNS}); update text")
    p, m = config.num_players, config.margin
    roles = list(sc.ROLE_NAMES)
    groups = board_groups(SAB2_PLANES, SAB2_RENAME, {})
    seat = Struct([("broken", Flags(TOOLS)), ("trapped", Bool()), ("theft", Bool()), ("hand_size", Int()),
                   ("gold", Int()), ("hats_swapped", Bool()), ("maps_on_goals", Flags([0, 1, 2])),
                   ("discarded", Int()), ("inspected_by_me", Bool()), ("inspected_me", Bool())])  # fmt: skip
    status = Struct([("deck_size", Int()), ("reserve_size", Int()), ("thieves_pending", Int()),
                     ("round", OneHot(ROUNDS)), ("to_act", OneHot(range(p))),
                     ("phase", OneHot([ph.name.lower() for ph in Phase])), ("pending", Int()),
                     ("free_target", OneHot(FREE_TARGETS))])  # fmt: skip
    event = Struct([("type", OneHot([e.name.lower() for e in Sab2Event])), ("actor", OneHot(range(p))),
                    ("card", OneHot(SAB2_CARDS)), ("target", OneHot(range(p))),
                    ("at", Cell(config.rows, config.cols, m)), ("arg", Scaled(10.0))])  # fmt: skip
    slices: list[tuple[str, str, Spec]] = [
        ("board", "board", Board(config.rows, config.cols, groups, frozenset(), _sab2_label(), m)),
        ("role", "role", OneHot(roles)),
        ("hand", "hand", Counts(sc.HAND_CODES)),
        ("seats", "seats", Rows(p, seat, label="offset")),
        ("inspected_roles", "inspected", Rows(p, OneHot(roles))),
        ("last_round_roles", "last_roles", Rows(p, OneHot(roles))),
        ("inspections", "inspections", Pairs(p)),
        ("status", "status", status),
        ("events", "history", History(config.history_length, event, PLACED, m)),
    ]
    return GameFormat("sab2", config, tuple(slices), _names(config))


# ---- the Duel -----------------------------------------------------------------------------------------------------
DUEL_RENAME = {"reach_me": "reached_by_you", "reach_opp": "reached_by_opponent", "door_mine": "doors_yours",
               "door_other": "doors_opponent", "join": "tunnels", "gold": "gold_arms"}  # fmt: skip


def _duel_label() -> Callable[[dict[str, Json], Any], str | None]:
    entries = []
    for me in (0, 1):
        for shape in dc.SHAPES:
            if shape is None or shape.kind in dc.KIND_START:
                continue
            cat = f"{'goal' if shape.kind >= dc.FIRST_GOAL_KIND else 'path'}{me}"
            feats = _feats(shape.open_bits, shape.join_bits, doors_yours=shape.door_bits[me],
                           doors_opponent=shape.door_bits[1 - me], gold_arms=shape.gold_bits)  # fmt: skip
            if shape.nuggets:
                feats["nuggets"] = int(shape.nuggets)
            ladder = "ladder_me" if shape.ladder == me else "ladder_opp" if shape.ladder == 1 - me else None
            feats["flags"] = [f for f in ("troll" if shape.troll else None, ladder) if f]
            entries.append((cat, feats, _card(dc.KIND_CODES[shape.kind], shape.rotation)))

    def category(feats: dict[str, Json], me: Any) -> str | None:
        flags = feats.get("is", [])
        feats["flags"] = [f for f in flags if f in ("troll", "ladder_me", "ladder_opp")]
        if "start_me" in flags or "start_opp" in flags:
            colour = me if "start_me" in flags else 1 - me
            return f"={dc.KIND_CODES[dc.KIND_START[colour]]}"
        if "goal_revealed" in flags:
            return f"goal{me}"
        return f"path{me}" if "open" in feats and "goal_facedown" not in flags else None

    label = _labeller(entries, ("open", "tunnels", "doors_yours", "doors_opponent", "gold_arms", "nuggets", "flags"),
                      category)  # fmt: skip

    def clean(feats: dict[str, Json], context: Any) -> str | None:
        out = label(feats, context)
        feats.pop("flags", None)
        return out

    return clean


def _duel_format(config: GameConfig) -> GameFormat:
    m = config.margin
    groups = board_groups(DUEL_PLANES, DUEL_RENAME, {"nuggets": 3.0})
    you_opp = lambda spec: Struct([("you", spec), ("opponent", spec)])  # noqa: E731
    event = Struct([("type", OneHot([e.name.lower() for e in DuelEvent])), ("by_you", Bool()),
                    ("card", OneHot(dc.KIND_CODES)), ("at", Cell(config.rows, config.cols, m)),
                    ("arg", Scaled(3.0))])  # fmt: skip
    goal_codes = dc.KIND_CODES[dc.FIRST_GOAL_KIND :]
    slices: list[tuple[str, str, Spec]] = [
        ("board", "board", Board(config.rows, config.cols, groups, frozenset({"empty"}), _duel_label(), m)),
        ("hand", "hand", Counts(dc.KIND_CODES[: dc.NUM_DECK_KINDS])),
        ("my_peeks", "my_peeks", Rows(dc.GOALS_PER_ROUND, OneHot(goal_codes))),
        ("maps_on_goals", "peeked", you_opp(Flags(range(dc.GOALS_PER_ROUND)))),
        ("broken", "tools", you_opp(Flags(TOOLS))),
        ("hand_sizes", "hand_sizes", you_opp(Int())),
        ("supply", "supply", Struct([("deck_size", Int()), ("counters_left", Int()), ("keys_left", Int()),
                                     ("goals_in_pool", Int())])),
        ("nuggets", "nuggets", you_opp(Int())),
        ("score_pile_cards", "pile_cards", you_opp(Int())),
        ("round", "round", OneHot(ROUNDS)),
        ("status", "status", Struct([("your_turn", Bool()), ("your_colour", Choice(dc.COLOURS))])),
        ("events", "history", History(config.history_length, event,
                                      frozenset({"place", "rockfall", "key", "bribe", "reveal", "secure"}),
                                      m)),
    ]
    return GameFormat("duel", config, tuple(slices), _names(config))


# ---- lookup -------------------------------------------------------------------------------------------------------
def _build(config: GameConfig) -> GameFormat:
    variant = config.variant
    if isinstance(variant, DuelVariant):
        fmt = _duel_format(config)
    elif isinstance(variant, Sab2Variant):
        fmt = _sab2_format(config)
    elif isinstance(variant, BaseVariant):
        fmt = _base_format(config)
    else:
        raise DescriptionError(f"no text format for game {config.game!r}; valid: variants of base, sab2, duel")
    layout = api.observation_layout(config)
    names = [s for _, s, _ in fmt.slices]
    if names != list(layout.slices):
        raise DescriptionError(f"the {fmt.game} observation slices changed ({list(layout.slices)}); update text")
    for _, name, spec in fmt.slices:
        sl = layout.slices[name]
        if spec.size != sl.stop - sl.start:
            raise DescriptionError(f"{fmt.game} slice {name!r}: the text spec has {spec.size} values, "
                                   f"the observation {sl.stop - sl.start}")  # fmt: skip
    if len(fmt.names) != api.num_actions(config) or len(set(fmt.names)) != len(fmt.names):
        raise DescriptionError(f"{fmt.game}: move names are not one per action id")
    return fmt


def game_format(config: GameConfig) -> GameFormat:
    """The text format of a configuration (built once per config object)."""
    if not isinstance(config, GameConfig):
        raise TypeError(f"game_format needs a GameConfig, got {type(config).__name__}")
    return config.cached("_text_format", _build)
