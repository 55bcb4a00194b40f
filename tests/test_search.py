"""The search agent (agents/search.py) and what it needs from the core: batches built from given games
(``Batch.from_states`` / ``take``), the batched rollout loop (``saboteur_env.core.rollout``) and the blueprints
(agents/blueprint.py).

The rollout loop is checked against the one-game path (the same games stepped one by one with the same actions,
drawn from the same uniforms), common random numbers (rows with one stream and one first move play identically),
and the agent for determinism, legality in the three games, its budget errors and blindness to the hidden state
(tests/hidden.py resamplers).
"""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hidden import RESAMPLERS

from agents import make_agent
from agents.blueprint import NetworkBlueprint, WeightsBlueprint, rollout_blueprint, shipped_network
from agents.ismcts import rollout_weights
from agents.learned import POLICY_DIR, PolicyFileError
from agents.search import SearchAgent
from saboteur_env import GameConfig, apply_action, encode_observation, legal_action_mask, new_game, raw_env
from saboteur_env.common.errors import ConfigError
from saboteur_env.core.batch import Batch, padded
from saboteur_env.core.rollout import pick, rollout
from saboteur_env.sab2.state import Phase

CONFIGS = [GameConfig(num_players=5), GameConfig(game="sab2", num_players=4), GameConfig(game="duel")]
IDS = ["base-5", "sab2-4", "duel"]


def _states(config: GameConfig, seeds: list[int], steps: int) -> list:
    """Mid-round games: ``steps`` random legal moves after the deal of each seed (stopped at a round's end)."""
    out = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        s = new_game(config, rng)
        for _ in range(steps):
            s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))), inplace=True)
            if s.round_just_ended or s.game_over:
                break
        out.append(s)
    return out


def _blueprint(config: GameConfig):
    return rollout_blueprint(config, shipped_network(config))


# ---- Batch.from_states / take ---------------------------------------------------------------------------------
@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_batch_from_states__rows_are_the_games(config):
    states = _states(config, [1, 2, 3], steps=7)
    batch = Batch.from_states(states)
    twice = batch.take([2, 0, 2])
    for b, rows in ((batch, [0, 1, 2]), (twice, [2, 0, 2])):
        mask = np.zeros((b.batch, padded(b.num_actions)), dtype=np.int8)
        b.masks(mask, np.zeros(b.batch, dtype=np.int64))
        seats = b.scalar(b.k.SC_CURRENT).astype(np.int64)
        obs = np.zeros((b.batch, b.obs_size), dtype=np.float32)
        b.observe(seats, obs)
        for i, r in enumerate(rows):
            assert seats[i] == states[r].current
            assert np.array_equal(mask[i, : b.num_actions].astype(bool), legal_action_mask(states[r]))
            assert np.array_equal(obs[i], encode_observation(states[r], int(seats[i])))


def test_batch_from_states__refuses_mixed_or_foreign_states():
    a = _states(GameConfig(num_players=5), [1], 0)[0]
    b = _states(GameConfig(num_players=4), [1], 0)[0]
    with pytest.raises(ValueError, match="state 1"):
        Batch.from_states([a, b])
    with pytest.raises(ValueError, match="at least one"):
        Batch.from_states([])
    with pytest.raises(ValueError, match="rows"):
        Batch.from_states([a]).take([1])


