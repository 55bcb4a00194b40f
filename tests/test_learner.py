"""LearnerVectorEnv (one learner seat per game, a real gymnasium.vector.VectorEnv) and SeatTransitions (issue 38)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from gymnasium.wrappers import vector as vw

from saboteur_env import ConfigError, GameConfig, IllegalActionError, LearnerVectorEnv, SeatError, SeatTransitions
from saboteur_env.vector import VectorEnv

GAMES = [("base", 4), ("sab2", 5), ("duel", 2)]


def first_legal(obs, mask, seats):
    """A deterministic batched policy: the lowest legal action id of each row."""
    return np.argmax(mask, axis=1)


def random_actions(mask, rng):
    return np.array([rng.choice(np.flatnonzero(row)) for row in mask])


@pytest.mark.parametrize(("game", "players"), GAMES)
def test_learner__episode_return_is_the_learner_seats_final_score(game, players):
    """With gold rewards a learner's episode return is exactly its seat's final score: the rewards of the opponents'
    turns (round ends they cause) reach the learner, nothing is lost at the autoreset, nothing counted twice."""
    env = LearnerVectorEnv(6, game=game, num_players=players, learner_seat="random", opponent_secret=1)
    assert isinstance(env, gym.vector.VectorEnv)
    assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    obs, info = env.reset(seed=5)
    assert obs.shape == (6, *env.single_observation_space.shape) and obs in env.observation_space
    rng = np.random.default_rng(0)
    returns = np.zeros(6)
    ended = 0
    while ended < 8:
        obs, reward, term, trunc, info = env.step(random_actions(info["action_mask"], rng))
        assert not trunc.any() and obs in env.observation_space
        returns += reward
        for b in np.flatnonzero(term):
            seat = info["final_seat"][b]
            assert returns[b] == pytest.approx(info["final_returns"][b, seat])
            assert info["episode"]["r"][b] == pytest.approx(returns[b]) and info["_episode"][b]
            returns[b] = 0.0
            ended += 1
        assert (info["seat"] >= 0).all() and (info["seat"] < players).all()


def test_learner__matches_the_multi_agent_stream_and_seat_transitions():
    """The same games, the same moves (lowest legal id for every seat): the learner env's observations and rewards
    are the multi-agent VectorEnv's at seat 1's decisions, and its rewards are SeatTransitions' for seat 1."""
    b, seat, steps = 3, 1, 420
    venv = VectorEnv(b, num_players=4)
    tr = SeatTransitions(b, 4)
    obs, info = venv.reset(seed=11)
    want_obs: list[list[np.ndarray]] = [[] for _ in range(b)]
    want_rew: list[list[tuple[int, float, bool]]] = [[] for _ in range(b)]  # (key, reward, done) of seat 1
    keys_seen = []
    for t in range(steps):
        keys = t * b + np.arange(b)
        for s in range(b):
            if info["seat"][s] == seat:
                want_obs[s].append(obs[s])
        closed = [tr.decide(info["seat"], keys)]
        keys_seen.append(keys)
        acts = np.argmax(info["action_mask"], axis=1)
        obs, rewards, term, trunc, info = venv.step(acts)
        closed.append(tr.earn(rewards, term | trunc))
        for c in closed:
            for i in np.flatnonzero(c.seat == seat):
                want_rew[int(c.slot[i])].append((int(c.key[i]), float(c.reward[i]), bool(c.done[i])))

    env = LearnerVectorEnv(b, num_players=4, learner_seat=seat, opponent_policy=first_legal)
    lobs, info = env.reset(seed=11)
    got_obs: list[list[np.ndarray]] = [[o] for o in lobs]
    got_rew: list[list[tuple[float, bool]]] = [[] for _ in range(b)]
    for _ in range(90):
        lobs, reward, term, _, info = env.step(np.argmax(info["action_mask"], axis=1))
        for s in range(b):
            got_obs[s].append(lobs[s])
            got_rew[s].append((float(reward[s]), bool(term[s])))
    for s in range(b):
        n = min(len(want_rew[s]), len(got_rew[s]))
        assert n == 90  # several games' worth of seat 1's transitions
        assert [(r, d) for _, r, d in sorted(want_rew[s])][:n] == got_rew[s][:n]
        for w, g in zip(want_obs[s][: n + 1], got_obs[s][: n + 1], strict=True):
            np.testing.assert_array_equal(w, g)
    assert any(d for row in got_rew for _, d in row) and any(r != 0 for row in got_rew for r, _ in row)


