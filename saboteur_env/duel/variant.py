"""Saboteur: The Duel as a :class:`saboteur_env.Variant` (rules reference §3: two players, two layouts)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.checks import check_common, check_non_negative, check_observations
from saboteur_env.common.config import Frame, GameConfig, Viewer
from saboteur_env.common.errors import ConfigError, StateError
from saboteur_env.duel import board, observation, render, scoring
from saboteur_env.duel import cards as dc
from saboteur_env.duel.actions import DuelActionLayout, duel_action_layout
from saboteur_env.duel.observation import DuelObservationLayout
from saboteur_env.duel.state import DuelState
from saboteur_env.duel.view import DuelView, duel_view

# Rules reference §3.2: the two layouts (frame coordinates): blue start, green start, then the six goal cells.
DUEL_LAYOUTS: dict[str, Frame] = {
    "seed_5x9": Frame(5, 9, ((1, 0), (3, 0)), ((0, 4), (2, 4), (4, 4), (1, 6), (3, 6), (2, 8))),
    "official_5x10": Frame(5, 10, ((1, 0), (3, 0)), ((0, 5), (2, 5), (4, 5), (1, 7), (3, 7), (2, 9))),
}
DUEL_LAYOUT_NAMES = tuple(DUEL_LAYOUTS)


class DuelVariant:
    """Saboteur: The Duel."""

    name = "duel"
    title = "Saboteur: The Duel"
    rules_version = "duel-2"
    min_players = 2
    max_players = 2
    default_players = 2
    options: tuple[str, ...] = ("duel_layout",)
    state_type = DuelState
    core = "saboteur_env.duel.kernels"  # the compiled kernels (saboteur_env.core.batch.kernels)

    def check_config(self, config: GameConfig) -> None:
        if config.duel_layout not in DUEL_LAYOUTS:
            raise ConfigError(
                f"duel_layout={config.duel_layout!r} is not valid; valid: {', '.join(map(repr, DUEL_LAYOUTS))}"
            )

    def frame(self, config: GameConfig) -> Frame:
        return DUEL_LAYOUTS[config.duel_layout]

    def hand_size(self, config: GameConfig) -> int:
        return 6

    def max_decisions_per_round(self, config: GameConfig) -> int:
        # Once the pile is empty every decision but a bribe (8 counters) or an empty-handed pass removes a card,
        # and an empty-handed pass is answered by the other player's card or bribe; before that, at most 52 draws.
        return 2 * (dc.DECK_SIZE + dc.NUM_COUNTERS + 2 * 6) + 2

    def reward_range(self, config: GameConfig) -> tuple[float, float]:
        return scoring.reward_range(config)

    def action_layout(self, config: GameConfig) -> DuelActionLayout:
        return duel_action_layout(config)

    def observation_layout(self, config: GameConfig) -> DuelObservationLayout:
        return observation.duel_observation_layout(config)

    def state_size(self, config: GameConfig) -> int:
        return observation.state_size(config)

    # new_game / legal_action_mask / apply_action: the compiled core's variant (saboteur_env.duel.compiled) plays
    # the game; the numpy reference engine (saboteur_env.duel.reference, the test oracle) binds its own. This class
    # holds the game's facts and what reads a DuelState record (views, renders, checks).
    def returns(self, state: DuelState) -> NDArray[np.float64]:
        return np.array(state.nuggets, dtype=np.float64)

    encode_observation = staticmethod(observation.encode_observation)

    def encode_state(self, state: DuelState) -> NDArray[np.float32]:
        return observation.encode_state(state)

    def player_view(self, state: DuelState, seat: int) -> DuelView:
        return duel_view(state, seat)

    def render_text(self, state: DuelState, viewer: Viewer = None) -> str:
        return render.render_text(state, viewer)

    def render_image(self, state: DuelState, viewer: Viewer = None) -> NDArray[np.uint8]:
        return render.render_image(state, viewer)

    def public_round_result(self, result: dict[str, Any], seat: int) -> dict[str, Any]:
        return copy.deepcopy(result)  # score piles are public (rules reference §5.3)

    def check_state(self, state: DuelState) -> None:
        check_common(state, DuelState)
        check_non_negative(state, ("hands", "discards"))
        if not 0 <= state.deck_pos <= len(state.deck):
            raise StateError(f"deck_pos={state.deck_pos} is out of range; valid: 0..{len(state.deck)}")
        for player in (0, 1):
            if not np.array_equal(state.reach[player], board.compute_reach(state, player)):
                raise StateError(f"reach of player {player} does not match the board")
        check_observations(self, state)


RECORDS = DuelVariant()  # checks and views of DuelState records (CoreDuelState.check_state uses it)
