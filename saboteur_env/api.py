"""The engine API: one-line lookups of the state's (or config's) variant, so that every game is played alike.

These are the functions users call (``saboteur_env.new_game`` etc.); each game's own modules hold the rules.
Seats are validated here, once, for every game.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.config import GameConfig, Viewer
from saboteur_env.common.errors import ConfigError, SeatError, check_seat

__all__ = [
    "action_layout",
    "action_to_string",
    "apply_action",
    "decode_action",
    "encode_action",
    "encode_observation",
    "encode_state",
    "final_ranking",
    "is_terminal",
    "legal_action_mask",
    "new_game",
    "num_actions",
    "observation_layout",
    "player_view",
    "render_image",
    "render_text",
    "returns",
    "reward_range",
    "state_size",
]


# ---- set-up, legality, transition ---------------------------------------------------------------------------------
def new_game(config: GameConfig, rng: np.random.Generator) -> Any:
    """Draw every random element of a whole game from ``rng`` and start round 1."""
    if not isinstance(config, GameConfig):
        raise TypeError(f"new_game needs a GameConfig, got {type(config).__name__}")
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"new_game needs a numpy Generator (np.random.default_rng(seed)), got {type(rng).__name__}")
    if config.claims:
        raise ConfigError("claims=True is a layer of the environments (raw_env, env(), VectorEnv; "
                          "saboteur_env.claims), not of a game state; new_game plays config.game_config")  # fmt: skip
    return config.variant.new_game(config, rng)


def legal_action_mask(state: Any) -> NDArray[np.bool_]:
    """Bool mask over the action space for the seat to act (read-only; all False once the game is over)."""
    return state.config.variant.legal_action_mask(state)


def apply_action(state: Any, action: int, *, inplace: bool = False) -> Any:
    """Apply ``action`` for the seat to act; pure unless ``inplace`` (rewards of the action in ``last_rewards``).

    Raises ``GameOverError``, ``ActionError`` (not an id in range) or ``IllegalActionError`` (the state is left
    unchanged), all ``ValueError`` subclasses.
    """
    return state.config.variant.apply_action(state, action, inplace=inplace)


def is_terminal(state: Any) -> bool:
    return bool(state.game_over)


def returns(state: Any) -> NDArray[np.float64]:
    """Score per seat so far (the final score once the game is over)."""
    return state.config.variant.returns(state)


def final_ranking(state: Any) -> list[int]:
    """Rank per seat by score (1 = best; tied players share a rank)."""
    g = returns(state)
    return [1 + int((g > g[i]).sum()) for i in range(state.config.num_players)]


def reward_range(config: GameConfig) -> tuple[float, float]:
    """Bounds of one seat's summed rewards over a game."""
    return config.variant.reward_range(config)


# ---- actions ------------------------------------------------------------------------------------------------------
def action_layout(config: GameConfig) -> Any:
    """The flat action space of a configuration (built once per config)."""
    return config.variant.action_layout(config)


def num_actions(config: GameConfig) -> int:
    return int(action_layout(config).num_actions)


def decode_action(config: GameConfig, action: int) -> Any:
    return action_layout(config).decode(action)


def encode_action(config: GameConfig, act: Any) -> int:
    return int(action_layout(config).encode(act))


def action_to_string(config: GameConfig, action: int) -> str:
    return str(action_layout(config).to_string(action))


# ---- observations and pictures ------------------------------------------------------------------------------------
def observation_layout(config: GameConfig) -> Any:
    return config.variant.observation_layout(config)


def state_size(config: GameConfig) -> int:
    return config.variant.state_size(config)


def encode_observation(state: Any, seat: int) -> NDArray[np.float32]:
    """The observation of ``seat``: public information plus that seat's private information only."""
    return state.config.variant.encode_observation(state, check_seat(seat, state.config.num_players))


def encode_state(state: Any) -> NDArray[np.float32]:
    """The full state as a vector for centralised critics (NOT for agents: it holds every hidden element)."""
    return state.config.variant.encode_state(state)


def player_view(state: Any, seat: int) -> Any:
    """What ``seat`` may know, as the game's view object (decoded from its observation, so it cannot hold more)."""
    return state.config.variant.player_view(state, check_seat(seat, state.config.num_players))


def _viewer(state: Any, viewer: Viewer) -> Viewer:
    if viewer is None or viewer == "omniscient":
        return viewer
    if isinstance(viewer, str):
        raise ValueError(f"viewer={viewer!r} must be a seat index, None or 'omniscient'")
    try:
        return check_seat(viewer, state.config.num_players)
    except SeatError as e:
        raise SeatError(f"viewer={viewer!r} must be None, 'omniscient' or a seat: {e}") from None


def render_text(state: Any, viewer: Viewer = None) -> str:
    """Text picture: ``viewer`` = a seat (its perspective), ``None`` (spectator) or ``"omniscient"``."""
    return state.config.variant.render_text(state, _viewer(state, viewer))


def render_image(state: Any, viewer: Viewer = None) -> NDArray[np.uint8]:
    """``(H, W, 3)`` uint8 image: ``viewer`` = a seat, ``None`` (public view) or ``"omniscient"``."""
    return state.config.variant.render_image(state, _viewer(state, viewer))
