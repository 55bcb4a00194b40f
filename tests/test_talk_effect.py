"""The talk-effect experiment (experiments.analysis.talk_effect): paired arms on sealed deals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from experiments.analysis import talk_effect as te
from experiments.tournament.run import run_tasks
from saboteur_env.common.seeding import game_secret

SECRET = 0x5EC12E7


def test_the_deaf_arm_is_the_plain_agents_game_and_the_numbers_replay(tmp_path: Path) -> None:
    r = te.measure("heuristic", 5, 3, SECRET, out=tmp_path / "log")
    assert r["arms"] == {"listen": "claims+fit:heuristic", "deaf": "claims+fit+deaf:heuristic"}
    seeds = [te.deal_seed(SECRET, 5, i) for i in range(3)]
    assert min(seeds) >= 2**32 and len(set(seeds)) == 3  # fresh deals, above every public seed
    keys = [game_secret(SECRET, ("talk-effect", "base", 5, "agents", i)) for i in range(3)]
    deaf_name = "claims+fit+deaf:heuristic"
    deaf = list(run_tasks([(5, deaf_name, deaf_name, s, False, None) for s in seeds], secret=SECRET,
                          game_secrets=keys))  # fmt: skip
    plain = list(run_tasks([(5, "heuristic", "heuristic", s, False, None) for s in seeds], secret=SECRET,
                           game_secrets=keys))  # fmt: skip
    # nobody reacts to claims and the seats draw the same randomness: the very game the plain agents play
    for a, b in zip(deaf, plain, strict=True):
        assert [x["actions"] for x in a] == [x["actions"] for x in b]
    assert r["digger_win"]["deaf"] == pytest.approx(np.mean([te.digger_rate(g) for g in plain]))
    x = r["listen_minus_deaf"]
    assert x["lo"] <= x["mean"] <= x["hi"] and x["mean"] == pytest.approx(
        r["digger_win"]["listen"] - r["digger_win"]["deaf"])
    # the same secret re-plays the same numbers (here from the log: nothing is played again)
    again = te.measure("heuristic", 5, 3, SECRET, out=tmp_path / "log")
    assert again == r


def test_a_wider_interval_for_more_comparisons() -> None:
    one = te.measure("heuristic", 5, 4, SECRET)
    three = te.measure("heuristic", 5, 4, SECRET, comparisons=3)
    a, b = one["listen_minus_deaf"], three["listen_minus_deaf"]
    assert a["mean"] == b["mean"]
    assert three["level"] == pytest.approx(1 - 0.05 / 3) and b["mde80"] > a["mde80"]
    assert b["hi"] - b["lo"] >= a["hi"] - a["lo"]


@pytest.mark.parametrize(
    ("kw", "match"),
    [({"deals": 1}, "deals=1"), ({"honesty": "gut"}, "honesty='gut'"), ({"comparisons": 0}, "comparisons=0"),
     ({"agent": "nobody"}, "nobody"), ({"agent": "claims:bayes"}, "give a bare agent name")],
)  # fmt: skip
def test_bad_input_is_named(kw: dict, match: str) -> None:
    args = {"agent": "heuristic", "players": 5, "deals": 2, "secret": SECRET, **kw}
    with pytest.raises(ValueError, match=match):
        te.measure(**args)


def test_the_command_line_reports_an_error_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert te.main(["--deals", "1", "--secret", "00"]) == 2
    assert "deals=1" in capsys.readouterr().err
