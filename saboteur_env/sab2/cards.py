"""Saboteur 2 card and role tables (RULES.md §2.1, §2.4, §2.6, §2.7) on the shared card model.

The expansion keeps the base game's 40 tunnel and 27 action cards (``saboteur_env.cards``) and adds the 24
modelled expansion path cards and 21 expansion action cards: a 112-card draw deck. Doors sit on a tunnel (a
group), so ``doors`` holds (edge, colour) for one edge of that group; the whole group carries the door (§2.5).
"""

from __future__ import annotations

from enum import IntEnum

import numpy as np
from numpy.typing import NDArray

from saboteur_env.cards import ACTION_CARD_COPIES, BASE_PATH_CARDS, PathCardSpec

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
    ROCKFALL = 7  # the 21st card (RULES.md E1): identical to the base rockfall


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
