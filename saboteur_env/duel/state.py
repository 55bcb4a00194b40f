"""State of one Duel game: numpy arrays plus a few scalars; all randomness is drawn at set-up (``new_game``).

The draw order of every round cannot be fixed in advance (won gold cards leave the game), so set-up draws a
random **rank** per physical card and per goal card for each round; a round's pile is the cards still in the game
sorted by that round's ranks, and its goals are the six lowest-ranked goals left in the pool, laid on the goal cells
in rank order. Same distribution as shuffling at the start of each round, with no randomness after set-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.config import GameConfig
from saboteur_env.common.statebase import ArrayState


class DuelEvent(IntEnum):
    """Public event types of the duel log (``events`` rows: type, actor, kind, cell, arg)."""

    PLACE = 0  # kind = card, cell, arg = rotation
    BRIBE = 1  # cell of the troll (arg 1: together with its placement)
    BREAK = 2  # kind = card, arg = tool
    REPAIR = 3  # kind = card, arg = tool bits repaired
    ROCKFALL = 4  # cell, kind = removed card
    MAP = 5  # arg = goal slot
    KEY = 6  # cell
    REPAIR_DISCARD = 7  # arg = tool repaired (the two discarded cards are private)
    PASS = 8  # arg = cards discarded face down
    REVEAL = 9  # cell, kind = goal kind, arg = rotation
    SECURE = 10  # actor = owner of the counter, cell, arg = nuggets
    ROUND_END = 11  # arg = reason (0 all goals, 1 counters, 2 cards)
    PAY = 12  # actor pays arg nuggets for a troll


@dataclass(kw_only=True)
class DuelState(ArrayState):
    """One Duel game. Arrays over HW storage cells (frame cell (r, c) at (r + margin) * cols + c + margin).

    Every field is given at construction (keyword-only); ``rules.start_round`` replaces the arrays of the round.
    """

    config: GameConfig
    # ---- set-up, drawn once (hidden) ----
    card_rank: NDArray[np.int16]  # (rounds, 52) shuffle rank of every physical deck card per round
    goal_rank: NDArray[np.int16]  # (rounds, 18) draw rank of every goal card per round
    # ---- whole game ----
    card_out: NDArray[np.bool_]  # (52,) in a score pile / paid
    goal_out: NDArray[np.bool_]  # (18,) left the game
    score: list[list[int]] = field(default_factory=lambda: [[], []])  # nugget value of each card in the piles
    round: int = 0
    starter: int = 1
    game_over: bool = False
    round_just_ended: bool = False
    last_rewards: NDArray[np.float64]  # (2,)
    round_results: list[dict[str, Any]] = field(default_factory=list)
    # ---- the current round ----
    deck: NDArray[np.int16]  # card kinds in draw order
    deck_pos: int = 0
    hands: NDArray[np.int16]  # (2, 39) counts per kind
    broken: NDArray[np.bool_]  # (2, 3)
    discards: NDArray[np.int16]  # (39,) discard pile
    cell_shape: NDArray[np.int16]  # (HW,) shape id, -1 empty
    cell_counter: NDArray[np.int8]  # (HW,) -1, 0 blue, 1 green
    cell_key: NDArray[np.bool_]  # (HW,) key token on the door
    goal_card: NDArray[np.int16]  # (6,) goal index per goal slot
    goal_revealed: NDArray[np.bool_]  # (6,)
    peeked: NDArray[np.bool_]  # (2, 6) map used on slot
    reach: NDArray[np.uint8]  # (2, HW) arms reachable per player
    counters_left: int = 8
    keys_left: int = 2
    current: int = 1
    num_decisions: int = 0
    events: list[tuple[int, int, int, int, int]] = field(default_factory=list)
    round_first_event: int = 0
    round_first_decision: int = 0
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def num_players(self) -> int:
        return 2

    @property
    def deck_size(self) -> int:
        return len(self.deck) - self.deck_pos

    @property
    def nuggets(self) -> list[int]:
        return [sum(p) for p in self.score]

    @property
    def num_events(self) -> int:
        return len(self.events)
