"""Dense reward shaping for training (``SingleSeatEnv(shaping=...)``); off unless asked for.

:class:`GoldProgress` is a potential over the seat's own knowledge: while the seat is a gold-digger, minus ``coef``
times the tile distance (fewest path cards still needed, :attr:`agents.base.analysis.PublicBoard.distance`) from the
start network to the nearest goal the seat does not know to be stone (public reveals and its own map peeks; never
the hidden gold position). Saboteur seats get no shaping. ``SingleSeatEnv`` adds ``potential(after) -
potential(before)`` around each of the learner's own actions, so a placement that brings the tunnel one card
closer earns ``coef``, and a rockfall that cuts it costs the same.
"""

from __future__ import annotations

import numpy as np

from agents.base.analysis import PublicBoard
from saboteur_env.base.cards import KIND_GOAL_GOLD, Role
from saboteur_env.base.state import GameState


class GoldProgress:
    """Potential ``-coef * min(distance to a goal not known to be stone, cap)`` for gold-digger seats."""

    def __init__(self, coef: float = 0.05, cap: int = 10) -> None:
        if not coef > 0 or cap < 1:
            raise ValueError(f"GoldProgress needs coef > 0 and cap >= 1, got coef={coef}, cap={cap}")
        self.coef, self.cap = float(coef), int(cap)

    def __call__(self, state: GameState, seat: int) -> float:
        if state.game_over or state.roles[seat] != Role.GOLD_DIGGER:
            return 0.0
        stone = state.goal_kind != KIND_GOAL_GOLD
        known_stone = stone & (state.goal_revealed | state.peeked[seat])
        distance = PublicBoard.from_state(state).distance
        candidates = distance[~known_stone]
        best = int(candidates.min()) if candidates.size else self.cap
        return -self.coef * float(np.minimum(best, self.cap))
