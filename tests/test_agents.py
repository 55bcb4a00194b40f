"""The agent ladder: only masked actions, determinism, sensible behaviour on hand-built positions."""

from __future__ import annotations

import numpy as np
import pytest

from agents import agent_names, make_agent, oracle_names
from agents.agent import RoleDispatch
from agents.base.analysis import PublicBoard, board_from_view, placement_outcomes
from saboteur_env import player_view, raw_env
from saboteur_env.base.actions import ActionType, action_layout
from saboteur_env.base.positions import make_state


def _play(num_players: int, miners: str, saboteurs: str, seed: int) -> list[int]:
    env = raw_env(num_players=num_players, rounds=1)
    cfg = env.config
    agents = [RoleDispatch(cfg, make_agent(miners, cfg, "miner"), make_agent(saboteurs, cfg, "saboteur"))
              for _ in range(num_players)]  # fmt: skip
    env.reset(seed=seed)
    for i, a in enumerate(agents):
        a.reset(i, num_players, seed * 10 + i)
        a.bind_state(env.state)
    actions = []
    for name in env.agent_iter():
        obs, _, term, _, _ = env.last()
        if term:
            env.step(None)
            continue
        a = agents[env.possible_agents.index(name)].act(obs["observation"], obs["action_mask"])
        assert obs["action_mask"][a] == 1, f"{miners}/{saboteurs} chose an illegal action {a}"
        actions.append(a)
        env.step(a)
    return actions


@pytest.mark.parametrize("num_players", range(3, 11))
def test_agents__only_masked_actions(num_players):
    names = sorted(agent_names("base", kind="scripted"))
    for i, name in enumerate(names):
        other = names[(i + num_players) % len(names)]
        _play(num_players, name, other, seed=num_players * 100 + i)


def test_agents__deterministic_for_a_seed():
    assert _play(5, "bayes", "covert", 3) == _play(5, "bayes", "covert", 3)


def test_agents__cheating_agents_are_named():
    assert {"role_oracle", "gold_oracle"} == oracle_names("base") == oracle_names("sab2")
    assert not oracle_names("duel")
    with pytest.raises(RuntimeError, match="bind_state"):
        cfg = raw_env(num_players=4).config
        agent = make_agent("gold_oracle", cfg)
        state = make_state(cfg, hands={0: {"T05": 1}})
        view_obs = __import__("saboteur_env").encode_observation(state, 0)
        mask = __import__("saboteur_env").legal_action_mask(state).astype(np.int8)
        agent.reset(0, 4, 0)
        agent.act(view_obs, mask)


BOARD = """
. . . . . . . . ?
. . . . . . . . .
S T05 T05 T05 T05 . . . ?
. . . . . . . . .
. . . . . . . . ?
"""


def test_analysis__distances_and_placement_outcomes():
    state = make_state(None, BOARD, hands={0: {"T05": 1, "T16": 1}})
    board = PublicBoard.from_state(state)
    # Tunnel tip at (2,4): (2,5), (2,6), (2,7) are still needed for the middle goal; 4 for the others.
    assert board.distance.tolist() == [5, 3, 5]
    view = player_view(state, 0)
    assert np.array_equal(board_from_view(view).shape, board.shape)
    layout = action_layout(state.config)
    legal = np.flatnonzero(__import__("saboteur_env").legal_action_mask(state))
    place = legal[layout.type_arr[legal] == ActionType.PLACE]
    out = placement_outcomes(board, layout.arg_arr[place], layout.orientation_arr[place])
    moves = {layout.to_string(int(a)): tuple(o) for a, o in zip(place, out, strict=True)}
    assert moves["place T05 at (2,5)"] == (4, 2, 4)
    assert moves["place T16 rot180 at (2,5)"][1] == 9  # the tip is closed: the next route is 9 tiles


def test_agents__greedy_builds_towards_the_gold():
    state = make_state(None, BOARD, hands={0: {"T05": 1, "T16": 1, "T07": 1}}, current=0)
    cfg = state.config
    agent = make_agent("greedy", cfg)
    agent.reset(0, 4, 0)
    mask = __import__("saboteur_env").legal_action_mask(state).astype(np.int8)
    a = agent.act(__import__("saboteur_env").encode_observation(state, 0), mask)
    assert action_layout(cfg).to_string(a) == "place T05 at (2,5)"


def test_agents__overt_saboteur_blocks_near_the_gold():
    board = BOARD.replace("T05 T05 T05 T05 . . .", "T05 T05 T05 T05 T05 T05 .")
    state = make_state(None, board, hands={0: {"T05": 1, "T16": 1}}, roles=[1, 0, 0, 0], current=0)
    cfg = state.config
    agent = make_agent("overt", cfg)
    agent.reset(0, 4, 0)
    se = __import__("saboteur_env")
    a = agent.act(se.encode_observation(state, 0), se.legal_action_mask(state).astype(np.int8))
    assert action_layout(cfg).to_string(a) == "place T16 rot180 at (2,7)"


def test_agents__decode_state_reads_the_hidden_facts():
    from saboteur_env.base.observation import decode_state

    env = raw_env(num_players=6)
    env.reset(seed=9)
    hidden = decode_state(env.state(), env.config)
    assert hidden["roles"] == env.game.roles.tolist()
    assert hidden["leftover_role"] == env.game.leftover_role
    assert hidden["goal_kinds"] == env.game.goal_kind.tolist()


@pytest.mark.slow
@pytest.mark.parametrize("num_players", range(3, 11))
def test_agents__only_masked_actions_many_games(num_players):
    names = sorted(agent_names("base", kind="scripted"))
    for seed in range(5):
        for i, name in enumerate(names):
            _play(num_players, name, names[(i + seed) % len(names)], seed=1000 + seed * 37 + i)