def test_seat_transitions__each_decision_closed_once_and_returns_add_up():
    b, n = 4, 5
    venv = VectorEnv(b, game="sab2", num_players=n)
    tr = SeatTransitions(b, n)
    _, info = venv.reset(seed=3)
    rng = np.random.default_rng(1)
    closed_keys: list[int] = []
    per_game = np.zeros((b, n))
    finished = 0
    chain: dict[int, int] = {}
    for t in range(1500):
        keys = t * b + np.arange(b)
        c1 = tr.decide(info["seat"], keys)
        _obs, rewards, term, _trunc, info = venv.step(random_actions(info["action_mask"], rng))
        c2 = tr.earn(rewards, term)
        for c in (c1, c2):
            closed_keys += c.key.tolist()
            np.add.at(per_game, (c.slot, c.seat), c.reward)
            chain.update(zip(c.key.tolist(), c.next_key.tolist(), strict=True))
            assert (c.done == (c.next_key < 0)).all()
        for s in np.flatnonzero(term):
            np.testing.assert_allclose(per_game[s], info["final_returns"][s], atol=1e-4)
            per_game[s] = 0
            finished += 1
    assert finished >= 2
    assert len(closed_keys) == len(set(closed_keys))  # each decision closed exactly once
    open_keys = tr.open_keys()
    assert set(closed_keys).isdisjoint(open_keys[open_keys >= 0].tolist())
    assert len(closed_keys) + int((open_keys >= 0).sum()) == 1500 * b
    # next_key links a decision to the same slot's next decision (keys are t * b + slot)
    assert all(nk % b == k % b and nk > k for k, nk in chain.items() if nk >= 0)


def test_seat_transitions__bad_input():
    tr = SeatTransitions(2, 3)
    with pytest.raises(SeatError, match=r"seat 3 is out of range; valid: 0..2"):
        tr.decide(np.array([0, 3]), np.array([0, 1]))
    with pytest.raises(SeatError, match="2 integer seats"):
        tr.decide(np.array([0, 1, 2]), np.array([0, 1, 2]))
    with pytest.raises(ConfigError, match=r"shape \(2, 3\)"):
        tr.earn(np.zeros((2, 4)), np.zeros(2, dtype=bool))
    with pytest.raises(ConfigError, match="num_players=0"):
        SeatTransitions(2, 0)


def test_learner__gymnasium_vector_wrappers():
    """Gymnasium's own vector wrappers take it; its RecordEpisodeStatistics agrees with the env's statistics (in
    next-step mode: Gymnasium 1.2's wrapper counts the step after an end as a reset step whatever the mode)."""
    kw = dict(num_players=3, opponent_secret=7, autoreset_mode=AutoresetMode.NEXT_STEP)
    ours = LearnerVectorEnv(4, **kw)
    theirs = vw.RecordEpisodeStatistics(LearnerVectorEnv(4, stats_key=None, **kw))
    # Gymnasium's observation wrappers accept only next-step (or no) autoreset
    nxt = LearnerVectorEnv(4, **kw)
    wrapped = vw.DictInfoToList(vw.ClipReward(vw.NormalizeReward(vw.DtypeObservation(vw.NormalizeObservation(nxt),
                                                                                     np.float16)), -1.0, 1.0))
    (_, i1), (_, i2), (o3, i3) = ours.reset(seed=2), theirs.reset(seed=2), wrapped.reset(seed=2)
    assert isinstance(i3, list) and len(i3) == 4 and o3.dtype == np.float16
    compared = 0
    last_ended = np.zeros(4, dtype=bool)
    for _ in range(150):
        acts = np.argmax(i1["action_mask"], axis=1)
        o_before = i1["action_mask"].copy()
        _, r1, t1, _, i1 = ours.step(acts)
        _, r2, _t2, _, i2 = theirs.step(acts)
        _, r3, _, _, i3 = wrapped.step(np.array([np.argmax(i["action_mask"]) for i in i3]))
        np.testing.assert_array_equal(r1, r2)
        assert (np.abs(r3) <= 1.0).all()
        # the reset step after an end: the action is ignored, reward 0, the game does not move
        assert not r1[last_ended].any() and not t1[last_ended].any()
        np.testing.assert_array_equal(i1["action_mask"][last_ended], o_before[last_ended])
        if t1.any():
            np.testing.assert_array_equal(i1["episode"]["r"], i2["episode"]["r"])
            np.testing.assert_array_equal(i1["episode"]["l"], i2["episode"]["l"])
            compared += int(t1.sum())
        last_ended = t1
    assert compared >= 2
    with pytest.raises(ValueError, match="already exists"):  # both recording under one key is refused
        w = vw.RecordEpisodeStatistics(LearnerVectorEnv(2, num_players=3))
        _, info = w.reset(seed=0)
        for _ in range(200):
            _, _, _, _, info = w.step(np.argmax(info["action_mask"], axis=1))


