"""The policy-aware observer (agents/base/policy_observer.py): exact posteriors on hand-built decisions, brute-force
agreement of the Bayes update and of the policy probabilities, shadow memory against real agents, the leak test,
determinism and input checks."""

from __future__ import annotations

import copy
from itertools import product
from math import comb

import numpy as np
import pytest

from agents import make_agent
from agents.base.policy_observer import (
    DISCARD,
    PolicyModelError,
    PolicyObserver,
    ladder_distribution,
    public_action,
    public_observation,
)
from agents.base.tracker import LogTracker
from saboteur_env import (
    EventType,
    GameConfig,
    PlayerView,
    action_to_string,
    apply_action,
    encode_observation,
    legal_action_mask,
    new_game,
    num_actions,
)
from saboteur_env.base import observation as bobs
from saboteur_env.base import reference as brules
from saboteur_env.base.cards import KIND_GOAL_GOLD, NUM_DECK_KINDS, SABOTEURS_BY_PLAYERS, Role, deck_counts
from tests.hidden import resample_base

CFG3 = GameConfig(num_players=3, rounds=1)
ROLES_ = (int(Role.GOLD_DIGGER), int(Role.SABOTEUR))


def _action(config: GameConfig, text: str) -> int:
    ids = [a for a in range(num_actions(config)) if action_to_string(config, a) == text]
    assert len(ids) == 1, text
    return ids[0]


@pytest.fixture(scope="module")
def first_decision() -> tuple:
    """3 players, the first decision of seat 0 with the hand crossroads + repair x2, repair x2, repair x1: the
    suspicious miner builds the crossroads at (2,1) (the only placement that nears the goals); the covert saboteur,
    far from the gold and unexposed, bluffs with probability ``bluff`` = 0.5 (a crossroads at (1,0) or (3,0),
    which gain at most one tile: tied) and otherwise discards. 3 placements + 4 discard kinds = 7 legal ids."""
    st = brules.new_game(CFG3, np.random.default_rng(0))
    assert st.current == 0
    hand = np.zeros(NUM_DECK_KINDS, dtype=np.int64)
    hand[[0, 19, 20, 21]] = [1, 2, 2, 1]
    st.hands[0] = hand
    bobs.refresh_seat_table(st)
    st._cache.clear()
    obs = bobs.encode_observation(st, 0)
    assert int(brules.legal_action_mask(st).sum()) == 7
    return st, obs, hand


def _observer_on_true_hand(monkeypatch: pytest.MonkeyPatch, hand: np.ndarray, eps: float) -> PolicyObserver:
    obs = PolicyObserver(CFG3, "heuristic", samples=1, epsilon=eps)
    monkeypatch.setattr(obs, "_hands", lambda seat, view, observable, rng: ([hand.copy()], [1.0]))
    obs.reset_round(None, None)
    return obs


@pytest.mark.parametrize(
    ("text", "pi_miner", "pi_sab", "uniform"),
    [
        ("place T01 at (2,1)", 1.0, 0.0, 1 / 7),  # the miner's build, never the bluff
        ("place T01 at (1,0)", 0.0, 0.25, 1 / 7),  # a bluff, never the miner
        (None, 0.0, 0.5, 4 / 7),  # a discard (any of the 4 kinds): only the saboteur, when it does not bluff
    ],
)
def test_exact_posterior_after_one_decision(monkeypatch: pytest.MonkeyPatch, first_decision: tuple, text: str | None,
                                            pi_miner: float, pi_sab: float, uniform: float) -> None:  # fmt: skip
    _, obs, hand = first_decision
    eps = 0.05
    model = _observer_on_true_hand(monkeypatch, hand, eps)
    observable = DISCARD if text is None else _action(CFG3, text)
    model.observe_decision(0, public_observation(obs, CFG3), observable)
    lm = eps * uniform + (1 - eps) * pi_miner
    ls = eps * uniform + (1 - eps) * pi_sab
    np.testing.assert_allclose(model.last_likelihood, [[lm] * 3, [ls] * 3], rtol=1e-12)
    # 3 players: role deck of 3 diggers + 1 saboteur, the left-over card uniform: A in {}, {0}, {1}, {2} a priori
    # equally likely; only seat 0 acted, so P(0) = Ls / (Ls + 3 Lm) and P(1) = P(2) = Lm / (Ls + 3 Lm).
    z = ls + 3 * lm
    np.testing.assert_allclose(model.p_saboteur(), [ls / z, lm / z, lm / z], rtol=1e-12)
    np.testing.assert_allclose(model.p_gold(), [1 / 3] * 3, rtol=1e-12)


