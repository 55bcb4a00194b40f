"""``experiments.bench``'s command line: validation and the records it prints (not its speed)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from experiments.bench import run as bench
from saboteur_env.vector import VectorEnv

TINY = ["--players", "3", "--num-envs", "2", "--obs", "float", "--repeats", "1", "--seconds", "0.01", "--games", "1",
        "--json"]  # fmt: skip


def test_history_lengths_reach_the_games_and_the_records(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each ``--history-length`` value is a case of its own, interleaved in one run: its games get that
    ``history_length`` and its rows are named and recorded with it; without the option, the game's default."""
    configs: list[dict[str, Any]] = []
    env_configs: list[dict[str, Any]] = []
    real, real_env = bench.bench_vector, bench.bench_env

    def spy(*args: Any, **config: Any) -> Any:
        configs.append(config)
        return real(*args, **config)

    def spy_env(*args: Any, **config: Any) -> Any:
        env_configs.append(config)
        return real_env(*args, **config)

    monkeypatch.setattr(bench, "bench_vector", spy)
    monkeypatch.setattr(bench, "bench_env", spy_env)
    assert bench.main(["--target", "vector", "raw_env", *TINY, "--history-length", "16", "0"]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["target"], r["label"], r.get("history_length")) for r in records] == [
        ("connect_four_v3 raw_env", "connect_four_v3 raw_env", None),  # the reference has no such option
        ("vector", "vector B=2 float L=16", 16),
        ("raw_env", "raw_env L=16", 16),
        ("vector", "vector B=2 float L=0", 0),
        ("raw_env", "raw_env L=0", 0),
    ]
    assert configs == [{"history_length": 16}, {"history_length": 0}]
    # raw_env's games get it too (connect_four, played through bench_env as well, gets no config); the untimed
    # warm-up games come first.
    assert env_configs == [{}, {"history_length": 16}, {"history_length": 0}] * 2
    assert all(r["decisions_per_s"] > 0 for r in records)
    assert bench.main(["--target", "vector", *TINY]) == 0
    default = [json.loads(line) for line in capsys.readouterr().out.splitlines()][1]
    assert default["label"] == "vector B=2 float" and "history_length" not in default and configs[2] == {}


@pytest.mark.parametrize("value", ["-1", "257"])
def test_history_length_out_of_range_is_refused(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        bench.main(["--history-length", "4", value])
    assert exc.value.code == 2
    assert f"--history-length {value} is out of range; valid: 0..256" in capsys.readouterr().err


@pytest.mark.parametrize(("game", "players", "size"), [("base", "4", 2550), ("duel", "2", 3392)])
def test_fill_rows_are_the_games_float_rows(
    game: str, players: str, size: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--target fill`` zero-fills B rows of the game's float observation size (per layout and history length),
    rows counted as decisions against the same run's connect_four."""
    argv = ["--game", game, "--target", "fill", *TINY, "--players", players, "--num-envs", "3", "--history-length",
            "16", "0"]  # fmt: skip
    assert bench.main(argv) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()][1:]
    layouts = ["seed_5x9", "official_5x10"] if game == "duel" else [players]
    assert [(r["target"], r["label"], r["players"], r["history_length"]) for r in records] == [
        ("fill", f"fill B=3 L={h}", label, h) for label in layouts for h in (16, 0)
    ]
    for r in records:
        config = {"game": game} if game != "base" else {}
        if game == "duel":
            config["duel_layout"] = r["players"]
        with VectorEnv(1, num_players=int(players), history_length=r["history_length"], **config) as venv:
            assert r["row_bytes"] == 4 * venv.batch.obs_size
        assert r["num_envs"] == 3 and r["decisions_per_s"] > 0 and r["ratio"] > 0
    assert records[0]["row_bytes"] == 4 * size  # 16 history rows: the sizes docs/performance.md names


def test_fill_rows_are_left_out_of_the_plot(tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """``--plot`` draws the vector rows against B; fill rows (no observation format) are measured, not plotted."""
    pytest.importorskip("matplotlib")
    png = tmp_path / "scaling.png"
    assert bench.main(["--target", "vector", "fill", *TINY, "--plot", str(png)]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["label"] for r in records] == ["connect_four_v3 raw_env", "vector B=2 float", "fill B=2"]
    assert png.stat().st_size > 0


def test_the_reference_and_the_aec_targets_are_warmed_before_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """One untimed game of connect_four and of each AEC target comes first (loading compiled kernels there would
    otherwise fall into the first repeat: with --repeats 1 connect_four measured ~6x slow, every ratio ~6x high)."""
    calls: list[tuple[str, int]] = []
    real_env, real_engine = bench.bench_env, bench.bench_engine

    def spy_env(make: Any, num_players: int, games: int, seed: int, **config: Any) -> Any:
        calls.append(("connect_four" if num_players == 2 and not config else "env", games))
        return real_env(make, num_players, games, seed, **config)

    def spy_engine(num_players: int, games: int, seed: int, **config: Any) -> Any:
        calls.append(("engine", games))
        return real_engine(num_players, games, seed, **config)

    monkeypatch.setattr(bench, "bench_env", spy_env)
    monkeypatch.setattr(bench, "bench_engine", spy_engine)
    assert bench.main(["--target", "raw_env", "engine", *TINY, "--games", "2"]) == 0
    # warm-ups (1 game each), then the timed repeat: connect_four plays --games x 5
    assert calls == [("connect_four", 1), ("env", 1), ("engine", 1), ("connect_four", 10), ("env", 2), ("engine", 2)]


def test_learner_and_puffer_targets_count_learner_steps(capsys: pytest.CaptureFixture[str]) -> None:
    """``learner`` and ``puffer`` (both PufferLib backends, when PufferLib is installed; a note on stderr otherwise)
    are cells of the same interleaved run as the raw ``vector`` and the connect_four reference."""
    try:
        import pufferlib.vector  # noqa: F401

        puffer = ["puffer Serial B=2", "puffer Multiprocessing B=2"]
    except ImportError:
        puffer = []
    assert bench.main(["--target", "vector", "learner", "puffer", *TINY]) == 0
    out, err = capsys.readouterr()
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["label"] for r in records] == ["connect_four_v3 raw_env", "vector B=2 float", "learner B=2", *puffer]
    assert ("--target puffer skipped: PufferLib is missing" in err) == (not puffer)
    for r in records[2:]:
        assert r["counted"] == "learner steps" and r["num_envs"] == 2 and r["decisions_per_s"] > 0
    assert [r.get("backend") for r in records[3:]] == ["Serial", "Multiprocessing"][: len(puffer)]


def test_learner_helpers_draw_uniform_legal_actions() -> None:
    from experiments.bench.learner import random_legal

    mask = np.zeros((4, 6), dtype=np.int8)
    mask[0, [1, 4]] = mask[1, 5] = mask[2, :] = mask[3, 0] = 1
    rng = np.random.default_rng(0)
    draws = np.array([random_legal(mask, rng) for _ in range(3000)])
    assert mask[np.arange(4), draws].all()  # always legal
    counts = [np.bincount(draws[:, r], minlength=6)[mask[r] == 1] for r in range(4)]
    assert all(abs(c / 3000 - 1 / len(c)).max() < 0.05 for c in counts)  # every legal action about equally often


def test_puffer_target_needs_an_even_batch(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        bench.main(["--target", "puffer", "--num-envs", "1024", "7"])
    assert exc.value.code == 2
    assert "--target puffer splits --num-envs over 2 environments: give multiples of 2, got 1024 7" in (
        capsys.readouterr().err
    )
