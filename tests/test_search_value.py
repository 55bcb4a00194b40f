"""Rollouts cut short by a value head (issue 35, item 2): the rollout loop's ``leaf``, the value head files
(agents/value.py), their fit (experiments/train/value.py) and the search agent's ``depth``."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents import make_agent
from agents.blueprint import rollout_blueprint, shipped_network
from agents.learned import NumpyPolicy, shipped_path
from agents.search import SearchAgent
from agents.value import ValueHead, ValueHeadError, file_sha256
from experiments.train import value as fitv
from saboteur_env import GameConfig, apply_action, encode_observation, legal_action_mask, new_game
from saboteur_env.core.batch import Batch
from saboteur_env.core.rollout import rollout

BASE5 = GameConfig(num_players=5)


def _states(config: GameConfig, seeds: list[int], steps: int) -> list:
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        s = new_game(config, rng)
        for _ in range(steps):
            s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))), inplace=True)
        out.append(s)
    return out


@pytest.fixture(scope="module")
def head_file(tmp_path_factory) -> str:
    """A head fitted on a little blueprint play (what experiments.train.value ships, smaller)."""
    out = tmp_path_factory.mktemp("value") / "base-5p.json"
    fitv.run(fitv.Options(players=5, samples=600, envs=16, seed=3, out=str(out)), quiet=True)
    return str(out)


# ---- the rollout loop's leaf ----------------------------------------------------------------------------------
def test_rollout_leaf__adds_the_estimate_to_the_cut_rows_of_the_right_games():
    """The leaf sees each cut game in its batch slot (slots move as finished rows leave): it reports each slot's
    decisions played since the rollout began, which must be the row's own step count."""
    states = _states(BASE5, list(range(40, 52)), steps=3)
    start = np.array([s.num_decisions for s in states])
    policy = rollout_blueprint(BASE5, shipped_network(BASE5))
    plain = rollout(Batch.from_states(states), policy, seed=7, max_steps=9)
    seen: dict[int, int] = {}

    def leaf(batch, slots, rows):
        est = np.zeros((slots.size, 5))
        est[:, 2] = 100.0 + rows  # the caller's row, so the test can see which row got what
        dec = batch.scalar(batch.k.SC_DECISIONS)[slots]
        for r, d in zip(rows.tolist(), dec.tolist(), strict=True):
            seen[r] = int(d)
        return est

    res = rollout(Batch.from_states(states), policy, seed=7, max_steps=9, leaf=leaf)
    assert np.array_equal(res.steps, plain.steps) and np.array_equal(res.finished, plain.finished)
    cut = ~plain.finished
    assert cut.any() and np.array_equal(res.estimated, cut)
    expect = plain.returns.copy()
    expect[cut, 2] += 100.0 + np.flatnonzero(cut)
    assert np.allclose(res.returns, expect)
    assert sorted(seen) == np.flatnonzero(cut).tolist()
    for r, d in seen.items():
        assert d - start[r] == res.steps[r]


def test_rollout_leaf__wrong_shape_is_refused():
    states = _states(BASE5, [60, 61], steps=2)
    policy = rollout_blueprint(BASE5, shipped_network(BASE5))
    with pytest.raises(ValueError, match=r"leaf returned shape \(.*\); expected"):
        rollout(Batch.from_states(states), policy, seed=1, max_steps=2, leaf=lambda b, s, r: np.zeros((s.size, 2)))


# ---- head files --------------------------------------------------------------------------------------------------
def test_fit_heads__recovers_a_linear_value_exactly():
    rng = np.random.default_rng(0)
    h = rng.standard_normal((400, 6)).astype(np.float32)
    head = (rng.random(400) < 0.5).astype(np.int64)
    w_true = np.array([[1.0, -2.0, 0.5, 0.0, 3.0, 1.0], [0.0, 1.0, 1.0, -1.0, 0.0, 2.0]])
    b_true = np.array([0.5, -1.5])
    y = (np.einsum("ij,ij->i", h, w_true[head]) + b_true[head]).astype(np.float32)
    data = fitv.ValueData(h, head, y, np.arange(400), np.zeros(400, np.float32))
    w, b = fitv.fit_heads(data, 2, 6, 0.0, np.arange(400))
    assert np.allclose(w, w_true, atol=1e-4) and np.allclose(b, b_true, atol=1e-4)
    err = fitv.errors(data, w, b, np.arange(400), np.arange(400))
    assert err["mse"] < 1e-8 and err["r2"] > 0.9999


