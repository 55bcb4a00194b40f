"""Ray tournament backend and RLlib self-play glue (need the ``ray`` extra, installed by CI)."""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.rllib")

from experiments.tournament.run import run  # noqa: E402
from experiments.train.rllib import SaboteurMultiAgentEnv, train  # noqa: E402
from saboteur_env import legal_action_mask  # noqa: E402


@pytest.fixture(scope="module")
def local_ray():
    # address="local": always a fresh local cluster, never one that happens to run on this machine
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_backend__reproduces_the_local_backend(local_ray):
    args = ([4], ["greedy"], ["overt"], 2)
    local = [r for g in run(*args, seed=11, inserts=["random"]) for r in g]
    remote = [r for g in run(*args, seed=11, inserts=["random"], backend="ray", workers=2, chunk=1) for r in g]
    assert len(local) == 6 and remote == local  # same records, same order, beliefs included
    with pytest.raises(ValueError, match="backend"):
        list(run(*args, backend="dask"))


def test_rllib_env__turn_accounting():
    """Only the seat to act observes (with its mask); every seat's rewards add up to its final nuggets."""
    env = SaboteurMultiAgentEnv({"num_players": 5})
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(3)
    totals: dict[str, float] = defaultdict(float)
    done = False
    while not done:
        (agent,) = obs
        assert agent == env.agents[env.game.current]
        mask = obs[agent]["action_mask"]
        assert np.array_equal(mask > 0, legal_action_mask(env.game))
        obs, rewards, terminated, truncated, _ = env.step({agent: int(rng.choice(np.flatnonzero(mask)))})
        for a, r in rewards.items():
            totals[a] += r
        done = terminated["__all__"]
        assert not truncated["__all__"]
    assert set(obs) == set(env.agents)  # final observation for every seat
    assert [totals[a] for a in env.agents] == env.game.gold_nuggets.tolist()


def test_rllib__one_training_iteration(local_ray, tmp_path):
    history = train(players=4, iterations=1, env_runners=0, batch=256, minibatch=128, epochs=1, hidden=32,
                    out=tmp_path / "ckpt")  # fmt: skip
    assert history[0]["env_steps"] >= 256 and history[0]["episodes"] >= 1
    assert (tmp_path / "ckpt" / "rllib_checkpoint.json").exists()
