"""State of one Saboteur 2 game: numpy arrays plus a few scalars; all randomness is drawn at set-up."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.config import GameConfig
from saboteur_env.common.statebase import ArrayState


class Phase(IntEnum):
    """What the seat to act is deciding (a turn may take several decisions, docs/rules.md §2.3)."""

    TURN = 0  # choose one option of the turn
    PASS = 1  # passing: discard another card or stop (at most 3)
    FREE = 2  # option C: discard the two cards
    THEFT = 3  # after payouts: a thief chooses whom to steal from


class Sab2Event(IntEnum):
    """Public event rows (type, actor, kind, target, cell, arg)."""

    PLACE = 0  # kind, cell, arg = rotation
    BREAK = 1  # kind, target, arg = tool
    REPAIR = 2  # kind, target, arg = tool
    ROCKFALL = 3  # kind (the rockfall card), cell, arg = removed kind
    MAP = 4  # arg = goal slot
    THEFT = 5
    HANDS_OFF = 6  # target
    SWAP_HAND = 7  # target
    INSPECTION = 8  # target (the result is private)
    SWAP_HATS = 9  # target (the new role is private)
    TRAPPED = 10  # target
    FREE_AT_LAST = 11  # target
    DISCARD = 12  # a face-down discard (the kind is private)
    FREE = 13  # arg = tool freed (3 = Trapped!)
    REVEAL = 14  # cell, kind = goal
    ROUND_END = 15  # arg = 0 gold reached, 1 not
    PAYOUT = 16  # target seat, arg = gold
    STEAL = 17  # actor steals 1 from target
    PASS_END = 18  # the pass or option C ends (arg = cards discarded)


@dataclass(kw_only=True)
class Sab2State(ArrayState):
    """Every array is required (``rules.new_game`` builds them all); ``rules.start_round`` replaces the per-round
    ones."""

    config: GameConfig
    # ---- set-up of every round (hidden) ----
    round_decks: NDArray[np.int16]  # (rounds, 112) kinds; the first 10 are removed unseen
    round_roles: NDArray[np.int8]  # (rounds, 15) the first N dealt by seat, the rest is the reserve in draw order
    round_goals: NDArray[np.int16]  # (rounds, 3) goal kind per slot
    # ---- current round ----
    round: int = 0
    deck_pos: int = 0
    hands: NDArray[np.int16]  # (P, 55)
    roles: NDArray[np.int8]  # (P,)
    reserve_pos: int = 0  # next role card of the reserve
    broken: NDArray[np.bool_]  # (P, 3)
    trapped: NDArray[np.bool_]  # (P,)
    theft: NDArray[np.bool_]  # (P,)
    theft_time: NDArray[np.int32]  # (P,) decision it was played
    inspected: NDArray[np.int8]  # (P, P) role seen, -1 none
    hats_swapped: NDArray[np.bool_]  # (P,) this round
    inspections: NDArray[np.bool_]  # (P, P) i inspected j (public)
    discarded: NDArray[np.int16]  # (P,) face-down discards
    peeked: NDArray[np.bool_]  # (P, 3)
    discards: NDArray[np.int16]  # (55,)
    cell_shape: NDArray[np.int16]  # (HW,) shape id, -1
    reach: NDArray[np.uint8]  # (HW,) arms connected to start
    goal_kind: NDArray[np.int16]  # (3,)
    goal_revealed: NDArray[np.bool_]  # (3,)
    current: int = 0
    last_player: int = 0
    phase: int = Phase.TURN
    pending: int = 0  # PASS: cards discarded so far; FREE: discards still to make
    free_target: int = -1  # FREE: tool (0-2) or 3 = Trapped!
    thieves: list[int] = field(default_factory=list)  # THEFT: thieves still to steal, in order
    finder: int = -1
    round_start_gold: NDArray[np.int32] | None = None  # (P,) before payouts; None until the first round ends
    round_summary: dict = field(default_factory=dict)  # winners and payouts, completed after the thefts
    # ---- whole game ----
    gold: NDArray[np.int32]  # (P,) public totals
    stolen_held: NDArray[np.int32]  # (P,) gold got by theft
    last_rewards: NDArray[np.float64]  # (P,)
    round_results: list[dict] = field(default_factory=list)
    events: list[tuple[int, int, int, int, int, int]] = field(default_factory=list)
    num_decisions: int = 0
    round_first_event: int = 0
    game_over: bool = False
    round_just_ended: bool = False
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def num_players(self) -> int:
        return self.config.num_players

    @property
    def deck_size(self) -> int:
        return self.round_decks.shape[1] - self.deck_pos

    @property
    def num_events(self) -> int:
        return len(self.events)