def test_epsilon_keeps_the_wrong_hypothesis_alive(monkeypatch: pytest.MonkeyPatch, first_decision: tuple) -> None:
    _, obs, hand = first_decision
    bluff = _action(CFG3, "place T01 at (1,0)")
    for eps in (0.01, 0.2):
        model = _observer_on_true_hand(monkeypatch, hand, eps)
        for _ in range(3):  # the same miner-impossible move thrice (the determinizer sees the same public view)
            model.observe_decision(0, public_observation(obs, CFG3), bluff)
        lm, ls = eps / 7, eps / 7 + (1 - eps) * 0.25
        np.testing.assert_allclose(model.p_saboteur()[0], ls**3 / (ls**3 + 3 * lm**3), rtol=1e-9)
        assert 0 < 1 - model.p_saboteur()[0]  # never exactly 1: the trembling hand


def test_random_policy_leaves_the_prior_exactly() -> None:
    """A uniform-random population: the likelihood is the same under both roles, the posterior stays the prior."""
    cfg = GameConfig(num_players=4, rounds=1)
    model = PolicyObserver(cfg, "random", samples=3, seed=1)
    traj, _ = _play(cfg, "random", 3, model, decisions=20)
    prior = SABOTEURS_BY_PLAYERS[4] / 5
    np.testing.assert_allclose(traj, prior, rtol=1e-12)


def test_hand_draws_are_the_uniform_draw_given_the_played_card(first_decision: tuple) -> None:
    """Hands are drawn holding the played card and weighted 1 / copies held: weighted, the share of hands holding
    two or more copies is the hypergeometric P(c >= 2 | c >= 1) of a uniform hand (unweighted it would not be)."""
    obs = first_decision[1]
    model = PolicyObserver(CFG3, "heuristic", samples=6000)
    view = model.determinizers[0].observe(public_observation(obs, CFG3))
    observable = _action(CFG3, "place T01 at (2,1)")
    hands, w = model._hands(0, view, observable, np.random.default_rng(0))
    c = np.array([h[0] for h in hands])
    w = np.array(w)
    assert c.min() >= 1 and all(int(h.sum()) == 6 for h in hands)
    big, k, n = int(deck_counts(CFG3).sum()), int(deck_counts(CFG3)[0]), 6
    pj = [comb(k, j) * comb(big - k, n - j) / comb(big, n) for j in range(n + 1)]
    exact = (1 - pj[0] - pj[1]) / (1 - pj[0])
    biased = sum(j * pj[j] for j in range(2, n + 1)) / sum(j * pj[j] for j in range(1, n + 1))
    estimate = float(w[c >= 2].sum() / w.sum())
    assert abs(estimate - exact) < 0.02 and abs(biased - exact) > 0.1, (estimate, exact, biased)


