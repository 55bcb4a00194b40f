"""Determinization (agents/determinize.py) and the IS-MCTS agent (agents/ismcts.py) in the three games.

The key property: a determinization built from a seat's views has exactly the seat's observation (and, for the
seat to act, its mask) while its hidden part is redrawn; the agent reads only observations, so resampling hidden
state (tests/hidden.py) never changes its action for a fixed seed and simulation budget.
"""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest
from hidden import RESAMPLERS

from agents.base.determinize import BaseDeterminizer
from agents.determinize import RoleSample, _new_events, make_determinizer
from agents.duel.determinize import DuelDeterminizer
from agents.ismcts import ISMCTSAgent, rollout_weights
from agents.sab2.determinize import Sab2Determinizer
from saboteur_env import GameConfig, action_to_string, apply_action, encode_observation, legal_action_mask, new_game
from saboteur_env.base.cards import deck_counts
from saboteur_env.base.positions import make_state
from saboteur_env.base.scoring import card_conservation
from saboteur_env.sab2.state import Phase


def _play_and_check(config: GameConfig, seed: int, every: int, max_checks: int) -> int:
    """Random play; each seat's determinizer follows that seat's observations (at its own decisions only, so
    short histories make it miss events); every ``every`` decisions the seat to act is determinized and its
    observation and mask compared with the real ones. Returns the checks made."""
    rng = np.random.default_rng(seed)
    state = new_game(config, rng)
    dets = [make_determinizer(config, s) for s in range(config.num_players)]
    checks = step = 0
    while not state.game_over and checks < max_checks:
        seat = state.current
        obs = encode_observation(state, seat)
        dets[seat].observe(obs)
        theft = config.game == "sab2" and state.phase == Phase.THEFT
        if step % every == 0 and not theft:
            sample = dets[seat].sample(np.random.default_rng(1000 + step))
            assert np.array_equal(encode_observation(sample, seat), obs), (config, seed, step)
            assert np.array_equal(legal_action_mask(sample), legal_action_mask(state)), (config, seed, step)
            assert sample.current == seat
            checks += 1
        legal = np.flatnonzero(legal_action_mask(state))
        state = apply_action(state, int(rng.choice(legal)), inplace=True)
        step += 1
    return checks


@pytest.mark.parametrize(
    "config",
    [
        GameConfig(num_players=3),
        GameConfig(num_players=5, history_length=4),
        GameConfig(num_players=10, history_length=1),
        GameConfig(num_players=6, rounds=1, margin=1),
    ],
    ids=lambda c: f"base-p{c.num_players}-L{c.history_length}",
)
def test_determinization__base_observation_and_mask_identical(config):
    assert _play_and_check(config, seed=config.num_players, every=2, max_checks=60) >= 30


@pytest.mark.parametrize("players,history", [(2, 16), (5, 4), (8, 1), (12, 16)])
def test_determinization__sab2_observation_and_mask_identical(players, history):
    config = GameConfig(game="sab2", num_players=players, history_length=history)
    assert _play_and_check(config, seed=players, every=3, max_checks=40) >= 20


@pytest.mark.parametrize("history", [16, 3])
def test_determinization__duel_observation_and_mask_identical(history):
    config = GameConfig(game="duel", history_length=history)
    assert _play_and_check(config, seed=history, every=2, max_checks=60) >= 40


@pytest.mark.slow
def test_determinization__many_positions_in_every_game():
    """The key property over many games: every player count, short and long histories, all three games."""
    checks = 0
    for seed in range(24):
        history = (16, 4, 1)[seed % 3]
        checks += _play_and_check(GameConfig(num_players=3 + seed % 8, history_length=history), seed, 3, 400)
        checks += _play_and_check(GameConfig(game="sab2", num_players=2 + seed % 11, history_length=history),
                                  seed, 3, 400)  # fmt: skip
        checks += _play_and_check(GameConfig(game="duel", history_length=history), seed, 3, 400)
    assert checks >= 3000


def _mid_game(config: GameConfig, seed: int, steps: int):
    rng = np.random.default_rng(seed)
    state = new_game(config, rng)
    det = make_determinizer(config, 0)
    for _ in range(steps):
        if state.current == 0:
            det.observe(encode_observation(state, 0))
        state = apply_action(state, int(rng.choice(np.flatnonzero(legal_action_mask(state)))), inplace=True)
    while state.current != 0:
        state = apply_action(state, int(rng.choice(np.flatnonzero(legal_action_mask(state)))), inplace=True)
    det.observe(encode_observation(state, 0))
    return state, det


