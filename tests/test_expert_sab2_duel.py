"""``expert`` for Saboteur 2 (agents.sab2.expert) and the Duel (agents.duel.expert): hand-built positions with exact
choices, the planner's distances, legal play at every player count, determinism, and the leak test (resampling
everything the seat cannot know never changes an action)."""

from __future__ import annotations

import copy

import numpy as np
import pytest
from hidden import RESAMPLERS

from agents import agent_names, make_agent
from agents.duel.expert import DuelExpert
from agents.sab2.expert import INF, Sab2Board, Sab2Expert
from agents.sab2.ladder import Sab2Agent
from saboteur_env import GameConfig, apply_action, encode_observation, legal_action_mask, new_game
from saboteur_env.duel.actions import duel_action_layout
from saboteur_env.duel.positions import make_duel_state
from saboteur_env.sab2.actions import action_layout
from saboteur_env.sab2.cards import Sab2Role as R
from saboteur_env.sab2.positions import make_sab2_state
from saboteur_env.sab2.state import Phase
from saboteur_env.sab2.view import Sab2View

CFG = GameConfig(game="sab2", num_players=4)
LAYOUT = action_layout(CFG)
DUEL = GameConfig(game="duel")
DUEL_LAYOUT = duel_action_layout(DUEL)
MIDDLE_GOLD = ("stone_a", "gold", "stone_b")  # goal slot 1, at (2, 8), holds the gold


def _choice(s, cls: type = Sab2Expert, seat: int = 0) -> str:
    agent = cls(s.config)
    agent.reset(seat, s.config.num_players, 0)
    return LAYOUT.to_string(agent.act(encode_observation(s, seat), legal_action_mask(s).astype(np.int8)))


def _state(board: str, role: int, hand: dict[str, int], peeked: tuple[int, ...] = (), **kw):
    roles = [role, R.SABOTEUR if role != R.SABOTEUR else R.BLUE_DIGGER, R.GREEN_DIGGER, R.BOSS]
    s = make_sab2_state(CFG, board, goals=MIDDLE_GOLD, roles=roles, hands={0: hand}, **kw)
    for slot in peeked:
        s.peeked[0, slot] = True
    s.board_changed()
    return s


CUT = """
. . . . . . . . ?
. . . . . . . . .
S T05 T05 T05 . . T05 T05 ?
. . . . . . . . .
. . . . . . . . ?
"""
OPEN_END = """
. . . . . . . . ?
. . . . . . . . .
S T05 T05 T05 T05 T05 T05 . ?
. . . . . . . . .
. . . . . . . . ?
"""
SHORT = """
. . . . . . . . ?
. . . . . . . . .
S T05 T05 . . . . . ?
. . . . . . . . .
. . . . . . . . ?
"""


# ---- the planner ----
def test_sab2_planner__counts_placements_through_laid_cards_and_edge_matching():
    s = _state(CUT, R.BLUE_DIGGER, {"T05": 2}, peeked=(1,))
    view = Sab2View.from_observation(encode_observation(s, 0), CFG, 0)
    board = Sab2Board(CFG, view, 1, np.array([0.0, 1.0, 0.0]))
    assert board.dist[1] == 2  # two gaps; the far part (2, 6)-(2, 7) already faces the gold
    assert board.value == 2.0
    (after,) = board.after_places([2 * CFG.cols + 4], [LAYOUT.decode(_place(s, "T05", (2, 4))).orientation])
    assert after[1] == 1
    # A straight N-S card in the gap breaks edge matching with its E-W neighbours: the planner never uses it.
    assert board.after_removals([2 * CFG.cols + 7])[0][1] == 3
    # The corner goals: through the middle goal (passed once it is turned over) or round the far part.
    assert board.dist[0] < INF and board.dist[2] < INF


def _place(s, code: str, at: tuple[int, int]) -> int:
    for a in np.flatnonzero(legal_action_mask(s)).tolist():
        if LAYOUT.to_string(a) == f"place {code} at ({at[0]},{at[1]})":
            return a
    raise AssertionError(f"no legal placement of {code} at {at}")


# ---- Saboteur 2: exact choices ----
def test_sab2_expert__completes_a_two_step_route_to_the_known_gold():
    s = _state(CUT, R.BLUE_DIGGER, {"T05": 2, "T04": 1, "T15": 1}, peeked=(1,))
    first = _choice(s)
    assert first in ("place T05 at (2,4)", "place T05 at (2,5)")
    cell = (2, 4) if first.endswith("(2,4)") else (2, 5)
    board = CUT.replace("T05 . . T05", "T05 T05 . T05" if cell == (2, 4) else "T05 . T05 T05")
    s2 = _state(board, R.BLUE_DIGGER, {"T05": 1, "T04": 1, "T15": 1}, peeked=(1,))
    second = _choice(s2)
    assert second == f"place T05 at {'(2,5)' if cell == (2, 4) else '(2,4)'}"
    s2 = apply_action(s2, _place(s2, "T05", (2, 5) if cell == (2, 4) else (2, 4)))
    assert s2.round_results[0]["gold_reached"] and s2.round_results[0]["finder"] == 0


