"""Saboteur 2 card and role tables (docs/rules.md §2.1, §2.4, §2.6, §2.7) on the shared card model.

The expansion keeps the base game's 40 tunnel and 27 action cards (``saboteur_env.common.cards``) and adds the 24
modelled expansion path cards and 21 expansion action cards: a 112-card draw deck. Doors sit on a tunnel (a
group), so ``doors`` holds (edge, colour) for one edge of that group; the whole group carries the door (§2.5).
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.cards import ACTION_CARD_COPIES, BASE_PATH_CARDS, PathCardSpec

_N, _E, _S, _W = 0, 1, 2, 3
_B, _G = "blue", "green"

# §2.4: the 24 modelled expansion path cards.
EXPANSION_PATH_CARDS: tuple[PathCardSpec, ...] = (
    PathCardSpec("X01", "bridge", ("NS", "EW"), 2),
    PathCardSpec("X02", "double curve", ("NW", "SE"), 2),
    PathCardSpec("X03", "ladder E", ("E",), 1, ladder=True),
    PathCardSpec("X04", "ladder N", ("N",), 1, ladder=True),
    PathCardSpec("X05", "ladder, curve N-W", ("NW",), 1, ladder=True),
    PathCardSpec("X06", "ladder, curve N-E", ("NE",), 1, ladder=True),
    PathCardSpec("X07", "blue door N-S", ("NS",), 1, doors=((_N, _B),)),
    PathCardSpec("X08", "blue door E-W", ("EW",), 1, doors=((_E, _B),)),
    PathCardSpec("X09", "blue door N-E", ("NE",), 1, doors=((_N, _B),)),
    PathCardSpec("X10", "green door N-S + E stub", ("NS", "E"), 1, doors=((_N, _G),)),
    PathCardSpec("X11", "green door E-W", ("EW",), 1, doors=((_E, _G),)),
    PathCardSpec("X12", "green door N-W", ("NW",), 1, doors=((_N, _G),)),
    PathCardSpec("X13", "crystal, dead end N", ("N",), 1, dead_end=True, crystals=1),
    PathCardSpec("X14", "crystal, dead end E", ("E",), 1, dead_end=True, crystals=1),
    PathCardSpec("X15", "crystal crossroads", ("NESW",), 1, crystals=1),
    PathCardSpec("X16", "crystal T N-E-W", ("NEW",), 3, crystals=1),
    PathCardSpec("X17", "crystal T N-E-S", ("NES",), 1, crystals=1),
    PathCardSpec("X18", "crystal T N-E-S + W stub", ("NES", "W"), 1, crystals=1),
    PathCardSpec("X19", "crystal T E-S-W + N stub", ("ESW", "N"), 1, crystals=1),
    PathCardSpec("X20", "crystal E-W + N stub", ("EW", "N"), 1, crystals=1),
)


class ExpansionAction(IntEnum):
    """§2.6 expansion action cards (value = offset after the base action cards)."""

    THEFT = 0
    HANDS_OFF = 1
    SWAP_HAND = 2
    INSPECTION = 3
    SWAP_HATS = 4
    TRAPPED = 5
    FREE_AT_LAST = 6
    ROCKFALL = 7  # the 21st card (docs/rules.md E1): identical to the base rockfall


EXPANSION_ACTION_COPIES = (4, 3, 2, 2, 2, 3, 4, 1)
EXPANSION_ACTION_NAMES = ("theft", "hands off", "swap your hand", "inspection", "swap your hats", "trapped!",
                          "free at last!", "rockfall (expansion)")  # fmt: skip


class Sab2Role(IntEnum):
    """§2.7 roles."""

    BLUE_DIGGER = 0
    GREEN_DIGGER = 1
    BOSS = 2
    PROFITEER = 3
    GEOLOGIST = 4
    SABOTEUR = 5


ROLE_COPIES = {Sab2Role.BLUE_DIGGER: 4, Sab2Role.GREEN_DIGGER: 4, Sab2Role.BOSS: 1, Sab2Role.PROFITEER: 1,
               Sab2Role.GEOLOGIST: 2, Sab2Role.SABOTEUR: 3}  # fmt: skip
ROLE_NAMES = ("blue gold-digger", "green gold-digger", "boss", "profiteer", "geologist", "saboteur")
ROLE_DECK: NDArray[np.int8] = np.repeat(np.array(list(ROLE_COPIES), dtype=np.int8), list(ROLE_COPIES.values()))

PATH_CARDS: tuple[PathCardSpec, ...] = BASE_PATH_CARDS + EXPANSION_PATH_CARDS
NUM_PATH_CARDS = sum(s.copies for s in PATH_CARDS)  # 64
NUM_ACTION_CARDS = sum(ACTION_CARD_COPIES) + sum(EXPANSION_ACTION_COPIES)  # 48
DECK_SIZE = NUM_PATH_CARDS + NUM_ACTION_CARDS  # 112
REMOVED_PER_ROUND = 10
HAND_SIZE = 6
MIN_PLAYERS, MAX_PLAYERS = 2, 12


# ---- kind ids and oriented shapes ----------------------------------------------------------------------------------
# Kinds: 0-15 base path T01-T16, 16-35 expansion path X01-X20, 36-46 base actions (saboteur_env.common.cards.ActionKind
# order), 47-54 expansion actions (ExpansionAction order), 55 start, 56-58 goals gold / stone A / stone B.
NUM_PATH_KINDS = len(PATH_CARDS)  # 36
FIRST_BASE_ACTION = NUM_PATH_KINDS
FIRST_EXPANSION_ACTION = FIRST_BASE_ACTION + len(ACTION_CARD_COPIES)  # 47
NUM_DECK_KINDS = FIRST_EXPANSION_ACTION + len(EXPANSION_ACTION_COPIES)  # 55
KIND_START = NUM_DECK_KINDS
KIND_GOALS = (KIND_START + 1, KIND_START + 2, KIND_START + 3)
NUM_KINDS = KIND_START + 4


def _specs() -> tuple[PathCardSpec | None, ...]:
    from saboteur_env.common.cards import GOAL_GOLD, GOAL_STONE_A, GOAL_STONE_B, START_CARD

    start = PathCardSpec(START_CARD.code, START_CARD.name, START_CARD.groups)  # its ladder has no effect (§1.2)
    return PATH_CARDS + (None,) * (NUM_DECK_KINDS - NUM_PATH_KINDS) + (start, GOAL_GOLD, GOAL_STONE_A, GOAL_STONE_B)


SPECS = _specs()
DECK_COUNTS: NDArray[np.int16] = np.array(
    [s.copies for s in PATH_CARDS] + list(ACTION_CARD_COPIES) + list(EXPANSION_ACTION_COPIES), dtype=np.int16
)


def _shape_rows() -> tuple[NDArray[np.uint8], NDArray[np.uint8], NDArray[np.uint8], NDArray[np.bool_],
                           NDArray[np.int8]]:  # fmt: skip
    """Per shape id (2 * kind + rotation): open bits, arm groups (4 per shape), door arms per colour (2), ladder
    flag, crystals. A door marks every arm of its tunnel (the whole group carries it, §2.5)."""
    from saboteur_env.common.cards import make_shape

    n = 2 * NUM_KINDS
    open_bits = np.zeros(n, np.uint8)
    arm_group = np.zeros((n, 4), np.uint8)
    doors = np.zeros((2, n), np.uint8)
    ladder = np.zeros(n, bool)
    crystals = np.zeros(n, np.int8)
    for kind, spec in enumerate(SPECS):
        if spec is None:
            continue
        for rot in (0, 1):
            sid = 2 * kind + rot
            shape = make_shape(kind, rot, spec)
            open_bits[sid] = shape.open_bits
            for g in shape.groups:
                bits = sum(1 << e for e in g)
                for e in g:
                    arm_group[sid, e] = bits
            for edge, colour in spec.doors:
                turned = (edge + 2 * rot) % 4
                doors[("blue", "green").index(colour), sid] |= arm_group[sid, turned]
            ladder[sid] = spec.ladder
            crystals[sid] = spec.crystals
    return open_bits, arm_group, doors, ladder, crystals


SHAPE_OPEN, SHAPE_ARM_GROUP, SHAPE_DOOR, SHAPE_LADDER, SHAPE_CRYSTALS = _shape_rows()
KIND_CODES: tuple[str, ...] = tuple(s.code if s is not None else "" for s in SPECS)


def kind_of(code: str) -> int:
    """Saboteur 2 kind id of a path/start/goal code (``"T05"``, ``"X07"``, ``"START"``, ``"GOLD"``)."""
    if code not in KIND_CODES:
        raise ValueError(f"unknown Saboteur 2 card {code!r}")
    return KIND_CODES.index(code)

# Codes of every card kind a hand can hold (path codes, then action card names).
HAND_CODES = KIND_CODES[: NUM_PATH_KINDS] + tuple(
    ("BROKEN_PICKAXE", "BROKEN_LANTERN", "BROKEN_CART", "REPAIR_PICKAXE", "REPAIR_LANTERN", "REPAIR_CART",
     "REPAIR_PICKAXE_LANTERN", "REPAIR_PICKAXE_CART", "REPAIR_LANTERN_CART", "ROCKFALL", "MAP")
) + tuple(a.name if a != ExpansionAction.ROCKFALL else "ROCKFALL_2" for a in ExpansionAction)  # fmt: skip