def test_determinization__redraws_hidden_state_and_keeps_cards():
    """Other hands, roles and the pile vary between samples; every sample holds the round's deck exactly."""
    config = GameConfig(num_players=5)
    state, det = _mid_game(config, seed=3, steps=17)
    hands, roles = set(), set()
    for i in range(20):
        ref = det.sample_reference(np.random.default_rng(i))
        assert card_conservation(ref).tolist() == deck_counts(config).tolist()
        assert np.array_equal(ref.hands[0], state.hands[0])
        assert ref.roles[0] == state.roles[0]
        hands.add(ref.hands[1:].tobytes())
        roles.add(ref.roles.tobytes())
    assert len(hands) >= 15 and len(roles) >= 2


def test_determinization__duel_keeps_cards_and_goals():
    from saboteur_env.duel import cards as dc
    from saboteur_env.duel.scoring import card_conservation as duel_conservation

    config = GameConfig(game="duel")
    _state, det = _mid_game(config, seed=5, steps=30)
    hands = set()
    for i in range(10):
        ref = det.sample_reference(np.random.default_rng(i))
        assert duel_conservation(ref).tolist() == dc.DECK_COUNTS.tolist()
        assert len(set(ref.goal_card.tolist())) == dc.GOALS_PER_ROUND and not ref.goal_out[ref.goal_card].any()
        hands.add(ref.hands[1].tobytes())
    assert len(hands) >= 5


def test_determinization__own_knowledge_is_kept():
    """A peeked gold goal is gold in every sample; a saboteur's sample always has it among the saboteurs."""
    config = GameConfig(num_players=5, rounds=1)
    state = make_state(config, goals=("stone_a", "stone_b", "gold"), peeked={0: [2]}, roles=[1, 0, 0, 1, 0])
    det = BaseDeterminizer(config, 0)
    det.observe(encode_observation(state, 0))
    for i in range(30):
        ref = det.sample_reference(np.random.default_rng(i))
        assert ref.goal_kind[2] == state.goal_kind[2] and ref.roles[0] == 1
        assert 1 <= int(ref.roles.sum()) <= 2  # 2 saboteur cards among 6 role cards, one left over


class _FixedRoles:
    """A plug-in RoleSampler that always returns the same assignment (the interface belief models implement)."""

    def __init__(self, roles: tuple[int, ...], rest: tuple[int, ...]) -> None:
        self.roles, self.rest, self.seen = roles, rest, 0

    def observe(self, view) -> None:
        self.seen += 1

    def sample_roles(self, view, rng) -> RoleSample:
        return RoleSample(self.roles, self.rest)


def test_determinization__role_sampler_plugs_in():
    config = GameConfig(num_players=4)
    state = new_game(config, np.random.default_rng(0))
    roles = tuple(int(r) for r in state.roles)
    fixed = _FixedRoles((roles[0], 1, 0, 0), (0,))
    det = BaseDeterminizer(config, 0, roles=fixed)
    det.observe(encode_observation(state, 0))
    assert fixed.seen == 1
    ref = det.sample_reference(np.random.default_rng(1))
    assert ref.roles.tolist() == [roles[0], 1, 0, 0]
    sab2 = GameConfig(game="sab2", num_players=3)
    state = new_game(sab2, np.random.default_rng(0))
    own = int(state.roles[0])
    det2 = Sab2Determinizer(sab2, 0, roles=_FixedRoles((own, 5, 5), (0, 0, 1)))
    det2.observe(encode_observation(state, 0))
    ref2 = det2.sample_reference(np.random.default_rng(0))
    assert ref2.roles.tolist() == [own, 5, 5]
    assert ref2.round_roles[0][ref2.reserve_pos :].tolist()[:3] == [0, 0, 1]


def test_determinization__needs_a_view_and_refuses_the_theft_phase():
    config = GameConfig(num_players=4)
    with pytest.raises(ValueError, match="observe"):
        BaseDeterminizer(config, 0).sample(np.random.default_rng(0))
    with pytest.raises(ValueError, match="observe"):
        DuelDeterminizer(GameConfig(game="duel"), 0).sample(np.random.default_rng(0))