def test_learner__rotate_dict_obs_and_agent_opponents():
    """``rotate`` moves the learner one seat per game; ``obs_format="dict"`` carries the mask; scripted opponents
    (a seat -> agent callable) get sealed seeds that repeat with the secret and never equal the deal seed's."""
    from agents import make_agent

    cfg = GameConfig(num_players=3)
    seeds_seen: list[list[int]] = []

    class Recording:
        def __init__(self, seat):
            self.inner = make_agent("random", cfg)
            self.config = cfg

        def reset(self, seat, n, seed):
            seeds_seen[-1].append(seed)
            self.inner.reset(seat, n, seed)

        def act(self, obs, mask):
            return self.inner.act(obs, mask)

    for secret in (5, 5, 6):
        seeds_seen.append([])
        env = LearnerVectorEnv(2, config=cfg, opponents=Recording, obs_format="dict", opponent_secret=secret)
        obs, info = env.reset(seed=9)
        assert obs in env.observation_space
        np.testing.assert_array_equal(obs["action_mask"], info["action_mask"])
        assert info["seat"].tolist() == [0, 1]  # rotate: slot b's first game at seat b
        games = np.zeros(2, dtype=int)
        for _ in range(120):
            obs, _, term, _, info = env.step(np.argmax(obs["action_mask"], axis=1))
            for b in np.flatnonzero(term):
                assert info["final_seat"][b] == (b + games[b]) % 3
                games[b] += 1
                assert info["seat"][b] == (b + games[b]) % 3
        assert games.sum() >= 2
    assert seeds_seen[0] == seeds_seen[1] != seeds_seen[2]
    assert not set(seeds_seen[0]) & {9, 10}


def test_learner__bad_input_before_any_game():
    with pytest.raises(ConfigError, match=r"learner_seat=4 is out of range for 4 players; valid: a seat 0..3"):
        LearnerVectorEnv(2, num_players=4, learner_seat=4)
    with pytest.raises(ConfigError, match=r"learner_seat='left' is not valid; valid: a seat 0..2"):
        LearnerVectorEnv(2, num_players=3, learner_seat="left")
    with pytest.raises(ConfigError, match=r"num_envs=0 is out of range; valid: 1.."):
        LearnerVectorEnv(0)
    with pytest.raises(ConfigError, match="opponents='heuristic' is not valid"):
        LearnerVectorEnv(2, opponents="heuristic")

    class Other:  # an agent built for another player count
        config = GameConfig(num_players=5)

        def reset(self, seat, n, seed): ...

        def act(self, obs, mask): ...

    with pytest.raises(ConfigError, match=r"game='base' with 5 players; this env plays game='base' with 4"):
        LearnerVectorEnv(2, num_players=4, opponents=lambda s: Other())
    with pytest.raises(ConfigError, match=r"returned object, which has no reset\(\)"):
        LearnerVectorEnv(2, opponents=lambda s: object())

    def wrong_width(obs, mask, seats):  # a network for another observation size
        return np.argmax(obs @ np.ones((10, 5)), axis=1)

    with pytest.raises(ConfigError, match=r"opponent_policy failed on a batch of 1 observation of shape \(\d+,\)"):
        LearnerVectorEnv(2, opponent_policy=wrong_width)
    with pytest.raises(ConfigError, match=r"must give 1 integer action ids"):
        LearnerVectorEnv(2, opponent_policy=lambda o, m, s: np.zeros(2, dtype=np.int64))
    with pytest.raises(ConfigError, match="not legal there"):
        LearnerVectorEnv(2, opponent_policy=lambda o, m, s: np.argmin(m, axis=1))
    with pytest.raises(ConfigError, match="claims=True is not supported"):
        LearnerVectorEnv(2, claims=True)