# ---- the rollout loop -----------------------------------------------------------------------------------------
def _one_by_one(state, policy, first: int | None, stream: int, seed: int, temperature: float):
    """The reference: one game stepped by ``apply_action``, the policy asked for this game alone, the action drawn
    by ``pick`` from this row's uniform of each step (the same draws as the batched loop's)."""
    s = state.clone()
    gen = np.random.default_rng([seed, stream])
    total = np.zeros(s.config.num_players)
    t = 0
    while True:
        u = np.array([gen.random()])
        legal = np.flatnonzero(legal_action_mask(s))
        if t == 0 and first is not None:
            a = first
        else:
            obs = encode_observation(s, s.current)[None]
            rows = np.zeros(legal.size, dtype=np.int64)
            a = int(pick(rows, legal, policy.logits(obs, rows, legal), u, 1, temperature)[0])
        s = apply_action(s, a, inplace=True)
        t += 1
        if s.round_just_ended or s.game_over:
            total += np.asarray(s.last_rewards, dtype=np.float64)
            return total, t


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
@pytest.mark.parametrize("temperature", [1.0, 0.0])
def test_rollout__equals_the_games_stepped_one_by_one(config, temperature):
    states = _states(config, [11, 12, 13, 14, 15, 16], steps=5)
    policy = _blueprint(config)
    streams = np.array([0, 1, 2, 0, 1, 2])
    res = rollout(Batch.from_states(states), policy, streams=streams, seed=99, temperature=temperature)
    assert res.finished.all()
    for i, s in enumerate(states):
        total, steps = _one_by_one(s, policy, None, int(streams[i]), 99, temperature)
        assert res.steps[i] == steps, i
        assert np.allclose(res.returns[i], total), (i, res.returns[i], total)


def test_rollout__first_actions_are_played_and_checked():
    config = GameConfig(num_players=5)
    states = _states(config, [21, 22], steps=3)
    policy = _blueprint(config)
    first = np.array([int(np.flatnonzero(legal_action_mask(s))[-1]) for s in states])
    res = rollout(Batch.from_states(states), policy, first_actions=first, seed=5)
    for i, s in enumerate(states):
        total, steps = _one_by_one(s, policy, int(first[i]), i, 5, 1.0)
        assert res.steps[i] == steps and np.allclose(res.returns[i], total)
    illegal = np.flatnonzero(~legal_action_mask(states[0]))[0]
    with pytest.raises(ValueError, match=f"first action {illegal} of row 0 is not legal"):
        rollout(Batch.from_states(states), policy, first_actions=np.array([illegal, first[1]]))
    with pytest.raises(ValueError, match="temperature"):
        rollout(Batch.from_states(states), policy, temperature=-1)


@pytest.mark.parametrize("config", CONFIGS, ids=IDS)
def test_rollout__common_random_numbers(config):
    """One determinization, one stream: identical first moves give identical rollouts; the batch's other rows (a
    different first move, or another stream) do not disturb them."""
    state = _states(config, [31], steps=4)[0]
    legal = np.flatnonzero(legal_action_mask(state))
    a, b = int(legal[0]), int(legal[-1])
    games = Batch.from_states([state]).take([0, 0, 0, 0, 0])
    first = np.array([a, b, a, b, a])
    streams = np.array([0, 0, 0, 0, 1])
    res = rollout(games, _blueprint(config), first_actions=first, streams=streams, seed=3)
    assert res.steps[0] == res.steps[2] and np.array_equal(res.returns[0], res.returns[2])
    assert res.steps[1] == res.steps[3] and np.array_equal(res.returns[1], res.returns[3])
    alone = rollout(Batch.from_states([state]), _blueprint(config), first_actions=np.array([a]), seed=3)
    assert alone.steps[0] == res.steps[0] and np.array_equal(alone.returns[0], res.returns[0])


def test_pick__greedy_and_sampled():
    rows = np.array([0, 0, 0, 1, 1])
    cols = np.array([3, 5, 9, 2, 4])
    z = np.array([0.0, 2.0, 2.0, -1.0, 5.0])
    assert pick(rows, cols, z, np.array([0.5, 0.5]), 2, 0.0).tolist() == [5, 4]  # ties: the first
    # u below / above the first entry's share of its row (row 0: p = e^0 / (e^0 + 2 e^2))
    share = 1 / (1 + 2 * np.exp(2))
    assert pick(rows, cols, z, np.array([share * 0.99, 0.0]), 2, 1.0).tolist() == [3, 2]
    assert pick(rows, cols, z, np.array([share * 1.01, 0.9999999]), 2, 1.0).tolist() == [5, 4]
    with pytest.raises(ValueError, match="at least one legal"):
        pick(np.array([0, 0]), np.array([1, 2]), np.zeros(2), np.zeros(2), 2, 1.0)


