"""PettingZoo conformance, determinism, copying and bad input."""

from __future__ import annotations

import copy
import functools
import hashlib
import os
import pickle
import random
import subprocess
import sys
import warnings

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test, render_test, seed_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from saboteur_env import ActionError, ConfigError, GameOverError, IllegalActionError, env, raw_env

warnings.filterwarnings("ignore", category=UserWarning)


@pytest.mark.parametrize("num_players", range(3, 11))
def test_env__pettingzoo_api_seed_render(num_players):
    api_test(env(num_players=num_players), num_cycles=300)
    seed_test(functools.partial(env, num_players=num_players), num_cycles=300)
    render_test(functools.partial(env, num_players=num_players))


def test_env__parallel_conversion():
    parallel_api_test(turn_based_aec_to_parallel(env(num_players=4)), num_cycles=100)


def test_env__registered_with_pettingzoo():
    e = pettingzoo.make("aec", "saboteur/saboteur-v0", num_players=6)
    assert e.unwrapped.metadata["name"] == "saboteur_v0" and len(e.possible_agents) == 6


def trajectory(e, seed: int, episodes: int = 2, noise: bool = False) -> str:
    """Digest of a random-legal trajectory (actions chosen from a generator seeded independently)."""
    h = hashlib.sha256()
    rng = np.random.default_rng(seed + 1)
    for ep in range(episodes):
        e.reset(seed=seed if ep == 0 else None)
        for agent in e.agent_iter():
            obs, reward, term, trunc, _ = e.last()
            h.update(obs["observation"].tobytes())
            h.update(np.float64(reward).tobytes())
            if noise:
                random.random()
                np.random.random()
            action = None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"])))
            h.update(repr((agent, action)).encode())
            e.step(action)
    return h.hexdigest()


def test_env__multi_episode_determinism_and_global_rng_noise():
    a = trajectory(env(num_players=5), seed=3)
    b = trajectory(env(num_players=5), seed=3, noise=True)
    c = trajectory(env(num_players=5), seed=4)
    assert a == b and a != c


_SCRIPT = """
import sys; sys.path.insert(0, {tests!r})
from test_env import trajectory
from saboteur_env import env
print(trajectory(env(num_players=6), seed=11, episodes=1))
"""


def test_env__identical_across_processes_with_different_hash_seeds():
    script = _SCRIPT.format(tests=os.path.dirname(__file__))
    outs = set()
    for hashseed in ("1", "12345"):
        envvars = dict(os.environ, PYTHONHASHSEED=hashseed)
        out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=envvars, check=True)
        outs.add(out.stdout.strip())
    outs.add(trajectory(env(num_players=6), seed=11, episodes=1))
    assert len(outs) == 1


def _advance(e, rng, steps):
    for _ in range(steps):
        obs = e.observe(e.agent_selection)
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))


def _rollout(e, rng, steps=60):
    out = []
    for _ in range(steps):
        if all(e.terminations.values()):
            break
        obs = e.observe(e.agent_selection)
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        out.append((e.agent_selection, a, obs["observation"].tobytes()))
        e.step(a)
    return out


@pytest.mark.parametrize("wrapped", [False, True])
def test_env__pickle_and_deepcopy_keep_mid_game_state(wrapped):
    e = env(num_players=4) if wrapped else raw_env(num_players=4)
    e.reset(seed=5)
    _advance(e, np.random.default_rng(0), 30)
    copies = [pickle.loads(pickle.dumps(e)), copy.deepcopy(e)]
    reference = _rollout(e, np.random.default_rng(9))
    for c in copies:
        assert _rollout(c, np.random.default_rng(9)) == reference


def test_env__clone_game_is_independent():
    e = raw_env(num_players=4)
    e.reset(seed=1)
    _advance(e, np.random.default_rng(0), 10)
    snapshot = e.clone_game()
    fp = snapshot.fingerprint()
    _advance(e, np.random.default_rng(1), 10)
    assert snapshot.fingerprint() == fp and e.game.fingerprint() != fp


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
    """The engine runs without PettingZoo or Gymnasium: only saboteur_env/aec.py imports them."""
    import ast
    from pathlib import Path

    import saboteur_env

    for path in Path(saboteur_env.__file__).parent.rglob("*.py"):
        if path.name == "aec.py":
            continue
        tree = ast.parse(path.read_text())
        names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        allowed = {"pettingzoo"} if path.name == "__init__.py" else set()  # the guarded registry hook
        banned = {m for m in names if m.split(".")[0] in ("pettingzoo", "gymnasium", "agents", "experiments")}
        assert not banned - allowed, path