def test_learner__bad_actions_change_nothing():
    env = LearnerVectorEnv(3, num_players=3, opponent_secret=1)
    with pytest.raises(ConfigError, match="reset"):
        env.step(np.zeros(3, dtype=np.int64))
    _obs, info = env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"must give 3 integer action ids, one per row \(got shape \(2,\)"):
        env.step(np.zeros(2, dtype=np.int64))
    acts = np.argmax(info["action_mask"], axis=1)
    acts[1] = int(np.flatnonzero(info["action_mask"][1] == 0)[0])
    with pytest.raises(IllegalActionError, match=r"action .* of game 1 is not legal for the learner"):
        env.step(acts)
    acts[1] = env.num_actions
    with pytest.raises(IllegalActionError, match=r"out of range; valid: 0..\d+"):
        env.step(acts)
    fresh = LearnerVectorEnv(3, num_players=3, opponent_secret=1)
    _obs2, _ = fresh.reset(seed=0)
    good = np.argmax(info["action_mask"], axis=1)
    np.testing.assert_array_equal(env.step(good)[0], fresh.step(good)[0])  # the refused steps changed nothing


def test_vector_step_where__only_the_chosen_games_move():
    venv = VectorEnv(4, num_players=3)
    obs, info = venv.reset(seed=1)
    twin = VectorEnv(4, num_players=3)
    twin.reset(seed=1)
    acts = np.argmax(info["action_mask"], axis=1)
    where = np.array([True, False, True, False])
    obs1, r1, d1, _, i1 = venv.step_where(acts, where)
    obs2, *_ = twin.step(acts)
    np.testing.assert_array_equal(obs1[where], obs2[where])
    np.testing.assert_array_equal(obs1[~where], obs[~where])
    assert (i1["seat"][~where] == info["seat"][~where]).all() and not r1[~where].any() and not d1[~where].any()
    bad = np.argmax(i1["action_mask"], axis=1)
    bad[1] = -5  # ignored: game 1 is not stepped
    bad[2] = int(np.flatnonzero(i1["action_mask"][2] == 0)[0])
    with pytest.raises(IllegalActionError, match="of game 2 is not legal"):
        venv.step_where(bad, where)
    with pytest.raises(ConfigError, match="where must be 4 bools"):
        venv.step_where(acts, np.ones(3, dtype=bool))


def test_seat_transitions__bad_batches_name_the_size():
    tr = SeatTransitions(3, 4)
    with pytest.raises(ConfigError, match=r"keys must be 3 integer keys, one per game \(got shape \(2,\)"):
        tr.decide(np.array([0, 1, 2]), np.array([0, 1]))
    with pytest.raises(ConfigError, match=r"keys must be >= 0 \(got -1\)"):
        tr.decide(np.array([0, 1, 2]), np.array([0, -1, 2]))
    with pytest.raises(ConfigError, match=r"ended must be 3 bools, one per game \(got shape \(4,\)"):
        tr.earn(np.zeros((3, 4)), np.zeros(4, dtype=bool))
    with pytest.raises(SeatError, match=r"seats must be 3 integer seats.*float64"):
        tr.decide(np.zeros(3), np.arange(3))
    assert (tr.open_keys() == -1).all()  # nothing was recorded by the refused calls


def _puffer():
    pytest.importorskip("pufferlib", reason="needs the puffer extra (pip install -e '.[puffer]')")
    from saboteur_env import puffer

    return puffer


def test_puffer__observation_then_mask_over_the_learner_stream():
    """SaboteurPuffer's agents are LearnerVectorEnv's games: the same observations (then the mask), rewards and
    terminals; slot ``b`` is dealt from ``seed * num_envs + b``; ended games' means reach ``infos``."""
    puffer = _puffer()
    b, kw = 4, dict(num_players=3, opponent_secret=3, learner_seat="random")
    env = puffer.SaboteurPuffer(num_envs=b, seed=2, **kw)
    ref = LearnerVectorEnv(b, **kw)
    obs, infos = env.reset()
    want, info = ref.reset(seed=[2 * b + i for i in range(b)])
    assert infos == [] and all(row in env.single_observation_space for row in obs)
    ended = 0
    for _ in range(200):
        o, m = env.split(obs)
        np.testing.assert_array_equal(o, want)
        np.testing.assert_array_equal(m, info["action_mask"] == 1)
        acts = np.argmax(info["action_mask"], axis=1).astype(np.int32)  # PufferLib's action buffer is int32
        obs, rewards, terminals, truncations, infos = env.step(acts)
        want, r, term, _, info = ref.step(acts)
        np.testing.assert_array_equal(rewards, r)
        np.testing.assert_array_equal(terminals, term)
        assert not truncations.any()
        if term.any():
            assert infos[0]["games"] == term.sum()
            assert infos[0]["episode_return"] == pytest.approx(info["episode"]["r"][term].mean())
            ended += int(term.sum())
        else:
            assert infos == []
    assert ended >= 2