# ---- blueprints -----------------------------------------------------------------------------------------------
def test_blueprint__network_logits_equal_the_full_forward():
    config = GameConfig(num_players=5)
    net = shipped_network(config)
    assert net is not None and not net.features
    bp = NetworkBlueprint(net, config)
    states = _states(config, [41, 42, 43], steps=6)
    obs = np.stack([encode_observation(s, s.current) for s in states])
    rows, cols = np.nonzero(np.stack([legal_action_mask(s) for s in states]))
    full, _ = net.forward(obs)
    assert np.allclose(bp.logits(obs, rows, cols), full[rows, cols], atol=1e-4)


def test_blueprint__feature_networks_fall_back_to_the_universal_one_then_the_weights():
    base4 = GameConfig(num_players=4)  # its own network reads belief features: the rollouts use the universal one
    bp = rollout_blueprint(base4, shipped_network(base4))
    assert isinstance(bp, NetworkBlueprint) and bp.policy.meta.get("specialized_from") == "base"
    assert shipped_network(base4).features == "bayes"  # ... while the prior stays the count's own network
    for config in (GameConfig(num_players=5, history_length=8),):  # no shipped network plays it
        bp = rollout_blueprint(config, shipped_network(config))
        assert isinstance(bp, WeightsBlueprint)
        cols = np.array([0, 1])
        assert np.allclose(bp.logits(np.zeros((1, 1), np.float32), np.zeros(2, np.int64), cols),
                           np.log(rollout_weights(config)[cols]))  # fmt: skip
    with pytest.raises(PolicyFileError, match="belief features"):
        NetworkBlueprint(shipped_network(GameConfig(num_players=4)), GameConfig(num_players=4))


def test_blueprint__belief_logits_equal_the_forward_on_the_followers_features():
    """At the deal a belief blueprint's rows read what a Python follower of the seat to act reads."""
    from agents.base.belief_features import features_of_sequence
    from agents.blueprint import BeliefBlueprint

    config = GameConfig(num_players=4)
    net = shipped_network(config)
    assert net is not None and net.features == "bayes"
    bp = BeliefBlueprint(net, config)
    states = _states(config, [51, 52, 53], steps=0)
    batch = Batch.from_states(states)
    bp.begin(batch)
    bp.follow(batch, 3)
    obs = np.stack([encode_observation(s, s.current) for s in states])
    feats = np.concatenate([features_of_sequence(config, s.current, o[None]) for s, o in zip(states, obs, strict=True)])
    rows, cols = np.nonzero(np.stack([legal_action_mask(s) for s in states]))
    full, _ = net.forward(np.concatenate([obs, feats], axis=1))
    assert np.allclose(bp.logits(obs, rows, cols), full[rows, cols], atol=1e-4)
    import pickle

    again = pickle.loads(pickle.dumps(bp))  # a search agent sent to a worker: without the last rollout's batch
    assert again._batch is None and again._state == ()
    with pytest.raises(RuntimeError, match=r"inside core\.rollout\.rollout"):
        again.logits(obs, rows, cols)
    with pytest.raises(PolicyFileError, match="does not read the base game's 'bayes' features"):
        BeliefBlueprint(shipped_network(GameConfig(num_players=5)), GameConfig(num_players=5))


def test_search__beliefs_automatic_where_no_observation_only_network_is_shipped(monkeypatch: pytest.MonkeyPatch):
    """beliefs=None (the default): the rollouts follow the prior's belief features exactly where no network that
    reads only the observation is shipped for the configuration (else they would fall to the IS-MCTS weights);
    an explicit beliefs=0/1 or a value-head cut (depth=) decides otherwise."""
    import agents.search as search_module
    from agents.blueprint import BeliefBlueprint

    config = GameConfig(num_players=4)  # its own network reads 'bayes' features; the universal file does not
    assert shipped_network(config).features == "bayes"
    agent = SearchAgent(config, rollouts=8)
    assert agent.beliefs is False and isinstance(agent.blueprint, NetworkBlueprint)
    assert not agent.blueprint.policy.features
    assert SearchAgent(GameConfig(num_players=5), rollouts=8).beliefs is False  # an observation-only prior
    assert SearchAgent(GameConfig(game="sab2", num_players=4), rollouts=8).beliefs is False
    # as if the game's one network read the features at every count: no observation-only rollout network
    monkeypatch.setattr(search_module, "rollout_blueprint", lambda c, n: WeightsBlueprint(rollout_weights(c)))
    agent = SearchAgent(config, rollouts=8)
    assert agent.beliefs is True and isinstance(agent.blueprint, BeliefBlueprint)
    assert SearchAgent(config, rollouts=8, beliefs=False).beliefs is False
    assert make_agent("search:8,beliefs=0", config).beliefs is False
    assert SearchAgent(GameConfig(num_players=5), rollouts=8).beliefs is False  # its prior reads no features
    with pytest.raises(ValueError, match="needs a rollout network"):  # a cut needs an observation-only trunk
        SearchAgent(config, rollouts=8, depth=4)


