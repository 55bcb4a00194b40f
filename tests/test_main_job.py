"""README's main job (``python -m experiments.tournament`` with no cell options): the top of the ladder - ``expert``,
``learned`` and ``search`` - inserted into one seat of an ``expert`` table at 5 players, with the per-role table."""

from __future__ import annotations

import re

from experiments.tournament.cli import MAIN_JOB_INSERT, main


def test_main_job_seats_the_top_of_the_ladder(capsys) -> None:
    assert main(["--games", "1", "--secret", "0123456789abcdef0123456789abcdef"]) == 0
    out = capsys.readouterr().out
    assert "Inserted seat" in out and "nuggets/game" in out and "win as miner" in out and "win as sab." in out
    rows = re.findall(r"^\s+5 expert\s+expert\s+(\S+)\s+1\s", out, flags=re.M)
    assert rows[-3:] == list(MAIN_JOB_INSERT) == ["expert", "learned", "search"]
    assert "learned - expert" in out and "search - expert" in out


def test_any_cell_option_replaces_the_main_job(capsys) -> None:
    argv = ["--miners", "random", "--games", "1", "--secret", "0123456789abcdef0123456789abcdef"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert re.search(r"^\s+5 random\s+random\s", out, flags=re.M) and "covert" in out  # default saboteurs remain
    assert "Inserted seat" not in out
