"""saboteur-env: the hidden-role tunnel card game Saboteur as a numpy rules engine and a PettingZoo AEC env.

Engine (no RL library needed): ``GameConfig``, ``new_game``, ``legal_action_mask``, ``apply_action``, ``GameState``,
the action codec (``decode_action``, ``encode_action``, ``action_to_string``, ``num_actions``), observations
(``encode_observation``, ``PlayerView``) and ``render_text``. Environment: ``env`` and ``raw_env`` (PettingZoo AEC,
imported lazily so the engine works without pettingzoo).
"""

from __future__ import annotations

from typing import Any

from saboteur_env.actions import (
    Action,
    ActionError,
    ActionType,
    action_layout,
    action_to_string,
    decode_action,
    encode_action,
    num_actions,
)
from saboteur_env.config import ConfigError, GameConfig
from saboteur_env.observation import PlayerView, encode_observation, observation_layout, player_view
from saboteur_env.render import render_text
from saboteur_env.rules import (
    GameOverError,
    IllegalActionError,
    apply_action,
    final_ranking,
    is_terminal,
    legal_action_mask,
    new_game,
    returns,
)
from saboteur_env.state import EventType, GameState

__version__ = "0.2.0"
RULES_VERSION = "base-1"  # bump when game behaviour changes (golden replays are tied to it)
# Per game; tournament logs record the version they were played under.
RULES_VERSIONS = {"base": RULES_VERSION, "duel": "duel-1", "sab2": "sab2-1"}


def env(**kwargs: Any) -> Any:
    """PettingZoo AEC environment with the standard wrappers (see ``saboteur_env.env``)."""
    from saboteur_env.env import env as _env

    return _env(**kwargs)


def raw_env(**kwargs: Any) -> Any:
    """PettingZoo AEC environment without wrappers (raises ``IllegalActionError`` on illegal moves)."""
    from saboteur_env.env import raw_env as _raw_env

    return _raw_env(**kwargs)


def __getattr__(name: str) -> Any:
    # The Gymnasium single-seat wrapper lives with the RL adapters; import it only when asked for.
    if name == "SingleSeatEnv":
        from saboteur_env.env import SingleSeatEnv

        return SingleSeatEnv
    raise AttributeError(f"module 'saboteur_env' has no attribute {name!r}")


def _register() -> None:
    try:
        import pettingzoo
    except ImportError:  # the engine works without pettingzoo
        return
    if hasattr(pettingzoo, "register"):
        pettingzoo.register("aec", "saboteur/saboteur-v0", entry_point="saboteur_env.env:env")


_register()

__all__ = [
    "RULES_VERSION",
    "RULES_VERSIONS",
    "Action",
    "ActionError",
    "ActionType",
    "ConfigError",
    "EventType",
    "GameConfig",
    "GameOverError",
    "GameState",
    "IllegalActionError",
    "PlayerView",
    "SingleSeatEnv",
    "__version__",
    "action_layout",
    "action_to_string",
    "apply_action",
    "decode_action",
    "encode_action",
    "encode_observation",
    "env",
    "final_ranking",
    "is_terminal",
    "legal_action_mask",
    "new_game",
    "num_actions",
    "observation_layout",
    "player_view",
    "raw_env",
    "render_text",
    "returns",
]
