"""``--overlap`` (issue 37): the next rollout collected in a thread beside the PPO update. The data lag the weights by
exactly one iteration, the run is deterministic whatever the threads' timing, the pipeline drains at checkpoints so
a run resumed there is the uninterrupted one, and a stop elsewhere leaves a consistent, resumable checkpoint."""

from __future__ import annotations

import copy
import os
import signal
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")
import torch  # after the importorskip: torch comes with the train extra

from experiments.train.selfplay.args import Args, parse_args
from experiments.train.selfplay.rollout import Rollout
from experiments.train.selfplay.trainer import Trainer
from saboteur_env.vector import legal_indices
from tests.test_selfplay import _rows, _two_slot_rollout


def _args(tmp: Path, **kw: object) -> Args:
    base: dict[str, object] = dict(game="base", players=4, num_envs=16, rollout=8, steps=16 * 8 * 6, epochs=2,
                                   minibatches=2, hidden=16, out=str(tmp), checkpoint_every=3, seed=5,
                                   overlap=True, tensorboard=False)  # fmt: skip
    base.update(kw)
    return Args(**base)  # type: ignore[arg-type]


def _same_weights(a: Trainer, b: Trainer) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a.model.state_dict().values(), b.model.state_dict().values(),
                                                  strict=True))  # fmt: skip


def test_carry_into_gives_the_other_buffer_what_carry_gives_this_one() -> None:
    roll = _two_slot_rollout()
    before = copy.deepcopy(roll)
    other = Rollout(steps=6, num_envs=2, num_players=3, obs_size=1, num_actions=2)
    other.valid[:] = other.complete[:] = True  # stale contents of the spare buffer's last use
    other.open[:] = 5
    roll.carry_into(other)
    for name in (*Rollout.ARRAYS, "valid", "complete", "reward", "done", "open", "acc"):  # this one is untouched
        assert np.array_equal(getattr(roll, name), getattr(before, name)), name
    before.carry()
    for name in ("valid", "complete", "reward", "done", "open", "acc"):
        assert np.array_equal(getattr(other, name), getattr(before, name)), name
    n = roll.num_players
    for name in Rollout.ARRAYS:  # the carry rows (the step rows are free in both)
        carried = before.valid[:n]
        assert np.array_equal(getattr(other, name)[:n][carried], getattr(before, name)[:n][carried]), name


def test_overlap_collects_with_the_weights_before_the_update(tmp_path: Path) -> None:
    """A step trains on the waiting rollout while the next one is collected with a copy of the current weights
    (before the update): the new rollout's log-probabilities are those weights', not the updated ones'."""
    tr = Trainer(_args(tmp_path))
    tr.start()
    tr.pipeline.step(more=True)  # collects the first rollout (nothing waits), then the second beside the update
    before = copy.deepcopy(tr.model)
    tr.pipeline.step(more=True)  # trains on the second, collects the third with `before`'s weights
    roll = tr.shards[0].roll
    rows = slice(roll.num_players, None)  # the step rows of the new rollout
    obs, mask = roll.obs[rows].reshape(-1, roll.obs.shape[2]), roll.mask[rows].reshape(-1, roll.mask.shape[2])
    act, logp = roll.action[rows].reshape(-1), roll.logp[rows].reshape(-1)
    mine = roll.learner[rows].reshape(-1) & roll.valid[rows].reshape(-1)
    r, c = map(torch.from_numpy, legal_indices(mask))

    def taken(model: torch.nn.Module) -> np.ndarray:
        with torch.inference_mode():
            lp, _ = model.legal(torch.from_numpy(obs), r, c)
        hit = (c == torch.from_numpy(act)[r]).numpy()
        out = np.full(len(act), np.nan, dtype=np.float32)
        out[r.numpy()[hit]] = lp.numpy()[hit]
        return out

    assert mine.sum() > 50
    np.testing.assert_allclose(taken(before)[mine], logp[mine], atol=1e-5)
    assert np.abs(taken(tr.model)[mine] - logp[mine]).max() > 1e-3  # the updated weights differ
    # three rollouts collected, two trained on: the counters count the trained ones (the loop counts iterations)
    assert tr.iteration == 0 and tr.decisions == 2 * 16 * 8 and tr.pipeline is not None and tr.pipeline.pending


