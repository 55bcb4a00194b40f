"""Card data of Saboteur: The Duel (docs/rules.md §3.1, §3.11) and its oriented-shape tables.

The duel shares the base game's card model (:class:`saboteur_env.common.cards.PathCardSpec`: groups of arms, doors on
arms, troll, ladder colour, gold on a group) and adds these rows. Colours are seats: **blue = seat 0**, **green =
seat 1** (green starts round 1, docs/rules.md A7).

Card kinds of the duel (hands, actions and observations use these ids):

==========  ==========================================================================
kind        card
==========  ==========================================================================
0-26        path cards U01-U27 (§3.11)
27-29       broken pickaxe / broken lantern (lamp) / broken cart
30-32       repair pickaxe / repair lantern / repair cart
33-35       double repair pickaxe-or-lantern / pickaxe-or-cart / lantern-or-cart
36          rockfall
37          map
38          key
39, 40      start blue, start green (never in a hand)
41-58       goals G01-G18 (never in a hand)
==========  ==========================================================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.cards import EDGE_NAMES, PathCardSpec, make_shape

BLUE, GREEN = 0, 1
COLOURS = ("blue", "green")

_B, _G = "blue", "green"
_N, _E, _S, _W = 0, 1, 2, 3

# §3.11 path cards (34): code, name, groups, copies, doors (edge, colour), troll, ladder colour, gold (group, nuggets).
PATH_CARDS: tuple[PathCardSpec, ...] = (
    PathCardSpec("U01", "crossroads, troll", ("NESW",), 1, troll=True),
    PathCardSpec("U02", "crossroads, blue door S", ("NESW",), 1, doors=((_S, _B),)),
    PathCardSpec("U03", "crossroads, green door W", ("NESW",), 1, doors=((_W, _G),)),
    PathCardSpec("U04", "bridge", ("NS", "EW"), 1),
    PathCardSpec("U05", "bridge, gold on N-S", ("NS", "EW"), 1, gold=((0, 1),)),
    PathCardSpec("U06", "straight E-W", ("EW",), 4),
    PathCardSpec("U07", "straight N-S", ("NS",), 3),
    PathCardSpec("U08", "T N-E-W, blue door E", ("NEW",), 1, doors=((_E, _B),)),
    PathCardSpec("U09", "T N-E-W, green door N", ("NEW",), 1, doors=((_N, _G),)),
    PathCardSpec("U10", "T N-E-W, troll", ("NEW",), 1, troll=True),
    PathCardSpec("U11", "T N-S-W, blue door N", ("NSW",), 1, doors=((_N, _B),)),
    PathCardSpec("U12", "T N-S-W, green door S", ("NSW",), 1, doors=((_S, _G),)),
    PathCardSpec("U13", "T N-S-W, troll", ("NSW",), 1, troll=True),
    PathCardSpec("U14", "curve N-W", ("NW",), 2),
    PathCardSpec("U15", "curve N-W, blue ladder", ("NW",), 1, ladder=True, ladder_colour=_B),
    PathCardSpec("U16", "curve N-E", ("NE",), 2),
    PathCardSpec("U17", "curve N-E, green ladder", ("NE",), 1, ladder=True, ladder_colour=_G),
    PathCardSpec("U18", "double curve, gold on E-S", ("NW", "ES"), 1, gold=((1, 1),)),
    PathCardSpec("U19", "double curve", ("NE", "SW"), 1),
    PathCardSpec("U20", "T N-S-W + E stub with gold", ("NSW", "E"), 1, gold=((1, 1),)),
    PathCardSpec("U21", "T N-E-W + S stub with gold", ("NEW", "S"), 1, gold=((1, 1),)),
    PathCardSpec("U22", "straight E-W + S stub with gold", ("EW", "S"), 1, gold=((1, 1),)),
    PathCardSpec("U23", "straight N-S + W stub", ("NS", "W"), 1),
    PathCardSpec("U24", "curve N-E + W stub", ("NE", "W"), 1),
    PathCardSpec("U25", "curve N-E + S stub", ("NE", "S"), 1),
    PathCardSpec("U26", "curve N-W + E stub", ("NW", "E"), 1),
    PathCardSpec("U27", "curve N-W + S stub", ("NW", "S"), 1),
)

# §3.11 action cards (18): name, copies; tools in the base order (pickaxe, lantern, cart).
ACTION_CARDS: tuple[tuple[str, str, int], ...] = (
    ("BROKEN_PICKAXE", "broken pickaxe", 2),
    ("BROKEN_LANTERN", "broken lantern", 2),
    ("BROKEN_CART", "broken cart", 2),
    ("REPAIR_PICKAXE", "repair pickaxe", 1),
    ("REPAIR_LANTERN", "repair lantern", 1),
    ("REPAIR_CART", "repair cart", 1),
    ("REPAIR_PICKAXE_LANTERN", "repair pickaxe/lantern", 1),
    ("REPAIR_PICKAXE_CART", "repair pickaxe/cart", 1),
    ("REPAIR_LANTERN_CART", "repair lantern/cart", 1),
    ("ROCKFALL", "rockfall", 2),
    ("MAP", "map", 2),
    ("KEY", "key", 2),
)

START_CARDS = (
    PathCardSpec("START_BLUE", "start (blue)", ("NESW",)),
    PathCardSpec("START_GREEN", "start (green)", ("NESW",)),
)

# §3.11 goal cards (18, 25 nuggets); gold sits on the group given (D13: G11/G12 on the through tunnel).
GOAL_CARDS: tuple[PathCardSpec, ...] = (
    PathCardSpec("G01", "goal crossroads", ("NESW",)),
    PathCardSpec("G02", "goal four stubs", ("N", "E", "S", "W")),
    PathCardSpec("G03", "goal stubs N S W", ("N", "S", "W")),
    PathCardSpec("G04", "goal stubs N E W", ("N", "E", "W")),
    PathCardSpec("G05", "goal N-W, green door W, 1 gold", ("NW",), doors=((_W, _G),), gold=((0, 1),)),
    PathCardSpec("G06", "goal N-W, 2 gold", ("NW",), gold=((0, 2),)),
    PathCardSpec("G07", "goal N-E, blue door E, 1 gold", ("NE",), doors=((_E, _B),), gold=((0, 1),)),
    PathCardSpec("G08", "goal N-E, 2 gold", ("NE",), gold=((0, 2),)),
    PathCardSpec("G09", "goal stubs N W, 1 gold in W", ("N", "W"), gold=((1, 1),)),
    PathCardSpec("G10", "goal stubs N E, 3 gold in N", ("N", "E"), gold=((0, 3),)),
    PathCardSpec("G11", "goal N-S + stubs E W, 1 gold", ("NS", "E", "W"), gold=((0, 1),)),
    PathCardSpec("G12", "goal E-W + stubs N S, 2 gold", ("EW", "N", "S"), gold=((0, 2),)),
    PathCardSpec("G13", "goal N-S-W, blue door W, 1 gold", ("NSW",), doors=((_W, _B),), gold=((0, 1),)),
    PathCardSpec("G14", "goal N-S-W, green door S, 2 gold", ("NSW",), doors=((_S, _G),), gold=((0, 2),)),
    PathCardSpec("G15", "goal N-S-W, blue door N, 3 gold", ("NSW",), doors=((_N, _B),), gold=((0, 3),)),
    PathCardSpec("G16", "goal N-E-W, green door E, 1 gold", ("NEW",), doors=((_E, _G),), gold=((0, 1),)),
    PathCardSpec("G17", "goal N-E-W, blue door N, 2 gold", ("NEW",), doors=((_N, _B),), gold=((0, 2),)),
    PathCardSpec("G18", "goal N-E-W, green door N, 3 gold", ("NEW",), doors=((_N, _G),), gold=((0, 3),)),
)

NUM_PATH_KINDS = len(PATH_CARDS)  # 27
FIRST_ACTION_KIND = NUM_PATH_KINDS
KIND_BROKEN = (27, 28, 29)
KIND_REPAIR = (30, 31, 32)
KIND_DOUBLE_REPAIR = (33, 34, 35)
KIND_ROCKFALL, KIND_MAP, KIND_KEY = 36, 37, 38
NUM_DECK_KINDS = 39
KIND_START = (39, 40)
FIRST_GOAL_KIND = 41
NUM_GOALS = len(GOAL_CARDS)  # 18
NUM_KINDS = FIRST_GOAL_KIND + NUM_GOALS  # 59

SPECS: tuple[PathCardSpec | None, ...] = PATH_CARDS + (None,) * len(ACTION_CARDS) + START_CARDS + GOAL_CARDS
KIND_CODES: tuple[str, ...] = tuple(s.code for s in PATH_CARDS) + tuple(a[0] for a in ACTION_CARDS) + tuple(
    s.code for s in START_CARDS + GOAL_CARDS
)
KIND_NAMES: tuple[str, ...] = tuple(f"{s.code} {s.name}" for s in PATH_CARDS) + tuple(a[1] for a in ACTION_CARDS) + (
    tuple(s.name for s in START_CARDS) + tuple(f"{s.code} {s.name}" for s in GOAL_CARDS)
)
DECK_COUNTS: NDArray[np.int16] = np.array([s.copies for s in PATH_CARDS] + [a[2] for a in ACTION_CARDS], np.int16)
DECK_SIZE = int(DECK_COUNTS.sum())  # 52
# Physical deck cards (the unit the per-round shuffle orders): kind of card id 0..51.
CARD_KIND: NDArray[np.int16] = np.repeat(np.arange(NUM_DECK_KINDS, dtype=np.int16), DECK_COUNTS)
GOAL_NUGGETS: NDArray[np.int8] = np.array([sum(n for _, n in s.gold) for s in GOAL_CARDS], np.int8)
NUM_COUNTERS, NUM_KEYS, HAND_SIZE, GOALS_PER_ROUND = 8, 2, 6, 6


@dataclass(frozen=True)
class DuelShape:
    """A duel card in one rotation, with the per-arm bit tables the engine uses (bit e = edge e, NESW)."""

    kind: int
    rotation: int
    open_bits: int
    arm_group: tuple[int, int, int, int]  # per edge: bits of the arms joined to it through the card (0 if closed)
    door_bits: tuple[int, int]  # arms carrying a blue / green door
    troll: bool
    ladder: int  # -1 none, else the colour whose start the ladder joins
    gold_bits: int  # arms of the group holding the gold (0: no gold)
    nuggets: int
    join_bits: int  # EDGE_PAIRS joined (observation planes)


def _rotate_edge(edge: int, rotation: int) -> int:
    return (edge + 2 * rotation) % 4


def make_duel_shape(kind: int, rotation: int) -> DuelShape:
    spec = SPECS[kind]
    if spec is None:
        raise ValueError(f"duel kind {kind} is not a path-like card")
    base = make_shape(kind, rotation, spec)
    group_bits = [sum(1 << e for e in g) for g in base.groups]
    arms = [group_bits[base.group_of_edge[e]] if base.group_of_edge[e] >= 0 else 0 for e in range(4)]
    arm_group = (arms[0], arms[1], arms[2], arms[3])
    doors = [0, 0]
    for edge, colour in spec.doors:
        doors[COLOURS.index(colour)] |= 1 << _rotate_edge(edge, rotation)
    gold_bits = 0
    nuggets = 0
    for group, n in spec.gold:
        # The group index refers to the 0° groups; find the rotated group holding the same arms.
        arms0 = spec.groups[group]
        gold_bits = sum(1 << _rotate_edge(EDGE_NAMES.index(ch), rotation) for ch in arms0)
        nuggets += n
    ladder = COLOURS.index(spec.ladder_colour) if spec.ladder_colour else -1
    return DuelShape(kind, rotation, base.open_bits, arm_group, (doors[0], doors[1]), spec.troll, ladder, gold_bits,
                     nuggets, base.join_bits)  # fmt: skip


def _symmetric(kind: int) -> bool:
    a, b = make_duel_shape(kind, 0), make_duel_shape(kind, 1)
    return (a.open_bits, sorted(a.arm_group), a.door_bits, a.gold_bits) == (
        b.open_bits,
        sorted(b.arm_group),
        b.door_bits,
        b.gold_bits,
    )


# Shape id = 2 * kind + rotation for every path-like kind (ids of action kinds are unused).
SHAPES: tuple[DuelShape | None, ...] = tuple(
    make_duel_shape(k, r) if SPECS[k] is not None else None for k in range(NUM_KINDS) for r in (0, 1)
)
NUM_SHAPES = len(SHAPES)


def shape_id(kind: int, rotation: int) -> int:
    return 2 * kind + rotation


def _table(fn, dtype) -> NDArray:
    return np.array([fn(s) if s is not None else 0 for s in SHAPES], dtype=dtype)


SHAPE_OPEN = _table(lambda s: s.open_bits, np.uint8)
SHAPE_DOOR = np.stack([_table(lambda s, c=c: s.door_bits[c], np.uint8) for c in (BLUE, GREEN)])  # (2, shapes)
SHAPE_TROLL = _table(lambda s: s.troll, np.bool_)
SHAPE_LADDER = _table(lambda s: s.ladder, np.int8)
SHAPE_GOLD_BITS = _table(lambda s: s.gold_bits, np.uint8)
SHAPE_NUGGETS = _table(lambda s: s.nuggets, np.int8)
SHAPE_JOIN = _table(lambda s: s.join_bits, np.uint8)
SHAPE_ARM_GROUP = np.array([s.arm_group if s is not None else (0, 0, 0, 0) for s in SHAPES], np.uint8)  # (shapes, 4)
SHAPE_KIND = np.arange(NUM_SHAPES, dtype=np.int16) // 2

# Placeable orientations (the action layout): every path kind at 0°, plus 180° where it differs.
PLACEABLE: tuple[tuple[int, int], ...] = tuple(
    (k, r) for k in range(NUM_PATH_KINDS) for r in (0, 1) if r == 0 or not _symmetric(k)
)
PLACEABLE_SHAPE = np.array([shape_id(k, r) for k, r in PLACEABLE], dtype=np.int16)
TROLL_PLACEABLE = tuple(i for i, (k, _) in enumerate(PLACEABLE) if PATH_CARDS[k].troll)
