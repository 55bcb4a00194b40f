"""experiments.train.league and the self-play trainer's league: seating, untrained opponents, snapshots, exact resume,
the paired ladder check, TensorBoard curves, and bad input."""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")

import torch  # after the importorskip: torch comes with the train extra

from experiments.train.league import LEARNER, League, Seating, _play_once, evaluate
from experiments.train.selfplay.args import Args
from experiments.train.selfplay.policy import Policy
from experiments.train.selfplay.trainer import Trainer
from saboteur_env import GameConfig


def _args(tmp: Path, **kw: object) -> Args:
    base: dict[str, object] = dict(game="base", players=4, num_envs=16, rollout=8, steps=16 * 8 * 4, epochs=1,
                                   minibatches=2, hidden=16, out=str(tmp), checkpoint_every=1, seed=5,
                                   tensorboard=False)  # fmt: skip
    base.update(kw)
    return Args(**base)  # type: ignore[arg-type]


def _rows(path: Path) -> list[dict[str, str]]:
    with (path / "progress.csv").open() as fh:
        return list(csv.DictReader(fh))


def test_seating_draws_one_learner_seat_per_league_game_deterministically() -> None:
    config = GameConfig(num_players=5)
    league = League(config, ["random", "greedy"], pool_size=2)
    a, b = (Seating(config, 400, league, 0.5, seed=9) for _ in range(2))
    a.new_games(np.arange(400))
    b.new_games(np.arange(400))
    assert np.array_equal(a.learner, b.learner) and a.opponent == b.opponent
    league_slots = a.learner != LEARNER
    assert 150 < league_slots.sum() < 250  # about half the games
    assert set(a.learner[league_slots].tolist()) == set(range(5))
    assert {a.opponent[i] for i in np.flatnonzero(league_slots)} == {"random", "greedy"}
    assert all(a.opponent[i] is None and a.agents[i] is None for i in np.flatnonzero(~league_slots))
    seats = np.arange(400) % 5
    mine = a.learner_rows(seats)
    assert np.array_equal(mine, ~league_slots | (a.learner == seats))


def test_league_opponents_are_never_trained_and_every_seat_is_the_learner_in_self_play(tmp_path: Path) -> None:
    trainer = Trainer(_args(tmp_path / "l", league=1.0, league_agents="random", snapshot_every=0))
    trainer.start()
    trainer.collect()
    roll = trainer.roll
    steps = slice(trainer.config.num_players, None)
    # every stored decision is the learner's exactly when its seat is the slot's learner seat
    learner_seat = trainer.seating.learner  # games may restart within the rollout: check per recorded seating
    assert (learner_seat != LEARNER).all()
    assert 0 < roll.learner[steps].mean() < 0.5  # one seat of four acts about a quarter of the decisions
    assert not (roll.trainable() & ~roll.learner).any()
    assert (roll.logp[steps][~roll.learner[steps]] == 0).all()  # opponents' entries hold no learner statistics

    plain = Trainer(_args(tmp_path / "s"))
    plain.start()
    plain.collect()
    assert plain.roll.learner.all() and (plain.seating.learner == LEARNER).all()


def test_league_default_off_changes_nothing(tmp_path: Path) -> None:
    """league=0 (the default) with snapshots configured trains exactly like plain self-play."""
    a = Trainer(_args(tmp_path / "a"))
    a.train(max_iterations=2, quiet=True)
    b = Trainer(_args(tmp_path / "b", snapshot_every=1, league_agents="random"))
    b.train(max_iterations=2, quiet=True)
    for p, q in zip(a.model.state_dict().values(), b.model.state_dict().values(), strict=True):
        assert torch.equal(p, q)
    assert b.league.snapshots == []  # no snapshots are kept while no game can draw them


def test_snapshot_league_resumes_exactly(tmp_path: Path) -> None:
    kw = dict(league=0.6, snapshot_every=1, pool_size=2, num_envs=8, rollout=40, steps=8 * 40 * 6)
    straight = Trainer(_args(tmp_path / "a", **kw))
    straight.train(quiet=True)
    assert [s.iteration for s in straight.league.snapshots] == [5, 6]
    first = Trainer(_args(tmp_path / "b", **kw))
    first.train(max_iterations=4, quiet=True)
    resumed = Trainer(_args(tmp_path / "b", resume=True, **kw))
    resumed.train(quiet=True)
    for p, q in zip(straight.model.state_dict().values(), resumed.model.state_dict().values(), strict=True):
        assert torch.equal(p, q)
    assert resumed.seating.counts == straight.seating.counts and resumed.seating.counts.get("snapshot", 0) > 0
    timing = {"wall_s", "decisions_per_s"}
    strip = [{k: v for k, v in r.items() if k not in timing} for r in _rows(tmp_path / "a")]
    assert [{k: v for k, v in r.items() if k not in timing} for r in _rows(tmp_path / "b")] == strip