def test_rollout__a_stateful_policy_keeps_its_rows_with_their_games():
    """begin() once, follow() before every logits call over the live rows only, and the policy's per-row arrays
    move with their games when finished rows leave the stepped range."""
    config = GameConfig(num_players=5)
    states = _states(config, list(range(60, 76)), steps=3)
    batch = Batch.from_states(states)
    inner = _blueprint(config)
    calls: list[int] = []

    class Tagged:
        def begin(self, b):
            self.tags = b.field("round_decks")[:, 0].copy()  # a game's deck order: its identity
            return (self.tags,)

        def follow(self, b, n):
            calls.append(n)
            assert np.array_equal(self.tags[:n], b.field("round_decks")[:n, 0])

        def logits(self, obs, rows, cols):
            return inner.logits(obs, rows, cols)

    res = rollout(batch, Tagged(), seed=3)
    assert res.finished.all() and calls[0] == 16 and calls[-1] < 16 and calls == sorted(calls, reverse=True)


# ---- the agent ------------------------------------------------------------------------------------------------
def _decision_point(config: GameConfig, seed: int, steps: int, **kwargs):
    """A mid-game state where seat 0 is to act, and a search agent that followed seat 0 there."""
    rng = np.random.default_rng(seed)
    state = new_game(config, rng)
    agent = SearchAgent(config, **{"rollouts": 12, "candidates": 4, **kwargs})
    agent.reset(0, config.num_players, seed=seed)
    for _ in range(steps):
        if state.current == 0:
            agent.observe(encode_observation(state, 0))
        state = apply_action(state, int(rng.choice(np.flatnonzero(legal_action_mask(state)))), inplace=True)
    while (state.current != 0 or (config.game == "sab2" and state.phase == Phase.THEFT)
           or legal_action_mask(state).sum() < 3):  # fmt: skip
        state = apply_action(state, int(rng.choice(np.flatnonzero(legal_action_mask(state)))), inplace=True)
    return state, agent


@pytest.mark.parametrize("game,players,steps,beliefs", [("base", 5, 12, False), ("sab2", 5, 15, False),
                                                        ("duel", 2, 14, False), ("base", 4, 14, True)])  # fmt: skip
def test_search__deterministic_and_blind_to_resampled_hidden_state(game, players, steps, beliefs):
    """Same seed and budget: same move and values; resampling everything seat 0 cannot know changes nothing (with
    belief-reading rollouts too: their root is the seat's own public model)."""
    config = GameConfig(game=game, num_players=players)
    state, agent = _decision_point(config, seed=players, steps=steps, **({"beliefs": True} if beliefs else {}))
    mask = legal_action_mask(state).astype(np.int8)
    a1, a2 = copy.deepcopy(agent), copy.deepcopy(agent)
    first = a1.act(encode_observation(state, 0), mask)
    assert a2.act(encode_observation(state, 0), mask) == first
    assert a1.last_stats["values"] == a2.last_stats["values"] and a1.last_stats["rollouts"] == 12
    rng = np.random.default_rng(7)
    for _ in range(3):
        other = RESAMPLERS[game](state, 0, rng)
        assert not np.array_equal(other.hands[1:], state.hands[1:]) or game == "duel"
        b = copy.deepcopy(agent)
        assert b.act(encode_observation(other, 0), legal_action_mask(other).astype(np.int8)) == first
        assert b.last_stats["values"] == a1.last_stats["values"]


