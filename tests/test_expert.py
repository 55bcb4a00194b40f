"""The planning agents (agents/base/planner.py, agents/base/expert.py): exact choices on hand-built positions,
legality and determinism over random games, and the leak test for agents (resampled hidden state never changes an
action)."""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import pytest
from hidden import resample_base

from agents import make_agent
from agents.base.analysis import PublicBoard
from agents.base.planner import CardCounter, available_orientations, board_distance
from saboteur_env import GameConfig, apply_action, encode_observation, legal_action_mask, new_game
from saboteur_env.base.actions import action_layout
from saboteur_env.base.positions import make_state

# A rockfall gap: the tunnel (2,1) is cut from the segment (2,4)-(2,7), whose tip faces the middle goal. Rows 1
# and 3 wall the gap in (their straights are closed towards row 2), so no tile-distance route runs through it.
GAP = """
. . . . . . . . ?
. . T05 T05 . . . . .
S T05 . . T05 T05 T05 T05 ?
. . T05 T05 . . . . .
. . . . . . . . ?
"""
GOLD_MIDDLE = ("stone_a", "gold", "stone_b")


def _choose(name: str, state, seat: int = 0, role: str | None = None) -> str:
    cfg = state.config
    agent = make_agent(name, cfg, role)
    agent.reset(seat, cfg.num_players, 0)
    a = agent.act(encode_observation(state, seat), legal_action_mask(state).astype(np.int8))
    assert legal_action_mask(state)[a]
    return action_layout(cfg).to_string(a)


def test_planner__distance_counts_placements_through_disconnected_cards():
    state = make_state(None, GAP, goals=GOLD_MIDDLE)
    avail = available_orientations(np.full(27, 1))
    # two cards re-join the segment whose tip faces the middle goal; the tile distance sees only empty cells
    assert board_distance(state.config, state.cell_shape, avail).tolist() == [7, 2, 7]
    assert PublicBoard.from_state(state).distance.tolist() == [9, 11, 9]


def test_planner__one_placement_away_agrees_with_the_engine():
    """Distance 1 to a face-down goal exactly when some legal placement (engine's table) makes it reached."""
    from saboteur_env.base.board import LEGAL_TABLE, cell_codes
    from saboteur_env.base.cards import PLACEABLE_SHAPE

    avail = available_orientations(np.full(27, 1))
    checked = 0
    for seed in range(2):
        for k, state in enumerate(_greedy_states(seed)):
            if k % 2:
                continue
            cfg = state.config
            dist = board_distance(cfg, state.cell_shape, avail)
            legal = LEGAL_TABLE[cell_codes(state)]
            reached = np.zeros(3, dtype=bool)
            for cell, orient in zip(*np.nonzero(legal), strict=True):
                shape = state.cell_shape.copy()
                shape[cell] = PLACEABLE_SHAPE[orient]
                reached |= PublicBoard(cfg, shape).distance == 0
            facedown = ~state.goal_revealed
            assert np.array_equal((dist == 1)[facedown], reached[facedown]), (seed, dist, reached)
            checked += int(reached.any())
    assert checked >= 3  # positions one card from a goal were met


def _greedy_states(seed: int, num_players: int = 4):
    """States along one round of greedy diggers (they bring the tunnel near the goals)."""
    cfg = GameConfig(num_players=num_players, rounds=1)
    agents = [make_agent("greedy", cfg) for _ in range(num_players)]
    for i, a in enumerate(agents):
        a.reset(i, num_players, seed)
    state = new_game(cfg, np.random.default_rng(seed))
    while not state.game_over:
        yield state
        mask = legal_action_mask(state)
        state = apply_action(state, agents[state.current].act(encode_observation(state, state.current),
                                                              mask.astype(np.int8)))  # fmt: skip


def test_planner__no_card_left_means_no_route():
    state = make_state(None, GAP, goals=GOLD_MIDDLE)
    counts = np.full(27, 1)
    counts[[0, 2, 4]] = 0  # no crossroads, no E-W T, no E-W straight: nothing can run E-W through the walled gap
    middle = board_distance(state.config, state.cell_shape, available_orientations(counts))[1]
    assert middle > 2