def test_value_head__file_checks_and_estimate(head_file, tmp_path):
    bp = NumpyPolicy(shipped_path(BASE5))
    vh = ValueHead(head_file, bp)
    rec = json.loads(open(head_file).read())
    assert rec["target"] == "round_gold" and rec["blueprint_sha256"] == file_sha256(shipped_path(BASE5))
    assert rec["command"].startswith("python -m experiments.train.value")
    assert set(rec["held_out"]) == {"mse", "mse_constant", "mse_old_head", "r2"}
    obs = np.stack([encode_observation(s, 1) for s in _states(BASE5, [70, 71, 72], steps=4)])
    h, head = bp._hidden(obs)
    w = np.array([x["w"] for x in rec["heads"]], dtype=np.float32)
    b = np.array([x["b"] for x in rec["heads"]], dtype=np.float32)
    assert np.allclose(vh.estimate(obs), np.einsum("ij,ij->i", h, w[head]) + b[head], atol=1e-5)
    # another blueprint, a broken or foreign file, a missing one: ValueHeadError naming the problem
    other = NumpyPolicy(shipped_path(GameConfig(num_players=6)))
    with pytest.raises(ValueHeadError, match="fitted on another blueprint"):
        ValueHead(head_file, other)
    bad = tmp_path / "bad.json"
    for text, match in (("{", "not a JSON value head"), ('{"format": "x"}', "is not a saboteur-env/value-head"),
                        (json.dumps({**rec, "target": "game"}), "predicts 'game'"),
                        (json.dumps({**rec, "heads": rec["heads"][:1]}), "needs 2 heads"),
                        (json.dumps({**rec, "heads": [{"w": [0.0], "b": 0}] * 2}), "head 0 needs 'w'")):  # fmt: skip
        bad.write_text(text)
        with pytest.raises(ValueHeadError, match=match):
            ValueHead(bad, bp)
    nan = json.dumps({**rec, "heads": [{**rec["heads"][0], "b": float("nan")}, rec["heads"][1]]})
    bad.write_text(nan)
    with pytest.raises(ValueHeadError, match="finite"):
        ValueHead(bad, bp)
    with pytest.raises(ValueHeadError, match=r"value head file .*missing\.json"):
        ValueHead(tmp_path / "missing.json", bp)


def test_value_collect__targets_are_round_gold_of_the_sampled_seat():
    """Every target is gold a seat can win in what is left of a round (base game: 0..5 nuggets... plus the
    saboteurs' shares), and the samples come from many games."""
    pol = NumpyPolicy(shipped_path(BASE5))
    data = fitv.collect(pol, BASE5, 400, seed=1, envs=8, keep=0.5)
    assert data.target.size >= 400 and data.h.shape == (data.target.size, 128)
    assert (data.target >= 0).all() and (data.target <= 5).all() and (data.target == np.round(data.target)).all()
    assert np.unique(data.game).size >= 8 and set(np.unique(data.head).tolist()) <= {0, 1}
    again = fitv.collect(pol, BASE5, 400, seed=1, envs=8, keep=0.5)
    assert np.array_equal(again.target, data.target) and np.array_equal(again.h, data.h)  # the seed fixes it


# ---- the search with depth -------------------------------------------------------------------------------------
def test_search_depth__deterministic_legal_and_faster(head_file):
    state = _states(BASE5, [80], steps=6)[0]
    seat = state.current
    obs, mask = encode_observation(state, seat), legal_action_mask(state).astype(np.int8)
    moves = []
    for _ in range(2):
        agent = SearchAgent(BASE5, rollouts=32, depth=4, value=head_file)
        agent.reset(seat, 5, seed=11)
        moves.append((agent.act(obs, mask), agent.last_stats.get("values")))
    assert moves[0] == moves[1] and mask[moves[0][0]]
    full = SearchAgent(BASE5, rollouts=32)
    full.reset(seat, 5, seed=11)
    full.act(obs, mask)
    assert agent.last_stats["rollouts"] == full.last_stats["rollouts"]  # cut rollouts count: none is dropped