# ---- playing games ---------------------------------------------------------------------------------------------
def _play(config: GameConfig, population: str, seed: int, model: PolicyObserver, decisions: int = 10**6,
          check=None) -> tuple[np.ndarray, list]:  # fmt: skip
    """P(saboteur) of ``model`` after each decision of a game of ``population``; the records of each decision."""
    p = config.num_players
    state = new_game(config, np.random.default_rng(seed))
    agents = [make_agent(population, config) for _ in range(p)]
    for s, a in enumerate(agents):
        a.reset(s, p, 100 * seed + s)
    tracker = LogTracker(config)
    model.reset_round(None, None)
    traj, records = [], []
    while not state.game_over and len(traj) < decisions:
        s = int(state.current)
        obs = encode_observation(state, s)
        mask = legal_action_mask(state)
        before = copy.deepcopy(agents[s])
        a = agents[s].act(obs, mask)
        model.observe_decision(s, public_observation(obs, config), public_action(config, a))
        if check is not None:
            check(state, s, obs, mask, a, before)
        records.append((s, model.last_likelihood.copy()))
        state = apply_action(state, a)
        for ev in tracker.update(state):
            if ev.type == EventType.ROUND_END:
                model.reset_round(None, None)
            else:
                model.observe(ev)
        traj.append(model.p_saboteur())
    return np.array(traj), records


def test_bayes_update_agrees_with_brute_force() -> None:
    """The posterior after each decision equals a brute force over the deals of the role deck (every position of
    the saboteur card, the left-over included) and the gold slot, weighting each by the product of the observer's
    likelihood tables."""
    cfg = GameConfig(num_players=4, rounds=1)
    model = PolicyObserver(cfg, "heuristic", samples=2, seed=3)
    traj, records = _play(cfg, "heuristic", 5, model, decisions=16)
    for t in range(len(traj)):
        w = np.zeros(4)
        total = 0.0
        for sab, gold in product(range(5), range(3)):  # sab = 4: the saboteur card is the left-over
            if not model.goals.possible[gold]:
                continue
            roles = [int(q == sab) for q in range(4)]
            like = np.prod([lk[roles[s], gold] for s, lk in records[: t + 1]])
            total += like
            if sab < 4:
                w[sab] += like
        np.testing.assert_allclose(traj[t], w / total, rtol=1e-9, atol=1e-12)
    assert traj[-1].max() > 0.9  # the scripted saboteur is found: the test would notice a flat posterior


def test_ladder_distribution_matches_the_agents_own_sampling() -> None:
    """The exact distribution (ties and the bluff coin enumerated) against 400 seeds of the real agent."""
    st = brules.new_game(CFG3, np.random.default_rng(0))
    st.hands[0] = np.bincount([0, 0, 3, 5, 19, 20], minlength=NUM_DECK_KINDS)
    bobs.refresh_seat_table(st)
    st._cache.clear()
    obs = bobs.encode_observation(st, 0)
    mask = brules.legal_action_mask(st)
    view = PlayerView.from_observation(obs, CFG3)
    agent = make_agent("heuristic", CFG3, "saboteur")
    agent.reset(0, 3, 0)
    agent.observe_view(view)
    dist = ladder_distribution(copy.deepcopy(agent), view, np.flatnonzero(mask))
    assert len(dist) >= 3 and abs(sum(dist.values()) - 1) < 1e-12
    counts: dict[int, int] = {}
    n = 400
    for k in range(n):
        cp = copy.deepcopy(agent)
        cp.rng = np.random.default_rng(k)
        a = cp.act_view(view, mask)
        counts[a] = counts.get(a, 0) + 1
    assert set(counts) <= set(dist)
    for a, p in dist.items():
        assert abs(counts.get(a, 0) / n - p) < 4 * np.sqrt(p * (1 - p) / n) + 0.01, (a, p, counts.get(a, 0))


