"""Belief features of learned policies (agents.base.belief_features): what they hold, that the learned agent and the
imitation fit compute the same numbers, and that files with them are checked and evaluated like any other."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch", reason="needs the train extra (pip install -e '.[train]')")

import torch  # after the importorskip: torch comes with the train extra

from agents import make_agent
from agents.base.belief_features import BeliefFeatures, feature_size, features_of_sequence
from agents.learned import LearnedAgent, NumpyPolicy, PolicyFileError, PolicyMismatchError
from experiments.train.imitate import Options, collect, main, run
from experiments.train.imitate_data import with_features
from experiments.train.selfplay.policy import Policy, export_npz, load_npz
from saboteur_env import ActionType, GameConfig, PlayerView, action_layout, observation_layout
from saboteur_env.base.cards import SABOTEURS_BY_PLAYERS
from saboteur_env.vector import VectorEnv

CFG = GameConfig(num_players=4)


def _features_policy(path: Path, config: GameConfig = CFG, seed: int = 0) -> Path:
    torch.manual_seed(seed)
    return export_npz(Policy(config, 8, True, features="bayes"), config, path)


def test_sizes_and_bad_names() -> None:
    assert [feature_size("bayes", GameConfig(num_players=n)) for n in (3, 4, 10)] == [12, 14, 26]
    assert feature_size("", GameConfig(game="duel")) == 0
    with pytest.raises(ValueError, match="features='belief' is unknown; valid: '' \\(none\\), 'bayes'"):
        feature_size("belief", CFG)
    with pytest.raises(ValueError, match="base game only, not game='sab2'"):
        feature_size("bayes", GameConfig(game="sab2"))


def test_a_follower_needs_a_feature_set() -> None:
    with pytest.raises(ValueError, match="needs a feature set; valid: 'bayes'"):
        BeliefFeatures(CFG, "")


def test_first_decision_features_are_the_priors() -> None:
    """Before any event: own role known (offset 0), others at the deck's rate among the unknown roles; the public
    observer at the prior for everyone; the gold uniform; the distances those of the empty board."""
    for n in (4, 7, 10):
        cfg = GameConfig(num_players=n)
        env = VectorEnv(1, config=cfg)
        obs, info = env.reset(seed=n)
        seat = int(info["seat"][0])
        view = PlayerView.from_observation(obs[0], cfg)
        f = features_of_sequence(cfg, seat, obs[:1])[0]
        sab = int(view.role == 1)
        s = SABOTEURS_BY_PLAYERS[n]
        # n seats + 1 left-over card; s saboteurs in the deck (one may be the left-over card)
        others = (s - sab) / n
        np.testing.assert_allclose(f[:n], [sab] + [others] * (n - 1), atol=1e-6)
        np.testing.assert_allclose(f[n : 2 * n], s / (n + 1), atol=1e-6)
        np.testing.assert_allclose(f[2 * n : 2 * n + 3], 1 / 3, atol=1e-6)
        assert np.all((f[2 * n + 3 :] > 0) & (f[2 * n + 3 :] <= 1))


def test_a_break_raises_the_breakers_public_suspicion() -> None:
    """Offsets are seat-relative: after another seat breaks a seat's tool, the public P(saboteur) of the breaker
    (at its offset from the observer) moves, and the observer's own row stays its known role."""
    cfg = CFG
    env = VectorEnv(1, config=cfg)
    obs, info = env.reset(seed=3)
    lay = action_layout(cfg)
    feats = [BeliefFeatures(cfg) for _ in range(4)]
    for s, f in enumerate(feats):
        f.reset(s)
    moved = False
    for _ in range(200):
        seat = int(info["seat"][0])
        view = PlayerView.from_observation(obs[0], cfg)
        before = feats[seat].update(view)
        legal = np.flatnonzero(info["action_mask"][0])
        breaks = [a for a in legal if lay.type_arr[a] == ActionType.BREAK and lay.target_arr[a] != 0]
        a = int(breaks[0]) if breaks else int(legal[-1])
        obs, _, term, _, info = env.step(np.array([a]))
        if breaks and not term[0]:
            watcher = int(info["seat"][0])
            after = feats[watcher].update(PlayerView.from_observation(obs[0], cfg))
            offset = (seat - watcher) % 4
            assert after[4 + offset] > 0.3  # prior 1/5; a break of a seat not yet suspected raises it
            assert after[0] in (0.0, 1.0)
            moved = True
            break
        assert before[0] in (0.0, 1.0)
    assert moved


def _record_online_features(monkeypatch: pytest.MonkeyPatch) -> dict[tuple[int, bytes], np.ndarray]:
    """From now on, every learned agent's features by (seat, observation bytes), as it computed them in play."""
    online: dict[tuple[int, bytes], np.ndarray] = {}
    real = LearnedAgent.network_input

    def record(self: LearnedAgent, observation: np.ndarray) -> np.ndarray:
        x = real(self, observation)
        assert self.beliefs is not None
        online[(self.beliefs.seat, np.asarray(observation, np.float32).tobytes())] = x[observation.size :]
        return x

    monkeypatch.setattr(LearnedAgent, "network_input", record)
    return online


