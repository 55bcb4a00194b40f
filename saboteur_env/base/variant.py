"""The base game as a :class:`saboteur_env.Variant` (rules reference §1: 3-10 players, 67 cards)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.base import board, image, observation, render, scoring
from saboteur_env.base.actions import ActionLayout, action_layout
from saboteur_env.base.cards import DECK_COUNTS, HAND_SIZE_BY_PLAYERS
from saboteur_env.base.observation import ObservationLayout, PlayerView
from saboteur_env.base.state import GameState
from saboteur_env.common.checks import check_common, check_non_negative, check_observations
from saboteur_env.common.config import Frame, GameConfig, Viewer
from saboteur_env.common.errors import StateError

FRAME = Frame(rows=5, cols=9, start_cells=((2, 0),), goal_cells=((0, 8), (2, 8), (4, 8)))


class BaseVariant:
    """Saboteur, the base game. ``deck_counts`` (copies per deck kind) is data: a variant built on these rules with
    another deck subclasses this class and overrides it (and ``name``)."""

    name = "base"
    title = "Saboteur"
    rules_version = "base-2"
    min_players = 3
    max_players = 10
    default_players = 4
    options: tuple[str, ...] = ("broken_tool_penalty",)
    state_type = GameState
    deck_counts: NDArray[np.int16] = DECK_COUNTS
    core = "saboteur_env.base.kernels"  # the compiled kernels (saboteur_env.core.batch.kernels)

    def adopt(self, state: Any) -> Any:
        """The state type this variant plays, from a reference ``GameState`` (hand-built positions); the numpy
        engine plays its own states."""
        return state

    def check_config(self, config: GameConfig) -> None:
        pass  # broken_tool_penalty is type-checked by GameConfig; nothing else is game-specific

    def frame(self, config: GameConfig) -> Frame:
        return FRAME

    def hand_size(self, config: GameConfig) -> int:
        return HAND_SIZE_BY_PLAYERS[config.num_players]

    def max_decisions_per_round(self, config: GameConfig) -> int:
        # Every decision removes one card from a hand and hands are only filled from the round's deck.
        return int(self.deck_counts.sum())

    def reward_range(self, config: GameConfig) -> tuple[float, float]:
        return scoring.reward_range(config)

    def action_layout(self, config: GameConfig) -> ActionLayout:
        return action_layout(config)

    def observation_layout(self, config: GameConfig) -> ObservationLayout:
        return observation.observation_layout(config)

    def state_size(self, config: GameConfig) -> int:
        return observation.state_size(config)

    # new_game / legal_action_mask / apply_action: the compiled core's variant (saboteur_env.base.compiled) plays
    # the game; the numpy reference engine (saboteur_env.base.reference, the test oracle) binds its own. This class
    # holds the game's facts and what reads a GameState record (views, renders, checks).
    def returns(self, state: GameState) -> NDArray[np.float64]:
        return state.gold_nuggets.astype(np.float64)

    encode_observation = staticmethod(observation.encode_observation)

    def encode_state(self, state: GameState) -> NDArray[np.float32]:
        return observation.encode_state(state)

    def player_view(self, state: GameState, seat: int) -> PlayerView:
        return observation.player_view(state, seat)

    def render_text(self, state: GameState, viewer: Viewer = None) -> str:
        return render.render_text(state, viewer)

    def render_image(self, state: GameState, viewer: Viewer = None) -> NDArray[np.uint8]:
        return image.render_image(state, viewer)

    def public_round_result(self, result: dict[str, Any], seat: int) -> dict[str, Any]:
        # Nugget values stay private until the game ends (rules reference §5.1): each seat learns its own.
        public = {k: copy.deepcopy(v) for k, v in result.items() if k != "nuggets"}
        public["my_nuggets"] = int(result["nuggets"][seat])
        return public

    def check_state(self, state: GameState) -> None:
        check_common(state, GameState)
        check_non_negative(state, ("hands", "discards", "discarded", "gold_nuggets", "gold_cards"))
        if not 0 <= state.deck_pos <= state.round_decks.shape[1]:
            raise StateError(f"deck_pos={state.deck_pos} is out of range; valid: 0..{state.round_decks.shape[1]}")
        if not np.isin(state.roles, (0, 1)).all():
            raise StateError(f"roles {state.roles.tolist()} hold a value that is not a role (0 or 1)")
        if not np.array_equal(board.reach_fixpoint(state), state.cell_reach):
            raise StateError("cell_reach does not match the board (recompute it with board.recompute_reach)")
        check_observations(self, state)


RECORDS = BaseVariant()  # checks and views of GameState records (CoreGameState.check_state uses it)