@pytest.mark.parametrize(("population", "players", "rounds"), [("heuristic", 5, 1), ("bayes", 4, 3)])
def test_shadow_memory_equals_the_real_agents(population: str, players: int, rounds: int) -> None:
    """Shadows are fed hypothesised observations only; under the true role and gold slot their distribution over
    the true hand equals the real agent's own (its memory copied just before it acted). A memoryless agent (fresh
    at each decision, seeing only the current observation) differs somewhere: memory matters here. Three rounds:
    the shadows carry over round ends as the real agents do (roles are dealt anew)."""
    cfg = GameConfig(num_players=players, rounds=rounds)
    model = PolicyObserver(cfg, population, samples=1, seed=0)
    compared, memoryless_differs = [0], [False]

    def check(state, s, obs, mask, a, before) -> None:
        role = int(state.roles[s])
        gold = [int(k) for k in state.goal_kind].index(KIND_GOAL_GOLD)
        view = PlayerView.from_observation(obs, cfg)
        real = copy.deepcopy(before.saboteur if role == Role.SABOTEUR else before.miner)
        real.observe_view(view)
        legal = np.flatnonzero(mask)
        expected = ladder_distribution(real, view, legal)
        got = model.policy.distribution(s, role, gold, obs, view, mask)
        assert got.keys() == expected.keys() and all(abs(got[k] - expected[k]) < 1e-12 for k in got)
        assert got.get(a, 0) > 0
        fresh = make_agent(population, cfg, "saboteur" if role else "miner")
        fresh.reset(s, players, 0)
        fresh.observe_view(view)
        memoryless_differs[0] |= ladder_distribution(fresh, view, legal) != expected
        compared[0] += 1

    _play(cfg, population, 11, model, check=check)
    assert compared[0] > 30 * rounds
    assert memoryless_differs[0]


def test_posterior_reads_only_public_information() -> None:
    """Leak test: a second observer is fed the same game with every hidden part redrawn before each decision (all
    hands, roles, the left-over card, unpeeked goals, the pile, face-down discard kinds: tests/hidden.py applied
    for two different seats); its posterior equals the first's after every decision."""
    cfg = GameConfig(num_players=4, rounds=1)
    a_model = PolicyObserver(cfg, "heuristic", samples=2, seed=7)
    b_model = PolicyObserver(cfg, "heuristic", samples=2, seed=7)
    state = new_game(cfg, np.random.default_rng(21))
    agents = [make_agent("heuristic", cfg) for _ in range(4)]
    for s, ag in enumerate(agents):
        ag.reset(s, 4, s)
    rng = np.random.default_rng(0)
    ta, tb = LogTracker(cfg), LogTracker(cfg)
    for m in (a_model, b_model):
        m.reset_round(None, None)
    changed = steps = 0
    while not state.game_over and steps < 30:
        s = int(state.current)
        obs = encode_observation(state, s)
        a = agents[s].act(obs, legal_action_mask(state))
        other = resample_base(resample_base(state, (s + 1) % 4, rng), (s + 2) % 4, rng)
        changed += not np.array_equal(other.hands[s], state.hands[s]) or other.roles[s] != state.roles[s]
        a_model.observe_decision(s, public_observation(obs, cfg), public_action(cfg, a))
        b_model.observe_decision(s, public_observation(encode_observation(other, s), cfg), public_action(cfg, a))
        state = apply_action(state, a)
        for ev in ta.update(state):
            a_model.observe(ev)
        for ev in tb.update(resample_base(state, (s + 1) % 4, rng)):
            b_model.observe(ev)
        np.testing.assert_array_equal(a_model.p_saboteur(), b_model.p_saboteur())
        steps += 1
    assert changed > steps // 2  # the resampling really changed the actor's private information
    assert not np.allclose(a_model.p_saboteur(), a_model.p_saboteur().mean())  # and the posterior moved


def test_public_observation_erases_private_parts() -> None:
    cfg = GameConfig(num_players=4, rounds=1)
    state = new_game(cfg, np.random.default_rng(2))
    s = int(state.current)
    pub = public_observation(encode_observation(state, s), cfg)
    lay = bobs.observation_layout(cfg)
    for name in ("hand", "role", "my_nuggets"):
        assert not pub[lay.slices[name]].any()
    rng = np.random.default_rng(1)
    other = resample_base(resample_base(state, (s + 1) % 4, rng), (s + 2) % 4, rng)
    assert not np.array_equal(other.hands[s], state.hands[s])
    np.testing.assert_array_equal(pub, public_observation(encode_observation(other, s), cfg))