@pytest.mark.parametrize("config,spec", [(GameConfig(num_players=3, rounds=1), "search:6"),
                                         (GameConfig(num_players=5, rounds=1), "search:6"),
                                         (GameConfig(num_players=4, rounds=1), "search:6,beliefs=1"),
                                         (GameConfig(game="sab2", num_players=5, rounds=1), "search:6"),
                                         (GameConfig(game="duel"), "search:6")],
                         ids=["base-3", "base-5", "base-4-beliefs", "sab2-5", "duel"])  # fmt: skip
def test_search__legal_over_whole_games(config, spec):
    """Every seat searches (a small budget) through whole games: every move is legal in its mask."""
    state = new_game(config, np.random.default_rng(0))
    agents = [make_agent(spec, config) for _ in range(config.num_players)]
    for seat, agent in enumerate(agents):
        agent.reset(seat, config.num_players, seed=50 + seat)
    decisions = searched = 0
    while not state.game_over:
        seat = state.current
        mask = legal_action_mask(state)
        a = agents[seat].act(encode_observation(state, seat), mask.astype(np.int8))
        assert mask[a], (config, decisions, a)
        searched += agents[seat].last_stats["rollouts"] > 0
        state = apply_action(state, a, inplace=True)
        decisions += 1
    assert decisions > 10 and searched > decisions // 3


def test_search__out_of_time_plays_the_prior_move():
    """A deadline that has passed before the first rollout: the best move found so far is the prior's first."""
    config = GameConfig(num_players=5)
    state, agent = _decision_point(config, seed=3, steps=10, ms=1e-6)
    mask = legal_action_mask(state)
    a = agent.act(encode_observation(state, 0), mask.astype(np.int8))
    legal = np.flatnonzero(mask)
    assert mask[a] and a == int(legal[np.argmax(agent._prior(encode_observation(state, 0), legal))])
    assert agent.last_stats["rollouts"] == 0
    # with time for some waves: only finished rollouts count, and the move is legal
    state, agent = _decision_point(config, seed=3, steps=10, ms=2000.0, rollouts=64, wave=2)
    a = agent.act(encode_observation(state, 0), legal_action_mask(state).astype(np.int8))
    assert legal_action_mask(state)[a] and 0 < agent.last_stats["rollouts"] <= 64


def test_search__bad_input():
    config = GameConfig(num_players=5)
    for name in ("search:0", "search:abc", "search:10**9", "search:1000000000", "search:-3", "search:\u0663"):
        with pytest.raises(ValueError, match=r"search:BUDGET needs a whole number of rollouts per move 1\.\.100000"):
            make_agent(name, config)
    for kwargs in ({"rollouts": 0}, {"rollouts": 2.5}, {"candidates": 0}, {"candidates": 65}, {"ms": 0},
                   {"ms": -1.0}, {"temperature": -0.5}, {"wave": 0}):  # fmt: skip
        key = next(iter(kwargs))
        with pytest.raises(ValueError, match=rf"{key}=.* is out of range; valid: "):
            SearchAgent(config, **kwargs)
    with pytest.raises(ValueError, match="game"):  # a network of another game
        SearchAgent(config, blueprint=POLICY_DIR / "duel-all.npz")
    with pytest.raises(ValueError, match="num_players"):  # of another shape (another player count)
        SearchAgent(config, blueprint=POLICY_DIR / "base-4p.npz")
    agent = SearchAgent(config, rollouts=4)
    state = new_game(config, np.random.default_rng(0))
    with pytest.raises(ValueError, match="reset"):
        agent.act(encode_observation(state, 0), legal_action_mask(state).astype(np.int8))
    with pytest.raises(ValueError, match="num_players"):
        agent.reset(0, 4, seed=0)
    with pytest.raises(ValueError, match="seat"):
        agent.reset(5, 5, seed=0)
    agent.reset(0, 5, seed=0)
    with pytest.raises(ValueError, match="at least one legal"):
        agent.act(encode_observation(state, 0), np.zeros_like(legal_action_mask(state), dtype=np.int8))
    with pytest.raises(ConfigError, match="streams"):
        rollout(Batch.from_states([state]), _blueprint(config), streams=np.array([0, 1]))
    # belief-reading rollouts need a base-game network with 'bayes' features, and no value-head cut
    with pytest.raises(ValueError, match=r"beliefs=1 rolls out a base-game network .* \(base-5p.npz\) does not"):
        SearchAgent(config, beliefs=True)
    with pytest.raises(ValueError, match="beliefs=1 rolls out a base-game network"):
        SearchAgent(GameConfig(game="sab2", num_players=5), beliefs=True)
    with pytest.raises(ValueError, match="leave depth= out"):
        SearchAgent(GameConfig(num_players=4), beliefs=True, depth=8)
    with pytest.raises(ValueError, match=r"beliefs=.* is not valid; valid: True, False or None"):
        SearchAgent(GameConfig(num_players=4), beliefs=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"beliefs='2' needs 0 or 1"):
        make_agent("search:8,beliefs=2", GameConfig(num_players=4))
    assert make_agent("search:8,temperature=0", config).temperature == 0.0
    with pytest.raises(ValueError, match=r"temperature='hot' needs a number 0\.\.100"):
        make_agent("search:8,temperature=hot", config)
    with pytest.raises(ValueError, match=r"temperature=-1.0 is out of range; valid: 0\.\.100"):
        make_agent("search:8,temperature=-1", config)