def test_overlap_is_deterministic_and_resumes_exactly_at_a_checkpoint(tmp_path: Path) -> None:
    straight = Trainer(_args(tmp_path / "a"))
    straight.train(quiet=True)
    assert straight.iteration == 6 and straight.decisions == 6 * 16 * 8 and not straight.pipeline.pending
    twin = Trainer(_args(tmp_path / "b"))  # the threads' timing changes nothing
    twin.train(quiet=True)
    assert _same_weights(straight, twin)
    plain = Trainer(_args(tmp_path / "p", overlap=False))  # and the lag is a real difference
    plain.train(quiet=True)
    assert plain.decisions == straight.decisions and not _same_weights(straight, plain)

    first = Trainer(_args(tmp_path / "c"))
    first.train(max_iterations=3, quiet=True)  # iteration 3 checkpoints: the pipeline drained there
    resumed = Trainer(_args(tmp_path / "c", resume=True))
    resumed.train(quiet=True)
    assert resumed.iteration == 6 and _same_weights(straight, resumed)
    timing = {"wall_s", "decisions_per_s"}
    assert [{k: v for k, v in r.items() if k not in timing} for r in _rows(tmp_path / "c")] == [
        {k: v for k, v in r.items() if k not in timing} for r in _rows(tmp_path / "a")
    ]


