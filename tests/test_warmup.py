"""``saboteur_env.warmup``: compiling games ahead of first use in child processes."""

from __future__ import annotations

import json
import sys

import pytest

from saboteur_env import warmup


def test_warm_compiles_in_a_child_process_and_reports(capsys: pytest.CaptureFixture[str]) -> None:
    assert warmup.warm(("duel",), jobs=2) > 0  # a child process runs the game (from the cache if compiled)
    assert warmup.main(["duel", "--jobs", "1"]) == 0  # in this process
    record = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert record["games"] == ["duel"] and record["jobs"] == 1 and record["wall_s"] >= 0


def test_a_failing_child_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", "false")  # every child exits with status 1
    with pytest.raises(RuntimeError, match="compiling sab2, duel failed"):
        warmup.warm(("sab2", "duel"), jobs=2)


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="not valid"):
        warmup.warm(("chess",))
    with pytest.raises(ValueError, match="jobs=0"):
        warmup.warm(("base",), jobs=0)
    with pytest.raises(ValueError, match="not valid"):
        warmup.exercise("chess")
    with pytest.raises(SystemExit):
        warmup.main(["chess"])
    with pytest.raises(SystemExit):
        warmup.main(["--jobs", "0"])