def test_new_events__window_matching():
    assert _new_events([], [(1,), (2,)], 4) == 2
    assert _new_events([(1,), (2,)], [(1,), (2,), (3,)], 4) == 1
    assert _new_events([(1,), (2,), (3,), (4,)], [(3,), (4,), (5,), (6,)], 4) == 2
    assert _new_events([(1,), (2,), (3,), (4,)], [(1,), (2,), (3,), (4,)], 4) == 0
    assert _new_events([(1,), (2,), (3,), (4,)], [(7,), (8,), (9,), (9,)], 4) == 4  # nothing lines up: all new


# ---- the agent ------------------------------------------------------------------------------------------------
WIN_NOW = """
. . . . . . . . ?
. . . . . . . . .
S T05 T05 T05 T05 T05 T05 . ?
. . . . . . . . .
. . . . . . . . ?
"""


def test_ismcts__takes_the_gold_when_one_card_reaches_it():
    """A gold-digger who peeked the gold behind the tunnel's end and holds the connecting card plays it."""
    config = GameConfig(num_players=4, rounds=1)
    state = make_state(config, WIN_NOW, goals=("stone_a", "gold", "stone_b"), peeked={0: [1]}, roles=[0, 1, 0, 0],
                       hands={0: {"T05": 1, "T01": 1, "MAP": 1, "BROKEN_CART": 1}})  # fmt: skip
    agent = ISMCTSAgent(config, simulations=40)
    agent.reset(0, 4, seed=1)
    a = agent.act(encode_observation(state, 0), legal_action_mask(state).astype(np.int8))
    assert action_to_string(config, a).endswith("at (2,7)")  # T05 or T01: both open onto the gold
    after = apply_action(state, a)
    assert after.game_over and after.round_results[0]["winner"] == "gold-diggers"
    assert agent.last_stats["simulations"] == 40


def _decision_point(config: GameConfig, seed: int, steps: int):
    """A mid-game state where seat 0 is to act, and an ismcts agent that followed seat 0 there."""
    rng = np.random.default_rng(seed)
    state = new_game(config, rng)
    agent = ISMCTSAgent(config, simulations=8)
    agent.reset(0, config.num_players, seed=seed)
    for _ in range(steps):
        if state.current == 0:
            agent.act(encode_observation(state, 0), legal_action_mask(state).astype(np.int8))
        state = apply_action(state, int(rng.choice(np.flatnonzero(legal_action_mask(state)))), inplace=True)
    while state.current != 0 or (config.game == "sab2" and state.phase == Phase.THEFT):
        state = apply_action(state, int(rng.choice(np.flatnonzero(legal_action_mask(state)))), inplace=True)
    return state, agent


@pytest.mark.parametrize("game,players,steps", [("base", 5, 12), ("sab2", 4, 15), ("duel", 2, 14)])
def test_ismcts__deterministic_and_blind_to_resampled_hidden_state(game, players, steps):
    """Same seed and budget: same action; resampling everything seat 0 cannot know changes nothing it does."""
    config = GameConfig(game=game, num_players=players)
    resample = RESAMPLERS[game]
    state, agent = _decision_point(config, seed=players, steps=steps)
    mask = legal_action_mask(state).astype(np.int8)
    first = copy.deepcopy(agent).act(encode_observation(state, 0), mask)
    assert copy.deepcopy(agent).act(encode_observation(state, 0), mask) == first
    rng = np.random.default_rng(7)
    for _ in range(3):
        other = resample(state, 0, rng)
        assert not np.array_equal(other.hands[1:], state.hands[1:]) or game == "duel"
        assert copy.deepcopy(agent).act(encode_observation(other, 0), legal_action_mask(other).astype(np.int8)) == first


def test_ismcts__plays_whole_games_in_every_game():
    for config in (GameConfig(num_players=3, rounds=1), GameConfig(game="sab2", num_players=3, rounds=1),
                   GameConfig(game="duel", rounds=1)):  # fmt: skip
        state = new_game(config, np.random.default_rng(0))
        # seat 0 the default search, the others plain UCT (uniform expansion, rollouts to the round's end)
        agents = [ISMCTSAgent(config, simulations=2)] + [
            ISMCTSAgent(config, simulations=2, prior="uniform", widening=None, evaluate="rollout")
            for _ in range(config.num_players - 1)
        ]
        for seat, agent in enumerate(agents):
            agent.reset(seat, config.num_players, seed=seat)
        decisions = 0
        while not state.game_over:
            seat = state.current
            a = agents[seat].act(encode_observation(state, seat), legal_action_mask(state).astype(np.int8))
            state = apply_action(state, a, inplace=True)
            decisions += 1
        assert decisions > 10, config


