"""Imitation warm start (experiments.train.imitate) and selfplay --init: data, returns, fitting, export, errors."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")

import torch  # after the importorskip: torch comes with the train extra

from agents import make_agent
from experiments.train.imitate import Options, collect, fit, main, run
from experiments.train.imitate_data import Data, concat
from experiments.train.selfplay.args import Args
from experiments.train.selfplay.policy import Policy, export_npz, load_npz
from experiments.train.selfplay.trainer import Trainer
from saboteur_env import GameConfig
from saboteur_env.vector import VectorEnv

SMALL = Options(players=4, teacher="heuristic", partners="random", decisions=400, num_envs=4, workers=1, epochs=2)


@pytest.fixture(scope="module")
def data() -> Data:
    return collect(SMALL, 0, SMALL.decisions)


def test_collected_rows_are_the_teachers_legal_decisions(data: Data) -> None:
    assert len(data) >= SMALL.decisions
    rows = np.arange(len(data))
    which, acts = data.legal_pairs(rows)
    legal = set(zip(which.tolist(), acts.tolist(), strict=True))
    assert all((i, int(a)) in legal for i, a in enumerate(data.action))
    obs = data.dense(rows)
    assert obs.shape == (len(data), data.obs_size)
    assert np.isfinite(obs).all() and (obs != 0).any(axis=1).all()
    # Game ids are 0..G-1 and every game has its final returns.
    assert data.game.min() == 0 and data.game.max() == len(data.finals) - 1
    assert set(np.unique(data.game).tolist()) == set(range(len(data.finals)))


def test_undiscounted_return_of_a_seats_first_decision_is_its_final_score() -> None:
    opt = replace(SMALL, gamma=1.0, teacher_share=1.0, decisions=300)
    d = collect(opt, 0, opt.decisions)
    seen: set[tuple[int, int]] = set()
    checked = 0
    for i in range(len(d)):  # rows are in play order within a game
        key = (int(d.game[i]), int(d.seat[i]))
        if key in seen:
            continue
        seen.add(key)
        assert d.ret[i] == pytest.approx(d.finals[key[0], key[1]], abs=1e-5)
        checked += 1
    assert checked == len(d.finals) * 4  # every seat of every game is the teacher with teacher_share=1


def test_dense_observations_are_the_envs_observations() -> None:
    """Replaying the recorded actions of one full-teacher game reproduces its recorded observations exactly."""
    opt = replace(SMALL, teacher_share=1.0, num_envs=1, decisions=50)
    d = collect(opt, 0, opt.decisions)
    rows = np.flatnonzero(d.game == 0)
    rng = np.random.default_rng([opt.seed, 0, 0x1A17])
    env = VectorEnv(1, config=opt.config())
    obs, info = env.reset(seed=int(rng.integers(1 << 31)))
    for i in rows.tolist():
        assert np.array_equal(d.dense(np.array([i]))[0], obs[0])
        assert int(info["seat"][0]) == d.seat[i]
        obs, _, term, _, info = env.step(np.array([d.action[i]]))
    assert term[0]


def test_collection_is_deterministic_and_workers_join_in_order(data: Data) -> None:
    again = collect(SMALL, 0, SMALL.decisions)
    for k, v in data.arrays().items():
        assert np.array_equal(v, again.arrays()[k]), k
    other = collect(SMALL, 1, 100)
    both = concat([data, other])
    assert len(both) == len(data) + len(other)
    assert np.array_equal(both.dense(np.arange(len(data), len(both))), other.dense(np.arange(len(other))))
    assert both.game.max() == len(data.finals) + len(other.finals) - 1


def test_fit_learns_the_teacher_and_exports_a_playable_policy(tmp_path: Path, data: Data) -> None:
    opt = replace(SMALL, epochs=6, out=str(tmp_path))
    model, last = fit(opt, data, tmp_path / "fit.csv", quiet=True)
    lines = (tmp_path / "fit.csv").read_text().splitlines()
    assert len(lines) == 7
    first = dict(zip(lines[0].split(","), map(float, lines[1].split(",")), strict=True))
    assert last["train_nll"] < first["train_nll"]
    # Agreement with the teacher well above a uniform choice among the legal actions.
    which, _ = data.legal_pairs(np.arange(len(data)))
    uniform = float(np.mean(1.0 / np.bincount(which)))
    assert last["train_agree"] > uniform + 0.1
    path = export_npz(model, opt.config(), tmp_path / "p.npz")
    agent = make_agent(f"learned:{path}", opt.config())
    env = VectorEnv(1, config=opt.config())
    obs, info = env.reset(seed=3)
    agent.reset(0, 4, 0)
    a = agent.act(obs[0], info["action_mask"][0])
    assert info["action_mask"][0][a] == 1


def test_load_npz_round_trip_and_selfplay_init(tmp_path: Path) -> None:
    config = GameConfig(game="base", num_players=4)
    torch.manual_seed(5)
    src = Policy(config, 16, True)
    path = export_npz(src, config, tmp_path / "src.npz")
    dst = Policy(config, 16, True)
    load_npz(dst, path, config)
    obs = torch.rand(3, src.obs_size)
    with torch.no_grad():
        assert torch.allclose(src(obs)[0], dst(obs)[0], atol=1e-6)
        assert torch.allclose(src(obs)[1], dst(obs)[1], atol=1e-6)
    trainer = Trainer(Args(players=4, hidden=16, role_heads=True, num_envs=4, init=str(path), out=str(tmp_path)))
    with torch.no_grad():
        assert torch.allclose(trainer.model(obs)[0], src(obs)[0], atol=1e-6)
    with pytest.raises(ValueError, match="does not fit"):
        load_npz(Policy(config, 32, True), path, config)
    with pytest.raises(ValueError, match="num_players"):
        load_npz(Policy(GameConfig(game="base", num_players=5), 16, True), path, GameConfig(num_players=5))
    with pytest.raises(ValueError, match="embed"):  # a bottleneck network does not take a plain file
        load_npz(Policy(config, 16, True, embed=4), path, config)


def test_load_npz_round_trip_with_a_bottleneck(tmp_path: Path) -> None:
    config = GameConfig(game="duel")
    torch.manual_seed(6)
    src = Policy(config, 16, False, embed=4)
    path = export_npz(src, config, tmp_path / "src.npz")
    dst = Policy(config, 16, False, embed=4)
    load_npz(dst, path, config)
    obs = torch.rand(3, src.obs_size)
    with torch.no_grad():
        assert torch.allclose(src(obs)[0], dst(obs)[0], atol=1e-6)
    with pytest.raises(ValueError, match="embed"):
        load_npz(Policy(config, 16, False), path, config)
    with pytest.raises(ValueError, match="embed=17"):
        Options(game="duel", hidden=16, embed=17).check()


def test_run_reuses_its_data_and_writes_meta(tmp_path: Path) -> None:
    opt = replace(SMALL, decisions=150, epochs=1, out=str(tmp_path))
    meta = run(opt, quiet=True)
    assert not meta["data_reused"] and (tmp_path / "policy.npz").is_file()
    again = run(replace(opt, epochs=2), quiet=True)  # fitting options do not change the data
    assert again["data_reused"] and again["decisions"] == meta["decisions"]
    assert again["collect_s"] == meta["collect_s"] > 0  # the collection's own time, kept with the data
    assert not run(replace(opt, seed=1), quiet=True)["data_reused"]


class _LowestLegal:
    """A stateless teacher with a checkable label: the lowest legal action."""

    def reset(self, seat: int, num_players: int, seed: int | None) -> None:
        pass

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.flatnonzero(action_mask)[0])


def test_dagger_student_plays_and_the_teacher_labels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import experiments.train.imitate as imitate

    real = imitate.make_agent
    monkeypatch.setattr(imitate, "make_agent",
                        lambda name, cfg: _LowestLegal() if name == "lowest" else real(name, cfg))  # fmt: skip
    opt = replace(SMALL, teacher="lowest", teacher_share=1.0, decisions=200, num_envs=2)
    plain = collect(opt, 0, opt.decisions)
    student = _policy(tmp_path, "student", 3)
    dagger = collect(replace(opt, student=str(student), student_share=1.0), 0, opt.decisions)
    for d in (plain, dagger):  # every label is the teacher's choice on the recorded legal actions
        which, acts = d.legal_pairs(np.arange(len(d)))
        lowest = np.array([acts[which == i].min() for i in range(len(d))])
        np.testing.assert_array_equal(d.action, lowest)
    # ... but the student played: the games went elsewhere (the lowest legal action is nearly always a discard)
    assert len(dagger.finals) != len(plain.finals) or not np.array_equal(dagger.finals, plain.finals)
    assert not np.array_equal(dagger.obs_val[:5000], plain.obs_val[:5000])
    np.testing.assert_array_equal(collect(replace(opt, student_share=0.3), 0, opt.decisions).action, plain.action)
    key = replace(opt, student=str(student)).collection_key()
    assert key["student_sha256"] and "student_sha256" not in opt.collection_key()


def test_collection_without_a_student_is_the_data_of_earlier_versions() -> None:
    """The digest of a small collection made before DAgger existed (commit ba98032): without ``--student`` no
    draw is added, so data and collection keys of earlier options stay valid. The teacher is ``random``: a scripted
    teacher's float arithmetic can break a near tie differently on another processor (the ``heuristic`` digest
    recorded at ba98032 gives 152 rows here, 157 there, with the same code and packages), and the digest must hold
    on any CPU. Computed at ba98032."""
    import hashlib

    d = collect(replace(SMALL, teacher="random", teacher_share=0.6, decisions=120), 0, 120)
    h = hashlib.sha256()
    for k, v in sorted(d.arrays().items()):
        h.update(k.encode())
        h.update(np.ascontiguousarray(v).tobytes())
    assert (len(d), h.hexdigest()) == (352, "4621594fc9ffa3ecf28471c64a6b018b337654f9efa440c2d8578e20b6533595")


def test_extra_data_are_fitted_together(tmp_path: Path) -> None:
    first = run(replace(SMALL, decisions=150, epochs=1, out=str(tmp_path / "a")), quiet=True)
    both = run(replace(SMALL, decisions=150, epochs=1, seed=1, out=str(tmp_path / "b"),
                       extra=str(tmp_path / "a" / "data.npz")), quiet=True)  # fmt: skip
    assert both["decisions"] == both["collected"] + first["decisions"]
    assert both["games"] == first["games"] + run(replace(SMALL, decisions=150, epochs=1, seed=1,
                                                         out=str(tmp_path / "b")), quiet=True)["games"]  # fmt: skip
    bad = tmp_path / "five"
    run(replace(SMALL, players=5, decisions=60, epochs=1, out=str(bad)), quiet=True)
    with pytest.raises(ValueError, match=r"\(game, players\) \('base', 5\)"):
        run(replace(SMALL, decisions=150, epochs=1, out=str(tmp_path / "c"), extra=str(bad / "data.npz")), quiet=True)
    np.save(tmp_path / "one.npy", np.zeros(3))
    for path in (tmp_path / "one.npy", bad / "policy.npz"):  # not imitation data: a clear error, no traceback
        with pytest.raises(ValueError, match="not an imitation data file"):
            run(replace(SMALL, decisions=150, epochs=1, out=str(tmp_path / "c"), extra=str(path)), quiet=True)
    a = str(tmp_path / "a" / "data.npz")
    for extra, out in ((f"{a},{a}", tmp_path / "d"), (a, tmp_path / "a")):  # twice, or the run's own data
        with pytest.raises(ValueError, match="count twice"):
            replace(SMALL, extra=extra, out=str(out)).check()
    with pytest.raises(ValueError, match="own output"):
        replace(SMALL, student=str(tmp_path / "a" / "policy.npz"), out=str(tmp_path / "a")).check()
    with pytest.raises(ValueError, match="num_players"):  # a student trained for another player count
        replace(SMALL, student=str(bad / "policy.npz")).check()


def test_soft_targets_are_the_search_values_softmax_and_fit_toward_them(tmp_path: Path) -> None:
    """With a search teacher and ``soft_temperature`` each decision's target is softmax(value / T) over the moves the
    search valued (exactly its ``last_stats`` values), a point mass where it valued none; the data survive a save,
    a join with point-mass data and the universal mapping, and the fit's cross-entropy uses them."""
    from experiments.train import universal as uni

    opt = Options(players=4, teacher="search:8", partners="", teacher_share=1.0, decisions=40, num_envs=2, workers=1,
                  epochs=1, soft_temperature=0.5)  # fmt: skip
    logged: list[tuple[list[int], dict[int, float], int]] = []
    real = make_agent

    def spy(name: str, config: GameConfig) -> Any:  # records each search decision's legal moves and values
        agent = real(name, config)
        act = agent.act

        def act_and_log(obs: np.ndarray, mask: np.ndarray) -> int:
            a = act(obs, mask)
            logged.append((np.flatnonzero(mask).tolist(), dict(agent.last_stats.get("values") or {}), a))
            return a

        agent.act = act_and_log
        return agent

    import experiments.train.imitate as imitate_mod

    mp = pytest.MonkeyPatch()
    mp.setattr(imitate_mod, "make_agent", spy)
    try:
        d = collect(opt, 0, opt.decisions)
    finally:
        mp.undo()
    assert d.soft is not None and d.soft.shape == d.legal.shape
    sums = np.add.reduceat(d.soft, d.legal_ptr[:-1])
    np.testing.assert_allclose(sums, 1.0, atol=1e-5)
    by_legal = {}
    for legal, values, a in logged:
        by_legal.setdefault(tuple(legal), []).append((values, a))
    soft_rows = 0
    for i in range(len(d)):
        legal = d.legal[d.legal_ptr[i] : d.legal_ptr[i + 1]].tolist()
        target = d.soft[d.legal_ptr[i] : d.legal_ptr[i + 1]]
        options = by_legal[tuple(legal)]
        expected = []
        for values, a in options:
            if len(values) > 1:
                v = np.array([values.get(c, -np.inf) for c in legal])
                z = np.exp((v - v.max()) / 0.5)
                expected.append(z / z.sum())
            else:
                expected.append((np.array(legal) == a).astype(float))
        assert any(np.allclose(target, e, atol=1e-5) for e in expected)
        soft_rows += int((target > 0).sum() > 1)
    assert soft_rows > 0  # the search valued several moves somewhere
    back = Data.from_arrays(d.arrays())
    np.testing.assert_array_equal(back.soft, d.soft)
    plain = replace(d, soft=None)
    both = concat([d, plain])
    np.testing.assert_array_equal(both.soft[: d.soft.size], d.soft)
    np.testing.assert_array_equal(both.soft[d.soft.size :], plain.point_mass())
    np.testing.assert_array_equal(plain.targets(np.arange(len(d))), plain.point_mass())
    np.testing.assert_array_equal(uni.to_universal(d, opt.config()).soft, d.soft)
    # the fit's loss is the cross-entropy toward the targets, not toward the choice alone
    from experiments.train.imitate import _batch_loss

    model, last = fit(opt, d, tmp_path / "fit.csv", quiet=True)
    assert np.isfinite(last["train_nll"])
    rows = np.arange(len(d))
    with torch.no_grad():
        nll = float(_batch_loss(model, d, rows, 0.0)[1])
        nll_choice = float(_batch_loss(model, plain, rows, 0.0)[1])
        which, acts = d.legal_pairs(rows)
        logp, _ = model.legal(torch.from_numpy(d.dense(rows)), torch.from_numpy(which), torch.from_numpy(acts))
    assert nll == pytest.approx(-(d.targets(rows) * logp.numpy()).sum() / len(d), rel=1e-5)
    assert nll_choice == pytest.approx(-(plain.targets(rows) * logp.numpy()).sum() / len(d), rel=1e-5)
    assert nll != nll_choice
    with pytest.raises(ValueError, match="soft_temperature"):
        replace(opt, soft_temperature=-0.1).check()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--student", "/nonexistent/p.npz"], "does not exist"),
        (["--student-share", "0"], "student_share"),
        (["--extra", "/nonexistent/data.npz"], "does not exist"),
        (["--teacher", "role_oracle"], "hidden state"),
        (["--teacher", "nobody"], "nobody"),
        (["--teacher-share", "0"], "teacher_share"),
        (["--decisions", "0"], "decisions"),
        (["--gamma", "1.5"], "gamma"),
        (["--players", "11"], "11"),
        (["--soft-temperature", "-1"], "soft_temperature=-1.0 is out of range"),
    ],
)
def test_bad_options_are_clear_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err