def test_planner__two_step_route_where_greedy_stalls():
    state = make_state(None, GAP, goals=GOLD_MIDDLE, hands={0: {"T05": 2}}, peeked={0: [1]}, current=0)
    assert _choose("greedy", state).startswith("discard")  # one step ahead, filling the gap gains nothing
    assert _choose("suspicious", state, role="miner").startswith("discard")
    cfg = state.config
    agent = make_agent("planner", cfg)
    agent.reset(0, cfg.num_players, 0)
    a = agent.act(encode_observation(state, 0), legal_action_mask(state).astype(np.int8))
    assert action_layout(cfg).to_string(a) == "place T05 at (2,2)"
    state = apply_action(state, a)
    state.current = 0  # the same seat again: the second card closes the gap and reaches the gold
    state.board_changed()
    a = agent.act(encode_observation(state, 0), legal_action_mask(state).astype(np.int8))
    assert action_layout(cfg).to_string(a) == "place T05 at (2,3)"
    state = apply_action(state, a)
    assert state.round_results[-1]["winner"] == "gold-diggers"


def test_planner__settled_goals_are_never_mapped():
    # my own map showed stone at the top: map the middle (nearer the tunnel) rather than re-peek
    state = make_state(None, goals=GOLD_MIDDLE, hands={0: {"MAP": 1, "T16": 1}}, peeked={0: [0]}, current=0)
    assert _choose("planner", state) == "map goal 1"
    # top stone (mine) and bottom stone (revealed): the gold is settled in the middle, no map at all
    board = """
. . . . . . . . ?
. . . . . . . . .
S . . . . . . . ?
. . . . . . . . .
. . . . . . . . B
"""
    state = make_state(None, board, goals=("stone_a", "gold", "stone_b"), hands={0: {"MAP": 1, "T05": 1}},
                       peeked={0: [0]}, current=0)  # fmt: skip
    assert _choose("planner", state) == "place T05 at (2,1)"


def test_planner__maps_avoid_a_goal_a_trusted_digger_peeked():
    state = make_state(None, hands={0: {"MAP": 1}}, peeked={1: [1]}, current=0)
    assert _choose("planner", state) in ("map goal 0", "map goal 2")


def test_planner__discards_the_least_useful_card():
    # broken pickaxe: no placement; the gold is mapped, so the map is worthless, while the old ladder drops its
    # break card first
    state = make_state(None, hands={0: {"BROKEN_CART": 1, "T04": 1, "MAP": 1}}, peeked={0: [0]},
                       broken={0: ["pickaxe"]}, current=0)  # fmt: skip
    assert _choose("planner", state) == "discard MAP"
    assert _choose("suspicious", state, role="miner") == "discard BROKEN_CART"
    state = make_state(None, hands={0: {"BROKEN_CART": 1, "T01": 1, "T15": 1}}, broken={0: ["pickaxe"]}, current=0)
    assert _choose("planner", state) == "discard T15"


def test_planner__repairs_itself_first_and_never_a_suspect():
    state = make_state(None, hands={0: {"REPAIR_PICKAXE": 1, "T05": 1}}, broken={0: ["pickaxe"]}, current=0)
    assert _choose("planner", state) == "repair pickaxe seat+0"


def test_blocker__dead_end_on_the_route_near_the_gold():
    board = """
. . . . . . . . ?
. . . . . . . . .
S T05 T05 T05 T05 T05 T05 . ?
. . . . . . . . .
. . . . . . . . ?
"""
    state = make_state(None, board, goals=GOLD_MIDDLE, hands={0: {"T05": 1, "T16": 1}}, roles=[1, 0, 0, 0],
                       current=0)  # fmt: skip
    assert _choose("blocker", state) == "place T16 rot180 at (2,7)"
    assert _choose("expert", state) == "place T16 rot180 at (2,7)"


def test_blocker__lies_low_far_from_the_goals():
    state = make_state(None, hands={0: {"T16": 1, "T15": 1, "T05": 1}}, roles=[1, 0, 0, 0], current=0)
    # no early dead end that would expose it, no progress either: it drops the miners' straight, keeps blockers
    assert _choose("blocker", state) == "discard T05"


def test_card_counter__unseen_cards():
    cfg = GameConfig(num_players=4)
    counter = CardCounter(cfg)
    state = make_state(cfg, GAP, hands={0: {"T05": 2, "MAP": 1}})
    counter.played(25)  # a rockfall was played
    unseen = counter.unseen(state.cell_shape, state.hands[0])
    assert unseen[4] == 0  # 3 copies of T05 in the deck, 9 on this board and 2 in hand: none left unseen
    assert unseen[25] == 2 and unseen[26] == 5 and unseen[0] == 5