def test_deterministic_for_its_seed() -> None:
    cfg = GameConfig(num_players=4, rounds=1)
    t1, _ = _play(cfg, "bayes", 4, PolicyObserver(cfg, "bayes", samples=2, seed=5), decisions=15)
    t2, _ = _play(cfg, "bayes", 4, PolicyObserver(cfg, "bayes", samples=2, seed=5), decisions=15)
    np.testing.assert_array_equal(t1, t2)


def test_experiment_script_is_deterministic(capsys: pytest.CaptureFixture[str]) -> None:
    from experiments.analysis.policy_observer import main

    args = ["--games", "4", "--players", "3", "--samples", "1", "--boot", "50", "--populations", "heuristic"]
    assert main(args) == 0
    first = capsys.readouterr().out
    assert main(args) == 0
    assert capsys.readouterr().out == first
    assert "| heuristic | policy | 2 |" in first


def _random_mlp(path, config: GameConfig, hidden: int = 8, heads: int = 2, features: str = "") -> str:
    """A learned:PATH.npz policy file with random weights (two role heads), written without torch."""
    import json

    from agents.base.belief_features import feature_size
    from agents.learned import FORMAT, FORMAT_VERSION, LAYOUT_FIELDS

    lay = bobs.observation_layout(config)
    role = lay.slices["role"]
    rng = np.random.default_rng(0)
    n, a = lay.size + feature_size(features, config), num_actions(config)
    meta = {"format": FORMAT, "version": FORMAT_VERSION, "config": {f: getattr(config, f) for f in LAYOUT_FIELDS},
            "obs_size": n, "num_actions": a, "hidden": hidden, "num_heads": heads,
            "role_slice": [role.start, role.stop]} | ({"features": features} if features else {})  # fmt: skip
    arrays = {"meta": np.array(json.dumps(meta)), "scale": np.ones(n, np.float32),
              "w0": rng.normal(0, 0.3, (n, hidden)).astype(np.float32), "b0": np.zeros(hidden, np.float32),
              "w1": rng.normal(0, 0.5, (hidden, hidden)).astype(np.float32),
              "b1": np.zeros(hidden, np.float32)}  # fmt: skip
    for r in range(heads):
        arrays.update({f"pi_w{r}": rng.normal(0, 2.0, (hidden, a)).astype(np.float32),
                       f"pi_b{r}": rng.normal(0, 1.0, a).astype(np.float32),
                       f"v_w{r}": np.zeros((hidden, 1), np.float32), f"v_b{r}": np.zeros(1, np.float32)})  # fmt: skip
    np.savez(path, **arrays)
    return str(path)


@pytest.mark.parametrize("features", ["", "bayes"])
def test_learned_policy_scores_its_softmax(tmp_path, features: str) -> None:
    """learned:PATH.npz: the likelihood is the exported network's softmax over the legal ids of the hypothesised
    observation (its role head chosen by the hypothesised role); the real action always has positive weight. With
    belief features each (seat, role, gold) hypothesis has its own follower, and the network reads that
    hypothesis' features after the observation (its own P(saboteur) row is the hypothesised role)."""
    from agents.learned import NumpyPolicy

    cfg = GameConfig(num_players=4, rounds=1)
    name = f"learned:{_random_mlp(tmp_path / 'p.npz', cfg, features=features)}"
    net = NumpyPolicy(name[8:])
    model = PolicyObserver(cfg, name, samples=2, seed=0)
    seen, matched = [0], [0]

    def check(state, s, obs, mask, a, before) -> None:
        legal = np.flatnonzero(mask)
        view = PlayerView.from_observation(obs, cfg)
        for role in ROLES_:
            o = obs.copy()
            o[bobs.observation_layout(cfg).slices["role"]] = np.eye(2)[role]
            key, extra = (s, role, 0), np.zeros(0, np.float32)
            if features:
                key = next(k for k in model.policy.features if k[:2] == (s, role))
                extra = model.policy.features[key]
                assert extra[0] == role
                if role == view.role and not view.peeked[0].any():  # the true hypothesis, nothing private to guess:
                    own = before.network_input(obs)[obs.size :]  # the playing agent's own features (a copy of it)
                    np.testing.assert_allclose(extra, own, atol=1e-6)
                    matched[0] += 1
            z = net.forward(np.concatenate([o, extra]))[0][0, legal].astype(np.float64)
            p = np.exp(z - z.max())
            p /= p.sum()
            got = model.policy.distribution(s, role, key[2], o, view, mask)
            np.testing.assert_allclose([got[int(x)] for x in legal], p, rtol=1e-6)
        assert model.last_likelihood.min() > 0
        seen[0] += 1

    traj, _ = _play(cfg, name, 2, model, decisions=12, check=check)
    assert seen[0] == 12
    assert np.ptp(traj[-1]) > 0.01  # the two heads differ: the posterior moves
    assert matched[0] > (6 if features else -1)


