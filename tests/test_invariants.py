"""Invariants over many random games (RULES.md §1; OpenSpiel random_sim_test style)."""

from __future__ import annotations

import numpy as np
import pytest

from saboteur_env import GameConfig, IllegalActionError, apply_action, legal_action_mask, new_game
from saboteur_env.base.board import reach_fixpoint, refresh_planes
from saboteur_env.base.cards import DECK_COUNTS
from saboteur_env.base.observation import encode_observation, observation_layout, rebuild_history, refresh_seat_table
from saboteur_env.base.rules import card_conservation, reward_range


def _play(num_players: int, seed: int, fuzz: bool = True, reward: str = "gold"):
    cfg = GameConfig(num_players=num_players, reward=reward)
    rng = np.random.default_rng(seed)
    state = new_game(cfg, rng)
    lay = observation_layout(cfg)
    total = np.zeros(num_players)
    decisions = 0
    round_decisions = 0
    while not state.game_over:
        mask = legal_action_mask(state)
        legal = np.flatnonzero(mask)
        assert len(legal) > 0, "the acting seat must always have a legal action"
        assert state.hands[state.current].sum() > 0
        obs = encode_observation(state, state.current)
        assert obs.shape == (lay.size,) and np.isfinite(obs).all() and (obs >= 0).all() and (obs <= lay.high).all()
        if fuzz:
            illegal = np.flatnonzero(~mask)
            for a in rng.choice(illegal, size=2, replace=False):
                before = state.fingerprint()
                with pytest.raises(IllegalActionError):
                    apply_action(state, int(a))
                assert state.fingerprint() == before
        a = int(rng.choice(legal))
        before = state.fingerprint()
        new = apply_action(state, a)
        assert state.fingerprint() == before, "apply_action must not mutate its input"
        state = new
        decisions += 1
        round_decisions += 1
        total += state.last_rewards
        if state.round_just_ended:
            assert round_decisions <= 67
            round_decisions = 0
        if not state.game_over:
            assert (card_conservation(state) == DECK_COUNTS).all()
            assert np.array_equal(reach_fixpoint(state), state.cell_reach), "incremental flood == numpy fixpoint"
            planes = state.planes.copy()
            refresh_planes(state)
            assert np.array_equal(planes, state.planes), "incremental board planes match a full recompute"
            table = state.seat_table.copy()
            refresh_seat_table(state)
            assert np.array_equal(table, state.seat_table), "incremental seat table matches a full recompute"
    assert decisions <= cfg.max_game_length
    lo, hi = reward_range(cfg)
    assert (lo <= total).all() and (total <= hi).all()
    assert len(state.round_results) == cfg.rounds
    return state, total


@pytest.mark.parametrize("num_players", range(3, 11))
def test_invariants__random_games(num_players):
    for seed in range(2):
        state, total = _play(num_players, seed)
        assert (total == state.gold_nuggets).all(), "summed rewards equal final gold"
        assert state.gold_cards.sum() + state.gold_left.sum() == 28


@pytest.mark.parametrize("num_players", [3, 5, 10])
def test_invariants__win_rewards(num_players):
    state, total = _play(num_players, 7, fuzz=False, reward="win")
    assert set(np.unique(total)) <= set(range(-3, 4))
    for r in state.round_results:
        assert r["winner"] in ("gold-diggers", "saboteurs")


def test_invariants__history_ring_matches_rebuild():
    state, _ = _play(5, 3, fuzz=False)
    ring, pos = state.hist_ring.copy(), state.hist_pos
    rebuild_history(state)
    assert pos == state.hist_pos and np.array_equal(ring, state.hist_ring)


@pytest.mark.slow
@pytest.mark.parametrize("num_players", range(3, 11))
def test_invariants__many_random_games(num_players):
    for seed in range(2, 40):
        state, total = _play(num_players, seed, fuzz=seed % 4 == 0)
        assert (total == state.gold_nuggets).all()