def test_sab2_expert__joins_a_cut_tunnel_where_the_heuristic_does_not():
    gap = CUT.replace("T05 . . T05", "T05 . T05 T05")
    s = _state(gap, R.BLUE_DIGGER, {"T05": 1, "T04": 1, "T15": 1}, peeked=(1,))
    assert _choice(s) == "place T05 at (2,4)"  # this reaches the gold through the laid far part
    assert _choice(s, Sab2Agent) != "place T05 at (2,4)"  # the tile distance sees no progress there


def test_sab2_expert__saboteur_blocks_the_route_and_never_opens_a_goal():
    s = _state(OPEN_END, R.SABOTEUR, {"T05": 1, "T16": 1, "T04": 1})
    assert _choice(s) == "place T16 rot180 at (2,7)"  # the dead end on the only open arm
    s = _state(OPEN_END, R.SABOTEUR, {"T05": 1, "ROCKFALL": 1, "T04": 1})
    assert _choice(s).startswith("rockfall at (2,")  # a cut; the heuristic lays T05 into the goal
    assert _choice(s, Sab2Agent) == "place T05 at (2,7)"


def test_sab2_expert__profiteer_blocks_too():
    s = _state(OPEN_END, R.PROFITEER, {"T05": 1, "T16": 1})
    assert _choice(s) == "place T16 rot180 at (2,7)"


def test_sab2_expert__teams_lay_their_own_doors_and_never_the_others():
    assert _choice(_state(SHORT, R.BLUE_DIGGER, {"X11": 1, "X08": 1})) == "place X08 at (2,3)"
    assert _choice(_state(SHORT, R.GREEN_DIGGER, {"X11": 1, "X08": 1})) == "place X11 at (2,3)"
    # Only the other team's door in hand: never on the route (a map is better than helping the other team).
    assert _choice(_state(SHORT, R.BLUE_DIGGER, {"X11": 1, "MAP": 1})).startswith("map goal")


def test_sab2_expert__maps_only_unsettled_goals():
    hand = {"MAP": 1, "T15": 1}
    assert _choice(_state(SHORT, R.BLUE_DIGGER, hand)).startswith("map goal")
    assert _choice(_state(SHORT, R.BLUE_DIGGER, hand, peeked=(0,))) in ("map goal 1", "map goal 2")
    for peeked in ((1,), (0, 2)):  # the gold peeked, or implied by two stones: nothing left to learn
        assert not _choice(_state(SHORT, R.BLUE_DIGGER, hand, peeked=peeked)).startswith("map")


def test_sab2_expert__discards_keep_the_useful_cards():
    s = _state(SHORT, R.BLUE_DIGGER, {"T04": 1, "T05": 1}, broken={0: ["pickaxe"]})
    # Broken and without a repair: it passes, dropping the card no route can use (T04 cannot follow T05 E-W).
    assert _choice(s) == "discard T04"


def test_sab2_expert__frees_itself_and_lays_crystals_as_a_geologist():
    assert _choice(_state(SHORT, R.BLUE_DIGGER, {"T05": 1, "FREE_AT_LAST": 1}, trapped=[0])) == (
        "free_at_last seat+0"
    )
    assert _choice(_state(SHORT, R.GEOLOGIST, {"X16": 1, "T05": 1})).startswith("place X16")


# ---- the Duel: exact choices ----
def _duel_choice(s, cls: type = DuelExpert, seat: int = 0) -> str:
    agent = cls(DUEL)
    agent.reset(seat, 2, 0)
    return DUEL_LAYOUT.to_string(agent.act(encode_observation(s, seat), legal_action_mask(s).astype(np.int8)))


def test_duel_expert__fills_the_gap_to_the_known_gold():
    from agents.duel.ladder import DuelGreedyAgent

    s = make_duel_state("""
    . . . . ? . . . .
    B U06 U06 . U06 . ? . .
    . . . . ? . . . ?
    R . . . . . ? . .
    . . . . ? . . . .
    """, goals=("G01", "G02", "G03", "G10", "G04", "G08"),
        hands={0: {"U06": 1, "U07": 1, "MAP": 1}, 1: {}})  # fmt: skip
    s.peeked[0, 3] = True  # slot 3 at (1, 6): G10, 3 nuggets
    assert _duel_choice(s) == "place U06 at (1,3)"
    assert _duel_choice(s, DuelGreedyAgent) != "place U06 at (1,3)"


def test_duel_expert__blocks_the_opponents_route():
    s = make_duel_state("""
    . . . . ? . . . .
    B . . . . . ? . .
    . . . . ? . . . ?
    R U06 U06 U06 U06 . ? . .
    . . . . ? . . . .
    """, goals=("G01", "G02", "G03", "G06", "G10", "G08"), hands={0: {"ROCKFALL": 1, "U07": 1}, 1: {}})  # fmt: skip
    assert _duel_choice(s).startswith("rockfall at (3,")  # green is one card from slot 4 (G10)