def test_search__blas_threads_is_checked_and_limits_blas_during_a_move() -> None:
    from threadpoolctl import threadpool_info

    from agents.search import SearchAgent, _blas_controller

    cfg = GameConfig(game="duel")
    for bad in (0, -1, 2000, 1.5, True, "2"):
        with pytest.raises(ValueError, match=r"blas_threads=.* is out of range; valid: 1\.\.1024 or None"):
            SearchAgent(cfg, rollouts=8, blas_threads=bad)  # type: ignore[arg-type]
    seen: list[int] = []
    agent = SearchAgent(cfg, rollouts=8, candidates=2)
    act = agent._act

    def spy(*args: object) -> int:
        seen.extend(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
        return act(*args)  # type: ignore[arg-type]

    agent._act = spy  # type: ignore[method-assign]
    env = raw_env(game="duel")
    env.reset(seed=3)
    now = env.agent_selection
    agent.reset(env.agents.index(now), 2, 11)
    agent.act(env.observe(now)["observation"], env.observe(now)["action_mask"])
    assert _blas_controller() is _blas_controller()
    if seen:  # numpy linked with a BLAS that threadpoolctl sees
        assert set(seen) == {1}


def test_search__margin_leaves_the_prior_only_for_a_significant_paired_advantage():
    """``margin=Z``: the same rollouts as without it (same values), and the prior's first choice is kept unless the
    best mean's paired advantage over it is more than Z standard errors."""
    config = GameConfig(num_players=5)
    kept = left = 0
    for seed in range(8):
        state, plain = _decision_point(config, seed=seed, steps=6 + seed, rollouts=48, candidates=4)
        careful = copy.deepcopy(plain)
        careful.margin = 1.5
        obs, mask = encode_observation(state, 0), legal_action_mask(state).astype(np.int8)
        a, b = plain.act(obs, mask), careful.act(obs, mask)
        assert plain.last_stats["values"] == careful.last_stats["values"] and a == plain.last_stats["best_mean"]
        first = next(iter(plain.last_stats["values"]))  # the candidates in prior order
        adv, se = plain.last_stats["advantage"]
        if a == first or adv > 1.5 * se:
            assert b == a
            left += a != first
        else:
            assert b == first
            kept += 1
    assert kept > 0, (kept, left)  # some decision where the margin kept the prior's first choice
    for bad in ("-1", "11", "nan", "x"):
        with pytest.raises(ValueError, match="margin"):
            make_agent(f"search:8,margin={bad}", config)


def test_search__halving_spends_the_budget_in_rounds_and_keeps_the_better_half():
    """``halving=1``: rounds of fresh determinizations, more each round as the candidates halve (the rollouts
    count is the plan's, within the budget), a legal move, deterministic for a seed; over two candidates it is the
    plain search exactly."""
    config = GameConfig(num_players=5)
    for seed in range(4):
        state, plain = _decision_point(config, seed=seed, steps=6 + seed, rollouts=64, candidates=8)
        obs, mask = encode_observation(state, 0), legal_action_mask(state).astype(np.int8)
        m = min(8, int(mask.sum()))
        halving = copy.deepcopy(plain)
        halving.halving = True
        twin = copy.deepcopy(halving)
        a = halving.act(obs, mask)
        assert twin.act(obs, mask) == a and twin.last_stats["values"] == halving.last_stats["values"]
        assert mask[a] == 1
        plan = halving._halving_plan(m)
        assert len(plan) == int(np.ceil(np.log2(m))) and halving.last_stats["rollouts"] == sum(
            k * int(np.ceil(m / 2**r)) for r, k in enumerate(plan)
        ) == halving.rollouts_per_decision(int(mask.sum()))
        assert sum(k * int(np.ceil(m / 2**r)) for r, k in enumerate(plan)) <= 64
        assert plan == sorted(plan)  # fewer candidates, more determinizations each
    # two candidates: one round, the same rollouts and choice as the plain search
    state, plain = _decision_point(config, seed=11, steps=9, rollouts=40, candidates=2)
    obs, mask = encode_observation(state, 0), legal_action_mask(state).astype(np.int8)
    halving = copy.deepcopy(plain)
    halving.halving = True
    assert halving.act(obs, mask) == plain.act(obs, mask)
    assert halving.last_stats["values"] == plain.last_stats["values"]
    assert make_agent("search:16,halving=1", config).halving is True
    for bad in ("2", "yes", ""):
        with pytest.raises(ValueError, match="halving"):
            make_agent(f"search:8,halving={bad}", config)
    with pytest.raises(ValueError, match=r"halving=1 is not valid; valid: True or False"):
        SearchAgent(config, halving=1)  # type: ignore[arg-type]


def test_search_bench__cells_and_bad_cells(capsys):
    """``--game duel:official_5x10`` benchmarks that layout; a malformed cell is one clear line, not a traceback."""
    from agents.search import main

    main(["--bench", "--game", "duel:official_5x10", "--games", "1", "--rollouts", "4", "--candidates", "2"])
    out = capsys.readouterr().out
    assert out.startswith("duel:official_5x10 rollouts=4 candidates=2") and "median=" in out
    for cell, words in (("duel:nope", "'seed_5x9', 'official_5x10'"), ("base:x", "GAME:PLAYERS"),
                        ("base:11", "3..10")):  # fmt: skip
        with pytest.raises(SystemExit):
            main(["--bench", "--game", cell])
        assert words in capsys.readouterr().err


def test_search__margin_rule_on_a_fixed_value_table(monkeypatch):
    """The rule on hand-set rollout values (``_evaluate`` stubbed): the advantage is the mean paired difference and
    its standard error ``std(d, ddof=1) / sqrt(n)``; the prior's first choice is left only above the margin."""
    config = GameConfig(num_players=5)
    state, agent = _decision_point(config, seed=1, steps=8, rollouts=8, candidates=2)
    obs, mask = encode_observation(state, 0), legal_action_mask(state).astype(np.int8)
    d = np.array([1.0, 3.0, 0.0, 2.0])  # candidate 1 minus candidate 0 per determinization
    table = np.stack([np.zeros(4), d], axis=1)
    monkeypatch.setattr(agent, "_evaluate", lambda cand, k, deadline: (table[:k], np.ones((k, 2), dtype=bool)))
    se = float(np.std(d, ddof=1) / np.sqrt(4))  # 0.645...; mean 1.5 = 2.32 standard errors
    for margin, leaves in ((0.0, True), (2.0, True), (2.5, False)):
        agent.margin = margin
        a = agent.act(obs, mask)
        cand = list(agent.last_stats["values"])
        adv, got_se = agent.last_stats["advantage"]
        assert adv == pytest.approx(1.5) and got_se == pytest.approx(se)
        assert a == (cand[1] if leaves else cand[0])
    # a single determinization has no standard error: any margin keeps the prior's first choice
    agent.rollouts, agent.margin = 2, 0.5
    assert agent.act(obs, mask) == next(iter(agent.last_stats["values"]))