def test_scripted_league_and_ladder_check_run_end_to_end_with_tensorboard(tmp_path: Path) -> None:
    pytest.importorskip("tensorboard")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    args = _args(tmp_path, league=0.5, league_agents="heuristic", eval_every=2, eval_games=8, steps=16 * 8 * 4,
                 tensorboard=True)  # fmt: skip
    trainer = Trainer(args)
    trainer.train(quiet=True)
    rows = _rows(tmp_path)
    checked = [r for r in rows if r["eval_diff"] != "nan"]
    assert [int(r["iteration"]) for r in checked] == [2, 4]
    for r in checked:
        assert float(r["eval_lo"]) <= float(r["eval_diff"]) <= float(r["eval_hi"])
    assert float(rows[-1]["league_games"]) > 0
    acc = EventAccumulator(str(tmp_path / "tb"))
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert {"entropy", "approx_kl", "win_miner", "eval_diff", "league_games"} <= tags
    assert [e.step for e in acc.Scalars("entropy")] == [int(r["decisions"]) for r in rows]


def test_ladder_check_is_paired_and_reproducible() -> None:
    config = GameConfig(num_players=4)
    model = Policy(config, hidden=8)
    roles = ("miner", "saboteur")

    def role_of(obs: np.ndarray) -> np.ndarray:
        return np.zeros(len(obs), dtype=np.int64)

    one = evaluate(config, model, "random", 8, seed=3, role_names=roles, role_of=role_of)
    two = evaluate(config, model, "random", 8, seed=3, role_names=roles, role_of=role_of)
    assert one == pytest.approx(two, nan_ok=True)
    # the baseline half: the same deals and seeds without a learner give the same scores twice

    def never(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        raise AssertionError("no learner seat")

    base1, e1, s1 = _play_once(config, 6, 11, None, "random", never, role_of)
    base2, e2, s2 = _play_once(config, 6, 11, None, "random", never, role_of)
    assert np.array_equal(base1, base2) and np.array_equal(e1, e2) and np.array_equal(s1, s2)
    # everything the watched seat earned is booked to some role (here all to role 0)
    assert np.array_equal(e1[:, 0], base1[np.arange(6), np.arange(6) % 4]) and (e1[:, 1] == 0).all()

    # among diggers that reach the gold (random play never does at 4 players: the deals alone decide), a "learner"
    # that plays the first legal move (mostly discards) changes the scores
    calls = []

    def first(obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        calls.append(len(obs))
        return mask.argmax(axis=1)

    seat = np.arange(6) % 4
    greedy, _, _ = _play_once(config, 6, 11, None, "greedy", never, role_of)
    moved, _, _ = _play_once(config, 6, 11, seat, "greedy", first, role_of)
    assert sum(calls) > 0 and not np.array_equal(moved, greedy)


def test_bad_league_input_is_refused_clearly(tmp_path: Path) -> None:
    config = GameConfig(num_players=4)
    with pytest.raises(ValueError, match="oracle"):
        League(config, ["role_oracle"], 2)
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        League(config, ["nobody"], 2)
    with pytest.raises(ValueError, match="pool_size"):
        League(config, [], 100)
    with pytest.raises(ValueError, match=r"league=1.5 is out of range"):
        Trainer(_args(tmp_path, league=1.5))
    with pytest.raises(ValueError, match="needs opponents"):
        Trainer(_args(tmp_path, league=0.5, snapshot_every=0))
    with pytest.raises(ValueError, match="unknown agent"):
        Trainer(_args(tmp_path, eval_opponent="nobody"))
    with pytest.raises(ValueError, match="reads hidden state"):
        evaluate(config, Policy(config, hidden=8), "gold_oracle", 4, 0, ("miner", "saboteur"),
                 lambda o: np.zeros(len(o), dtype=np.int64))  # fmt: skip
    with pytest.raises(ValueError, match="eval_games"):
        Trainer(_args(tmp_path, eval_games=0))
