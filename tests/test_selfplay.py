"""experiments.train.selfplay (batched self-play PPO) and agents.learned (its numpy policies): turn accounting, GAE,
training end to end, exact resume, export round trip, the learned agent in real games, errors."""

from __future__ import annotations

import csv
import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")

import torch  # after the importorskip: torch comes with the train extra

from agents import make_agent
from agents.learned import LearnedAgent, NumpyPolicy, PolicyFileError
from experiments.train.selfplay.args import Args
from experiments.train.selfplay.policy import Policy, export_npz, masked_log_probs
from experiments.train.selfplay.rollout import Rollout
from experiments.train.selfplay.trainer import Trainer, main
from saboteur_env import GameConfig, raw_env
from saboteur_env.vector import LegalSampler, VectorEnv


def _fill(roll: Rollout, row: int, seats: list[int], values: list[float]) -> None:
    roll.value[row] = values
    roll.action[row] = [10 * row + b for b in range(len(seats))]
    roll.logp[row] = [-0.1 * row] * len(seats)
    roll.decide(row, np.array(seats, dtype=np.int64))


def _two_slot_rollout() -> Rollout:
    """Slot 0: seats 0,1,2,0,2 then the game ends (seat 1 never acts again); a new game starts with seat 0.
    Slot 1: seats 1,2,0,1,2,0 in one game; seat 0 earns -1 before its first decision (credited to no one)."""
    roll = Rollout(steps=6, num_envs=2, num_players=3, obs_size=1, num_actions=2)
    seats = [(0, 1), (1, 2), (2, 0), (0, 1), (2, 2), (0, 0)]
    rewards = [
        ([0, 0, 0], [0, 0, 0]),
        ([0, 0, 0], [-1, 0, 4]),
        ([1, 2, 3], [0, 0, 0]),
        ([0, 0, 0], [0, 0, 0]),
        ([5, 0, 7], [0, 0, 0]),
        ([0, 0, 0], [0, 6, 0]),
    ]
    ended = [False, False, False, False, True, False]
    for t in range(6):
        _fill(roll, roll.row(t), list(seats[t]), [float(t + 1), float(t + 11)])
        roll.earn(np.array(rewards[t], dtype=np.float32), np.array([ended[t], False]))
    return roll


def test_turn_accounting_credits_each_seat_what_it_earned_until_its_next_decision() -> None:
    roll = _two_slot_rollout()
    r = roll.row
    # slot 0: (row, reward, done) of each closed transition; row 5 (seat 0's first decision of game 2) is open
    expected0 = {r(0): (1, False), r(1): (2, True), r(2): (3, False), r(3): (5, True), r(4): (7, True)}
    for row, (reward, done) in expected0.items():
        assert roll.complete[row, 0] and roll.reward[row, 0] == reward and roll.done[row, 0] == done, row
    assert roll.valid[r(5), 0] and not roll.complete[r(5), 0]
    # slot 1: seat 2's transition of step 1 earned the 4 of that very step; the others earned nothing yet
    assert roll.complete[r(1), 1] and roll.reward[r(1), 1] == 4 and not roll.done[r(1), 1]
    assert roll.complete[r(0), 1] and roll.reward[r(0), 1] == 0  # seat 1: step 0 -> step 3
    assert roll.complete[r(2), 1] and roll.reward[r(2), 1] == 0  # seat 0's -1 came before it had decided
    assert [bool(roll.complete[r(t), 1]) for t in range(6)] == [True, True, True, False, False, False]
    assert roll.acc[1].tolist() == [0, 6, 0]  # seat 1 earned 6 after its open decision of step 3