def test_the_fit_computes_what_the_agent_computes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A student with features plays every teacher seat (online features); with_features replays the recorded
    decisions per game and seat (offline): the same numbers for every row, with one worker or two."""
    student = _features_policy(tmp_path / "s.npz")
    online = _record_online_features(monkeypatch)
    opt = Options(players=4, teacher="heuristic", teacher_share=1.0, decisions=300, num_envs=3, workers=1,
                  student=str(student), student_share=1.0)  # fmt: skip
    data = collect(opt, 0, opt.decisions)
    one, two = with_features(data, CFG, "bayes", 1), with_features(data, CFG, "bayes", 2)
    assert one.feat is not None and two.feat is not None
    np.testing.assert_array_equal(one.feat, two.feat)
    dense = data.dense(np.arange(len(data)))
    for i in range(len(data)):
        np.testing.assert_array_equal(one.feat[i], online[(int(data.seat[i]), dense[i].tobytes())])
    assert np.unique(one.feat[:, :4], axis=0).shape[0] > 10  # the beliefs move during games
    np.testing.assert_array_equal(one.dense(np.arange(3))[:, data.obs_size :], one.feat[:3])


def test_joined_workers_and_extra_data_replay_each_game_and_seat_on_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Mixed seats (teacher, student, partners), two workers' data joined and a second collection added as extra
    data: every row's offline features are the student's online ones (game ids stay distinct after joining)."""
    from experiments.train.imitate_data import concat

    student = _features_policy(tmp_path / "s.npz", seed=1)
    online = _record_online_features(monkeypatch)
    opt = Options(players=4, teacher="heuristic", partners="random", teacher_share=0.6, decisions=150, num_envs=3,
                  workers=1, student=str(student), student_share=0.6)  # fmt: skip
    parts = [collect(opt, w, opt.decisions) for w in (0, 1)] + [collect(replace(opt, seed=5), 0, opt.decisions)]
    data = with_features(concat(parts), CFG, "bayes", 2)
    assert data.feat is not None
    dense = data.dense(np.arange(len(data)))[:, : data.obs_size]
    hits = [i for i in range(len(data)) if (int(data.seat[i]), dense[i].tobytes()) in online]
    assert len(hits) > 50  # the student's rows (the teacher's own rows have no online features)
    for i in hits:
        np.testing.assert_array_equal(data.feat[i], online[(int(data.seat[i]), dense[i].tobytes())])
    pieces = [with_features(p, CFG, "bayes", 1).feat for p in parts]
    np.testing.assert_array_equal(data.feat, np.concatenate(pieces))  # each part is replayed on its own games


def test_a_role_dispatching_seat_follows_every_decision(tmp_path: Path) -> None:
    """In a tournament a seat is a RoleDispatch of two agents (one per role); with a features file the idle one
    keeps following, so both hold the features of a single follower of every decision, across role changes."""
    from agents.agent import RoleDispatch

    name = f"learned:{_features_policy(tmp_path / 'p.npz')}"
    cfg, seat = GameConfig(num_players=4, rounds=3), 2
    for seed in range(40):
        env = VectorEnv(1, config=cfg)
        obs, info = env.reset(seed=seed)
        pair = RoleDispatch(cfg, make_agent(name, cfg), make_agent(name, cfg))
        pair.reset(seat, 4, 0)
        single = BeliefFeatures(cfg)
        single.reset(seat)
        roles: set[int] = set()
        while True:
            s = int(info["seat"][0])
            if s == seat:
                want = single.update(PlayerView.from_observation(obs[0], cfg))
                a = pair.act(obs[0], info["action_mask"][0])
                for half in (pair.miner, pair.saboteur):
                    assert half.beliefs is not None and half.beliefs.last is not None
                    np.testing.assert_array_equal(half.beliefs.last, want)
                roles.add(int(obs[0][observation_layout(cfg).slices["role"]].argmax()))
            else:
                a = int(np.flatnonzero(info["action_mask"][0])[-1])
            obs, _, term, _, info = env.step(np.array([a]))
            if term[0]:
                break
        if roles == {0, 1}:
            return
    raise AssertionError("no deal gave the seat both roles")


