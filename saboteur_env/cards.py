"""Card data of Saboteur (RULES.md §1.2-§1.5) and the oriented-shape tables the engine uses.

Glossary (rulebook vocabulary):

* **path card** - a tunnel card; **dead end** - a path card whose tunnels stop on the card (every stub is its
  own one-edge group, stubs are never joined to each other);
* **start** / **goal** - the fixed maze cards; the goals lie face down (gold or stone) until reached;
* **maze card** - any face-up card on the board (start, placed path cards, revealed goals);
* **broken tool** (pickaxe / lantern / cart), **repair**, **double repair** (one of two tools), **rockfall**,
  **map** - the action cards;
* **gold-digger** / **saboteur** - the roles.

A card's tunnels are described at the level of **arms** (open edges): ``groups`` partitions the open edges,
edges in the same group are joined through the card. Edges are indexed ``N=0, E=1, S=2, W=3`` and stored as
bit masks ``1 << edge``. A 180° turn maps ``edge -> (edge + 2) % 4``. The per-arm model already carries what
Saboteur 2 and the Duel add (several tunnels per card, doors on arms, ladders, crystals, trolls, gold on a
tunnel), so those games only add rows to these tables.

Card kinds of the base game (the index used by hands, actions and observations):

==========  =====================================================
kind        card
==========  =====================================================
0-15        path cards T01-T16 (RULES.md §1.3)
16-18       broken pickaxe / broken lantern / broken cart
19-21       repair pickaxe / repair lantern / repair cart
22-24       double repair pickaxe-or-lantern / pickaxe-or-cart / lantern-or-cart
25          rockfall
26          map
27          start (never in a hand)
28-30       goal: gold / stone A / stone B (never in a hand)
==========  =====================================================
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np
from numpy.typing import NDArray

EDGE_NAMES = "NESW"
N, E, S, W = 0, 1, 2, 3
ALL_EDGES = (N, E, S, W)


def opposite(edge: int) -> int:
    """The facing edge: ``opp(N) = S``, ``opp(E) = W``."""
    return (edge + 2) % 4


def edge_bits(edges: str) -> int:
    """Bit mask of an edge string such as ``"NES"``."""
    bits = 0
    for ch in edges:
        bits |= 1 << EDGE_NAMES.index(ch)
    return bits


class Tool(IntEnum):
    PICKAXE = 0
    LANTERN = 1
    CART = 2


TOOL_NAMES = ("pickaxe", "lantern", "cart")


@dataclass(frozen=True)
class PathCardSpec:
    """One path-like card (path card, start or goal) at 0°.

    ``groups`` partitions the open edges; ``dead_end`` marks every one-edge group as a stub that a tunnel cannot
    pass. ``ladder``, ``doors`` (edge, colour), ``crystals``, ``troll`` and ``gold`` (group index, nuggets) are
    the features of Saboteur 2 and the Duel; the base game only uses the start card's ladder, which has no effect.
    ``ladder_colour`` is the Duel's ladder colour (``"blue"``/``"green"``; a ladder joins that colour's start).
    """

    code: str
    name: str
    groups: tuple[str, ...]
    copies: int = 0
    dead_end: bool = False
    ladder: bool = False
    doors: tuple[tuple[int, str], ...] = ()
    crystals: int = 0
    troll: bool = False
    gold: tuple[tuple[int, int], ...] = ()
    ladder_colour: str = ""

    @property
    def open_edges(self) -> str:
        return "".join(ch for ch in EDGE_NAMES if any(ch in g for g in self.groups))


# RULES.md §1.3: the 40 tunnel cards of the base game.
BASE_PATH_CARDS: tuple[PathCardSpec, ...] = (
    PathCardSpec("T01", "crossroads", ("NESW",), 5),
    PathCardSpec("T02", "T N-S+E", ("NES",), 5),
    PathCardSpec("T03", "T E-W+N", ("NEW",), 5),
    PathCardSpec("T04", "straight N-S", ("NS",), 4),
    PathCardSpec("T05", "straight E-W", ("EW",), 3),
    PathCardSpec("T06", "curve N-E", ("NE",), 5),
    PathCardSpec("T07", "curve N-W", ("NW",), 4),
    PathCardSpec("T08", "dead end NESW", ("N", "E", "S", "W"), 1, dead_end=True),
    PathCardSpec("T09", "dead end NES", ("N", "E", "S"), 1, dead_end=True),
    PathCardSpec("T10", "dead end NEW", ("N", "E", "W"), 1, dead_end=True),
    PathCardSpec("T11", "dead end NS", ("N", "S"), 1, dead_end=True),
    PathCardSpec("T12", "dead end EW", ("E", "W"), 1, dead_end=True),
    PathCardSpec("T13", "dead end NE", ("N", "E"), 1, dead_end=True),
    PathCardSpec("T14", "dead end NW", ("N", "W"), 1, dead_end=True),
    PathCardSpec("T15", "dead end N", ("N",), 1, dead_end=True),
    PathCardSpec("T16", "dead end E", ("E",), 1, dead_end=True),
)

# RULES.md §1.2: start and goal cards (never in the deck).
START_CARD = PathCardSpec("START", "start", ("NESW",), 0, ladder=True)
GOAL_GOLD = PathCardSpec("GOLD", "goal: gold", ("NESW",), 0)
GOAL_STONE_A = PathCardSpec("STONE_A", "goal: stone A", ("NE",), 0)
GOAL_STONE_B = PathCardSpec("STONE_B", "goal: stone B", ("NW",), 0)


class ActionKind(IntEnum):
    """Action cards of the base game, RULES.md §1.4 (value = offset after the path cards)."""

    BROKEN_PICKAXE = 0
    BROKEN_LANTERN = 1
    BROKEN_CART = 2
    REPAIR_PICKAXE = 3
    REPAIR_LANTERN = 4
    REPAIR_CART = 5
    REPAIR_PICKAXE_LANTERN = 6
    REPAIR_PICKAXE_CART = 7
    REPAIR_LANTERN_CART = 8
    ROCKFALL = 9
    MAP = 10


ACTION_CARD_COPIES = (3, 3, 3, 2, 2, 2, 1, 1, 1, 3, 6)
ACTION_CARD_NAMES = (
    "broken pickaxe",
    "broken lantern",
    "broken cart",
    "repair pickaxe",
    "repair lantern",
    "repair cart",
    "repair pickaxe/lantern",
    "repair pickaxe/cart",
    "repair lantern/cart",
    "rockfall",
    "map",
)
# Tools a double repair may fix, in the order of the action layout's tool choice.
DOUBLE_REPAIR_TOOLS = ((Tool.PICKAXE, Tool.LANTERN), (Tool.PICKAXE, Tool.CART), (Tool.LANTERN, Tool.CART))

# Global kind ids of the base game.
NUM_PATH_KINDS = len(BASE_PATH_CARDS)  # 16
FIRST_ACTION_KIND = NUM_PATH_KINDS  # 16
NUM_DECK_KINDS = NUM_PATH_KINDS + len(ActionKind)  # 27: kinds that can be in a hand
KIND_BROKEN = tuple(FIRST_ACTION_KIND + t for t in range(3))  # 16, 17, 18
KIND_REPAIR = tuple(FIRST_ACTION_KIND + 3 + t for t in range(3))  # 19, 20, 21
KIND_DOUBLE_REPAIR = tuple(FIRST_ACTION_KIND + 6 + t for t in range(3))  # 22, 23, 24
KIND_ROCKFALL = FIRST_ACTION_KIND + ActionKind.ROCKFALL  # 25
KIND_MAP = FIRST_ACTION_KIND + ActionKind.MAP  # 26
KIND_START = NUM_DECK_KINDS  # 27
KIND_GOAL_GOLD = KIND_START + 1  # 28
KIND_GOAL_STONE_A = KIND_START + 2  # 29
KIND_GOAL_STONE_B = KIND_START + 3  # 30
NUM_KINDS = KIND_START + 4  # 31
GOAL_KINDS = (KIND_GOAL_GOLD, KIND_GOAL_STONE_A, KIND_GOAL_STONE_B)

# Every path-like spec by global kind id (None for action cards).
SHAPE_SPECS: tuple[PathCardSpec | None, ...] = (
    BASE_PATH_CARDS + (None,) * len(ActionKind) + (START_CARD, GOAL_GOLD, GOAL_STONE_A, GOAL_STONE_B)
)

KIND_CODES: tuple[str, ...] = tuple(s.code for s in BASE_PATH_CARDS) + tuple(
    k.name for k in ActionKind
) + ("START", "GOAL_GOLD", "GOAL_STONE_A", "GOAL_STONE_B")
KIND_NAMES: tuple[str, ...] = tuple(f"{s.code} {s.name}" for s in BASE_PATH_CARDS) + ACTION_CARD_NAMES + (
    "start",
    "goal: gold",
    "goal: stone A",
    "goal: stone B",
)

# The draw pile of one round: 40 path + 27 action cards (RULES.md §1.1).
DECK_COUNTS: NDArray[np.int16] = np.array(
    [s.copies for s in BASE_PATH_CARDS] + list(ACTION_CARD_COPIES), dtype=np.int16
)
DECK_SIZE = int(DECK_COUNTS.sum())  # 67

# RULES.md §1.5: gold cards (values), §1.6 roles, §1.7 hand sizes, §1.11 saboteur payouts.
GOLD_CARD_VALUES: tuple[int, ...] = (1,) * 16 + (2,) * 8 + (3,) * 4
SABOTEURS_BY_PLAYERS = {3: 1, 4: 1, 5: 2, 6: 2, 7: 3, 8: 3, 9: 3, 10: 4}
DIGGERS_BY_PLAYERS = {3: 3, 4: 4, 5: 4, 6: 5, 7: 5, 8: 6, 9: 7, 10: 7}
HAND_SIZE_BY_PLAYERS = {3: 6, 4: 6, 5: 6, 6: 5, 7: 5, 8: 4, 9: 4, 10: 4}
SABOTEUR_PAYOUT = {0: 0, 1: 4, 2: 3, 3: 3, 4: 2}
MAX_GOLD_DRAWN = 9


class Role(IntEnum):
    GOLD_DIGGER = 0
    SABOTEUR = 1


ROLE_NAMES = ("gold-digger", "saboteur")


# --------------------------------------------------------------------------------------------------------------
# Oriented shapes: every (spec, rotation) the board can hold, with bit tables used by the numpy engine.
# --------------------------------------------------------------------------------------------------------------
# The six unordered edge pairs, in the order of the "joined" observation planes.
EDGE_PAIRS: tuple[tuple[int, int], ...] = ((N, E), (N, S), (N, W), (E, S), (E, W), (S, W))


def rotate_edges(edges: str, rotation: int) -> str:
    """Edge string turned by ``rotation`` (0 or 1 = 180°), in NESW order."""
    if rotation == 0:
        return edges
    return "".join(sorted((EDGE_NAMES[(EDGE_NAMES.index(ch) + 2) % 4] for ch in edges), key=EDGE_NAMES.index))


@dataclass(frozen=True)
class Shape:
    """A path-like card in one rotation, as the board stores it."""

    kind: int
    rotation: int  # 0 or 1 (= 180°)
    open_bits: int  # bit e set when edge e is open
    groups: tuple[tuple[int, ...], ...]  # edges joined through the card
    group_of_edge: tuple[int, ...]  # per edge: group index or -1
    join_bits: int  # bit i set when EDGE_PAIRS[i] is joined
    stub_bits: int  # bit e set when edge e is a dead-end stub


def make_shape(kind: int, rotation: int, spec: PathCardSpec | None = None) -> Shape:
    """The oriented shape of base kind ``kind`` (or of ``spec``, for the other games' card tables)."""
    spec = spec or SHAPE_SPECS[kind]
    if spec is None:
        raise ValueError(f"kind {kind} is not a path-like card")
    groups = tuple(tuple(EDGE_NAMES.index(ch) for ch in rotate_edges(g, rotation)) for g in spec.groups)
    group_of_edge = [-1, -1, -1, -1]
    open_bits = 0
    stub_bits = 0
    for gi, g in enumerate(groups):
        for e in g:
            group_of_edge[e] = gi
            open_bits |= 1 << e
        if spec.dead_end and len(g) == 1:
            stub_bits |= 1 << g[0]
    join_bits = 0
    for i, (a, b) in enumerate(EDGE_PAIRS):
        if group_of_edge[a] >= 0 and group_of_edge[a] == group_of_edge[b]:
            join_bits |= 1 << i
    return Shape(kind, rotation, open_bits, groups, tuple(group_of_edge), join_bits, stub_bits)


def is_symmetric(kind: int) -> bool:
    """True when the 180° form of a card equals its 0° form (only one rotation is offered)."""
    a, b = make_shape(kind, 0), make_shape(kind, 1)
    return a.open_bits == b.open_bits and sorted(a.groups) == sorted(b.groups)


# Shape ids: index into SHAPES. Every path-like kind in both rotations (symmetric ones too, so that a stored
# rotation is always meaningful); shape id = 2 * kind_slot + rotation.
SHAPE_KINDS: tuple[int, ...] = tuple(k for k, s in enumerate(SHAPE_SPECS) if s is not None)
SHAPES: tuple[Shape, ...] = tuple(make_shape(k, r) for k in SHAPE_KINDS for r in (0, 1))
SHAPE_ID: dict[tuple[int, int], int] = {(s.kind, s.rotation): i for i, s in enumerate(SHAPES)}
SHAPE_OPEN = np.array([s.open_bits for s in SHAPES], dtype=np.uint8)
SHAPE_JOIN = np.array([s.join_bits for s in SHAPES], dtype=np.uint8)
SHAPE_STUB = np.array([s.stub_bits for s in SHAPES], dtype=np.uint8)
SHAPE_KIND = np.array([s.kind for s in SHAPES], dtype=np.int16)
SHAPE_ROT = np.array([s.rotation for s in SHAPES], dtype=np.int8)

# Placeable orientations (the action layout): every deck path kind at 0°, plus 180° where it differs.
PLACEABLE: tuple[tuple[int, int], ...] = tuple(
    (k, r) for k in range(NUM_PATH_KINDS) for r in (0, 1) if r == 0 or not is_symmetric(k)
)
PLACEABLE_SHAPE = np.array([SHAPE_ID[p] for p in PLACEABLE], dtype=np.int16)
PLACEABLE_KIND = np.array([k for k, _ in PLACEABLE], dtype=np.int16)
PLACEABLE_OPEN = SHAPE_OPEN[PLACEABLE_SHAPE]
