"""Duel agents and the duel tournament: legal play, the greedy heuristic's choices, head-to-head tables."""

from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.duel.ladder import DuelGreedyAgent
from experiments.tournament.cli import main
from experiments.tournament.duel import head_to_head
from experiments.tournament.logs.read import read_rounds
from experiments.tournament.loop import play
from experiments.tournament.report import build as report
from experiments.tournament.rounds import GameSpec
from experiments.tournament.run import run_duel
from saboteur_env import GameConfig, encode_observation, legal_action_mask
from saboteur_env.duel.actions import duel_action_layout
from saboteur_env.duel.positions import make_duel_state

CFG = GameConfig(game="duel")
LAYOUT = duel_action_layout(CFG)


@pytest.mark.parametrize("pair", [("greedy", "random"), ("random", "greedy"), ("greedy", "greedy")])
def test_duel_agents__play_whole_games_legally(pair):
    records = play(GameSpec("duel", 2, pair, seed=7))  # env.step raises on any illegal action
    assert len(records) == 3 and records[-1]["end"]["nuggets"] == [sum(r["end"]["gained"][i] for r in records)
                                                                 for i in (0, 1)]  # fmt: skip


def test_duel_agents__greedy_beats_random():
    # A fixed tournament secret: the agents' seeds are sealed (drawn from a fresh secret unless one is given).
    rows = head_to_head([r for g in run_duel(["greedy", "random"], games=6, seed=100, secret=3) for r in g])
    assert rows[0]["agent_a"] == "greedy" and rows[0]["games"] == 12
    assert rows[0]["a_wins"] >= 9 and rows[0]["diff_ci_low"] > 0
    # per colour: six games each; the two colours' means add up to the per-seed difference (both games of a seed)
    r = rows[0]
    assert r["a_as_blue_games"] == r["a_as_green_games"] == 6
    assert abs(r["a_as_blue_diff"] + r["a_as_green_diff"] - r["a_minus_b_per_seed"]) < 2e-3
    assert r["a_as_blue_ci_low"] <= r["a_as_blue_diff"] <= r["a_as_blue_ci_high"]


def _choose(state, seat: int = 0) -> str:
    agent = DuelGreedyAgent(CFG)
    agent.reset(seat, 2, 0)
    action = agent.act(encode_observation(state, seat), legal_action_mask(state).astype(np.int8))
    return LAYOUT.to_string(action)


def test_duel_agents__greedy_takes_the_goal_in_reach():
    s = make_duel_state("""
    . . . . ? . . . .
    B U06 U06 U06 U06 . ? . .
    . . . . ? . . . ?
    R . . . . . ? . .
    . . . . ? . . . .
    """, goals=("G01", "G02", "G03", "G06", "G04", "G08"),
        hands={0: {"U06": 1, "U07": 1, "MAP": 1}, 1: {}})  # fmt: skip
    assert _choose(s) == "place U06 at (1,5)"


def test_duel_agents__greedy_repairs_first_and_blocks_a_closer_opponent():
    s = make_duel_state(hands={0: {"U06": 1, "REPAIR_CART": 1}, 1: {}}, broken={0: ["cart"]})
    assert _choose(s) == "repair cart"
    s = make_duel_state("""
    . . . . ? . . . .
    B . . . . . ? . .
    . . . . ? . . . ?
    R U06 U06 U06 U06 . ? . .
    . . . . ? . . . .
    """, hands={0: {"U06": 1, "BROKEN_PICKAXE": 1}, 1: {}})  # fmt: skip
    assert _choose(s) == "break pickaxe"


def test_duel_agents__make_agent_names():
    assert make_agent("greedy", CFG).name == "greedy" and make_agent("random", CFG).name == "random"
    with pytest.raises(ValueError, match="valid for game='duel': random, greedy"):
        make_agent("covert", CFG)


def test_duel_tournament__end_to_end_resume_and_report(tmp_path, capsys):
    argv = ["--game", "duel", "--agents", "greedy", "random", "--games", "2", "--seed", "3", "--out", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "greedy" in out and "A-D-B" in out
    records = list(read_rounds(tmp_path))
    assert len(records) == 12 and {tuple(r["header"]["agents"]) for r in records} == {("greedy", "random"),
                                                                                      ("random", "greedy")}
    assert main(argv) == 0  # resumes: nothing new is played
    assert len(list(read_rounds(tmp_path))) == 12
    tables = report.build_report(tmp_path, with_plots=False)
    assert tables["D1_head_to_head"][0]["games"] == 4 and "T1_balance" not in tables
    with pytest.raises(SystemExit):
        main(["--game", "duel", "--agents", "covert"])


def test_duel_play__human_seat_by_numbers():
    import io

    from experiments.play import main as play_main

    out = io.StringIO()
    stdin = io.StringIO("T05 1,1\n999\n" + "0\n" * 400)
    assert play_main(["--game", "duel", "--seat", "1", "--bots", "greedy", "--seed", "3"], stdin, out) == 0
    text = out.getvalue()
    assert "you are green" in text and "type a move number" in text and "no move number 999" in text
    assert "== game over: nuggets" in text and text.count("round ") >= 3
    with pytest.raises(SystemExit):
        play_main(["--game", "duel", "--bots", "covert"], io.StringIO(), io.StringIO())