# ---- the cross-play matrix (experiments.analysis.crossplay) ------------------------------------------------------
def _policy(tmp_path: Path, name: str, seed: int, players: int = 4) -> Path:
    config = GameConfig(game="base", num_players=players)
    torch.manual_seed(seed)
    return export_npz(Policy(config, 8, True), config, tmp_path / f"{name}.npz")


def test_crossplay_cells_are_paired_and_the_diagonal_is_self_play(tmp_path: Path) -> None:
    from agents.learned import NumpyPolicy
    from experiments.analysis.crossplay import matrix, play_cells

    config = GameConfig(game="base", num_players=4)
    a, b = NumpyPolicy(_policy(tmp_path, "a", 1)), NumpyPolicy(_policy(tmp_path, "b", 2))
    s = play_cells(config, [a, a], [(0, 0), (1, 1)], 12, 77, np.random.default_rng(0))
    assert s.shape == (2, 12) and np.isfinite(s).all() and (s >= 0).all()
    assert s.sum() > 0  # someone wins nuggets in 24 games
    r1 = matrix(config, {"a": a, "b": b}, 10, seed=5)
    r2 = matrix(config, {"a": a, "b": b}, 10, seed=5)
    assert r1 == r2  # deterministic for a seed
    assert set(r1["cells"]) == {"a|a", "a|b", "b|a", "b|b"}
    diag = (r1["cells"]["a|a"]["mean"] + r1["cells"]["b|b"]["mean"]) / 2
    off = (r1["cells"]["a|b"]["mean"] + r1["cells"]["b|a"]["mean"]) / 2
    assert r1["gap"]["mean"] == pytest.approx(diag - off)