def test_gae_runs_along_each_seat_stream() -> None:
    roll = _two_slot_rollout()
    r = roll.row
    adv, ret = roll.advantages(gamma=1.0, lam=1.0)
    v = roll.value
    assert adv[r(3), 0] == pytest.approx(5 - v[r(3), 0])  # seat 0, last transition of the game
    assert adv[r(0), 0] == pytest.approx(1 + 5 - v[r(0), 0])  # seat 0: 1 then 5, undiscounted
    assert adv[r(2), 0] == pytest.approx(3 + 7 - v[r(2), 0])  # seat 2: 3 then 7
    assert adv[r(1), 0] == pytest.approx(2 - v[r(1), 0])  # seat 1: closed by the game's end
    assert np.isnan(adv[r(5), 0])  # open: not trained this rollout
    # slot 1, seat 2: step 1 -> step 4 (open) bootstraps from the open decision's value
    assert adv[r(1), 1] == pytest.approx(4 + v[r(4), 1] - v[r(1), 1])
    assert ret[r(0), 0] == pytest.approx(adv[r(0), 0] + v[r(0), 0])
    g, lam = 0.5, 0.5
    adv, _ = roll.advantages(gamma=g, lam=lam)
    d3 = 5 - v[r(3), 0]
    assert adv[r(0), 0] == pytest.approx(1 + g * v[r(3), 0] - v[r(0), 0] + g * lam * d3)
    assert not roll.trainable()[r(5), 0] and roll.trainable()[r(0), 0]
    assert roll.trainable().sum() == 5 + 3


def test_open_decisions_carry_into_the_next_rollout_with_their_rewards() -> None:
    roll = _two_slot_rollout()
    action, logp = roll.action[roll.row(3), 1], roll.logp[roll.row(3), 1]  # slot 1, seat 1, open
    roll.carry()
    assert roll.valid[:3, 1].all() and roll.valid[:3, 0].tolist() == [True, False, False]
    assert not roll.valid[3:].any() and not roll.complete.any()
    assert roll.action[1, 1] == action and roll.logp[1, 1] == logp and roll.open[1].tolist() == [0, 1, 2]
    _fill(roll, roll.row(0), [1, 1], [0.0, 0.0])  # seat 1 acts again in both slots
    assert roll.complete[1, 1] and roll.reward[1, 1] == 6  # earned across the rollout boundary
    assert not roll.complete[1, 0] and roll.valid[roll.row(0), 0]  # slot 0: seat 1's first decision of game 2


def _args(tmp: Path, **kw: object) -> Args:
    base: dict[str, object] = dict(game="base", players=4, num_envs=16, rollout=8, steps=16 * 8 * 4, epochs=2,
                                   minibatches=2, hidden=16, out=str(tmp), checkpoint_every=1, seed=3)  # fmt: skip
    base.update(kw)
    return Args(**base)  # type: ignore[arg-type]