def test_ismcts__seconds_budget():
    config = GameConfig(num_players=4)
    state = new_game(config, np.random.default_rng(0))
    agent = ISMCTSAgent(config, seconds=0.05)
    agent.reset(0, 4, seed=0)
    agent.act(encode_observation(state, 0), legal_action_mask(state).astype(np.int8))
    assert agent.last_stats["simulations"] >= 1 and agent.last_stats["seconds"] >= 0.05


def test_ismcts__bad_input():
    config = GameConfig(num_players=4)
    for kwargs in ({"simulations": 0}, {"simulations": 2.5}, {"seconds": -1.0}, {"exploration": -0.1},
                   {"place_weight": 0.0}, {"scale": 0.0}, {"widening": 0.0}, {"prior": "oracle"},
                   {"evaluate": "guess"}, {"horizon": -1}):  # fmt: skip
        with pytest.raises(ValueError, match=next(iter(kwargs))):
            ISMCTSAgent(config, **kwargs)
    with pytest.raises(ValueError, match="base game only"):
        ISMCTSAgent(GameConfig(game="duel"), evaluate="heuristic")
    agent = ISMCTSAgent(config, simulations=2)
    state = new_game(config, np.random.default_rng(0))
    with pytest.raises(ValueError, match="reset"):
        agent.act(encode_observation(state, 0), legal_action_mask(state).astype(np.int8))
    with pytest.raises(ValueError, match="num_players"):
        agent.reset(0, 5, seed=0)
    with pytest.raises(ValueError, match="seat"):
        agent.reset(4, 4, seed=0)
    agent.reset(0, 4, seed=0)
    with pytest.raises(ValueError, match="at least one legal"):
        agent.act(encode_observation(state, 0), np.zeros_like(legal_action_mask(state), dtype=np.int8))


def test_rollout_weights__prefer_path_cards_near_the_goals():
    from saboteur_env import action_layout
    from saboteur_env.base.actions import ActionType

    config = GameConfig(num_players=4)
    w = rollout_weights(config)
    lay = action_layout(config)
    place = lay.type_arr == ActionType.PLACE
    assert w[place].mean() > 10 * w[lay.type_arr == ActionType.DISCARD].mean()
    near = place & (lay.arg_arr == config.cell_index(2, 7))
    far = place & (lay.arg_arr == config.cell_index(2, 1))
    assert w[near].max() > w[far].max()
    for game in ("sab2", "duel"):
        assert (rollout_weights(GameConfig(game=game)) > 0).all()


def test_experiment__paired_and_resumable(tmp_path):
    from experiments.analysis import ismcts as exp

    out = tmp_path / "run.jsonl"
    argv = ["--players", "3", "--games", "2", "--sims", "2", "--lineup", "greedy", "--out", str(out)]
    exp.main(argv)
    recs = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["seed"] for r in recs] == [0, 1] and [r["seat"] for r in recs] == [0, 1]
    assert all(r["ismcts_moves"] > 0 and r["role"] in ("gold-digger", "saboteur") for r in recs)
    exp.main(argv)  # resumed: nothing replayed
    assert len(out.read_text().splitlines()) == 2
    table = exp.summary(out)
    assert "| all | 2 |" in table and "ms (wall clock) per ismcts decision" in table and "ms CPU time" in table
    with pytest.raises(SystemExit):
        exp.main(["--games", "0", "--out", str(out)])


def test_make_agent_builds_ismcts_by_name_in_every_game() -> None:
    from agents import agent_names, make_agent

    assert all("ismcts" in agent_names(game, kind="search") for game in ("base", "sab2", "duel"))
    for game in ("base", "sab2", "duel"):
        agent = make_agent("ismcts:7", GameConfig(game=game))
        assert isinstance(agent, ISMCTSAgent) and agent.simulations == 7
    assert make_agent("ismcts", GameConfig()).simulations == 100
    for bad in ("ismcts:x", "ismcts:0", "ismcts:", "ismcts:٣"):
        with pytest.raises(ValueError, match="ismcts:SIMS needs a whole number"):
            make_agent(bad, GameConfig())
