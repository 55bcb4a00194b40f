"""saboteur-env: Saboteur, Saboteur 2 and Saboteur: The Duel as numpy rules engines and a PettingZoo AEC env.

Every game is a :class:`~saboteur_env.common.config.Variant` in the registry ``saboteur_env.variants`` (``"base"``,
``"sab2"``, ``"duel"``, plus any a user registers); ``GameConfig(game=...)`` picks one. The engine API below is
the same for every game: ``new_game``, ``legal_action_mask``, ``apply_action``, ``returns``, the action codec
(``decode_action``, ``encode_action``, ``action_to_string``, ``num_actions``), observations (``encode_observation``,
``player_view``), pictures (``render_text``, ``render_image``). Environment: ``env``, ``raw_env`` and
``SingleSeatEnv`` (``saboteur_env.aec``, ``saboteur_env.single_seat``; imported on first use).

Imports run one way: this package -> ``api`` -> ``variants`` (the registry) -> each game's package (``base``,
``sab2``, ``duel``) -> ``common`` (shared ground that knows no game) and ``variant`` (the protocol).
"""

from __future__ import annotations

from typing import Any

from saboteur_env import variants
from saboteur_env.api import (
    action_layout,
    action_to_string,
    apply_action,
    decode_action,
    encode_action,
    encode_observation,
    encode_state,
    final_ranking,
    is_terminal,
    legal_action_mask,
    new_game,
    num_actions,
    observation_layout,
    player_view,
    render_image,
    render_text,
    returns,
    reward_range,
    state_size,
)
from saboteur_env.base.actions import Action, ActionType
from saboteur_env.base.observation import PlayerView
from saboteur_env.base.state import EventType, GameState
from saboteur_env.common.config import Frame, GameConfig, Variant
from saboteur_env.common.errors import (
    ActionError,
    ConfigError,
    GameOverError,
    IllegalActionError,
    SeatError,
    StateError,
)

__version__ = "0.3.0"
RULES_VERSION = variants.get("base").rules_version  # the base game's (golden replays are tied to it)
# Per game; tournament logs record the version they were played under (a user variant registered later is
# listed by ``variants.rules_versions()``).
RULES_VERSIONS = variants.rules_versions()

_AEC_NAMES = ("env", "raw_env")
_CORE_NAMES = ("sample_legal",)


def __getattr__(name: str) -> Any:
    # The PettingZoo/Gymnasium adapters live in ``saboteur_env.aec``; import them only when asked for. The module
    # has its own name, so importing it never replaces these attributes (``saboteur_env.env`` stays the factory).
    if name in _AEC_NAMES:
        from saboteur_env import aec

        return getattr(aec, name)
    if name == "SingleSeatEnv":
        from saboteur_env.single_seat import SingleSeatEnv

        return SingleSeatEnv
    if name in _CORE_NAMES:
        from saboteur_env.core import common

        return getattr(common, name)
    if name == "LearnerVectorEnv":
        from saboteur_env import learner

        return learner.LearnerVectorEnv
    if name == "SeatTransitions":
        from saboteur_env import transitions

        return transitions.SeatTransitions
    raise AttributeError(f"module 'saboteur_env' has no attribute {name!r}")


def _register() -> None:
    try:
        import pettingzoo
    except ImportError:  # the engine works without pettingzoo
        return
    if hasattr(pettingzoo, "register"):
        pettingzoo.register("aec", "saboteur/saboteur-v0", entry_point="saboteur_env.aec:env")


_register()

__all__ = [
    "RULES_VERSION",
    "RULES_VERSIONS",
    "Action",
    "ActionError",
    "ActionType",
    "ConfigError",
    "EventType",
    "Frame",
    "GameConfig",
    "GameOverError",
    "GameState",
    "IllegalActionError",
    "LearnerVectorEnv",
    "PlayerView",
    "SeatError",
    "SeatTransitions",
    "SingleSeatEnv",
    "StateError",
    "Variant",
    "__version__",
    "action_layout",
    "action_to_string",
    "apply_action",
    "decode_action",
    "encode_action",
    "encode_observation",
    "encode_state",
    "env",
    "final_ranking",
    "is_terminal",
    "legal_action_mask",
    "new_game",
    "num_actions",
    "observation_layout",
    "player_view",
    "raw_env",
    "render_image",
    "render_text",
    "returns",
    "reward_range",
    "sample_legal",
    "state_size",
    "variants",
]
