"""The shipped learned policies (agents/policies/, issue 14): files, manifest, loading, play, errors."""

from __future__ import annotations

import copy
import hashlib
import json
import shlex
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

import agents.learned as learned
from agents import make_agent
from agents.learned import (
    NoShippedPolicyError,
    NumpyPolicy,
    PolicyFileError,
    shipped_agent,
    shipped_configs,
    shipped_manifest,
    shipped_path,
)
from saboteur_env import GameConfig, apply_action, encode_observation, legal_action_mask, new_game
from tests.hidden import RESAMPLERS

MANIFEST = learned.POLICY_DIR / learned.MANIFEST_NAME
RECORDS = sorted(shipped_manifest().items())
# What issue 14 asks to ship at the least: base 3-10 players, Saboteur 2 at its default count, the Duel.
REQUIRED = [("base", n) for n in range(3, 11)] + [("sab2", 5), ("duel", 2)]


def _config(rec: dict) -> GameConfig:
    """The record's configuration; for a universal file (a list of counts) the first count it is the preferred
    file of (the counts without a file of their own)."""
    if not isinstance(rec["players"], list):
        return GameConfig(game=rec["game"], num_players=rec["players"])
    for n in rec["players"]:
        c = GameConfig(game=rec["game"], num_players=n)
        if shipped_path(c).name == rec["file"]:
            return c
    return GameConfig(game=rec["game"], num_players=rec["players"][0])


def _key(rec: dict) -> str:
    return f"{rec['game']}:{'all' if rec.get('universal') else rec['players']}"


def test_manifest__lists_every_required_config_and_nothing_unshipped() -> None:
    assert MANIFEST.is_file()
    assert set(REQUIRED) <= set(shipped_configs())
    listed = {rec["file"] for _, rec in RECORDS}
    on_disk = {p.name for p in learned.POLICY_DIR.glob("*.npz")}
    assert listed == on_disk  # no stray file, no missing one
    assert len(listed) == len(RECORDS)


def test_shipped_files__at_most_10_mb_in_all() -> None:
    total = sum(p.stat().st_size for p in learned.POLICY_DIR.iterdir() if p.is_file())
    assert total <= 10 << 20, f"{total / 2**20:.2f} MiB"


def find_entry_imitate(rec: dict) -> int:
    """The imitation budget the ship script declares for a record's entry."""
    pytest.importorskip("torch")
    from experiments.train import ship as ship_policies

    return ship_policies.find_entry(_key(rec)).imitate