def test_balance__table_and_bad_input(capsys):
    from experiments.analysis.balance import main

    assert main(["--lineups", "expert", "random", "--players", "3", "--games", "2", "--behaviour"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| 3 |")]
    assert [r.split("|")[2].strip() for r in rows] == ["expert", "random"] * 2  # balance, then habits
    assert "(2 seeds)" in rows[1] and rows[0].count("|") == 8 and rows[2].count("|") == 9
    for bad in (["--players", "2"], ["--games", "0"], ["--lineups", "nobody"], ["--lineups", "gold_oracle"],
                ["--secret", "xyz"]):  # fmt: skip
        with pytest.raises(SystemExit):
            main(bad)
    assert "valid:" in capsys.readouterr().err


# ---- games -----------------------------------------------------------------------------------------------------------
def _game(num_players: int, names: list[str], seed: int, rounds: int = 1) -> list[int]:
    cfg = GameConfig(num_players=num_players, rounds=rounds)
    agents = [make_agent(names[i % len(names)], cfg) for i in range(num_players)]
    for i, a in enumerate(agents):
        a.reset(i, num_players, seed * 10 + i)
    state = new_game(cfg, np.random.default_rng(seed))
    actions = []
    while not state.game_over:
        mask = legal_action_mask(state)
        a = agents[state.current].act(encode_observation(state, state.current), mask.astype(np.int8))
        assert mask[a], f"{names} chose an illegal action {a}"
        actions.append(a)
        state = apply_action(state, a)
    return actions


@pytest.mark.parametrize("num_players", range(3, 11))
def test_expert__only_legal_actions(num_players):
    _game(num_players, ["expert", "planner", "blocker", "heuristic"], seed=num_players)


def test_expert__deterministic_for_a_seed():
    assert _game(5, ["expert"], seed=3) == _game(5, ["expert"], seed=3)
    assert _game(5, ["expert"], seed=3) != _game(5, ["expert"], seed=4)


@pytest.mark.slow
@pytest.mark.parametrize("num_players", range(3, 11))
def test_expert__only_legal_actions_full_games(num_players):
    for seed in range(3):
        _game(num_players, ["expert", "planner", "blocker"], seed=100 + seed, rounds=3)


# ---- the leak test for agents ----------------------------------------------------------------------------------------
Policy = Callable[[object, int], int]


def _changed_by_resampling(num_players: int, seed: int, policy_for: Callable[[GameConfig], list]) -> int:
    """Play a game; at every decision, act once on the true state and once (on a copy of the agent) on states with
    every hidden fact of the acting seat resampled; return how many decisions changed."""
    cfg = GameConfig(num_players=num_players, rounds=2)
    agents = policy_for(cfg)
    rng = np.random.default_rng(seed + 1000)
    state = new_game(cfg, np.random.default_rng(seed))
    changed = redrawn = decisions = 0
    while not state.game_over:
        seat = state.current
        twins = [copy.deepcopy(agents[seat]) for _ in range(2)]
        a = agents[seat](state, seat)
        for twin in twins:
            other = resample_base(state, seat, rng)
            redrawn += not np.array_equal(other.hands, state.hands)
            changed += twin(other, seat) != a
        state = apply_action(state, a)
        decisions += 1
    assert redrawn > decisions  # the resampler really redrew other hands at most decisions
    return changed


class _ViewPolicy:
    """An agent driven through its seat's observation and mask (what every experiment does)."""

    def __init__(self, name: str, cfg: GameConfig, seat: int) -> None:
        self.agent = make_agent(name, cfg)
        self.agent.reset(seat, cfg.num_players, 77 + seat)

    def __call__(self, state, seat: int) -> int:
        return self.agent.act(encode_observation(state, seat), legal_action_mask(state).astype(np.int8))


class _PeekingPolicy(_ViewPolicy):
    """A deliberately leaky agent (the negative control): it also reads the next seat's hand."""

    def __call__(self, state, seat: int) -> int:
        legal = np.flatnonzero(legal_action_mask(state))
        return int(legal[int(state.hands[(seat + 1) % state.config.num_players].argmax()) % legal.size])


@pytest.mark.parametrize("name", ["expert", "planner", "blocker"])
def test_expert__resampled_hidden_state_never_changes_an_action(name):
    assert _changed_by_resampling(5, 11, lambda cfg: [_ViewPolicy(name, cfg, s) for s in range(5)]) == 0


def test_expert__the_leak_check_catches_a_peeking_agent():
    assert _changed_by_resampling(5, 11, lambda cfg: [_PeekingPolicy("random", cfg, s) for s in range(5)]) > 0
