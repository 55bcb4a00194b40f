"""Expert iteration's collection on several workers (issue 37): local processes or Ray actors produce the chunks of a
one-process run, byte for byte, also when an actor is killed mid-run. Tiny runs: 3 players, ``search:4``, six
chunks of one or two games (about 1,000 decisions in all)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch", reason="expert iteration needs the train extra (pip install -e '.[train]')")

from experiments.train import exit as ex


def _options(out: Path, **kw: object) -> ex.Options:
    base = ex.Options(players=3, iterations=1, decisions=60, chunk=10, budget=4, num_envs=1, epochs=1, seed=3,
                      out=str(out))  # fmt: skip
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def _chunks(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted((out / "it1").glob("chunk*.npz"))}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """The chunks of a one-process run."""
    out = tmp_path_factory.mktemp("one-process")
    ex.ExitRun(_options(out), quiet=True).collect(1)
    chunks = _chunks(out)
    assert len(chunks) == 6
    return chunks


def test_exit_backend_options_are_checked(tmp_path):
    for bad, match in (({"workers": 0}, r"workers=0 is out of range; valid: integers 1\.\."),
                       ({"backend": "dask"}, r"backend='dask'; valid: 'local', 'ray'"),
                       ({"address": "10.0.0.1:6379"}, r"address='10.0.0.1:6379' needs backend='ray'")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            _options(tmp_path, **bad).check()
    assert ex.main(["--players", "3", "--backend", "dask", "--out", str(tmp_path / "x")]) == 2
    assert ex.main(["--players", "3", "--address", "auto", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()
    opt = ex.parse_args(["--players", "3", "--backend", "ray", "--workers", "2", "--address", "auto"])
    assert (opt.backend, opt.workers, opt.address) == ("ray", 2, "auto")


def test_exit_ray_backend_without_ray_names_the_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # as if the ray extra were not installed
    with pytest.raises(SystemExit, match=r"needs the optional dependency 'ray' \(the 'ray' extra\)"):
        ex.ExitRun(_options(tmp_path, backend="ray", workers=2), quiet=True).collect(1)
    assert not list((tmp_path / "it1").glob("chunk*"))


def test_exit_local_pool_equals_one_process(tmp_path, reference):
    ex.ExitRun(_options(tmp_path, workers=2), quiet=True).collect(1)
    assert _chunks(tmp_path) == reference


def test_exit_ray_two_actors_equal_one_process_and_resume(tmp_path, reference, local_ray):
    ex.ExitRun(_options(tmp_path, backend="ray", workers=2), quiet=True).collect(1)
    assert _chunks(tmp_path) == reference
    for name in ("chunk001.npz", "chunk004.npz"):  # as if the run had stopped: a rerun collects only these
        (tmp_path / "it1" / name).unlink()
    ex.ExitRun(_options(tmp_path, backend="ray", workers=1), quiet=True).collect(1)  # another worker count
    assert _chunks(tmp_path) == reference
    assert not list((tmp_path / "it1").glob(".*.tmp"))


def test_exit_ray_actor_killed_mid_run(tmp_path, reference, local_ray, capsys):
    """When chunk 0 is written, actor 0 is working on chunk 2 (queued behind chunk 0): ``ray.kill`` it. Chunk 2 runs
    again on a new actor; the chunks are still the one-process run's."""
    ray = local_ray
    run = ex.ExitRun(_options(tmp_path, backend="ray", workers=2))
    killed: list[str] = []

    def log(msg: str) -> None:
        if msg.startswith("it1 chunk 1/") and not killed:
            names = [n for n in ray.util.list_named_actors() if n.startswith("ChunkCollector-") and n.endswith("-0.1")]
            assert len(names) == 1, names
            ray.kill(ray.get_actor(names[0]))
            killed.append(names[0])

    run.log = log
    run.collect(1)
    assert killed
    assert "a Ray actor died; re-running chunk jobs 2 on a new actor" in capsys.readouterr().err
    assert _chunks(tmp_path) == reference
    assert not list((tmp_path / "it1").glob(".*.tmp"))
