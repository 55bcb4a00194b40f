"""The card model shared by every game, and the cards of the original Saboteur box.

Glossary (rulebook vocabulary):

* **path card** - a tunnel card; **dead end** - a path card whose tunnels stop on the card (every stub is its
  own one-edge group, stubs are never joined to each other);
* **start** / **goal** - the fixed maze cards; the goals lie face down until reached;
* **maze card** - any face-up card on the board (start, placed path cards, revealed goals);
* **broken tool** (pickaxe / lantern / cart), **repair**, **double repair** (one of two tools), **rockfall**,
  **map** - the action cards of the original box.

A card's tunnels are described at the level of **arms** (open edges): ``groups`` partitions the open edges,
edges in the same group are joined through the card. Edges are indexed ``N=0, E=1, S=2, W=3`` and stored as
bit masks ``1 << edge``. A 180° turn maps ``edge -> (edge + 2) % 4``. The per-arm model carries what Saboteur 2
and the Duel add (several tunnels per card, doors on arms, ladders, crystals, trolls, gold on a tunnel), so each
game declares its cards as rows of :class:`PathCardSpec` and kind numbers of its own.

The original box's cards (``BASE_PATH_CARDS``, start and goals, the action cards and their copies) are data
shared by the base game and Saboteur 2, whose deck contains them; which kinds a game numbers them as is the
game's business (``saboteur_env.base.cards``, ``saboteur_env.sab2.cards``).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

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


# docs/rules.md §1.3: the 40 tunnel cards of the base game.
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

# docs/rules.md §1.2: start and goal cards (never in the deck).
START_CARD = PathCardSpec("START", "start", ("NESW",), 0, ladder=True)
GOAL_GOLD = PathCardSpec("GOLD", "goal: gold", ("NESW",), 0)
GOAL_STONE_A = PathCardSpec("STONE_A", "goal: stone A", ("NE",), 0)
GOAL_STONE_B = PathCardSpec("STONE_B", "goal: stone B", ("NW",), 0)


class ActionKind(IntEnum):
    """Action cards of the base game, docs/rules.md §1.4 (value = offset after the path cards)."""

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


def make_shape(kind: int, rotation: int, spec: PathCardSpec) -> Shape:
    """The oriented shape of ``spec`` (a card of kind ``kind`` in a game's own kind numbering)."""
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
