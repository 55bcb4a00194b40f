"""Card kinds of the base game (rules reference §1.2-§1.5) and the oriented-shape tables its engine uses.

The card model (arms, groups, ``PathCardSpec``, oriented ``Shape``) and the original box's cards live in
``saboteur_env.common.cards``; this module numbers them as the base game's kinds.

Card kinds of the base game (the index used by hands, actions and observations):

==========  =====================================================
kind        card
==========  =====================================================
0-15        path cards T01-T16 (rules reference §1.3)
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

from enum import IntEnum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.cards import (  # noqa: F401 - the base game's names for the shared cards
    ACTION_CARD_COPIES,
    ACTION_CARD_NAMES,
    ALL_EDGES,
    BASE_PATH_CARDS,
    DOUBLE_REPAIR_TOOLS,
    EDGE_NAMES,
    EDGE_PAIRS,
    GOAL_GOLD,
    GOAL_STONE_A,
    GOAL_STONE_B,
    START_CARD,
    TOOL_NAMES,
    ActionKind,
    E,
    N,
    PathCardSpec,
    S,
    Shape,
    Tool,
    W,
    edge_bits,
    make_shape,
    opposite,
    rotate_edges,
)

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

# The draw pile of one round: 40 path + 27 action cards (docs/rules.md §1.1).
DECK_COUNTS: NDArray[np.int16] = np.array(
    [s.copies for s in BASE_PATH_CARDS] + list(ACTION_CARD_COPIES), dtype=np.int16
)
DECK_SIZE = int(DECK_COUNTS.sum())  # 67


def deck_counts(config: Any) -> NDArray[np.int16]:
    """Copies per deck kind in one round's draw pile: the rulebook's, unless a variant built on the base rules
    declares its own (``deck_counts`` on the variant, e.g. the tests' 58-card ``base-lite``)."""
    counts: NDArray[np.int16] = getattr(config.variant, "deck_counts", DECK_COUNTS)
    return counts

# docs/rules.md §1.5: gold cards (values), §1.6 roles, §1.7 hand sizes, §1.11 saboteur payouts.
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
def _spec(kind: int) -> PathCardSpec:
    spec = SHAPE_SPECS[kind]
    if spec is None:
        raise ValueError(f"kind {kind} is not a path-like card")
    return spec


def is_symmetric(kind: int) -> bool:
    """True when the 180° form of a card equals its 0° form (only one rotation is offered)."""
    a, b = make_shape(kind, 0, _spec(kind)), make_shape(kind, 1, _spec(kind))
    return a.open_bits == b.open_bits and sorted(a.groups) == sorted(b.groups)


# Shape ids: index into SHAPES. Every path-like kind in both rotations (symmetric ones too, so that a stored
# rotation is always meaningful); shape id = 2 * kind_slot + rotation.
SHAPE_KINDS: tuple[int, ...] = tuple(k for k, s in enumerate(SHAPE_SPECS) if s is not None)
SHAPES: tuple[Shape, ...] = tuple(make_shape(k, r, _spec(k)) for k in SHAPE_KINDS for r in (0, 1))
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