def test_a_signal_during_an_update_trains_the_rollout_collected_meanwhile(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM arrives during update 4 (no checkpoint due; rollout 5 is being collected): the run trains rollout 5
    too, collects nothing more and checkpoints 5 whole iterations."""
    tr = Trainer(_args(tmp_path, steps=16 * 8 * 20, checkpoint_every=100))
    calls = {"n": 0}
    update = tr.update

    def update_then_signal(rolls: object = None) -> dict[str, float]:
        calls["n"] += 1
        if calls["n"] == 4:
            os.kill(os.getpid(), signal.SIGTERM)  # the trainer's handler asks for a stop after this iteration
        return update(rolls)  # type: ignore[arg-type]

    monkeypatch.setattr(tr, "update", update_then_signal)
    tr.train(quiet=True)
    assert tr.stopped_by == signal.SIGTERM and calls["n"] == 5
    assert tr.iteration == 5 and tr.decisions == 5 * 16 * 8 and tr.pipeline is not None and not tr.pipeline.pending
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert state["counters"]["iteration"] == 5 and state["counters"]["decisions"] == 5 * 16 * 8
    assert [int(r["iteration"]) for r in _rows(tmp_path)] == [1, 2, 3, 4, 5]


def test_progress_rows_describe_the_rollout_each_iteration_trained_on(tmp_path: Path) -> None:
    """As in a plain run: row k counts k rollouts of decisions and the games finished in them; the drained
    (checkpoint) iterations report their rollout's rounds like any other."""
    tr = Trainer(_args(tmp_path, num_envs=16, rollout=64, steps=16 * 64 * 6))
    tr.train(quiet=True)
    rows = _rows(tmp_path)
    assert [int(r["decisions"]) for r in rows] == [16 * 64 * k for k in range(1, 7)]
    games = [int(r["games"]) for r in rows]
    assert games == sorted(games) and games[-1] == tr.games > 0
    assert all(np.isfinite(float(rows[k]["win_miner"])) for k in (2, 5))  # the drained (checkpoint) iterations
    plain = Trainer(_args(tmp_path / "plain", num_envs=16, rollout=64, steps=16 * 64 * 6, overlap=False))
    plain.train(quiet=True)
    # the first rollout is played with the same start weights and deals: the same row (its rounds still running)
    first = _rows(tmp_path / "plain")[0]
    keys = ("decisions", "games", "return_mean", "win_miner", "win_saboteur", "round_reward_miner")
    assert [rows[0][k] for k in keys] == [first[k] for k in keys] and rows[0]["win_miner"] == "nan"


def test_a_stop_between_checkpoints_trains_the_waiting_rollout_first(tmp_path: Path) -> None:
    """Stopping at iteration 2 (no checkpoint due): the rollout collected meanwhile is not left untrained; the
    checkpoint counts whole iterations and a resumed run continues from it to the end."""
    first = Trainer(_args(tmp_path))
    first.train(max_iterations=2, quiet=True)
    assert first.iteration == 2 and first.decisions == 2 * 16 * 8 and not first.pipeline.pending
    state = torch.load(tmp_path / "checkpoint.pt", weights_only=True)
    assert state["counters"]["iteration"] == 2 and "update_gen" in state and state["args"]["overlap"] is True
    resumed = Trainer(_args(tmp_path, resume=True))
    resumed.train(quiet=True)
    assert resumed.iteration == 6 and resumed.decisions == 6 * 16 * 8
    assert [int(r["iteration"]) for r in _rows(tmp_path)] == list(range(1, 7))
    with pytest.raises(ValueError, match="overlap"):  # a checkpoint of one mode does not resume in the other
        Trainer(_args(tmp_path, resume=True, overlap=False)).train(quiet=True)


def test_an_error_in_the_collecting_thread_reaches_the_trainer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tr = Trainer(_args(tmp_path))
    tr.start()
    tr.pipeline.step(more=False)  # fine without a thread

    def broken(model: object) -> dict[str, float]:
        raise RuntimeError("env exploded")

    monkeypatch.setattr(tr.shards[0], "collect", broken)
    tr.collect = lambda account=True: {"env_s": 0.0, "policy_s": 0.0}  # type: ignore[method-assign]  # the first one
    with pytest.raises(RuntimeError, match="env exploded"):
        tr.pipeline.step(more=True)


@pytest.mark.parametrize("kw", [{"workers": 2}, {"backend": "ray"}])
def test_overlap_with_rollout_workers_is_refused_naming_both(tmp_path: Path, kw: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=r"overlap collects in a thread of this process.*valid: backend 'local'"):
        _args(tmp_path, **kw).check()
    assert parse_args(["--overlap", "--out", str(tmp_path)]).overlap


def test_proximal_log_probabilities_and_importance_weights(tmp_path: Path) -> None:
    """The decoupled loss's inputs: the taken actions' log-probabilities under the given (update-start) weights on
    the trained entries, the behaviour's elsewhere, and exp(proximal - behaviour) truncated at iw_max."""
    from experiments.train.selfplay.overlap import proximal

    tr = Trainer(_args(tmp_path))
    tr.start()
    tr.pipeline.step(more=True)
    before = copy.deepcopy(tr.model)
    tr.pipeline.step(more=True)  # the newest rollout was collected with `before`; tr.model moved on
    roll = tr.shards[0].roll
    rows, slots, n_act = roll.mask.shape
    flat_rows, flat_cols = legal_indices(roll.mask.reshape(rows * slots, n_act))
    seg = np.searchsorted(flat_rows, np.arange(rows + 1) * slots)
    mine = roll.learner & roll.valid
    mine[: roll.num_players] = False  # the carry rows: decisions of the rollout before, older weights'
    train = torch.from_numpy(mine.astype(np.float32))
    obs, act, logp = (torch.from_numpy(x) for x in (roll.obs, roll.action, roll.logp))
    assert int(train.sum()) > 50
    on = train.numpy() > 0
    prox, iw = proximal(before, obs, act, logp, train, (flat_rows, flat_cols, seg), 3, 2.0)
    np.testing.assert_allclose(prox.numpy()[on], roll.logp[on], atol=1e-5)  # the behaviour's own weights
    np.testing.assert_allclose(iw.numpy(), 1.0, atol=1e-4)
    prox, iw = proximal(tr.model, obs, act, logp, train, (flat_rows, flat_cols, seg), 2, 1.002)
    r, c = map(torch.from_numpy, legal_indices(roll.mask.reshape(rows * slots, n_act)))
    with torch.inference_mode():
        lp, _ = tr.model.legal(obs.reshape(rows * slots, -1), r, c)
    hit = (c == act.reshape(-1)[r]).numpy()
    want = roll.logp.reshape(-1).copy()
    want[r.numpy()[hit]] = lp.numpy()[hit]
    want = np.where(on.reshape(-1), want, roll.logp.reshape(-1))
    np.testing.assert_allclose(prox.numpy().reshape(-1), want, atol=1e-5)
    assert np.abs(want - roll.logp.reshape(-1))[on.reshape(-1)].max() > 1e-3  # the update moved the policy
    expect = np.minimum(np.exp(want - roll.logp.reshape(-1)), 1.002)
    np.testing.assert_allclose(iw.numpy().reshape(-1), expect, rtol=1e-5)
    assert (iw.numpy() == np.float32(1.002)).any() and (iw.numpy()[~on] == 1.0).all()
    from experiments.train.selfplay.overlap import weight_stats

    st = weight_stats(iw, train, 1.002)
    assert st["iw_mean"] == pytest.approx(float(iw.numpy()[on].mean()))
    assert st["iw_truncated"] == pytest.approx(float((iw.numpy()[on] >= np.float32(1.002)).mean()))
    assert np.isnan(weight_stats(iw, torch.zeros_like(train), 2.0)["iw_mean"])


def test_decoupled_objective_equals_ppo_while_the_data_are_the_weights_own(tmp_path: Path) -> None:
    """The first update trains on a rollout its own start weights collected: the decoupled loss is PPO's there
    (same weights after it); the second trains on data one iteration old, where the two losses differ."""
    a = Trainer(_args(tmp_path / "d"))
    b = Trainer(_args(tmp_path / "b", overlap_objective="behaviour"))
    for tr in (a, b):
        tr.start()
        tr.pipeline.step(more=True)
    assert _same_weights(a, b)
    for tr in (a, b):
        tr.pipeline.step(more=True)
    assert not _same_weights(a, b)
    # One epoch of one minibatch: the decoupled ratio is taken against the weights that take the step (KL and the
    # clipped share 0); PPO's against the behaviour's, one update old.
    one = dict(epochs=1, minibatches=1, lr=0.02)  # a large step: the lagged data one update away
    c = Trainer(_args(tmp_path / "c", **one))
    e = Trainer(_args(tmp_path / "e", overlap_objective="behaviour", **one))
    for tr in (c, e):
        tr.start()
        tr.pipeline.step(more=True)
    (_, dec), (_, ppo) = c.pipeline.step(more=True), e.pipeline.step(more=True)
    assert abs(dec["approx_kl"]) < 1e-7 and dec["clip_frac"] == 0.0
    assert ppo["approx_kl"] > 1e-5
    # how far the data are off the update-start policy: a mean weight near 1, some truncated at iw_max; the behaviour
    # loss has no weights
    assert 0.9 < dec["iw_mean"] < 1.1 and 0.0 <= dec["iw_truncated"] <= 1.0 and "iw_mean" not in ppo
    assert {"iw_mean", "iw_truncated"} <= set(c.columns()) and "iw_mean" not in Trainer(_args(
        tmp_path / "p", overlap=False)).columns()  # fmt: skip


@pytest.mark.parametrize(("kw", "needle"), [({"overlap_objective": "ppo"}, "overlap_objective='ppo'"),
                                            ({"iw_max": 0.5}, "iw_max=0.5"), ({"iw_max": True}, "iw_max=True")])
def test_decoupled_options_are_checked(tmp_path: Path, kw: dict[str, object], needle: str) -> None:
    with pytest.raises(ValueError, match=needle.replace("(", r"\(")):
        _args(tmp_path, **kw).check()