@pytest.mark.parametrize("name,rec", RECORDS, ids=[n for n, _ in RECORDS])
def test_shipped_file__matches_its_record_and_config(name: str, rec: dict) -> None:
    path = learned.POLICY_DIR / rec["file"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == rec["sha256"]
    assert path.stat().st_size == rec["bytes"]
    policy = NumpyPolicy(path)
    config = _config(rec)
    policy.check_config(config)  # game, players, margin, history, layout; observation and action sizes
    assert policy.meta["config"]["game"] == rec["game"]
    if rec.get("universal"):  # one file for every count of the game: each count specializes it
        from agents.learned import shipped_paths
        from agents.universal import variant_configs

        assert policy.universal == rec["game"] and rec["players"] == sorted({c.num_players for c in
                                                                             variant_configs(rec["game"])})  # fmt: skip
        for c in variant_configs(rec["game"]):
            policy.for_config(c).check_config(c)
            assert path in shipped_paths(c)
    else:
        assert policy.meta["config"]["num_players"] == rec["players"]
    t = rec["training"]
    assert t["decisions"] >= t["budget_decisions"]
    im = t.get("imitate")
    if t.get("exit"):  # expert iteration's last fit: the file counts the searched decisions of every iteration
        assert policy.meta["decisions"] == t["exit"]["decisions"] > 0
    elif im and not t["decisions"]:  # an imitation policy shipped as fitted: the file counts the teacher's decisions
        dg = t.get("dagger")  # with a DAgger round the file counts the fitted union of both rounds
        assert policy.meta["decisions"] == (dg["fitted"] if dg else im["decisions"])
        assert im["decisions"] >= find_entry_imitate(rec)
    else:
        assert policy.meta["decisions"] == t["decisions"]
    assert shipped_path(config) == path
    for key in ("command", "seed", "decisions", "wall_s", "commit"):
        assert key in t, key
    from experiments.train.ship import _total_wall

    # a run that reused finished stages has its own wall time near 0; with theirs it is the file's cost
    assert len(t["commit"]) == 40 and _total_wall(t) > 0


@pytest.mark.parametrize("name,rec", RECORDS, ids=[n for n, _ in RECORDS])
def test_shipped_policy__plays_a_legal_game_by_name(name: str, rec: dict) -> None:
    """make_agent("learned", cfg) in every seat, a tournament-like loop on the public API: legal moves to the end."""
    config = _config(rec)
    state = new_game(config, np.random.default_rng(14))
    seats = [make_agent("learned", config) for _ in range(config.num_players)]
    for s, agent in enumerate(seats):
        agent.reset(s, config.num_players, seed=100 + s)
    decisions = 0
    while not state.game_over:
        seat = state.current
        mask = legal_action_mask(state)
        a = seats[seat].act(encode_observation(state, seat), mask.astype(np.int8))
        assert mask[a], (name, decisions, a)
        state = apply_action(state, a, inplace=True)
        decisions += 1
    assert decisions > config.num_players
    assert seats[0].name == "learned"


@pytest.mark.parametrize("game,players,steps", [("base", 5, 9), ("sab2", 5, 11), ("duel", 2, 6)])
def test_shipped_policy__blind_to_resampled_hidden_state(game: str, players: int, steps: int) -> None:
    """Same seed: the same action, whatever is redrawn of what seat 0 cannot know (and the draw changes things)."""
    config = GameConfig(game=game, num_players=players)
    rng = np.random.default_rng(3)
    state = new_game(config, rng)
    for _ in range(steps):
        state = apply_action(state, int(rng.choice(np.flatnonzero(legal_action_mask(state)))), inplace=True)
    while state.current != 0:
        state = apply_action(state, int(rng.choice(np.flatnonzero(legal_action_mask(state)))), inplace=True)
    agent = shipped_agent(config)
    agent.reset(0, players, seed=5)
    mask = legal_action_mask(state).astype(np.int8)
    firsts = [copy.deepcopy(agent).act(encode_observation(state, 0), mask) for _ in range(3)]
    assert len(set(firsts)) == 1
    changed = 0
    for trial in range(4):
        other = RESAMPLERS[game](state, 0, np.random.default_rng(trial))
        changed += not np.array_equal(encode_observation(other, 1), encode_observation(state, 1))
        act = copy.deepcopy(agent).act(encode_observation(other, 0), legal_action_mask(other).astype(np.int8))
        assert act == firsts[0]
    assert changed  # the resampler really redrew what seat 0 does not see


def test_no_shipped_policy__names_the_config_and_the_shipped_pairs() -> None:
    # every Saboteur 2 count and both Duel layouts have one (the universal files); a layout option does not
    assert shipped_path(GameConfig(game="sab2", num_players=12)).name == "sab2-all.npz"
    official = make_agent("learned", GameConfig(game="duel", duel_layout="official_5x10"))
    assert official.policy.path.name == "duel-all.npz"
    history = r"history_length=16 \(this game: 8\).*base:5.*duel:2"
    with pytest.raises(NoShippedPolicyError, match=history) as e:
        make_agent("learned", GameConfig(num_players=5, history_length=8))
    assert isinstance(e.value, ValueError)
    with pytest.raises(NoShippedPolicyError, match="a universal 'duel' network plays official_5x10, seed_5x9"):
        make_agent("learned", GameConfig(game="duel", history_length=4))


def _shipped_file() -> Path:
    return learned.POLICY_DIR / shipped_manifest()["base-5p"]["file"]


def _npz(path: Path, **changes: object) -> Path:
    with np.load(_shipped_file(), allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    for k, v in changes.items():
        if v is None:
            del arrays[k]
        else:
            arrays[k] = v  # type: ignore[assignment]
    np.savez(path, **arrays)  # type: ignore[arg-type]
    return path


@pytest.mark.parametrize("cut", [0, 1, 100, 0.25, 0.5, 0.9, -22, -1])
def test_truncated_file__policy_file_error(tmp_path: Path, cut: float) -> None:
    data = _shipped_file().read_bytes()
    n = int(len(data) * cut) if isinstance(cut, float) else (cut if cut >= 0 else len(data) + cut)
    bad = tmp_path / "cut.npz"
    bad.write_bytes(data[:n])
    with pytest.raises(PolicyFileError, match=r"cut\.npz"):
        NumpyPolicy(bad)
    with pytest.raises(PolicyFileError):
        make_agent(f"learned:{bad}", GameConfig(num_players=5))


def test_corrupted_file__policy_file_error(tmp_path: Path) -> None:
    data = bytearray(_shipped_file().read_bytes())
    for i, at in enumerate((len(data) // 3, len(data) // 2, 2 * len(data) // 3)):  # inside compressed members
        flipped = bytearray(data)
        flipped[at : at + 8] = bytes(b ^ 0xFF for b in flipped[at : at + 8])
        bad = tmp_path / f"flip{i}.npz"
        bad.write_bytes(bytes(flipped))
        with pytest.raises(PolicyFileError):
            NumpyPolicy(bad)
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(np.random.default_rng(0).bytes(5000))
    with pytest.raises(PolicyFileError, match=r"not a \.npz policy file"):
        NumpyPolicy(garbage)
    single = tmp_path / "single.npz"
    with single.open("wb") as fh:
        np.save(fh, np.zeros(3, dtype=np.float32))
    with pytest.raises(PolicyFileError, match=r"not an \.npz archive"):
        NumpyPolicy(single)


def test_malformed_entries__policy_file_error(tmp_path: Path) -> None:
    w1 = np.load(_shipped_file())["w1"]
    meta = json.loads(str(np.load(_shipped_file())["meta"]))
    cases = {
        # a bottleneck header without its weights, or wider than the trunk
        "no_pe": ({"meta": np.array(json.dumps({**meta, "embed": 4}))}, "pe_w"),
        "wide_pe": ({"meta": np.array(json.dumps({**meta, "embed": meta["hidden"] + 1}))}, "embed="),
        "missing": ({"pi_w0": None}, "pi_w0"),
        "shape": ({"w1": w1[:, :3]}, "w1"),
        "dtype": ({"w1": w1.astype(np.int32)}, "w1"),
        "nan": ({"w1": np.full(w1.shape, np.nan, dtype=np.float16)}, "NaN"),
        "meta": ({"meta": np.array("{not json")}, "meta"),
        "format": ({"meta": np.array(json.dumps({"format": "other"}))}, "format 'other'"),
        "header": ({"meta": np.array(json.dumps({"format": learned.FORMAT, "version": 1}))}, "header"),
        "objects": ({"w1": np.array([{"a": 1}], dtype=object)}, r"not a \.npz policy file"),
    }
    for label, (changes, match) in cases.items():
        bad = _npz(tmp_path / f"{label}.npz", **changes)
        with pytest.raises(PolicyFileError, match=match):
            NumpyPolicy(bad)


def test_bad_manifest__policy_file_error(tmp_path: Path) -> None:
    (tmp_path / "manifest.json").write_text("{")
    with pytest.raises(PolicyFileError, match="manifest"):
        shipped_configs(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"policies": {"x": {"game": "base", "file": "../x.npz"}}}))
    with pytest.raises(PolicyFileError, match="'x'"):
        shipped_configs(tmp_path)
    assert shipped_configs(tmp_path / "nowhere") == []
    with pytest.raises(NoShippedPolicyError, match=r"shipped \(game:players\): none"):
        shipped_path(GameConfig(num_players=5), tmp_path / "nowhere")


def test_float16_file__computes_like_its_float32_source(tmp_path: Path) -> None:
    """The shipped files hold float16 weights; the loader computes in float32 (what the float32 file would do up
    to float16 rounding)."""
    with np.load(_shipped_file(), allow_pickle=False) as data:
        arrays = {k: data[k] for k in data.files}
    assert arrays["w0"].dtype == np.float16 and arrays["scale"].dtype == np.float32
    wide = {k: (v.astype(np.float32) if v.dtype == np.float16 else v) for k, v in arrays.items()}
    np.savez(tmp_path / "wide.npz", **wide)  # type: ignore[arg-type]
    obs = encode_observation(new_game(GameConfig(num_players=5), np.random.default_rng(1)), 0)
    a, _ = NumpyPolicy(_shipped_file()).forward(obs)
    b, _ = NumpyPolicy(tmp_path / "wide.npz").forward(obs)
    np.testing.assert_array_equal(a, b)
    assert NumpyPolicy(_shipped_file()).w["w0"].dtype == np.float32


# The manifest keeps each policy's training command as it ran; issue 39 moved the modules (experiments.imitate ->
# experiments.train.imitate, ...). Commands are compared under the current names.
MOVED_MODULES = {"experiments.imitate": "experiments.train.imitate",
                 "experiments.selfplay": "experiments.train.selfplay",
                 "experiments.ship_policies": "experiments.train.ship"}  # fmt: skip


def _commands(text: str) -> list[list[str]]:
    parts = [shlex.split(p) for p in text.split(" && ")]
    return [[*w[:2], MOVED_MODULES.get(w[2], w[2]), *w[3:]] if w[:2] == ["python", "-m"] else w for w in parts]


# ---- the ship script: manifest commands parse, the data and the files agree -------------------------------------
@pytest.mark.parametrize("name,rec", RECORDS, ids=[n for n, _ in RECORDS])
def test_manifest_commands__parse_and_match_the_ship_script(name: str, rec: dict) -> None:
    pytest.importorskip("torch")
    from experiments.train import imitate
    from experiments.train import ship as ship_policies
    from experiments.train.selfplay import args as selfplay

    t = rec["training"]
    entry = ship_policies.find_entry(_key(rec))
    parts = _commands(t["command"])
    if entry.universal:  # one command: the universal trainer, over every count
        from experiments.train import exit as exit_run
        from experiments.train import universal

        if entry.start:  # expert iteration from the file shipped at that commit, whose record has the first command
            assert [parts[0][:4], parts[1][:3]] == [["python", "-m", "experiments.train.ship", "--shipped-at"],
                                                    ["python", "-m", "experiments.train.exit"]]  # fmt: skip
            assert parts[0][4:6] == [entry.start, name] and parts[1][3:] == t["exit_argv"]
            assert t["exit_argv"][t["exit_argv"].index("--start") + 1] == parts[0][6]
            assert ship_policies.settings(t["exit_argv"]) == ship_policies.settings(entry.exit_argv("x"))
            assert exit_run.parse_args(t["exit_argv"]).game == rec["game"] == t["start"]["training"]["imitate_argv"][1]
            assert t["start"]["commit"] == entry.start and t["imitate_argv"] == t["start"]["training"]["imitate_argv"]
            parts = _commands(t["start"]["training"]["command"])
        assert [w[:3] for w in parts] == [["python", "-m", "experiments.train.universal"]]
        assert parts[0][3:] == t["imitate_argv"]
        opt = universal.parse_args(parts[0][3:])
        assert (opt.game, opt.seed, opt.decisions) == (rec["game"], t["seed"], entry.imitate)
        assert ship_policies.settings(parts[0][3:]) == ship_policies.settings(entry.imitate_argv("x"))
        assert ship_policies.is_done(entry, {"policies": {name: rec}})
        return
    im, sp = ["python", "-m", "experiments.train.imitate"], ["python", "-m", "experiments.train.selfplay"]
    stages = t  # the record whose commands ran the imitation stages
    if entry.start:  # PPO from the file shipped at that commit: its stages are that commit's record
        assert [parts[0][:4], *(w[:3] for w in parts[1:])] == [["python", "-m", "experiments.train.ship",
                                                                 "--shipped-at"], sp]  # fmt: skip
        assert parts[0][4:6] == [entry.start, name] and parts[1][parts[1].index("--init") + 1] == parts[0][6]
        stages = t["start"]["training"]
        assert t["start"]["commit"] == entry.start and not stages["decisions"] and not stages.get("start")
        for k in ("imitate_argv", "imitate", "dagger_argv", "dagger"):
            assert t[k] == stages[k]
        first = _commands(stages["command"])
        parts = first + parts[1:]
    else:
        half = [["python", "-m", "experiments.train.ship"]] * bool(entry.imitate)  # PPO's start, in float16
        dagger = [["python", "-m", "experiments.train.ship"], im] if entry.dagger else []
        ppo = [*half, sp] if entry.train_argv("x") else []
        assert [w[:3] for w in parts] == [im] * bool(entry.imitate) + dagger + ppo
    assert bool(t.get("dagger_argv")) == bool(entry.dagger)
    imitations = iter([stages["imitate_argv"], *([stages["dagger_argv"]] if entry.dagger else [])])
    for words in parts:
        if words[2] == "experiments.train.ship":  # a DAgger student or PPO's start: a policy in float16
            assert words[3] == "--to-half" and ship_policies.build_parser().parse_args(words[3:]).to_half
        elif words[2] == "experiments.train.imitate":
            assert words[3:] == next(imitations)
            if "--student" in words:
                assert ship_policies.settings(words[3:]) == ship_policies.settings(entry.dagger_argv("x"))
                continue
            opt = imitate.parse_args(words[3:])
            assert (opt.game, opt.players, opt.seed, opt.decisions) == (rec["game"], rec["players"], t["seed"],
                                                                        entry.imitate)  # fmt: skip
            assert ship_policies.settings(words[3:]) == ship_policies.settings(entry.imitate_argv("x"))
        else:
            assert words[3:] == t["argv"]
            args = selfplay.parse_args(words[3:])
            assert (args.game, args.players, args.seed, args.steps) == (rec["game"], rec["players"], t["seed"],
                                                                       t["budget_decisions"])  # fmt: skip
            assert ship_policies.settings(t["argv"]) == ship_policies.settings(entry.train_argv("x"))
    assert entry.seed == t["seed"] and entry.decisions == t["budget_decisions"]
    assert ship_policies.is_done(entry, {"policies": {name: rec}})  # the declared data is what was shipped
    again = _commands(t["reproduce"])[0]
    assert again[:3] == ["python", "-m", "experiments.train.ship"]
    ns = ship_policies.build_parser().parse_args(again[3:])
    assert ns.only == [entry.key] and ns.force


@pytest.mark.parametrize("name,rec", RECORDS, ids=[n for n, _ in RECORDS])
def test_manifest__holds_the_paired_evaluation(name: str, rec: dict) -> None:
    pytest.importorskip("torch")
    from experiments.train import ship as ship_policies

    entry = ship_policies.find_entry(_key(rec))
    ev = rec.get("evaluation", {})
    if entry.universal:  # per variant of the game
        from agents.universal import variant_configs, variant_name

        evs = [ev[variant_name(c)] for c in variant_configs(rec["game"])]
    else:
        evs = [ev]
    for one in evs:
        for opp, pairs in entry.eval_pairs().items():  # the declared evaluation, of this very file
            r = one[opp]
            assert (r["pairs"], r["seed"], r["sha256"]) == (pairs, ship_policies.EVAL_SEED, rec["sha256"])
            assert r["lo"] <= r["diff"] <= r["hi"]


def test_ship_script__bad_only_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    from experiments.train import ship as ship_policies

    assert ship_policies.main(["--only", "base:11", "--no-train"]) == 2
    err = capsys.readouterr().err
    assert "base:11" in err and "base:5" in err and "duel:all" in err
    assert ship_policies.main(["--pairs", "0", "--no-train"]) == 2
    assert "--pairs 0" in capsys.readouterr().err
    with pytest.raises(ship_policies.ShipError, match="sab2:13"):
        ship_policies.find_entry("sab2:13")


def test_ship_script__is_done_needs_the_same_file_and_settings(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    from experiments.train import ship as ship_policies

    name, rec = next((n, r) for n, r in RECORDS if n == "base-5p")
    entry = ship_policies.find_entry("base:5")
    assert ship_policies.is_done(entry, {"policies": {name: rec}})
    assert not ship_policies.is_done(entry, {"policies": {name: {**rec, "sha256": "0" * 64}}})
    other = {**rec, "training": {**rec["training"], "argv": [*entry.train_argv("x"), "--lr", "1e-3"]}}
    assert not ship_policies.is_done(entry, {"policies": {name: other}})
    other = {**rec, "training": {**rec["training"], "imitate_argv": [*entry.imitate_argv("x"), "--epochs", "3"]}}
    assert not ship_policies.is_done(entry, {"policies": {name: other}})
    assert not ship_policies.is_done(entry, {"policies": {}})
    assert zipfile.is_zipfile(ship_policies.POLICY_DIR / rec["file"])


def test_ship_script__trains_an_imitation_start_then_ppo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("torch")
    from dataclasses import replace

    from agents.learned import NumpyPolicy
    from experiments.train import ship as sp
    from experiments.train import ship_entries

    monkeypatch.setattr(sp, "POLICY_DIR", tmp_path / "policies")
    monkeypatch.setattr(ship_entries, "IMITATE",
                        ("--epochs", "1", "--workers", "1", "--num-envs", "4", "--temperature", "0.5"))
    monkeypatch.setattr(ship_entries, "COMMON",
                        ("--num-envs", "4", "--rollout", "8", "--no-tensorboard", "--log-every", "999"))
    entry = sp.Entry("base", 4, seed=3, decisions=64, imitate=120, teacher="heuristic", partners="random")
    rec = sp.train(entry, tmp_path / "runs")
    t = rec["training"]
    assert t["imitate"]["decisions"] >= 120 and not t["imitate"]["data_reused"] and t["decisions"] >= 64
    assert "experiments.train.imitate" in t["command"] and " && python -m experiments.train.selfplay" in t["command"]
    assert "--init" in t["argv"] and sp.is_done(entry, {"policies": {entry.name: rec}})
    # Imitation only: the same collection is reused and the shipped file is the imitation policy in float16.
    alone = replace(entry, decisions=0)
    rec2 = sp.train(alone, tmp_path / "runs")
    assert rec2["training"]["imitate"]["data_reused"] and rec2["training"]["argv"] == []
    shipped = NumpyPolicy(tmp_path / "policies" / "base-4p.npz")
    fitted = NumpyPolicy(tmp_path / "runs" / "base-4p" / "imitate" / "policy.npz")
    obs = np.random.default_rng(0).random((3, fitted.obs_size), dtype=np.float32)
    assert np.allclose(shipped.forward(obs)[0], fitted.forward(obs)[0], atol=0.05)
    # A DAgger round: the imitation's shipped form plays, the union is fitted, and that policy is shipped.
    dag = replace(alone, dagger=80)
    rec3 = sp.train(dag, tmp_path / "runs")
    t3 = rec3["training"]
    assert t3["imitate"]["data_reused"] and t3["dagger"]["decisions"] >= 80
    assert t3["dagger"]["fitted"] == t3["dagger"]["decisions"] + t3["imitate"]["decisions"]
    assert "--to-half" in t3["command"] and "--student" in t3["dagger_argv"]
    student = tmp_path / "runs" / "base-4p" / "imitate" / "policy-f16.npz"
    assert sp.sha256(student) == rec2["sha256"]  # the student is exactly the imitation's shipped file
    dagged = NumpyPolicy(tmp_path / "runs" / "base-4p" / "dagger" / "policy.npz")
    assert np.allclose(NumpyPolicy(tmp_path / "policies" / "base-4p.npz").forward(obs)[0], dagged.forward(obs)[0],
                       atol=0.05)  # fmt: skip
    assert sp.is_done(dag, {"policies": {dag.name: rec3}}) and not sp.is_done(alone, {"policies": {dag.name: rec3}})
    assert "DAgger" in sp.table({"policies": {dag.name: {**rec3, "evaluation": {}}}})
    assert sp.main(["--to-half", str(tmp_path / "missing.npz"), str(tmp_path / "x.npz")]) == 2  # a clear error
    # Belief features: the same data refitted with them, shipped, listed, and evaluated one agent per deal.
    feat = replace(alone, features="bayes")
    rec4 = sp.train(feat, tmp_path / "runs")
    assert rec4["training"]["imitate"]["data_reused"] and "--features" in rec4["training"]["imitate_argv"]
    assert NumpyPolicy(tmp_path / "policies" / "base-4p.npz").features == "bayes"
    assert "bayes features" in sp.table({"policies": {feat.name: {**rec4, "evaluation": {}}}})
    ev = sp.evaluate_entry(feat, pairs=2, opponents=("random",))
    assert ev["random"]["pairs"] == 2 and ev["random"]["sha256"] == rec4["sha256"]


def test_ship_script__expert_iteration_after_the_warm_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry with ``exit``: the warm start as shipped (float16) is iteration 0 of expert iteration, whose last
    iteration is shipped; the record holds its command and settings, and other settings are not this record."""
    pytest.importorskip("torch")
    from dataclasses import replace

    from experiments.train import ship as sp
    from experiments.train import ship_entries

    monkeypatch.setattr(sp, "POLICY_DIR", tmp_path / "policies")
    monkeypatch.setattr(ship_entries, "IMITATE",
                        ("--epochs", "1", "--workers", "1", "--num-envs", "4", "--temperature", "0.5"))
    tiny = ("--game", "base", "--players", "4", "--iterations", "1", "--decisions", "16", "--chunk", "16",
            "--budget", "4", "--num-envs", "1", "--epochs", "1", "--soft-temperature", "0.5")  # fmt: skip
    entry = sp.Entry("base", 4, seed=3, decisions=0, imitate=120, teacher="heuristic", partners="random", exit=tiny)
    rec = sp.train(entry, tmp_path / "runs")
    t, run = rec["training"], tmp_path / "runs" / "base-4p"
    assert t["exit"]["decisions"] >= 16 and t["exit_argv"][-4:] == ["--start", str(run / "imitate" / "policy-f16.npz"),
                                                                     "--out", str(run / "exit")]  # fmt: skip
    assert " && python -m experiments.train.ship --to-half " in t["command"]
    assert t["command"].endswith(shlex.join(["python", "-m", "experiments.train.exit", *t["exit_argv"]]))
    with np.load(tmp_path / "policies" / "base-4p.npz") as shipped, np.load(run / "exit" / "it1" / "policy.npz") as it1:
        for k in it1.files:  # exactly the last iteration's network, in float16
            a = it1[k]
            half = a.dtype == np.float32 and k != "scale"  # as to_half stores them
            np.testing.assert_array_equal(shipped[k], a.astype(np.float16) if half else a)
    assert t["exit"]["wall_s"] > 0 and t["imitate"]["wall_s"] < t["wall_s"]
    # the chunk's own seconds are kept beside it; collected in this run, they are part of its wall time
    chunk_s = json.loads((run / "exit" / "it1" / "chunk000.json").read_text())["seconds"]
    assert t["exit"]["collect_s"] == chunk_s > 0 and t["exit"]["data_reused"] is False
    assert sp.sha256(run / "exit" / "it0" / "policy.npz") == sp.sha256(run / "imitate" / "policy-f16.npz")
    assert sp.is_done(entry, {"policies": {entry.name: rec}})
    other = replace(entry, exit=tuple(w if w != "0.5" else "1.0" for w in tiny))
    assert not sp.is_done(other, {"policies": {entry.name: rec}})
    # a rerun whose expert iteration reuses the finished iteration still counts that collection's seconds
    (run / "exit" / "it1" / "policy.npz").unlink()  # refitted from the kept chunk, not recollected
    again = sp.train(entry, tmp_path / "runs")["training"]
    assert again["exit"]["data_reused"] is True and again["exit"]["collect_s"] == chunk_s
    im_s = again["imitate"]["collect_s"] if again["imitate"]["data_reused"] else 0.0  # its data are reused too
    assert sp._total_wall(again) == pytest.approx(again["wall_s"] + chunk_s + im_s)
    for bad, match in (({"exit": (*tiny, "--out", "x")}, "exit sets --out itself"),
                       ({"exit": tiny, "decisions": 64}, "expert iteration .exit. and PPO"),
                       ({"exit": ("--iterations", "0")}, "--iterations '0' is not a positive integer"),
                       ({"exit": ("--iter", "3")}, "exit argument '--iter': write options in full"),
                       ({"exit": ("--iterations=3",)}, "exit argument '--iterations=3'"),
                       ({"exit": tiny, "imitate": 0}, "needs the imitation warm start")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            replace(entry, **bad)


def test_ship_script__table_needs_no_torch_and_training_names_the_extra() -> None:
    """``--table`` only reads the manifest: it runs without torch (a dev install); training stops with the extra."""
    import sys

    from experiments.train import ship as sp

    block = "import sys; sys.modules['torch'] = None; from experiments.train.ship import main; "
    table = subprocess.run([sys.executable, "-c", block + "raise SystemExit(main(['--table']))"], cwd=sp.ROOT,
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert table.returncode == 0, table.stderr
    assert table.stdout.startswith("| game | players | trained by |") and "| base | 4 |" in table.stdout
    train = subprocess.run([sys.executable, "-c", block + "main(['--only', 'base:4', '--runs', '/nonexistent'])"],
                           cwd=sp.ROOT, capture_output=True, text=True, timeout=300)  # fmt: skip
    assert train.returncode == 1 and "pip install -e '.[train]'" in train.stderr
    assert "Traceback" not in train.stderr


def test_ship_script__continues_the_file_shipped_at_a_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry with ``start``: PPO's --init is the file shipped at that commit (checked against that commit's
    manifest), the record takes over its stages, and with a frozen trunk and one role trained only that role's
    head changes."""
    pytest.importorskip("torch")
    from dataclasses import replace

    from experiments.train import ship as sp
    from experiments.train.ship_entries import SABOTEUR_HEAD

    real = sp.find_entry("base:4")
    assert real.start  # the shipped entry continues its file as shipped at that commit
    shown = subprocess.run(["git", "show", f"{real.start}:agents/policies/manifest.json"], cwd=sp.ROOT,
                           capture_output=True)  # fmt: skip
    if shown.returncode:  # a shallow clone or an unpacked sdist
        pytest.skip(f"commit {real.start} is not in this checkout")
    start_rec = json.loads(shown.stdout)["policies"]["base-4p"]
    monkeypatch.setattr(sp, "POLICY_DIR", tmp_path / "policies")
    tiny = tuple(w for w in SABOTEUR_HEAD)
    for flag, value in (("--num-envs", "4"), ("--rollout", "8"), ("--log-every", "999")):
        i = tiny.index(flag)
        tiny = (*tiny[: i + 1], value, *tiny[i + 2 :])
    entry = replace(real, decisions=96, ppo=tiny)
    rec = sp.train(entry, tmp_path / "runs")
    t = rec["training"]
    init = tmp_path / "runs" / "base-4p" / "start-f16.npz"
    assert sp.sha256(init) == start_rec["sha256"] == t["start"]["sha256"]
    assert t["start"]["commit"] == real.start and t["start"]["training"] == start_rec["training"]
    assert t["imitate"] == start_rec["training"]["imitate"] and t["dagger"] == start_rec["training"]["dagger"]
    assert t["command"].startswith(f"python -m experiments.train.ship --shipped-at {real.start} base-4p ")
    assert t["decisions"] >= 96 and sp.is_done(entry, {"policies": {"base-4p": rec}})
    before = np.load(init, allow_pickle=False)
    after = np.load(tmp_path / "policies" / "base-4p.npz", allow_pickle=False)
    changed = {k for k in before.files if k != "meta" and not np.array_equal(before[k], after[k])}
    assert changed and changed <= {"pi_w1", "pi_b1", "v_w1", "v_b1"}  # the saboteur head (role 1) alone
    table = sp.table({"policies": {"base-4p": {**rec, "evaluation": {}}}})
    assert "+ PPO" in table and "as saboteur (heads only)" in table
    # The first step alone, and its errors: an unknown commit, a name that commit did not ship.
    assert sp.main(["--shipped-at", real.start, "base-4p", str(tmp_path / "again.npz")]) == 0
    assert sp.sha256(tmp_path / "again.npz") == start_rec["sha256"]
    assert sp.main(["--shipped-at", "0" * 40, "base-4p", str(tmp_path / "x.npz")]) == 2
    assert sp.main(["--shipped-at", real.start, "base-11p", str(tmp_path / "x.npz")]) == 2
    assert not (tmp_path / "x.npz").exists()
    with pytest.raises(ValueError, match="needs imitate > 0 and decisions > 0"):
        replace(real, decisions=0)
    # The record names its start: another start commit, or none, is not this record.
    assert not sp.is_done(replace(entry, start="0" * 40), {"policies": {"base-4p": rec}})
    # A start file trained otherwise than the entry declares is refused, naming it; --policies elsewhere still reads
    # the commit's agents/policies.
    with pytest.raises(sp.ShipError, match="other imitation settings"):
        sp.train(replace(entry, epochs=3), tmp_path / "runs")
    assert sp.main(["--policies", str(tmp_path / "elsewhere"), "--shipped-at", real.start, "base-4p",
                    str(tmp_path / "y.npz")]) == 0  # fmt: skip


# ---- "learned" by name in the tournaments, the play CLI and the web table ---------------------------------------
def test_tournament__plays_learned_by_name_in_every_game(capsys: pytest.CaptureFixture[str]) -> None:
    from experiments.tournament import cli as tournament

    base = ["--miners", "learned", "heuristic", "--saboteurs", "learned", "--insert", "heuristic", "learned"]
    assert tournament.main([*base, "--players", "4", "--games", "2", "--no-beliefs", "--secret", "1" * 32]) == 0
    out = capsys.readouterr().out
    assert out.count("learned") >= 4
    assert tournament.main(["--game", "sab2", "--agents", "learned", "--players", "5", "--games", "1"]) == 0
    assert "learned" in capsys.readouterr().out
    assert tournament.main(["--game", "duel", "--agents", "learned", "greedy", "--games", "1"]) == 0
    assert "learned" in capsys.readouterr().out


def test_tournament__learned_plays_the_duels_other_layout(capsys: pytest.CaptureFixture[str]) -> None:
    # every count and layout a tournament can name has a shipped policy since sab2-all.npz and duel-all.npz (the
    # usage error for a configuration without one is checked by _check_shipped on the names above)
    from experiments.tournament import cli as tournament

    argv = ["--game", "duel", "--agents", "learned", "greedy", "--duel-layout", "official_5x10", "--games", "1"]
    assert tournament.main(argv) == 0
    assert "learned" in capsys.readouterr().out


def test_game_tournaments__make_learned() -> None:
    from experiments.tournament.duel import make_duel_agent
    from experiments.tournament.sab2 import make_sab2_agent

    assert make_sab2_agent("learned", GameConfig(game="sab2", num_players=5)).name == "learned"
    assert make_duel_agent("learned", GameConfig(game="duel")).name == "learned"


def test_play_cli__accepts_learned_where_shipped(capsys: pytest.CaptureFixture[str],
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from experiments import play

    args, _ = play.parse_args(["--players", "5", "--bots", "learned"])
    assert args.bots == "learned"
    # every count the command reaches has a policy now (Saboteur 2: the universal file); without one it says so
    assert play.parse_args(["--game", "sab2", "--players", "12", "--bots", "learned"])[0].bots == "learned"

    def none(config: GameConfig) -> None:
        raise NoShippedPolicyError(f"no learned policy is shipped for {config.game}")

    monkeypatch.setattr(learned, "shipped_agent", none)
    with pytest.raises(SystemExit):
        play.parse_args(["--game", "sab2", "--players", "12", "--bots", "learned"])
    assert "--bots learned: no learned policy is shipped" in capsys.readouterr().err


def test_web_table__lists_and_checks_learned(monkeypatch: pytest.MonkeyPatch) -> None:
    from experiments.web.table import TableError, bot_names, check_settings, make_bot

    for game in ("base", "sab2", "duel"):
        assert "learned" in bot_names(game)
    assert check_settings("base", 5, 0, "learned").bots == ("learned",) * 5
    assert check_settings("sab2", 12, 0, "learned").bots == ("learned",) * 12  # the universal Saboteur 2 file
    assert make_bot("learned", GameConfig(game="duel")).name == "learned"

    def none(config: GameConfig) -> Path:
        raise NoShippedPolicyError(f"no learned policy at {config.num_players} players; shipped: base:5")

    monkeypatch.setattr(learned, "shipped_path", none)  # a count without a file is refused, naming it
    with pytest.raises(TableError, match="at 12 players; shipped"):
        check_settings("sab2", 12, 0, "learned")
