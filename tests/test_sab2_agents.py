"""Saboteur 2 agents and the Saboteur 2 tournament: legal play for 2-12 players, role behaviour, tables."""

from __future__ import annotations

import numpy as np
import pytest

from agents import agent_names, make_agent
from agents.sab2.ladder import Sab2Agent
from experiments.tournament.cli import main
from experiments.tournament.logs.read import read_rounds
from experiments.tournament.loop import play
from experiments.tournament.report import build as report
from experiments.tournament.rounds import GameSpec
from saboteur_env import GameConfig, encode_observation, legal_action_mask
from saboteur_env.sab2.actions import action_layout
from saboteur_env.sab2.cards import Sab2Role as R
from saboteur_env.sab2.positions import make_sab2_state
from saboteur_env.sab2.state import Phase


@pytest.mark.parametrize(("n", "agent"), [(2, "heuristic"), (7, "greedy"), (12, "heuristic"), (5, "random")])
def test_sab2_agents__play_whole_games_legally(n, agent):
    records = play(GameSpec("sab2", n, (agent,), seed=n))  # env.step raises on any illegal action
    assert len(records) == 3 and all(len(r["end"]["winners"]) == n for r in records)


def test_sab2_agents__every_ladder_name_plays():
    cfg = GameConfig(game="sab2", num_players=4)
    for name in agent_names("sab2", kind="scripted"):
        agent = make_agent(name, cfg)
        assert name == "random" or isinstance(agent, Sab2Agent)
    with pytest.raises(ValueError, match="valid for game='sab2'"):
        make_agent("nobody", cfg)
    for oracle in ("role_oracle", "gold_oracle"):
        records = play(GameSpec("sab2", 5, (oracle,), seed=2))
        assert len(records) == 3


def _choice(s, seat: int = 0) -> str:
    agent = Sab2Agent(s.config)
    agent.reset(seat, s.config.num_players, 0)
    a = agent.act(encode_observation(s, seat), legal_action_mask(s).astype(np.int8))
    return action_layout(s.config).to_string(a)


BOARD = """
. . . . . . . . ?
. . . . . . . . .
S T05 T05 . . . . . ?
. . . . . . . . .
. . . . . . . . ?
"""


def test_sab2_agents__diggers_avoid_the_other_teams_doors_and_geologists_lay_crystals():
    cfg = GameConfig(game="sab2", num_players=4)
    blue = make_sab2_state(cfg, BOARD, roles=[R.BLUE_DIGGER, R.SABOTEUR, R.GREEN_DIGGER, R.BOSS],
                           hands={0: {"X11": 1, "T05": 1}})  # fmt: skip
    assert _choice(blue) == "place T05 at (2,3)"
    green = make_sab2_state(cfg, BOARD, roles=[R.GREEN_DIGGER, R.SABOTEUR, R.BLUE_DIGGER, R.BOSS],
                            hands={0: {"X08": 1, "X11": 1}})  # fmt: skip
    assert _choice(green) == "place X11 at (2,3)"
    geologist = make_sab2_state(cfg, BOARD, roles=[R.GEOLOGIST, R.SABOTEUR, R.BLUE_DIGGER, R.BOSS],
                                hands={0: {"X16": 1, "T05": 1}})  # fmt: skip
    assert _choice(geologist).startswith("place X16")


def test_sab2_agents__thieves_steal_from_the_richest_and_the_stuck_free_themselves():
    cfg = GameConfig(game="sab2", num_players=4)
    s = make_sab2_state(cfg, roles=[R.SABOTEUR, R.BLUE_DIGGER, R.GREEN_DIGGER, R.BOSS], gold=[0, 2, 5, 1])
    s.phase = Phase.THEFT
    s.board_changed()
    assert _choice(s) == "steal seat+2"
    t = make_sab2_state(cfg, BOARD, roles=[R.BLUE_DIGGER, R.SABOTEUR, R.GREEN_DIGGER, R.BOSS],
                        hands={0: {"T05": 1, "FREE_AT_LAST": 1}}, trapped=[0])  # fmt: skip
    assert _choice(t) == "free_at_last seat+0"


def test_sab2_tournament__end_to_end_and_report(tmp_path, capsys):
    argv = ["--game", "sab2", "--players", "4", "--agents", "heuristic", "random", "--games", "2", "--out",
            str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "win rate" in out and "blue team" in out and "heuristic" in out and "random" in out
    records = list(read_rounds(tmp_path))
    assert len(records) == 12 and {r["header"]["agent"] for r in records} == {"heuristic", "random"}
    tables = report.build_report(tmp_path, with_plots=False)
    rows = tables["S1_sab2_roles"]
    assert sum(r["seat_rounds"] for r in rows) == 12 * 4
    teams = tables["S2_sab2_teams"]
    assert [t["rounds"] for t in teams] == [6, 6]
    for t in teams:
        assert t["gold_reached"] + t["saboteurs_won"] == pytest.approx(1.0)
        # The report rounds each rate to 4 decimals: the identity holds up to the rounding of four terms.
        parts = t["blue_team_won"] + t["green_team_won"] - t["both_teams"] + t["no_team_with_gold"]
        assert parts == pytest.approx(t["gold_reached"], abs=2e-4)
    with pytest.raises(SystemExit):
        main(["--game", "sab2", "--players", "13"])


def test_sab2_play__human_seat_by_numbers():
    import io

    from experiments.play import main as play_main

    out = io.StringIO()
    stdin = io.StringIO("d T05\n" + "0\n" * 3000)
    assert play_main(["--game", "sab2", "--players", "4", "--seat", "2", "--bots", "heuristic", "--seed", "5"],
                     stdin, out) == 0  # fmt: skip
    text = out.getvalue()
    assert "type a move number" in text and text.count("== round") == 3 and "== game over" in text
