"""experiments.train.selfplay's options for fine-tuning one role of a shipped policy: belief features in the rollout
(``--features``), training one role's decisions only (``--train-role``), the heads only (``--freeze-trunk``) and
seating the league learner where the deal makes it a saboteur (``--learner-seat saboteur``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")

import torch  # after the importorskip: torch comes with the train extra

from agents.base.belief_features import feature_size, features_of_sequence
from experiments.train.selfplay.args import Args
from experiments.train.selfplay.policy import Policy, export_npz
from experiments.train.selfplay.trainer import Trainer, main
from saboteur_env import GameConfig

CFG = GameConfig(num_players=4)


def _init(path: Path, features: str = "bayes", seed: int = 0) -> str:
    torch.manual_seed(seed)
    return str(export_npz(Policy(CFG, 16, True, features=features), CFG, path))


def _args(tmp: Path, **kw: object) -> Args:
    base: dict[str, object] = dict(game="base", players=4, num_envs=8, rollout=12, steps=8 * 12 * 3, epochs=2,
                                   minibatches=2, hidden=16, role_heads=True, out=str(tmp / "run"),
                                   checkpoint_every=1, seed=5, tensorboard=False)  # fmt: skip
    base.update(kw)
    return Args(**base)  # type: ignore[arg-type]


def test_rollout_features_are_what_a_follower_of_each_seat_computes(tmp_path: Path) -> None:
    """Every stored decision's features equal an independent replay of its seat's observations (self-play: every
    seat is the network's)."""
    t = Trainer(_args(tmp_path, features="bayes", init=_init(tmp_path / "p.npz"), rollout=500))
    t.start()
    t.collect()
    roll, e, n = t.roll, t.shards[0].env_obs, CFG.num_players
    assert e + feature_size("bayes", CFG) == roll.obs.shape[2]
    checked = games = 0
    for b in range(t.args.num_envs):
        for s in range(n):
            rows = np.flatnonzero(roll.valid[n:, b] & (roll.seat[n:, b] == s)) + n
            # a seat's decisions split into games after each decision that the game's end closed
            for game in np.split(rows, np.flatnonzero(roll.done[rows, b]) + 1):
                if game.size:
                    want = features_of_sequence(CFG, s, roll.obs[game, b, :e])
                    np.testing.assert_array_equal(roll.obs[game, b, e:], want)
                    checked, games = checked + game.size, games + 1
    assert checked > 1000 and games > t.args.num_envs * n  # some slots started a second game


def test_one_role_and_frozen_trunk_change_only_that_roles_head(tmp_path: Path) -> None:
    init = _init(tmp_path / "p.npz")
    t = Trainer(_args(tmp_path, features="bayes", init=init, train_role="saboteur", freeze_trunk=True, lr=1e-2,
                      league=1.0, league_agents="random", snapshot_every=0, learner_seat="saboteur"))  # fmt: skip
    before = {k: v.clone() for k, v in t.model.state_dict().items()}
    row = t.train(quiet=True)
    after = t.model.state_dict()
    a = t.model.num_actions
    for name in ("fc0.weight", "fc0.bias", "fc1.weight", "fc1.bias"):
        assert torch.equal(before[name], after[name]), name
    assert torch.equal(before["pi_w.weight"][:a], after["pi_w.weight"][:a])  # the gold-digger head
    assert torch.equal(before["pi_b.weight"][:a], after["pi_b.weight"][:a])
    assert torch.equal(before["v.weight"][0], after["v.weight"][0]) and torch.equal(before["v.bias"][0],
                                                                                    after["v.bias"][0])  # fmt: skip
    assert not torch.equal(before["pi_w.weight"][a:], after["pi_w.weight"][a:])  # the saboteur head learned
    assert row["trained"] > 0


def test_train_role_trains_exactly_that_roles_learner_decisions(tmp_path: Path) -> None:
    t = Trainer(_args(tmp_path, train_role="saboteur"))
    t.start()
    t.collect()
    roll = t.roll
    want = int((roll.trainable() & (roll.role == 1)).sum())
    assert 0 < want < int(roll.trainable().sum())
    assert t.update()["trained"] == want


def test_learner_seat_saboteur_seats_the_learner_on_the_most_saboteur_rounds(tmp_path: Path) -> None:
    t = Trainer(_args(tmp_path, num_envs=64, league=1.0, league_agents="random", snapshot_every=0,
                      learner_seat="saboteur"))  # fmt: skip
    t.start()
    n = CFG.num_players
    for _ in range(3):  # the first games and the ones that start during play
        count = (t.env.batch.field("round_roles")[:, :, :n] == 1).sum(axis=1)
        seat = t.seating.learner
        assert (seat >= 0).all()
        has = count.max(axis=1) > 0
        assert has.sum() > 40
        np.testing.assert_array_equal(count[has, seat[has]], count[has].max(axis=1))
        shard = t.shards[0]
        for _ in range(40):
            shard._act(t.roll.row(0), t.model)
            shard.obs, _, term, _, shard.info = t.env.step(t.roll.action[t.roll.row(0)])
            t.roll.open[:] = -1
            if term.any():
                shard.new_games(np.flatnonzero(term))


def test_resume_with_features_deals_fresh_games_and_keeps_the_weights(tmp_path: Path) -> None:
    init = _init(tmp_path / "p.npz")
    first = Trainer(_args(tmp_path, features="bayes", init=init))
    first.train(max_iterations=2, quiet=True)
    saved = {k: v.clone() for k, v in first.model.state_dict().items()}
    resumed = Trainer(_args(tmp_path, features="bayes", init=init, resume=True))
    resumed.start()
    assert resumed.iteration == 2 and resumed.decisions == first.decisions
    for k, v in saved.items():
        assert torch.equal(v, resumed.model.state_dict()[k]), k
    assert not resumed.roll.valid[: CFG.num_players].any() and (resumed.roll.open == -1).all()
    assert resumed.shards[0].fresh.all()
    resumed.train(quiet=True)  # runs on to the budget
    assert resumed.iteration == 3
    # a features run does not resume as a run without them
    with pytest.raises(ValueError, match="features"):
        Trainer(_args(tmp_path, init=_init(tmp_path / "plain.npz", features=""), resume=True)).start()


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        (dict(train_role="digger"), "train_role='digger' is not a role of base; valid: '' \\(all\\), 'miner'"),
        (dict(learner_seat="miner"), "learner_seat='miner' is unknown"),
        (dict(learner_seat="saboteur"), "needs game base and league > 0"),
        (dict(freeze_trunk=True), "give --init PATH"),
        (dict(features="belief"), "features='belief' is unknown"),
        (dict(game="duel", players=2, features="bayes"), "covers the base game only"),
    ],
)
def test_bad_options_are_refused_naming_the_value(tmp_path: Path, kw: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Trainer(_args(tmp_path, **kw))


def test_the_command_line_names_a_bad_role(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--players", "4", "--train-role", "boss", "--out", str(tmp_path)]) == 2
    assert "train_role='boss'" in capsys.readouterr().err