def test_puffer__pufferlib_workers_deal_disjoint_games():
    """PufferLib seeds its workers seed, seed + 1, ...: no two of their games share a deal (with a fixed learner seat
    and opponent secret, a shared deal would show as identical first observations)."""
    puffer = _puffer()
    import pufferlib.vector

    vecenv = pufferlib.vector.make(puffer.SaboteurPuffer, backend=pufferlib.vector.Serial, num_envs=3,
                                   env_kwargs=dict(num_envs=8, num_players=4, learner_seat=0, opponent_secret=1))
    vecenv.async_reset(seed=0)
    obs = vecenv.recv()[0]
    vecenv.close()
    assert obs.shape[0] == 24 and len({row.tobytes() for row in obs}) == 24


def test_puffer__bad_input_before_any_game():
    puffer = _puffer()
    with pytest.raises(ConfigError, match=r"seed=-1 must be a non-negative int"):
        puffer.SaboteurPuffer(num_envs=2, seed=-1)
    with pytest.raises(ConfigError, match="fixes obs_format"):
        puffer.SaboteurPuffer(num_envs=2, obs_format="dict")
    with pytest.raises(ConfigError, match=r"learner_seat=4 is out of range for 4 players; valid: a seat 0..3"):
        puffer.SaboteurPuffer(num_envs=2, num_players=4, learner_seat=4)
    with pytest.raises(ConfigError, match=r"num_envs=0 is out of range; valid: 1.."):
        puffer.SaboteurPuffer(num_envs=0)
    with pytest.raises(ConfigError, match="game='base' with 5 players; this env plays game='base' with 3"):
        puffer.SaboteurPuffer(num_envs=2, num_players=3, opponents=lambda s: _OtherGame())
    probe = puffer.SaboteurPuffer(num_envs=2, num_players=3)
    shape = probe.single_observation_space.shape
    buf = {k: np.zeros((3, *shape) if k == "observations" else 3, dtype=np.float32 if k != "actions" else np.int32)
           for k in ("observations", "rewards", "terminals", "truncations", "teacher_actions", "masks", "actions")}
    with pytest.raises(ConfigError, match=rf"observations of shape \(3, {shape[0]}\).*needs \(2, {shape[0]}\)"):
        puffer.SaboteurPuffer(num_envs=2, num_players=3, buf=buf)
    _, _ = probe.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"must give 2 integer action ids, one per row \(got shape \(3,\)"):
        probe.step(np.zeros(3, dtype=np.int32))
    with pytest.raises(IllegalActionError, match=r"got shape \(2,\), float64"):
        probe.step(np.zeros(2))
    with pytest.raises(ConfigError, match=r"seed=1.5 must be a non-negative int"):
        probe.reset(seed=1.5)


class _OtherGame:
    """An agent built for another player count (5)."""

    config = GameConfig(num_players=5)

    def reset(self, seat, n, seed): ...

    def act(self, obs, mask): ...


def test_learner__copy_false_gives_read_only_views_of_the_same_values():
    kw = dict(num_players=3, opponent_secret=4, opponent_policy=first_legal)
    fresh, views = LearnerVectorEnv(3, **kw), LearnerVectorEnv(3, copy=False, **kw)
    (o1, i1), (o2, i2) = fresh.reset(seed=1), views.reset(seed=1)
    for _ in range(60):
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(i1["action_mask"], i2["action_mask"])
        assert o1.flags.writeable and not o2.flags.writeable and not i2["action_mask"].flags.writeable
        old_view, before = o2, o2.copy()
        acts = np.argmax(i1["action_mask"], axis=1)
        o1, r1, t1, _, i1 = fresh.step(acts)
        o2, r2, t2, _, i2 = views.step(acts)
        np.testing.assert_array_equal(r1, r2)
        np.testing.assert_array_equal(t1, t2)
        np.testing.assert_array_equal(old_view, o2)  # a view: the step overwrote it ...
        assert not np.array_equal(before, o2)  # ... with the next observations
