"""Saboteur 2 as a :class:`saboteur_env.Variant` (rules reference §2: 2-12 players, the expansion cards)."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from numpy.typing import NDArray

from saboteur_env.common.checks import check_common, check_non_negative, check_observations
from saboteur_env.common.config import Frame, GameConfig, Viewer
from saboteur_env.common.errors import StateError
from saboteur_env.common.geometry import geometry
from saboteur_env.sab2 import board as sb
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2 import observation, render, scoring
from saboteur_env.sab2.actions import Sab2ActionLayout, action_layout
from saboteur_env.sab2.observation import Sab2ObservationLayout
from saboteur_env.sab2.state import Sab2State
from saboteur_env.sab2.view import Sab2View, sab2_view

FRAME = Frame(rows=5, cols=9, start_cells=((2, 0),), goal_cells=((0, 8), (2, 8), (4, 8)))


class Sab2Variant:
    """Saboteur 2 (the base box plus the expansion)."""

    name = "sab2"
    title = "Saboteur 2"
    rules_version = "sab2-2"
    min_players = 2
    max_players = 12
    default_players = 5
    options: tuple[str, ...] = ("rules",)  # two readings: docs/rules.md §2.5, §2.8
    state_type = Sab2State
    core = "saboteur_env.sab2.kernels"  # the compiled kernels (saboteur_env.core.batch.kernels)

    def check_config(self, config: GameConfig) -> None:
        pass

    def frame(self, config: GameConfig) -> Frame:
        return FRAME

    def hand_size(self, config: GameConfig) -> int:
        return sc.HAND_SIZE

    def max_decisions_per_round(self, config: GameConfig) -> int:
        # Every decision but ``stop`` and ``steal`` removes a card from a hand, and hands are only filled from the
        # round's pile (the deck less the cards set aside); a ``stop`` ends a pass that discarded at least one card,
        # and each Theft card in front of a player gives at most one ``steal``.
        cards = sc.DECK_SIZE - sc.REMOVED_PER_ROUND
        return 2 * cards + sc.EXPANSION_ACTION_COPIES[sc.ExpansionAction.THEFT]

    def reward_range(self, config: GameConfig) -> tuple[float, float]:
        return scoring.reward_range(config)

    def action_layout(self, config: GameConfig) -> Sab2ActionLayout:
        return action_layout(config)

    def observation_layout(self, config: GameConfig) -> Sab2ObservationLayout:
        return observation.sab2_observation_layout(config)

    def state_size(self, config: GameConfig) -> int:
        return observation.state_size(config)

    # new_game / legal_action_mask / apply_action: the compiled core's variant (saboteur_env.sab2.compiled) plays
    # the game; the numpy reference engine (saboteur_env.sab2.reference, the test oracle) binds its own. This class
    # holds the game's facts and what reads a Sab2State record (views, renders, checks).
    def returns(self, state: Sab2State) -> NDArray[np.float64]:
        return state.gold.astype(np.float64)

    encode_observation = staticmethod(observation.encode_observation)

    def encode_state(self, state: Sab2State) -> NDArray[np.float32]:
        return observation.encode_state(state)

    def player_view(self, state: Sab2State, seat: int) -> Sab2View:
        return sab2_view(state, seat)

    def render_text(self, state: Sab2State, viewer: Viewer = None) -> str:
        return render.render_text(state, viewer)

    def render_image(self, state: Sab2State, viewer: Viewer = None) -> NDArray[np.uint8]:
        return render.render_image(state, viewer)

    def public_round_result(self, result: dict[str, Any], seat: int) -> dict[str, Any]:
        return copy.deepcopy(result)  # roles and gold are revealed at a round end (rules reference §5.2)

    def check_state(self, state: Sab2State) -> None:
        check_common(state, Sab2State)
        check_non_negative(state, ("hands", "discards", "gold", "stolen_held"))
        if not 0 <= state.deck_pos <= state.round_decks.shape[1]:
            raise StateError(f"deck_pos={state.deck_pos} is out of range; valid: 0..{state.round_decks.shape[1]}")
        geo = geometry(state.config)
        if not np.array_equal(state.reach, sb.reach(state.cell_shape, geo.nbr_list, geo.start_cell)):
            raise StateError("reach does not match the board (recompute it from the maze)")
        check_observations(self, state)


RECORDS = Sab2Variant()  # checks and views of Sab2State records (CoreSab2State.check_state uses it)
