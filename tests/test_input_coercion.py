"""One integer rule at every public entry point (issue 34): config fields, action ids (raw_env, env, SingleSeatEnv,
VectorEnv.step), seats (VectorEnv.observe, the engine API) take Python ints and numpy integers; bool, float and str
are refused with the value and the valid range named; an out-of-range uint64 is reported as its true value."""

from __future__ import annotations

import re

import numpy as np
import pytest

from saboteur_env import GameConfig, SingleSeatEnv, env, raw_env
from saboteur_env.api import encode_observation, new_game
from saboteur_env.common.errors import ActionError, ConfigError, IllegalActionError, SeatError
from saboteur_env.vector import VectorEnv

CFG = GameConfig(num_players=3)
HUGE = np.uint64(2**64 - 1)
REFUSED = [2.0, np.float64(1.0), "1", True, np.bool_(False), [1], np.array([1])]


def test_config_fields_take_numpy_integers_as_plain_ints() -> None:
    config = GameConfig(num_players=np.int64(5), margin=np.uint8(1), rounds=np.array(2), history_length=np.int32(8))
    assert config == GameConfig(num_players=5, margin=1, rounds=2, history_length=8)
    assert all(type(getattr(config, f)) is int for f in ("num_players", "margin", "rounds", "history_length"))
    assert hash(config) == hash(GameConfig(num_players=5, margin=1, rounds=2, history_length=8))
    claims = GameConfig(claims=np.bool_(True), claims_per_turn=np.int64(2))
    assert type(claims.claims) is bool and type(claims.claims_per_turn) is int


@pytest.mark.parametrize("value", [5.0, "5", True, np.float32(5), [5]])
def test_config_fields_refuse_other_types_naming_value_and_range(value: object) -> None:
    with pytest.raises(ConfigError, match=re.escape(f"num_players={value!r} must be an int in 3..10")):
        GameConfig(num_players=value)  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"rounds=.* must be an int in 1\.\.3"):
        GameConfig(rounds=value)  # type: ignore[arg-type]


def test_action_ids_follow_one_rule_in_every_env() -> None:
    from agents import make_agent

    raw, wrapped = raw_env(num_players=3), env(num_players=3)
    single = SingleSeatEnv(lambda seat: make_agent("random", CFG), num_players=3)
    raw.reset(seed=1)
    wrapped.reset(seed=1)
    single.reset(seed=1)
    for step in (raw.step, wrapped.step, single.step):
        for bad in REFUSED:
            with pytest.raises(ActionError, match=r"must be an int in 0\.\.1280"):
                step(bad)
        with pytest.raises(ActionError, match=r"action 18446744073709551615 is out of range; valid: 0\.\.1280"):
            step(HUGE)
    mask = raw.observe(raw.agent_selection)["action_mask"]
    raw.step(np.int16(np.flatnonzero(mask)[0]))  # a numpy integer is taken
    mask = wrapped.observe(wrapped.agent_selection)["action_mask"]
    wrapped.step(np.uint64(np.flatnonzero(mask)[0]))


def test_vector_env_step_and_observe_share_the_rule() -> None:
    vec = VectorEnv(2, config=CFG)
    vec.reset(seed=1)
    with pytest.raises(IllegalActionError, match="action 18446744073709551615 of game 0 is out of range"):
        vec.step(np.array([HUGE, HUGE], dtype=np.uint64))  # once reported as "action -1"
    for bad in ([0.7, 1.2], ["0", "1"], [True, False], np.zeros(2, dtype=np.float32)):
        with pytest.raises(SeatError, match=r"seats must be 2 ints in -1\.\.2 .*bool, float and str are refused"):
            vec.observe(bad)  # floats were truncated and strings parsed
        with pytest.raises(IllegalActionError, match="must be 2 integer action ids"):
            vec.step(bad)
    with pytest.raises(SeatError, match=r"seats\[0\] = 18446744073709551615 is out of range; valid: -1\.\.2"):
        vec.observe(np.array([HUGE, 0], dtype=np.uint64))
    with pytest.raises(SeatError, match=r"seats\[1\] = 3 is out of range"):
        vec.observe([0, 3])
    assert np.array_equal(vec.observe(np.array([1, 2], dtype=np.uint8)), vec.observe([1, 2]))


def test_engine_seats_share_the_rule() -> None:
    state = new_game(CFG, np.random.default_rng(1))
    observe = encode_observation
    assert np.array_equal(observe(state, np.int64(2)), observe(state, 2))
    for bad in (1.0, "1", True):
        with pytest.raises(SeatError, match=r"seat .* must be an int in 0\.\.2"):
            observe(state, bad)  # type: ignore[arg-type]
    with pytest.raises(SeatError, match=r"seat 18446744073709551615 is out of range; valid: 0\.\.2"):
        observe(state, HUGE)  # type: ignore[arg-type]