def test_a_pair_of_role_policies() -> None:
    """(miner name, saboteur name): ("suspicious", "covert") is "heuristic"; ("random", "covert") scores miners as
    uniform players."""
    cfg = GameConfig(num_players=4, rounds=1)
    t1, _ = _play(cfg, "heuristic", 6, PolicyObserver(cfg, ("suspicious", "covert"), samples=2), decisions=12)
    t2, _ = _play(cfg, "heuristic", 6, PolicyObserver(cfg, "heuristic", samples=2), decisions=12)
    np.testing.assert_array_equal(t1, t2)
    mixed = PolicyObserver(cfg, ("random", "covert"), samples=2)
    assert mixed.policy.kinds == ["random", "ladder"] and mixed.policy.name == "random/covert"


# ---- bad input --------------------------------------------------------------------------------------------------
def test_bad_arguments_are_refused() -> None:
    with pytest.raises(PolicyModelError, match="scripted"):
        PolicyObserver(CFG3, "scripted")
    with pytest.raises(PolicyModelError, match="oracle"):
        PolicyObserver(CFG3, "role_oracle")
    with pytest.raises(PolicyModelError, match="oracle"):
        PolicyObserver(CFG3, ("honest", "gold_oracle"))
    with pytest.raises(ValueError, match="unknown agent 'nope'"):
        PolicyObserver(CFG3, "nope")
    with pytest.raises(PolicyModelError, match="pair"):
        PolicyObserver(CFG3, ("random", "covert", "random"))  # type: ignore[arg-type]
    with pytest.raises(PolicyModelError, match="base game only"):
        PolicyObserver(GameConfig(game="sab2", num_players=4), "random")
    for samples in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="samples="):
            PolicyObserver(CFG3, "random", samples=samples)  # type: ignore[arg-type]
    for eps in (0.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="epsilon="):
            PolicyObserver(CFG3, "random", epsilon=eps)
    model = PolicyObserver(CFG3, "heuristic")
    with pytest.raises(ValueError, match="public observer"):
        model.reset_round(0, 1)
    with pytest.raises(ValueError, match="action=99999"):
        public_action(CFG3, 99999)


def test_bad_observations_are_refused(first_decision: tuple) -> None:
    st, obs, _ = first_decision
    model = PolicyObserver(CFG3, "heuristic", samples=1)
    with pytest.raises(ValueError, match="holds a hand or a role"):
        model.observe_decision(0, obs, DISCARD)  # the seat's own observation, not its public one
    with pytest.raises(ValueError, match="shape"):
        model.observe_decision(0, obs[:-1], DISCARD)
    with pytest.raises(ValueError, match="seat=3"):
        model.observe_decision(3, public_observation(obs, CFG3), DISCARD)
    with pytest.raises(ValueError, match="observable=-5"):
        model.observe_decision(0, public_observation(obs, CFG3), -5)
    discard_id = _action(CFG3, "discard T01")
    with pytest.raises(ValueError, match=f"observable={discard_id}"):
        model.observe_decision(0, public_observation(obs, CFG3), discard_id)  # the hidden kind: not observable
    with pytest.raises(ValueError, match="not seat 1's observation"):
        model.observe_decision(1, public_observation(bobs.encode_observation(st, 1), CFG3), DISCARD)