def _rows(path: Path) -> list[dict[str, str]]:
    with (path / "progress.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_training_runs_end_to_end_and_resumes_exactly(tmp_path: Path) -> None:
    straight = Trainer(_args(tmp_path / "a"))
    last = straight.train(quiet=True)
    rows = _rows(tmp_path / "a")
    assert len(rows) == 4 and straight.decisions == 512
    # --bench's rates: end to end, and after the first iteration (3 iterations of 128 decisions in the rest)
    assert last["first_decisions"] == 128 and 0 < last["first_s"] < last["elapsed_s"]
    assert last["rate_after_first"] == pytest.approx(384 / (last["elapsed_s"] - last["first_s"]))
    assert all(np.isfinite(float(r[c])) for r in rows for c in ("entropy", "approx_kl", "clip_frac", "v_loss"))
    assert "win_miner" in rows[0] and "win_saboteur" in rows[0]
    assert (tmp_path / "a" / "checkpoint.pt").exists() and (tmp_path / "a" / "policy.npz").exists()

    first = Trainer(_args(tmp_path / "b"))
    first.train(max_iterations=2, quiet=True)
    resumed = Trainer(_args(tmp_path / "b", resume=True))
    resumed.train(quiet=True)
    assert resumed.iteration == 4 and resumed.decisions == 512
    for (name, p), q in zip(straight.model.state_dict().items(), resumed.model.state_dict().values(), strict=True):
        assert torch.equal(p, q), name
    again = _rows(tmp_path / "b")
    timing = {"wall_s", "decisions_per_s"}
    assert [{k: v for k, v in r.items() if k not in timing} for r in again] == [
        {k: v for k, v in r.items() if k not in timing} for r in rows
    ]
    # a changed setting is refused, naming it
    with pytest.raises(ValueError, match="hidden"):
        Trainer(_args(tmp_path / "b", resume=True, hidden=8)).train(quiet=True)


def test_learning_curves_report_rounds_by_role(tmp_path: Path) -> None:
    trainer = Trainer(_args(tmp_path, num_envs=8, rollout=100, steps=8 * 100 * 3, epochs=1, hidden=8))
    trainer.train(quiet=True)
    rows = _rows(tmp_path)
    assert trainer.games > 0 and any(np.isfinite(float(r["return_mean"])) for r in rows)
    for role in ("miner", "saboteur"):  # both roles' rounds were counted, as rates
        wins = [float(r[f"win_{role}"]) for r in rows if r[f"win_{role}"] != "nan"]
        assert wins and all(0 <= x <= 1 for x in wins), role
    assert sum(float(r["games"]) > 0 for r in rows) >= 1


@pytest.mark.parametrize(
    ("game", "players", "role_heads", "embed"),
    [("base", 5, True, 0), ("sab2", 4, True, 0), ("duel", 2, False, 0), ("base", 4, True, 6), ("duel", 2, False, 5)],
)
def test_npz_export_matches_the_torch_policy(tmp_path: Path, game: str, players: int, role_heads: bool,
                                             embed: int) -> None:  # fmt: skip
    config = GameConfig(game=game, num_players=players)
    torch.manual_seed(0)
    model = Policy(config, hidden=24, role_heads=role_heads, embed=embed)
    with torch.no_grad():  # away from the tiny policy init, so that logits differ in earnest
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    env = VectorEnv(32, config=config)
    obs, info = env.reset(seed=5)
    sampler = LegalSampler(2)
    for _ in range(25):
        obs, _, _, _, info = env.step(env.sample_actions(sampler))
    path = export_npz(model, config, tmp_path / "p.npz")
    policy = NumpyPolicy(path)
    policy.check_config(config)
    assert policy.embed == embed and policy.w["pi_w0"].shape == (embed or 24, policy.num_actions)
    logits, value = model(torch.from_numpy(obs))
    np_logits, np_value = policy.forward(obs)
    np.testing.assert_allclose(np_logits, logits.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np_value, value.detach().numpy(), rtol=1e-4, atol=1e-4)
    if role_heads:
        assert model.num_heads > 1 and len(set(model.roles(torch.from_numpy(obs)).tolist())) > 1
    # the training path (legal actions only) is the masked softmax of the full logits
    mask = torch.from_numpy(info["action_mask"])
    rows, cols = mask.nonzero(as_tuple=True)
    flat, _ = model.legal(torch.from_numpy(obs), rows, cols)
    full = masked_log_probs(logits, mask)
    np.testing.assert_allclose(flat.detach().numpy(), full[rows, cols].detach().numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("game", "players", "role_heads"), [("base", 5, True), ("duel", 2, False)])
def test_blocks_of_rows_give_the_same_losses_and_gradients_as_one_tensor(game: str, players: int,
                                                                          role_heads: bool) -> None:  # fmt: skip
    """The PPO update feeds a minibatch as views of its rollout rows; the result is that of the stacked rows."""
    from saboteur_env.vector import legal_indices

    config = GameConfig(game=game, num_players=players)
    torch.manual_seed(1)
    model = Policy(config, hidden=16, role_heads=role_heads)
    env = VectorEnv(8, config=config)
    obs, info = env.reset(seed=9)
    sampler = LegalSampler(3)
    blocks, masks = [], []
    for _ in range(3):
        obs, _, _, _, info = env.step(env.sample_actions(sampler))
        blocks.append(torch.from_numpy(obs.copy()))
        masks.append(info["action_mask"].copy())
    rows, cols = map(torch.from_numpy, legal_indices(np.concatenate(masks)))
    grads = []
    for x in (blocks, torch.cat(blocks)):
        model.zero_grad()
        logp, value = model.legal(x, rows, cols)
        (logp.sum() + value.sum()).backward()
        grads.append([p.grad.clone() for p in model.parameters() if p.grad is not None])
        if isinstance(x, list):
            first = (logp.detach(), value.detach())
    np.testing.assert_allclose(first[0].numpy(), logp.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(first[1].numpy(), value.detach().numpy(), rtol=1e-5, atol=1e-5)
    assert len(grads[0]) == len(grads[1]) > 0
    for a, b in zip(*grads, strict=True):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


def test_learned_agent_plays_whole_games_legally(tmp_path: Path) -> None:
    config = raw_env(num_players=4).config
    torch.manual_seed(1)
    path = export_npz(Policy(config, hidden=16, role_heads=True), config, tmp_path / "p4.npz")
    env = raw_env(num_players=4)
    agents = [make_agent(f"learned:{path}", env.config) for _ in range(4)]
    assert all(isinstance(a, LearnedAgent) for a in agents)
    env.reset(seed=11)
    for i, a in enumerate(agents):
        a.reset(i, 4, 100 + i)
    moves = 0
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        a = agents[env.possible_agents.index(name)].act(obs["observation"], obs["action_mask"])
        assert obs["action_mask"][a] == 1
        env.step(a)
        moves += 1
    assert moves > 50 and not env.agents  # the whole game (three rounds) was played
    greedy = LearnedAgent(path, config, greedy=True)
    env.reset(seed=12)
    obs, *_ = env.last()
    logits, _ = greedy.policy.forward(obs["observation"])
    legal = np.flatnonzero(obs["action_mask"])
    assert greedy.act(obs["observation"], obs["action_mask"]) == legal[np.argmax(logits[0, legal])]


def test_bad_input_is_refused_clearly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config5 = GameConfig(num_players=5)
    path = export_npz(Policy(config5, hidden=8), config5, tmp_path / "p5.npz")
    with pytest.raises(PolicyFileError, match=r"num_players=5 \(this game: 4\)"):
        make_agent(f"learned:{path}", GameConfig(num_players=4))
    with pytest.raises(PolicyFileError, match="game='base'"):
        make_agent(f"learned:{path}", GameConfig(game="sab2", num_players=5))
    with pytest.raises(PolicyFileError, match="does not exist"):
        make_agent(f"learned:{tmp_path / 'missing.npz'}", config5)
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip")
    with pytest.raises(PolicyFileError, match=r"not a \.npz policy"):
        NumpyPolicy(junk)
    other = tmp_path / "other.npz"
    np.savez(other, meta=np.array('{"format": "something-else"}'))
    with pytest.raises(PolicyFileError, match="format 'something-else'"):
        NumpyPolicy(other)
    agent = LearnedAgent(path, config5)
    with pytest.raises(ValueError, match="shape"):
        agent.act(np.zeros(10, dtype=np.float32), np.ones(3, dtype=np.int8))
    with pytest.raises(ValueError, match="at least one legal"):
        agent.act(np.zeros(agent.policy.obs_size, dtype=np.float32), np.zeros(agent.policy.num_actions, np.int8))
    with pytest.raises(ValueError, match="entries"):
        agent.policy.forward(np.zeros((2, 7), dtype=np.float32))
    for kw, word in ((dict(num_envs=0), "num_envs"), (dict(lr=2.0), "lr"), (dict(gamma=0.0), "gamma"),
                     (dict(threads=100), "threads"), (dict(seed=-1), "seed")):  # fmt: skip
        with pytest.raises(ValueError, match=word):
            Trainer(_args(tmp_path / "x", **kw))
    with pytest.raises(ValueError, match="num_players"):
        Trainer(_args(tmp_path / "x", players=11))
    assert main(["--game", "nope", "--out", str(tmp_path / "y")]) == 2
    assert "nope" in capsys.readouterr().err
    bad = tmp_path / "z"
    bad.mkdir()
    torch.save({"format": "other"}, bad / "checkpoint.pt")
    with pytest.raises(ValueError, match="not a self-play checkpoint"):
        Trainer(_args(bad, resume=True)).train(quiet=True)


def test_resume_refuses_a_checkpoint_of_another_state_layout(tmp_path: Path) -> None:
    """A checkpoint whose game-state arenas do not fit this version's layout (e.g. written before the core's state
    grew) is refused with an error naming the field, not a broadcasting traceback or a silently shifted state."""
    Trainer(_args(tmp_path)).train(max_iterations=1, quiet=True)
    path = tmp_path / "checkpoint.pt"
    state = torch.load(path, weights_only=True)
    state["env"]["arena_i16"] = state["env"]["arena_i16"][:-5]
    torch.save(state, path)
    with pytest.raises(ValueError, match=r"arena_i16 .* another saboteur-env version"):
        Trainer(_args(tmp_path, resume=True)).train(quiet=True)


# ---- interruptions and bad checkpoints (issue 34) --------------------------------------------------------------------
def _iterations(path: Path) -> list[int]:
    return [int(float(r["iteration"])) for r in _rows(path)]


def test_resume_drops_the_progress_rows_a_killed_run_wrote_after_its_checkpoint(tmp_path: Path) -> None:
    straight = tmp_path / "straight"
    Trainer(_args(straight, checkpoint_every=2, tensorboard=False)).train(quiet=True)
    out = tmp_path / "killed"
    Trainer(_args(out, checkpoint_every=2, tensorboard=False)).train(max_iterations=2, quiet=True)
    at_two = (out / "checkpoint.pt").read_bytes()
    Trainer(_args(out, checkpoint_every=2, resume=True, tensorboard=False)).train(max_iterations=3, quiet=True)
    (out / "checkpoint.pt").write_bytes(at_two)  # as if killed after writing row 3, before its next checkpoint
    assert _iterations(out) == [1, 2, 3]
    Trainer(_args(out, checkpoint_every=2, resume=True, tensorboard=False)).train(quiet=True)
    assert _iterations(out) == [1, 2, 3, 4]  # the old code wrote iteration 3 twice
    timing = {"wall_s", "decisions_per_s"}
    assert [{k: v for k, v in r.items() if k not in timing} for r in _rows(out)] == [
        {k: v for k, v in r.items() if k not in timing} for r in _rows(straight)
    ]


def _resume_argv(out: Path, **kw: object) -> list[str]:
    options = {"game": "base", "players": 4, "num-envs": 16, "rollout": 8, "steps": 512, "epochs": 2,
               "minibatches": 2, "hidden": 16, "seed": 3, "out": out} | kw  # fmt: skip
    return [x for k, v in options.items() for x in (f"--{k}", str(v))] + ["--resume", "--no-tensorboard"]


def _saved(obj: object) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def test_a_bad_checkpoint_is_one_clear_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    Trainer(_args(tmp_path, tensorboard=False)).train(max_iterations=1, quiet=True)
    path = tmp_path / "checkpoint.pt"
    good = path.read_bytes()
    state = torch.load(path, weights_only=True)
    del state["model"]
    torch.save(state, path)
    cases = [
        (None, r"checkpoint .*checkpoint\.pt does not fit this run \(KeyError: 'model'\)"),
        (good[: len(good) // 2], r"checkpoint .*checkpoint\.pt is unreadable \(truncated or not a checkpoint"),
        (_saved([1, 2]), r"is not a self-play checkpoint"),  # a valid payload, but no checkpoint
        (good, r"was trained with other settings .*'hidden': \(16, 8\)"),
    ]
    for data, message in cases:
        if data is not None:
            path.write_bytes(data)
        argv = _resume_argv(tmp_path, hidden=8) if data is good else _resume_argv(tmp_path)
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
        assert err.startswith("error: ") and re.search(message, err), err
    path.unlink()
    path.mkdir()
    assert main(_resume_argv(tmp_path)) == 2
    assert "is a directory" in capsys.readouterr().err


def test_policy_npz_is_replaced_atomically(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = GameConfig(num_players=4)
    path = export_npz(Policy(config, hidden=8), config, tmp_path / "policy.npz")
    before = path.read_bytes()

    def killed(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt  # a stop while the new file is being written

    monkeypatch.setattr(np, "savez_compressed", killed)
    with pytest.raises(KeyboardInterrupt):
        export_npz(Policy(config, hidden=8), config, path)
    assert path.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["policy.npz"]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_checkpoints_and_exports_then_resume_continues(tmp_path: Path, sig: signal.Signals) -> None:
    """SIGTERM (``timeout``) or SIGINT (Ctrl-C) during training: the run finishes its iteration, writes a resumable
    checkpoint and a playable policy.npz, exits 128 + signum; ``--resume`` continues without a duplicated row."""
    out = tmp_path / "run"
    argv = _resume_argv(out, steps=10**9, **{"checkpoint-every": 1000, "log-every": 0})
    argv.remove("--resume")
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.Popen([sys.executable, "-m", "experiments.train.selfplay", *argv], cwd=root, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 240  # a bound on start-up (numba, torch), not a measurement
        while not ((out / "progress.csv").exists() and len(_rows(out)) >= 2):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the session this test started
            proc.wait()
    assert proc.returncode == 128 + sig, err
    assert "Traceback" not in err and "--resume continues" in err
    done = _iterations(out)
    state = torch.load(out / "checkpoint.pt", weights_only=True)
    assert state["counters"]["iteration"] == done[-1] and done == list(range(1, done[-1] + 1))
    agent = make_agent(f"learned:{out / 'policy.npz'}", GameConfig(num_players=4))
    assert agent.policy.meta["decisions"] == state["counters"]["decisions"]
    steps = state["counters"]["decisions"] + 2 * 16 * 8
    assert main(_resume_argv(out, steps=steps)) == 0
    assert _iterations(out) == list(range(1, done[-1] + 3))


def test_curve__tables_of_runs_side_by_side(tmp_path) -> None:
    from experiments.train.selfplay.curve import main, tables

    cols = "iteration,decisions,return_mean,win_miner,win_saboteur,eval_diff,eval_lo,eval_hi"
    a = [cols, "1,100000,1.0,0.1,0.9,,,", "2,200000,3.0,0.3,0.7,-1.5,-2.0,-1.0"]
    b = [cols, "1,100000,2.0,0.2,0.8,-0.5,-1.0,0.0", "2,200000,4.0,0.4,0.6,+0.5,0.0,1.0"]
    for name, lines in (("a", a), ("b", b)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "progress.csv").write_text("\n".join(lines) + "\n")
    text = tables({"A": [dict(zip(cols.split(","), ln.split(","), strict=True)) for ln in a[1:]],
                   "B": [dict(zip(cols.split(","), ln.split(","), strict=True)) for ln in b[1:]]}, 150000)  # fmt: skip
    lines = text.splitlines()
    assert lines[0] == "| decisions | 0.10M | 0.20M | mean of the checks |"
    assert lines[2] == "| A | - | -1.50 [-2.00, -1.00] | -1.50 |"
    assert lines[3] == "| B | -0.50 [-1.00, +0.00] | +0.50 [+0.00, +1.00] | +0.00 |"
    assert "| 0.00-0.15M | 1.00 | 0.100 / 0.900 | 2.00 | 0.200 / 0.800 |" in lines
    assert "| 0.15-0.30M | 3.00 | 0.300 / 0.700 | 4.00 | 0.400 / 0.600 |" in lines
    assert main([str(tmp_path / "a" / "progress.csv"), "--window", "0"]) == 2
    (tmp_path / "x.csv").write_text("foo,bar\n1,2\n")
    assert main([str(tmp_path / "x.csv")]) == 2