def test_crossplay_errors_name_the_problem(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from experiments.analysis.crossplay import main as crossplay

    a, b = _policy(tmp_path, "a", 1), _policy(tmp_path, "b", 2, players=5)
    assert crossplay([f"a={a}", "--players", "4"]) == 2
    assert "at least 2" in capsys.readouterr().err
    assert crossplay([f"a={a}", f"b={b}", "--players", "4", "--deals", "2"]) == 2
    assert "policy 'b'" in capsys.readouterr().err
    assert crossplay([f"a={a}", f"a={a}", "--players", "4"]) == 2
    assert "twice" in capsys.readouterr().err
    assert crossplay([str(a), f"b={a}"]) == 2
    assert "NAME=PATH" in capsys.readouterr().err
    assert crossplay([f"a={a}", f"b={a}", "--players", "4", "--deals", "0"]) == 2
    assert "deals=0" in capsys.readouterr().err
    config = GameConfig(num_players=4)
    feat = export_npz(Policy(config, 8, True, features="bayes"), config, tmp_path / "f.npz")
    assert crossplay([f"a={a}", f"f={feat}", "--players", "4", "--deals", "2"]) == 2
    assert "policy 'f' reads belief features" in capsys.readouterr().err
    out = tmp_path / "m.json"
    assert crossplay([f"a={a}", f"b={a}", "--players", "4", "--deals", "3", "--json", str(out)]) == 0
    assert "Self-play minus cross-play" in capsys.readouterr().out and out.is_file()


# ---- the behaviour table (experiments.train.behaviour) -----------------------------------------------------------
def test_behaviour_counts_the_inserted_seats_moves_by_role() -> None:
    from experiments.train.behaviour import count, table

    header = {"players": 4, "miners": "heuristic", "saboteurs": "heuristic", "insert": "learned", "insert_seat": 1,
              "roles": [0, 1, 0, 0]}  # fmt: skip
    events = [
        {"type": "place", "actor": 1, "kind": "T09"},  # a dead end
        {"type": "place", "actor": 1, "kind": "T01"},
        {"type": "break", "actor": 1, "target": 0},  # a digger: the other team
        {"type": "break", "actor": 0, "target": 1},  # not the inserted seat
        {"type": "rockfall", "actor": 1},
        {"type": "discard", "actor": 1},
        {"type": "round_end", "actor": None},
    ]
    second = {**header, "roles": [1, 0, 0, 0]}
    rounds = [
        {"header": header, "events": events},
        {"header": second, "events": [{"type": "break", "actor": 1, "target": 2}, {"type": "map", "actor": 1}]},
        {"header": {**header, "insert": None}, "events": events},  # no inserted seat: ignored
    ]
    c = count(rounds)
    sab, dig = c[(4, "heuristic", "heuristic", "learned", 1)], c[(4, "heuristic", "heuristic", "learned", 0)]
    assert dict(sab) == {"rounds": 1, "moves": 5, "place": 2, "dead_end": 1, "break_other_team": 1, "rockfall": 1,
                         "discard": 1}  # fmt: skip
    assert dict(dig) == {"rounds": 1, "moves": 2, "break_own_team": 1, "map": 1}
    text = table(c)
    assert "| 4 | heuristic/heuristic | learned | saboteur | 1 | 5.00 | 2.00 | 1.00 | 1.00 | 0.00 |" in text


# ---- the evidence scripts: every command they run parses -----------------------------------------------------------
class _ParsedError(Exception):
    """Raised after a command's options parsed (the test stops there)."""


@pytest.mark.parametrize("script", ["experiments/evidence.sh", "experiments/crossplay.sh"])
def test_evidence_scripts_run_only_commands_that_parse(script: str, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:  # fmt: skip
    import argparse
    import importlib
    import importlib.util
    import json
    import os
    import re
    import subprocess

    root = Path(__file__).resolve().parent.parent
    fake = tmp_path / "bin" / "python"
    fake.parent.mkdir()
    log = tmp_path / "calls.jsonl"
    fake.write_text(f'#!/usr/bin/env bash\nprintf "%s\\0" "$@" >> {log}\nprintf "\\n" >> {log}\n')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{fake.parent}:{os.environ['PATH']}"}
    subprocess.run(["bash", str(root / script), str(tmp_path / "out")], cwd=root, env=env, check=True,
                   capture_output=True)  # fmt: skip
    calls = [line.strip("\0").split("\0") for line in log.read_text().splitlines() if line]
    assert calls and all(c[0] == "-m" for c in calls)
    original = argparse.ArgumentParser.parse_args

    def parse_then_stop(self: argparse.ArgumentParser, args: list[str] | None = None, namespace: object = None
                        ) -> None:  # fmt: skip
        original(self, args, namespace)  # a bad option exits with status 2 here
        raise _ParsedError

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", parse_then_stop)
    for call in calls:
        module = importlib.import_module(call[1])
        if not hasattr(module, "main"):  # a package: its __main__ runs the main of the module it names
            spec = importlib.util.find_spec(f"{call[1]}.__main__")
            target = re.search(r"from (\S+) import main", Path(spec.origin).read_text()).group(1)
            module = importlib.import_module(target)
        with pytest.raises(_ParsedError):
            module.main(call[2:])
    assert json.dumps(calls)  # (the commands, for a failing run's report)


def _teacher_seat_played_by_random(cfg: GameConfig, seed: int, check: Any) -> int:
    """One game: seat 0's ``expert`` chooses, a random student plays, the teacher is told (``played_instead``);
    ``check(obs, chosen, played, teacher)`` runs at every seat-0 decision. Returns how often the two differed."""
    import saboteur_env as se
    from agents.agent import RandomAgent

    n = cfg.num_players
    env = se.raw_env(game=cfg.game, num_players=n)
    env.reset(seed=seed)
    teacher, student = make_agent("expert", cfg), RandomAgent(cfg)
    teacher.reset(0, n, 1)
    student.reset(0, n, 2)
    others = [RandomAgent(cfg) for _ in range(n)]
    for s, a in enumerate(others):
        a.reset(s, n, 10 + s)
    differed = 0
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.agents.index(name)
        if seat != 0:
            env.step(others[seat].act(obs["observation"], obs["action_mask"]))
            continue
        chosen = teacher.act(obs["observation"], obs["action_mask"])
        played = student.act(obs["observation"], obs["action_mask"])
        if played != chosen:
            teacher.played_instead(chosen, played)
            differed += 1
        check(obs["observation"], chosen, played, teacher)
        env.step(played)
    return differed


def test_a_teacher_told_what_was_played_keeps_its_seats_card_count() -> None:
    """DAgger plays the student's move in a teacher seat: ``expert`` takes back the own discard it noted for its
    choice and notes the played one, so its card counter is that of a counter that saw the played moves."""
    from agents.base.expert import _CountingTracker
    from agents.base.planner import CardCounter
    from saboteur_env import ActionType, PlayerView, action_layout

    cfg = GameConfig(num_players=4)
    layout = action_layout(cfg)
    counter = CardCounter(cfg)
    tracker = _CountingTracker(cfg, 0, counter)
    corrected = [0]

    def check(obs: np.ndarray, chosen: int, played: int, teacher: Any) -> None:
        tracker.update(PlayerView.from_observation(obs, cfg))
        if played != chosen:
            corrected[0] += ActionType.DISCARD in (layout.type_arr[chosen], layout.type_arr[played])
        if layout.type_arr[played] == ActionType.DISCARD:
            counter.played(int(layout.kind_arr[played]))
        np.testing.assert_array_equal(teacher.active.counter.gone, counter.gone)

    assert _teacher_seat_played_by_random(cfg, 11, check) > 5
    assert corrected[0] > 5  # the corrections were exercised


def test_a_duel_teacher_told_what_was_played_keeps_its_own_discards() -> None:
    """The Duel's ``expert`` notes its own face-down passes: corrected to the played move, its belief is that of a
    belief that saw the played moves."""
    from agents.duel.beliefs import DuelBelief
    from saboteur_env.duel.view import DuelView

    cfg = GameConfig(game="duel")
    shadow = DuelBelief(cfg, 0)

    def check(obs: np.ndarray, chosen: int, played: int, teacher: Any) -> None:
        shadow.update(DuelView.from_observation(obs, cfg))
        shadow.note_action(played)
        np.testing.assert_array_equal(teacher.belief.own_face_down, shadow.own_face_down)

    assert _teacher_seat_played_by_random(cfg, 4, check) > 5
    assert shadow.own_face_down.min() >= 0