def test_duel_expert__maps_only_unsettled_goals():
    s = make_duel_state(goals=("G01", "G02", "G03", "G06", "G10", "G08"), hands={0: {"MAP": 1, "U07": 1}, 1: {}})
    s.peeked[0, :5] = True
    assert _duel_choice(s) == "map goal 5"
    s.peeked[0, :] = True
    assert not _duel_choice(s).startswith("map")


# ---- registry, legality, determinism, leaks ----
def test_expert__registered_for_both_games():
    assert "expert" in agent_names("sab2") and "expert" in agent_names("duel")
    assert isinstance(make_agent("expert", CFG), Sab2Expert)
    assert isinstance(make_agent("expert", DUEL), DuelExpert)
    assert type(make_agent("heuristic", CFG)) is Sab2Agent  # the old names play as before


def _play(config: GameConfig, names: list[str], seed: int) -> list[int]:
    """One game with agent ``names[i % len]`` at seat i; every action checked legal; returns the actions."""
    state = new_game(config, np.random.default_rng(seed))
    agents = [make_agent(names[i % len(names)], config) for i in range(config.num_players)]
    for i, agent in enumerate(agents):
        agent.reset(i, config.num_players, 1000 * seed + i)
    actions = []
    while not state.game_over:
        seat = state.current
        mask = legal_action_mask(state)
        a = agents[seat].act(encode_observation(state, seat), mask.astype(np.int8))
        assert mask[a], (seat, a)
        actions.append(a)
        state = apply_action(state, a, inplace=True)
    return actions


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12])
def test_sab2_expert__legal_in_whole_games_at_every_player_count(players):
    config = GameConfig(game="sab2", num_players=players, rounds=1)
    _play(config, ["expert", "heuristic", "expert", "random"], seed=players)


@pytest.mark.parametrize("layout", ["seed_5x9", "official_5x10"])
def test_duel_expert__legal_in_whole_games(layout):
    config = GameConfig(game="duel", duel_layout=layout)
    for seed in range(2):
        _play(config, ["expert", "greedy"], seed)
        _play(config, ["random", "expert"], seed)


def test_expert__deterministic_for_a_seed():
    config = GameConfig(game="sab2", num_players=5, rounds=1)
    assert _play(config, ["expert"], 3) == _play(config, ["expert"], 3)
    assert _play(DUEL, ["expert"], 3) == _play(DUEL, ["expert"], 3)


def _changed_by_resampling(config: GameConfig, names: list[str], seed: int, limit: int) -> tuple[int, int]:
    """Play ``limit`` decisions; at each, act on the true state and (with copies of the agent) on two states with
    everything the seat cannot know resampled; return (changed actions, decisions with other hands redrawn)."""
    resample = RESAMPLERS[config.game]
    rng = np.random.default_rng(seed + 1000)
    state = new_game(config, np.random.default_rng(seed))
    agents = [make_agent(names[i % len(names)], config) for i in range(config.num_players)]
    for i, agent in enumerate(agents):
        agent.reset(i, config.num_players, 77 + i)
    changed = redrawn = 0
    for _ in range(limit):
        if state.game_over:
            break
        seat = state.current
        if config.game == "sab2" and state.phase == Phase.THEFT:  # roles are public by then
            twins = []
        else:
            twins = [copy.deepcopy(agents[seat]) for _ in range(2)]
        a = agents[seat].act(encode_observation(state, seat), legal_action_mask(state).astype(np.int8))
        for twin in twins:
            other = resample(state, seat, rng)
            redrawn += not np.array_equal(other.hands, state.hands)
            changed += twin.act(encode_observation(other, seat), legal_action_mask(other).astype(np.int8)) != a
        state = apply_action(state, a, inplace=True)
    return changed, redrawn


@pytest.mark.parametrize(("game", "players"), [("sab2", 5), ("sab2", 8), ("duel", 2)])
def test_expert__resampled_hidden_state_never_changes_an_action(game, players):
    config = GameConfig(game=game, num_players=players, rounds=2)
    changed, redrawn = _changed_by_resampling(config, ["expert"], seed=players, limit=150)
    assert redrawn > 100  # the resampler really redrew hidden cards
    assert changed == 0


def test_expert__the_leak_check_catches_a_peeking_agent():
    class Peeking(Sab2Expert):
        """Reads the hidden state through a side channel (the negative control)."""

        hidden: object = None

        def act(self, observation, action_mask):  # type: ignore[no-untyped-def]
            legal = np.flatnonzero(action_mask)
            return int(legal[int(Peeking.hidden.hands[1].argmax()) % legal.size])  # type: ignore[attr-defined]

    config = GameConfig(game="sab2", num_players=5, rounds=1)
    state = new_game(config, np.random.default_rng(0))
    rng = np.random.default_rng(1)
    agent = Peeking(config)
    agent.reset(0, 5, 0)
    changed = 0
    for _ in range(5):
        other = RESAMPLERS["sab2"](state, 0, rng)
        Peeking.hidden = state
        a = agent.act(encode_observation(state, 0), legal_action_mask(state).astype(np.int8))
        Peeking.hidden = other
        changed += agent.act(encode_observation(other, 0), legal_action_mask(other).astype(np.int8)) != a
    assert changed > 0