def test_search_depth__spec_and_bad_input(head_file):
    agent = make_agent(f"search:16,depth=3,value={head_file}", BASE5)
    assert isinstance(agent, SearchAgent) and agent.depth == 3 and agent.rollouts == 16
    for spec, match in (("search:16,depth=0", r"depth=0 is out of range"),
                        ("search:16,depth=x", "needs a whole number"), ("search:16,deep=3", "valid keys: depth="),
                        ("search:16,depth=3,depth=4", "once each"), ("search:abc,depth=3", "search:BUDGET needs"),
                        (f"search:16,value={head_file}", "value= is read only with depth=")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            make_agent(spec, BASE5)
    with pytest.raises(ValueError, match="IS-MCTS weights"):  # no shipped network plays another history length
        SearchAgent(GameConfig(num_players=5, history_length=8), depth=3)
    with pytest.raises(ValueError, match="no value head is shipped for game 'base' at 4 players"):
        SearchAgent(GameConfig(num_players=4), depth=3)  # rolls out the universal network (base 4: belief features)
    with pytest.raises(ValueError, match="no value head is shipped for game 'base' at 6 players"):
        SearchAgent(GameConfig(num_players=6), depth=3)


# ---- expert iteration ------------------------------------------------------------------------------------------
def test_exit__chunks_resume_and_refuse_other_options(tmp_path):
    """Iteration 1 of a tiny run: the chunks, a network fine-tuned from the shipped one, a rerun that reuses
    everything, a lost chunk re-collected identically, and other options refused for the same folder."""
    pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")
    from experiments.train import exit as ex

    opt = ex.Options(players=5, iterations=1, decisions=30, chunk=15, budget=4, num_envs=1, epochs=1, seed=5,
                     out=str(tmp_path))  # fmt: skip
    ex.ExitRun(opt, quiet=True).run()
    it1 = tmp_path / "it1"
    chunks = sorted(p.name for p in it1.glob("chunk*.npz"))
    assert chunks == ["chunk000.npz", "chunk001.npz"]
    assert file_sha256(tmp_path / "it0" / "policy.npz") == file_sha256(shipped_path(BASE5))
    net = NumpyPolicy(it1 / "policy.npz")
    net.check_config(BASE5)
    assert net.meta["decisions"] >= 30 and int(net.meta["hidden"]) == 128  # the shipped network's shape
    meta = json.loads((it1 / "meta.json").read_text())
    assert meta["init"].endswith("it0/policy.npz") and meta["key"]["iteration"] == 1
    before = {p.name: p.stat().st_mtime_ns for p in it1.iterdir()}
    ex.ExitRun(opt, quiet=True).run()  # everything is reused
    assert {p.name: p.stat().st_mtime_ns for p in it1.iterdir()} == before
    old = (it1 / "chunk001.npz").read_bytes()
    (it1 / "chunk001.npz").unlink()
    (it1 / "policy.npz").unlink()  # as if killed while collecting chunk 1
    ex.ExitRun(opt, quiet=True).run()
    assert (it1 / "chunk001.npz").read_bytes() == old  # the same seed stream: the same decisions
    with pytest.raises(ValueError, match=r"was made with other options .*'budget': \(4, 8\)"):
        ex.ExitRun(ex.Options(**{**opt.__dict__, "budget": 8}), quiet=True).collect(1)
    with pytest.raises(ValueError, match=r"was made with other options .*'epochs': \(1, 2\)"):  # a finished fit too
        ex.ExitRun(ex.Options(**{**opt.__dict__, "epochs": 2}), quiet=True).run()
    for bad, match in (({"iterations": 0}, "iterations=0 is out of range"), ({"lr": 0.0}, "lr=0.0 is out of range"),
                       ({"players": 4, "game": "duel"}, "num_players|players")):  # fmt: skip
        with pytest.raises(ValueError, match=match):
            ex.Options(**{**opt.__dict__, **bad}).check()
    assert ex.main(["--players", "5", "--chunk", "0", "--out", str(tmp_path / "x")]) == 2


def test_exit__duel_layout_reaches_the_collection_and_the_key(tmp_path):
    """`--duel-layout official_5x10` collects on that geometry (its observation size), records it in the stage key
    (the default layout's keys stay as before), fits the universal Duel network it started from and prints the
    Duel's two-colour tournaments; a bad layout is named."""
    pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")
    from experiments.train import exit as ex
    from saboteur_env import observation_layout

    opt = ex.Options(game="duel", duel_layout="official_5x10", iterations=1, decisions=12, chunk=12, budget=4,
                     num_envs=1, epochs=1, seed=3, out=str(tmp_path))  # fmt: skip
    official = GameConfig(game="duel", duel_layout="official_5x10")
    assert opt.config() == official and opt.stage_key(1)["duel_layout"] == "official_5x10"
    assert "duel_layout" not in ex.Options(game="duel").stage_key(1)
    run = ex.ExitRun(opt, quiet=True)
    data = run.collect(1)
    assert len(data) >= 12 and data.obs_size == observation_layout(official).size
    assert observation_layout(official).size != observation_layout(GameConfig(game="duel")).size
    # the shipped Duel network is the universal one: the fit moves the decisions into its layout and stays universal
    (net,) = run.run()
    pol = NumpyPolicy(net)
    assert pol.meta["universal"] == "duel" and pol.meta["decisions"] == len(data)
    pol.check_config(official)
    pol.check_config(GameConfig(game="duel"))  # and still plays the other layout
    learned, search = ex.eval_commands(opt, 1, games=10)
    assert "--agents learned:" in learned and "--duel-layout official_5x10" in learned and "--games 10" in learned
    assert "--agents search:4," in search and "--games 5" in search
    with pytest.raises(ValueError, match="duel_layout='x' is not a Duel layout"):
        ex.Options(game="duel", duel_layout="x").check()


def test_exit__with_runs_joins_another_layouts_decisions_to_the_fit(tmp_path):
    """`--with-runs`: a seed-layout run fits its own decisions and an official-layout run's (both moved into the
    universal layout); the other run's chunks fix the fit's key (not the collection's); a folder that is no run,
    the run's own folder, another game's run and another count without a universal start are refused by name."""
    pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")
    from experiments.train import exit as ex

    small = {"iterations": 1, "chunk": 12, "budget": 4, "num_envs": 1, "epochs": 1}
    first = ex.Options(game="duel", duel_layout="official_5x10", decisions=12, seed=3, out=str(tmp_path / "a"), **small)
    official = ex.ExitRun(first, quiet=True).collect(1)
    opt = ex.Options(game="duel", decisions=12, seed=4, out=str(tmp_path / "b"), with_runs=str(tmp_path / "a"), **small)
    opt.check()
    assert opt.stage_key(1) == ex.Options(**{**opt.__dict__, "with_runs": ""}).stage_key(1)
    assert opt.fit_key(1)["with_runs"] == [str(tmp_path / "a" / "it1" / "chunk000.npz")]
    run = ex.ExitRun(opt, quiet=True)
    own = run.collect(1)
    (net,) = run.run()
    assert NumpyPolicy(net).meta["decisions"] == len(own) + len(official)
    NumpyPolicy(net).check_config(GameConfig(game="duel"))
    alone = ex.Options(**{**opt.__dict__, "with_runs": ""})
    with pytest.raises(ValueError, match="fitted with other options \\(with_runs\\)"):
        ex.ExitRun(alone, quiet=True).run()
    base = ex.Options(players=5, decisions=8, chunk=8, out=str(tmp_path / "c"))
    (tmp_path / "four" / "it1").mkdir(parents=True)
    (tmp_path / "four" / "it1" / "key.json").write_text(json.dumps({"game": "base", "players": 4, "decisions": 8,
                                                                     "chunk": 8}))  # fmt: skip
    (tmp_path / "broken" / "it1").mkdir(parents=True)
    (tmp_path / "broken" / "it1" / "key.json").write_text('{"game": "base"}')
    for other, match in ((str(tmp_path / "nope"), "holds no expert-iteration run"),
                         (str(tmp_path / "b"), "this run's own --out"),
                         (str(tmp_path / "a"), "is a run of game 'duel'"),
                         (str(tmp_path / "four"), "another variant than this run's"),
                         (str(tmp_path / "broken"), "is not an expert-iteration key")):  # fmt: skip
        bad = ex.Options(**{**base.__dict__, "with_runs": other}) if other != str(tmp_path / "b") else \
            ex.Options(**{**opt.__dict__, "with_runs": other})
        with pytest.raises(ValueError, match=match):
            bad.check()


def test_exit__start_file_is_iteration_zero_and_fixes_the_key(tmp_path):
    """`--start FILE` copies that network into it0; an it0 from another start (also when every iteration is
    finished) and a missing file are refused, naming the value."""
    pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")
    from experiments.train import exit as ex
    from experiments.train.selfplay.policy import Policy, export_npz

    start = export_npz(Policy(BASE5, 128, True), BASE5, tmp_path / "start.npz")  # another network of this game

    opt = ex.Options(players=5, iterations=1, decisions=8, chunk=8, budget=4, num_envs=1, epochs=1, seed=5,
                     out=str(tmp_path / "run"), start=str(start))  # fmt: skip
    opt.check()
    run = ex.ExitRun(opt, quiet=True)
    assert run.blueprint(0).read_bytes() == start.read_bytes()
    assert opt.stage_key(1) == ex.Options(**{**opt.__dict__, "start": ""}).stage_key(1)  # it0 fixes it: checked
    soft = ex.Options(players=5, soft_temperature=0.5)
    assert soft.stage_key(1)["soft_temperature"] == 0.5 and "soft_temperature" not in ex.Options().stage_key(1)
    assert ex.ExitRun(soft, quiet=True).imitate_options(1, 0, 10).soft_temperature == 0.5
    with pytest.raises(ValueError, match="soft_temperature=-1 is out of range"):
        ex.Options(players=5, soft_temperature=-1).check()
    run.blueprint(0).write_bytes(b"other")
    with pytest.raises(ValueError, match="is not a copy of start="):
        run.blueprint(0)
    for name in ("policy.npz", "meta.json"):  # even a finished iteration is not reused from another start
        (run.dir(1) / name).parent.mkdir(parents=True, exist_ok=True)
        (run.dir(1) / name).write_text("{}")
    with pytest.raises(ValueError, match="is not a copy of start="):
        run.train(1)
    with pytest.raises(ValueError, match=r"start='nope\.npz' is not a file"):
        ex.Options(players=5, start="nope.npz").check()
