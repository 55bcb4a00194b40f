"""Invariants of the base rules over random games (docs/rules.md §1), for every variant played on them.

The checks every game shares (legal actions, refused illegal ids, observation bounds, decision bounds, summed
rewards, ``check_state``, purity) are in tests/test_conformance.py; these are the base engine's own: card
conservation, incremental board planes and seat table against a full recompute, the gold deck, the history ring.
``check_state`` already compares the incremental flood with the numpy fixpoint at every step of the conformance
games; it is repeated here next to the tables it feeds.
"""

from __future__ import annotations

import numpy as np
import pytest

from saboteur_env import GameConfig, apply_action, legal_action_mask, new_game
from saboteur_env.base import reference as rules
from saboteur_env.base.board import reach_fixpoint, refresh_planes
from saboteur_env.base.cards import GOLD_CARD_VALUES
from saboteur_env.base.observation import rebuild_history, refresh_seat_table
from saboteur_env.base.scoring import card_conservation
from saboteur_env.base.state import GameState

BASE_RULES = ("base", "base-lite")  # variants on the base engine (base-lite: tests/toy_variant.py)


def base_invariants(state: GameState) -> None:
    """The base engine's own invariants of a running game (a core state is checked through its reference copy;
    the incremental planes, seat table and history ring exist only in the reference engine)."""
    deck = state.config.variant.deck_counts  # type: ignore[attr-defined]  # BaseVariant declares it
    core = not isinstance(state, GameState)
    if core:
        ref = state.to_reference()  # type: ignore[attr-defined]
        assert np.array_equal(reach_fixpoint(ref), state.cell_reach), "the core's flood == numpy fixpoint"
        state = ref
    assert (card_conservation(state) == deck).all(), "every card of the round's deck is somewhere"
    assert state.hands[state.current].sum() > 0, "the seat to act holds a card"
    assert np.array_equal(reach_fixpoint(state), state.cell_reach), "incremental flood == numpy fixpoint"
    planes = state.planes.copy()
    refresh_planes(state)
    assert np.array_equal(planes, state.planes), "incremental board planes match a full recompute"
    table = state.seat_table.copy()
    refresh_seat_table(state)
    assert np.array_equal(table, state.seat_table), "incremental seat table matches a full recompute"
    assert state.gold_cards.sum() + state.gold_left.sum() == len(GOLD_CARD_VALUES)


def _play(game: str, num_players: int, seed: int, reward: str = "gold", reference: bool = False) -> GameState:
    """A random game through the public API (the compiled core), or through the numpy reference engine."""
    cfg = GameConfig(game=game, num_players=num_players, reward=reward)
    rng = np.random.default_rng(seed)
    new, legal, apply = (rules.new_game, rules.legal_action_mask, rules.apply_action) if reference else (
        new_game, legal_action_mask, apply_action)  # fmt: skip
    state = new(cfg, rng)
    while not state.game_over:
        base_invariants(state)
        state = apply(state, int(rng.choice(np.flatnonzero(legal(state)))), inplace=True)
    assert state.gold_cards.sum() + state.gold_left.sum() == len(GOLD_CARD_VALUES)
    return state


@pytest.mark.parametrize("game", BASE_RULES)
@pytest.mark.parametrize("num_players", range(3, 11))
def test_invariants__base_engine_tables_and_conservation(game, num_players):
    _play(game, num_players, seed=num_players)
    _play(game, num_players, seed=num_players, reference=True)


@pytest.mark.parametrize("num_players", [3, 5, 10])
def test_invariants__win_rewards_name_a_team(num_players):
    state = _play("base", num_players, 7, reward="win")
    assert len(state.round_results) == 3
    for r in state.round_results:
        assert r["winner"] in ("gold-diggers", "saboteurs")


def test_invariants__history_ring_matches_rebuild():
    state = _play("base", 5, 3, reference=True)
    ring, pos = state.hist_ring.copy(), state.hist_pos
    rebuild_history(state)
    assert pos == state.hist_pos and np.array_equal(ring, state.hist_ring)


@pytest.mark.slow
@pytest.mark.parametrize("game", BASE_RULES)
@pytest.mark.parametrize("num_players", range(3, 11))
def test_invariants__many_random_games(game, num_players):
    for seed in range(20, 50):
        _play(game, num_players, seed)