def test_imitation_with_features_exports_a_file_that_plays(tmp_path: Path) -> None:
    meta = run(Options(players=4, teacher="heuristic", partners="random", decisions=200, num_envs=4, workers=1,
                       epochs=1, features="bayes", out=str(tmp_path / "f")), quiet=True)  # fmt: skip
    assert meta["options"]["features"] == "bayes" and meta["features_s"] >= 0
    pol = NumpyPolicy(tmp_path / "f" / "policy.npz")
    assert pol.features == "bayes" and pol.obs_size == pol.w["w0"].shape[0] == 2564
    agent = make_agent(f"learned:{tmp_path / 'f' / 'policy.npz'}", CFG)
    env = VectorEnv(1, config=CFG)
    obs, info = env.reset(seed=0)
    agent.reset(int(info["seat"][0]), 4, 0)
    a = agent.act(obs[0], info["action_mask"][0])
    assert info["action_mask"][0][a]


def test_files_with_features_are_checked(tmp_path: Path) -> None:
    path = _features_policy(tmp_path / "p.npz")
    NumpyPolicy(path).check_config(CFG)
    with pytest.raises(PolicyMismatchError, match="num_players=4"):
        NumpyPolicy(path).check_config(GameConfig(num_players=5))
    z = dict(np.load(path))
    import json

    for bad, message in (("belief", "features='belief' is unknown"), (3, "features=3 is not a string")):
        meta = json.loads(str(z["meta"]))
        meta["features"] = bad
        np.savez(tmp_path / "bad.npz", **(z | {"meta": np.array(json.dumps(meta))}))
        with pytest.raises(PolicyFileError, match=message):
            NumpyPolicy(tmp_path / "bad.npz").check_config(CFG)
    plain = Policy(CFG, 8, True)
    with pytest.raises(ValueError, match="does not fit this network"):  # selfplay --init has no features
        load_npz(plain, path, CFG)
    same = Policy(CFG, 8, True, features="bayes")
    load_npz(same, path, CFG)
    x = torch.rand(2, same.obs_size)
    np.testing.assert_allclose(same(x)[0].detach().numpy(), NumpyPolicy(path).forward(x.numpy())[0], atol=1e-5)


def test_imitate_refuses_a_bad_feature_set(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--game", "duel", "--features", "bayes", "--decisions", "10"]) == 2
    assert "base game only" in capsys.readouterr().err
    with pytest.raises(ValueError, match="is unknown"):
        replace(Options(), features="oracle").check()


def test_ladder_evaluation_plays_a_features_file_one_agent_per_deal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agents.learned import role_names, role_slice
    from experiments.train.league import evaluate

    path = _features_policy(tmp_path / "p.npz")
    sl = role_slice(CFG)
    assert sl is not None

    def role_of(o: np.ndarray) -> np.ndarray:
        return np.asarray(o[:, sl].argmax(axis=1), dtype=np.int64)

    seats: set[tuple[int, int]] = set()
    real = LearnedAgent.act

    def act(self: LearnedAgent, observation: np.ndarray, action_mask: np.ndarray) -> int:
        assert self.beliefs is not None
        seats.add((id(self), self.beliefs.seat))
        return real(self, observation, action_mask)

    monkeypatch.setattr(LearnedAgent, "act", act)
    a = evaluate(CFG, f"learned:{path}", "random", 8, 5, role_names(CFG), role_of)
    assert sorted(s for _, s in seats) == [0, 0, 1, 1, 2, 2, 3, 3]  # deal b: its own agent, in seat b % 4
    assert a == evaluate(CFG, f"learned:{path}", "random", 8, 5, role_names(CFG), role_of)  # seeded agents
    assert a["eval_games"] == 8.0


def test_a_shipped_entry_with_features_starts_from_an_imitation() -> None:
    from experiments.train.ship_entries import Entry

    assert "--features" in Entry("base", 4, seed=1, decisions=0, imitate=10, features="bayes").imitate_argv("o")
    ppo = Entry("base", 4, seed=1, decisions=100, imitate=10, dagger=5, features="bayes").train_argv("o")
    assert ppo[ppo.index("--features") + 1] == "bayes"  # PPO reads them too, from the DAgger file as shipped
    assert ppo[ppo.index("--init") + 1] == str(Path("o") / "dagger" / "policy-f16.npz")
    with pytest.raises(ValueError, match="needs an imitation entry"):
        Entry("base", 4, seed=1, decisions=100, imitate=0, features="bayes")
    with pytest.raises(ValueError, match="base game only"):
        Entry("duel", 2, seed=1, decisions=0, imitate=10, features="bayes")
    with pytest.raises(ValueError, match="features='bayse' is unknown"):
        Entry("base", 4, seed=1, decisions=0, imitate=10, features="bayse")


def test_fit_refuses_data_without_the_features_it_needs() -> None:
    from experiments.train.imitate import fit

    opt = Options(players=4, teacher="heuristic", partners="random", decisions=60, num_envs=2, workers=1, epochs=1)
    data = collect(opt, 0, opt.decisions)
    with pytest.raises(ValueError, match="the data lack belief features"):
        fit(replace(opt, features="bayes"), data, quiet=True)
    with pytest.raises(ValueError, match="the data carry belief features"):
        fit(opt, with_features(data, CFG, "bayes"), quiet=True)
