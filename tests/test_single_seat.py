"""The Gymnasium single-seat wrapper: turn accounting across N players, masks, API conformance."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from agents import make_agent
from saboteur_env import ConfigError, GameConfig, IllegalActionError, SingleSeatEnv


def _env(n: int = 5, opponent: str = "random", **kw) -> SingleSeatEnv:
    cfg = GameConfig(num_players=n)
    return SingleSeatEnv(lambda seat: make_agent(opponent, cfg), num_players=n, **kw)


def _episode(env: SingleSeatEnv, seed: int) -> tuple[float, int]:
    obs, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    total, steps, done = 0.0, 0, False
    while not done:
        assert env.game.current == info["seat"] and info["action_mask"].any()
        assert np.array_equal(obs, env.unwrapped._observation())
        action = int(rng.choice(np.flatnonzero(env.action_masks())))
        obs, reward, done, truncated, info = env.step(action)
        total += reward
        steps += 1
        assert not truncated
    return total, steps


@pytest.mark.parametrize("n", [3, 5, 10])
def test_single_seat__rewards_reach_the_learner_seat(n):
    env = _env(n, "heuristic" if n == 5 else "random")
    for seed in range(3):
        total, steps = _episode(env, seed)
        seat = env.seat
        game = env.game
        assert total == game.gold_nuggets[seat]  # every nugget of the seat, whoever ended the round
        learner_decisions = sum(1 for row in game.events[: game.num_events] if row[1] == seat and row[0] != 7
                                and row[0] != 6)  # fmt: skip
        assert steps == learner_decisions
        assert not env.action_masks().any()


def test_single_seat__seat_choice_and_determinism():
    env = _env(4, learner_seats=[2])
    env.reset(seed=1)
    assert env.seat == 2
    a = _episode(_env(4), 7)
    b = _episode(_env(4), 7)
    assert a == b


def test_single_seat__errors():
    env = _env(4)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(IllegalActionError):
        env.step(illegal)
    with pytest.raises(ConfigError, match="learner_seats"):
        _env(4, learner_seats=[4])
    with pytest.raises(ConfigError, match="callable"):
        SingleSeatEnv("random", num_players=4)


def test_single_seat__gymnasium_checker():
    """Gymnasium's checker samples unmasked actions: with ``illegal_reward`` an illegal one ends the episode."""
    check_env(_env(4, illegal_reward=-1.0), skip_render_check=True)
    env = _env(4, illegal_reward=-1.0)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(int(np.flatnonzero(~env.action_masks())[0]))
    assert reward == -1.0 and terminated and info["illegal"]
