"""The base game's environment: parallel conversion, registration, hand-built starts, bad input, infos.

PettingZoo api/seed/render tests, determinism across processes and RNG noise, pickle/deepcopy/clone_game of a
mid-game environment: tests/test_conformance.py (every registered variant).
"""

from __future__ import annotations

import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import parallel_api_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from saboteur_env import ActionError, ConfigError, GameOverError, IllegalActionError, env, raw_env

warnings.filterwarnings("ignore", category=UserWarning)


def test_env__parallel_conversion():
    parallel_api_test(turn_based_aec_to_parallel(env(num_players=4)), num_cycles=100)


def test_env__registered_with_pettingzoo():
    e = pettingzoo.make("aec", "saboteur/saboteur-v0", num_players=6)
    assert e.unwrapped.metadata["name"] == "saboteur_v0" and len(e.possible_agents) == 6


def test_env__reset_from_hand_built_state():
    from saboteur_env.base.positions import make_state

    e = raw_env(num_players=4)
    state = make_state(e.config, hands={0: {"MAP": 1}}, current=0)
    e.reset(options={"game": state})
    assert e.agent_selection == "player_0"
    assert np.flatnonzero(e.observe("player_0")["action_mask"]).size == 4  # 3 maps + 1 discard
    with pytest.raises(ConfigError):
        e.reset(options={"game": "nope"})


def test_env__off_turn_masks_are_zero_and_state_is_full():
    e = raw_env(num_players=5)
    e.reset(seed=0)
    for agent in e.agents:
        mask = e.observe(agent)["action_mask"]
        assert mask.dtype == np.int8
        assert mask.any() == (agent == e.agent_selection)
    assert e.state().shape == e.state_space.shape and e.state_space.contains(e.state())


def test_env__bad_input():
    with pytest.raises(ConfigError, match="num_players=2"):
        raw_env(num_players=2)
    with pytest.raises(ConfigError, match="reward='money'"):
        raw_env(reward="money")
    with pytest.raises(ConfigError, match="render_mode"):
        raw_env(render_mode="rgb")
    with pytest.raises(TypeError):
        raw_env(players=4)
    e = raw_env(num_players=4)
    with pytest.raises(GameOverError, match="reset"):
        e.observe("player_0")
    e.reset(seed=0)
    fp = e.game.fingerprint()
    for bad in (-1, 10**6, 2.5, "1"):
        with pytest.raises(ActionError):
            e.step(bad)
    with pytest.raises(ValueError, match="not None"):
        e.step(None)
    illegal = int(np.flatnonzero(e.observe(e.agent_selection)["action_mask"] == 0)[0])
    with pytest.raises(IllegalActionError, match="illegal action"):
        e.step(illegal)
    assert e.game.fingerprint() == fp


def test_env__wrapped_illegal_move_terminates_with_penalty():
    e = env(num_players=4)
    e.reset(seed=0)
    agent = e.agent_selection
    illegal = int(np.flatnonzero(e.observe(agent)["action_mask"] == 0)[0])
    e.step(illegal)
    assert all(e.terminations.values())
    assert e._cumulative_rewards[agent] == -1


def test_env__round_end_infos_keep_nugget_values_private():
    e = raw_env(num_players=4, rounds=2)
    e.reset(seed=3)
    rng = np.random.default_rng(1)
    while e.game.round == 0:
        e.step(int(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]))))
    result = e.game.round_results[0]
    for seat, agent in enumerate(e.possible_agents):
        info = e.infos[agent]["round_result"]
        assert "nuggets" not in info and info["my_nuggets"] == result["nuggets"][seat]
        assert info["roles"] == result["roles"] and info["gold_cards"] == result["gold_cards"]


def test_env__game_end_dead_steps_and_final_infos():
    e = raw_env(num_players=3, rounds=1)
    e.reset(seed=2)
    rng = np.random.default_rng(0)
    total = dict.fromkeys(e.possible_agents, 0.0)
    for agent in e.agent_iter():
        obs, reward, term, _trunc, info = e.last()
        total[agent] += reward
        if term:
            assert "final_ranking" in info and info["nuggets"] == total[agent]
            with pytest.raises(ValueError):
                e.step(0)
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert e.agents == []
    with pytest.raises(GameOverError):
        e.step(0)


def test_env__only_env_module_imports_rl_libraries():
    """The engine runs without PettingZoo or Gymnasium: only the environments (saboteur_env/aec.py, and
    saboteur_env/vector.py, learner.py and puffer.py for Gymnasium's spaces) import them."""
    import ast
    from pathlib import Path

    import saboteur_env

    for path in Path(saboteur_env.__file__).parent.rglob("*.py"):
        if path.name == "aec.py":
            continue
        # the vector environments (issue 38 adds the learner-seat view and the PufferLib binding over it): Gymnasium
        # spaces and autoreset mode, no PettingZoo
        if path.name in ("vector.py", "learner.py", "puffer.py", "single_seat.py"):
            assert "pettingzoo" not in path.read_text(), path
            continue
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        allowed = {"pettingzoo"} if path.name == "__init__.py" else set()  # the guarded registry hook
        banned = {m for m in names if m.split(".")[0] in ("pettingzoo", "gymnasium", "agents", "experiments")}
        assert not banned - allowed, path
