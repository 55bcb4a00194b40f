"""Self-play rollouts in shards on several workers (issue 37): a local process pool or Ray actors collect the same
data as one process with the same ``--shards``, also when a worker dies between iterations, and a sharded run
resumes exactly from its checkpoint. Tiny runs: base at 4 players, 16 games in 2 shards, 8-step rollouts."""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="self-play needs the train extra (pip install -e '.[train]')")

from experiments.train.selfplay.args import Args  # noqa: E402
from experiments.train.selfplay.shard import shard_seed  # noqa: E402
from experiments.train.selfplay.trainer import Trainer, main  # noqa: E402

ITERATIONS = 3


def _args(out: Path, **kw: Any) -> Args:
    base = Args(game="base", players=4, num_envs=16, steps=16 * 8 * 4, rollout=8, epochs=1, minibatches=2, hidden=16,
                seed=5, out=str(out), tensorboard=False, shards=2)  # fmt: skip
    return dataclasses.replace(base, **kw)


def _run(args: Args, between: Any = None) -> tuple[list[str], dict[str, Any]]:
    """Hashes of every iteration's rollout (observations, masks, actions, log-probabilities, values, rewards) and the
    final weights. ``between(trainer, i)`` runs before iteration ``i``'s collection."""
    t = Trainer(args)
    t.start()
    hashes = []
    try:
        for i in range(ITERATIONS):
            if between is not None:
                between(t, i)
            t.collect()
            h = hashlib.sha256()
            for shard in t.shards:
                for name in ("obs", "mask", "action", "logp", "value", "reward", "valid", "complete", "seat"):
                    h.update(np.ascontiguousarray(getattr(shard.roll, name)).tobytes())
            hashes.append(h.hexdigest())
            t.update()
    finally:
        t.close()
    return hashes, {k: v.clone() for k, v in t.model.state_dict().items()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[str], dict[str, Any]]:
    return _run(_args(tmp_path_factory.mktemp("one-process")))


def _same(got: tuple[list[str], dict[str, Any]], want: tuple[list[str], dict[str, Any]]) -> None:
    assert got[0] == want[0]
    for name, v in want[1].items():
        assert torch.equal(got[1][name], v), name


def test_shards_have_their_own_games_and_one_shard_is_the_unsharded_trainer(tmp_path: Path) -> None:
    assert shard_seed(5, 0) == 5 and len({shard_seed(5, i) for i in range(50)}) == 50
    t = Trainer(_args(tmp_path))
    t.start()
    a, b = (s.env.batch.field("round_roles") for s in t.shards)
    assert a.shape == b.shape and not np.array_equal(a, b)  # other deals
    one = Trainer(_args(tmp_path / "one", shards=1, num_envs=8))
    one.start()
    assert np.array_equal(one.shards[0].env.batch.field("round_roles"), a)  # shard 0 deals as an unsharded run


def test_local_pool_collects_what_one_process_does(tmp_path: Path, reference: Any) -> None:
    _same(_run(_args(tmp_path, workers=2)), reference)


def test_a_dead_pool_worker_loses_nothing(tmp_path: Path, reference: Any, capsys: pytest.CaptureFixture[str]) -> None:
    def kill(t: Trainer, i: int) -> None:
        if i == 1:
            pool = t.workers._backend._pool  # type: ignore[union-attr]
            next(iter(pool._processes.values())).kill()

    _same(_run(_args(tmp_path, workers=2), kill), reference)
    assert "a worker process died; re-running" in capsys.readouterr().err


def test_ray_actors_collect_what_one_process_does_and_survive_a_killed_actor(
    tmp_path: Path, reference: Any, local_ray: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    _same(_run(_args(tmp_path / "two", backend="ray", workers=2)), reference)
    _same(_run(_args(tmp_path / "one", backend="ray", workers=1)), reference)
    killed: list[str] = []

    def kill(t: Trainer, i: int) -> None:
        if i == 1:  # actor 0 held shard 0's env; its replacement starts from the job alone
            names = [
                n for n in local_ray.util.list_named_actors() if n.startswith("ShardWorker-") and n.endswith("-0.1")
            ]
            local_ray.kill(local_ray.get_actor(names[-1]))
            killed.append(names[-1])

    _same(_run(_args(tmp_path / "kill", backend="ray", workers=2), kill), reference)
    assert killed and "a Ray actor died; re-running rollout shards 0 on a new actor" in capsys.readouterr().err


def test_a_league_of_scripted_agents_and_snapshots_keeps_its_memory_across_workers(tmp_path: Path) -> None:
    """Scripted league agents remember their game between iterations (pickled with the shard), so a pool run equals
    one process."""
    kw = {"league": 0.6, "league_agents": "expert", "snapshot_every": 1, "pool_size": 2}
    _same(_run(_args(tmp_path / "pool", workers=2, **kw)), _run(_args(tmp_path / "one", **kw)))


def test_a_sharded_run_resumes_exactly(tmp_path: Path) -> None:
    straight = Trainer(_args(tmp_path / "a", workers=2))
    straight.train(quiet=True)
    first = Trainer(_args(tmp_path / "b"))
    first.train(max_iterations=2, quiet=True)
    resumed = Trainer(_args(tmp_path / "b", resume=True, workers=2))  # another worker count: the same run
    resumed.train(quiet=True)
    assert resumed.iteration == straight.iteration == 4
    for name, v in straight.model.state_dict().items():
        assert torch.equal(resumed.model.state_dict()[name], v), name
    with pytest.raises(ValueError, match="shards"):
        Trainer(_args(tmp_path / "b", resume=True, shards=4)).train(quiet=True)


def test_bad_shard_options_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for kw, match in (({"shards": 3}, r"num_envs=16 is not a multiple of shards=3"),
                      ({"shards": 0}, r"shards=0 is out of range; valid: 1\.\.num_envs=16"),
                      ({"backend": "dask"}, r"backend='dask'; valid: 'local', 'ray'"),
                      ({"workers": 0}, r"workers=0 is out of range"),
                      ({"address": "auto"}, r"address='auto' needs backend='ray'")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            _args(tmp_path, **kw).check()
    assert main(["--num-envs", "16", "--shards", "3", "--out", str(tmp_path / "x")]) == 2
    assert "num_envs=16 is not a multiple of shards=3" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
