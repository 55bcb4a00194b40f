"""Invariant checks shared by the games' ``check_state`` (for states handed in from outside, e.g. ``reset``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from saboteur_env.common.errors import StateError

if TYPE_CHECKING:
    from saboteur_env.common.config import State


class _Encodes(Protocol):
    """What the observation check needs of a variant (the games' record classes have it too)."""

    def observation_layout(self, config: Any) -> Any: ...

    def encode_observation(self, state: Any, seat: int) -> Any: ...


def check_common(state: object, state_type: type[State]) -> None:
    """Type, seat to act and round of a state."""
    if not isinstance(state, state_type):
        raise StateError(f"expected a {state_type.__name__}, got {type(state).__name__}")
    config = state.config
    p = config.num_players
    if not (isinstance(state.current, (int, np.integer)) and 0 <= state.current < p):
        raise StateError(f"current={state.current!r} is not a seat; valid: 0..{p - 1}")
    if not (isinstance(state.round, (int, np.integer)) and 0 <= state.round < config.rounds):
        raise StateError(f"round={state.round!r} is out of range; valid: 0..{config.rounds - 1}")


def check_non_negative(state: object, names: tuple[str, ...]) -> None:
    """Every named array (card counts, gold) holds no negative entry."""
    for name in names:
        value = np.asarray(getattr(state, name))
        if value.size and value.min() < 0:
            raise StateError(f"{name} holds a negative entry ({int(value.min())}); counts are never negative")


def check_observations(variant: _Encodes, state: State) -> None:
    """Every seat's observation lies inside the observation space (``0 <= obs <= high``)."""
    high = variant.observation_layout(state.config).high
    for seat in range(state.config.num_players):
        obs = variant.encode_observation(state, seat)
        bad = np.flatnonzero((obs < 0) | (obs > high))
        if bad.size:
            raise StateError(
                f"seat {seat}'s observation leaves the observation space at index {int(bad[0])} "
                f"(value {float(obs[bad[0]])}, valid 0..{float(high[bad[0]])})"
            )
