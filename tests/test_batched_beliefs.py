"""Batched belief features (agents.base.batched_beliefs): equal to a BeliefFeatures follower of every seat over
whole games, from a fresh game and from a root taken over mid-round; bad roots refused."""

from __future__ import annotations

import numpy as np
import pytest

from agents.base.batched_beliefs import BatchedBeliefs
from agents.base.belief_features import BeliefFeatures
from saboteur_env import GameConfig, PlayerView
from saboteur_env.base import kernels as kb
from saboteur_env.base import reference as rules
from saboteur_env.core.batch import Batch, padded
from tests.core_play import biased_action


def _play(config: GameConfig, seeds: list[int], policy_seed: int, root_at: int | None = None) -> int:
    """Play whole games in a core batch with biased random moves; at every decision compare the batched features
    of the seat to act with that seat's own Python follower. With ``root_at``, the batched state is started over
    at that decision from seat 0's follower's public model and board (as a search does). Returns the number of
    decisions compared."""
    n = len(seeds)
    batch = Batch(config, n)
    batch.seed(seeds)
    batch.setup()
    layout = rules.new_game(config, np.random.default_rng(0)).layout
    mask = np.zeros((n, padded(batch.num_actions)), np.int8)
    obs = np.zeros((n, batch.obs_size), np.float32)
    rng = np.random.default_rng(policy_seed)
    followers = [[BeliefFeatures(config) for _ in range(config.num_players)] for _ in range(n)]
    for b in range(n):
        for s, f in enumerate(followers[b]):
            f.reset(s)
    beliefs = BatchedBeliefs(config)
    state = beliefs.start(batch)
    compared = step = 0
    taken: list[int] = []
    sc = batch.field("sc")
    while not (sc[:, kb.SC_OVER] != 0).all():
        active = sc[:, kb.SC_OVER] == 0
        batch.masks(mask, np.zeros(n, np.int64))
        batch.observe(np.full(n, -1, np.int64), obs)
        beliefs.follow(batch, n, state)
        got = beliefs.features(batch, n, state)
        actions = np.full(n, -1, np.int64)
        for b in np.flatnonzero(active):
            seat = int(sc[b, kb.SC_CURRENT])
            want = followers[b][seat].update(PlayerView.from_observation(obs[b], config))
            np.testing.assert_allclose(got[b], want, atol=2e-6, err_msg=f"game {b} decision {step} seat {seat}")
            compared += 1
            actions[b] = biased_action(mask[b, : batch.num_actions], layout, rng)
        if root_at is not None and step >= root_at and active[0] and int(sc[0, kb.SC_CURRENT]) == 0:
            # row 0 taken over from seat 0's follower, which has just seen every public event so far: the root of
            # a search (the public model and the public board; the rest follows from the event log)
            f = followers[0][0].follower
            fresh = beliefs.start(batch, f.public.loglik, f.tracker.board.shape)
            for a, x in zip(state, fresh, strict=True):
                a[0] = x[0]
            taken.append(step)
            root_at = None
        for b in np.flatnonzero(active):
            batch.apply(actions, int(b), int(b) + 1)
        step += 1
    assert root_at is None, "seat 0 never acted in row 0 after root_at"
    return compared


@pytest.mark.parametrize("players", [3, 4, 5])
def test_batched_features_equal_the_python_follower(players: int) -> None:
    config = GameConfig(num_players=players)
    assert _play(config, [100 * players + i for i in range(6)], policy_seed=players) > 300


@pytest.mark.parametrize("root_at", [7, 30])
def test_a_root_taken_over_mid_round_follows_on_exactly(root_at: int) -> None:
    """A search starts the rows at its seat's public model: from there on the features are the followers' own."""
    config = GameConfig(num_players=5)
    assert _play(config, [9000 + root_at, 9001], policy_seed=root_at, root_at=root_at) > 100


def test_the_features_move() -> None:
    """Suspicion actually changes in these games (the comparison is not between two constant priors)."""
    config = GameConfig(num_players=4)
    batch = Batch(config, 4)
    batch.seed([1, 2, 3, 4])
    batch.setup()
    beliefs = BatchedBeliefs(config)
    state = beliefs.start(batch)
    first = beliefs.features(batch, 4, state)
    mask = np.zeros((4, padded(batch.num_actions)), np.int8)
    rng = np.random.default_rng(0)
    layout = rules.new_game(config, np.random.default_rng(0)).layout
    for _ in range(20):
        batch.masks(mask, np.zeros(4, np.int64))
        acts = np.array([biased_action(m[: batch.num_actions], layout, rng) for m in mask])
        batch.apply(acts)
    beliefs.follow(batch, 4, state)
    later = beliefs.features(batch, 4, state)
    p = config.num_players
    assert np.abs(later[:, p : 2 * p] - first[:, p : 2 * p]).max() > 0.05  # the public suspicion moved
    assert np.abs(later[:, -3:] - first[:, -3:]).max() > 0  # the tunnel moved


def test_bad_roots_are_refused() -> None:
    config = GameConfig(num_players=4)
    beliefs = BatchedBeliefs(config)
    batch = Batch(config, 2)
    with pytest.raises(ValueError, match=r"public_loglik must be \(\d+, 3\) for 4 players"):
        beliefs.start(batch, np.zeros((3, 3)), beliefs.start_board)
    with pytest.raises(ValueError, match="board must hold"):
        beliefs.start(batch, None, np.zeros(5, np.int16))
    with pytest.raises(ValueError, match="base game only"):
        BatchedBeliefs(GameConfig(game="sab2", num_players=5))
