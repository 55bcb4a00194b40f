"""The Gymnasium single-seat wrapper: turn accounting across N players, masks, API conformance."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from agents import make_agent
from saboteur_env import ConfigError, GameConfig, IllegalActionError, SingleSeatEnv
from saboteur_env.base.actions import Action, ActionType
from saboteur_env.base.positions import kind_of


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
        SingleSeatEnv(42, num_players=4)


def test_single_seat__gymnasium_checker():
    """Gymnasium's checker samples unmasked actions: with ``illegal_reward`` an illegal one ends the episode."""
    check_env(_env(4, illegal_reward=-1.0), skip_render_check=True)
    env = _env(4, illegal_reward=-1.0)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(int(np.flatnonzero(~env.action_masks())[0]))
    assert reward == -1.0 and terminated and info["illegal"]


def test_single_seat__gold_progress_shaping():
    """Shaping pays coef per tile of progress made by the learner's own placement, only to gold-diggers."""
    from agents.base.shaping import GoldProgress
    from saboteur_env.base.positions import make_state

    board = """
    . . . . . . . . ?
    . . . . . . . . .
    S . . . . . . . ?
    . . . . . . . . .
    . . . . . . . . ?
    """
    cfg = GameConfig(num_players=4)
    shaping = GoldProgress(coef=0.05)
    for role, expected in ((0, 0.05), (1, 0.0)):
        state = make_state(cfg, board, hands={0: {"T05": 1, "T09": 1}}, roles=[role, 0, 0, 0])
        assert shaping(state, 0) == pytest.approx(-0.35 if role == 0 else 0.0)  # 7 tiles from col 1 to col 7
        env = SingleSeatEnv(lambda seat: make_agent("random", cfg), learner_seats=[0], shaping=shaping, num_players=4)
        env.reset(seed=0, options={"game": state})
        straight = env._env._layout.encode(Action(ActionType.PLACE, kind_of("T05"), row=2, col=1, rotation=0))
        _, reward, _, _, info = env.step(straight)
        assert info["shaping"] == pytest.approx(expected)
        assert reward == pytest.approx(expected)  # no round end in between
    # Peeked stone goals do not count: with the middle goal known to be stone, the nearest candidates are 8 away.
    state = make_state(cfg, board, roles=[0, 0, 0, 0], goals=("stone_a", "stone_b", "gold"), peeked={0: [1]})
    assert shaping(state, 0) == pytest.approx(-0.05 * 9)
    with pytest.raises(ValueError, match="coef"):
        GoldProgress(coef=0.0)
    with pytest.raises(ConfigError, match="shaping"):
        SingleSeatEnv(lambda seat: make_agent("random", cfg), shaping=0.5, num_players=4)
