"""Terminal play (experiments.play) for the three games: bots' moves reported, cards named, labelled board, the end
of every round shown, help that matches the game, hostile input."""

from __future__ import annotations

import io
import re

import pytest

from experiments import play

GAMES = [["--game", "base", "--players", "3"], ["--game", "sab2", "--players", "4"], ["--game", "duel"]]


def _session(argv: list[str], lines: list[str]) -> str:
    out = io.StringIO()
    assert play.main([*argv, "--seed", "3"], stdin=io.StringIO("\n".join(lines) + "\n"), stdout=out) == 0
    return out.getvalue()


@pytest.mark.parametrize("argv", GAMES)
def test_play__reports_bot_moves_names_cards_labels_the_board_and_shows_every_round_end(argv):
    text = _session([*argv, "--rounds", "2"], ["0"] * 400)
    assert "== game over" in text
    bots = [ln for ln in text.splitlines() if ln.startswith("  > ") and not ln.startswith("  > you")]
    assert len(bots) > 10  # every bot move is reported in words
    assert re.search(r"  > (seat \d|blue|green) placed \w+( rot180)? at \(-?\d+,-?\d+\)", text)
    assert re.search(r"  card \w+ x\d: .+", text)  # the hand with names and what the cards do
    assert re.search(r"^    +0  1  2  3  4  5  6  7  8", text, re.M)  # column labels
    assert re.search(r"^  2 ", text, re.M)  # row labels
    # The end of round 1 is shown before round 2 is played, then the round's result.
    end = text.index("== end of round 1")
    result = text.index("== round 1 over")
    assert end < result < text.index("round 2")
    assert "== the final board ==" in text


def test_play__help_matches_the_game():
    base = _session(GAMES[0], ["help", "quit"])
    assert "place T05 at (2,3)" in base and "T06' 1,4" in base  # the notation, and the older short forms
    for argv in GAMES[1:]:
        text = _session(argv, ["help", "T05 2,3", "quit"])
        assert "T05 2,3" not in text.split("move> ", 1)[1].split("cannot read")[0]  # no base notation offered
        assert "type the number of a listed move" in text and "cannot read 'T05 2,3'" in text


@pytest.mark.parametrize("argv", GAMES)
def test_play__hostile_numbers_never_crash_it(argv):
    hostile = ["١", "²", "9" * 5000, "-1", "999999", "0x10", "  ", "\u200b3", "1e3"]
    text = _session(argv, [*hostile, "quit"])
    assert text.count("  ! ") == len(hostile) and "Traceback" not in text and "bye" in text
    assert "9" * 100 not in text


def test_play__the_duel_runs_with_default_options():
    out = io.StringIO()
    assert play.main(["--game", "duel"], stdin=io.StringIO("0\n" * 300), stdout=out) == 0
    assert "== game over" in out.getvalue() and "Saboteur: The Duel" in out.getvalue()


def test_play__the_views_relative_seats_are_named_absolutely():
    text = _session(["--game", "base", "--players", "4", "--seat", "2"], ["quit"])
    assert "(seat+k is the seat k places after you: seat+1 = seat 3, seat+2 = seat 0, seat+3 = seat 1)" in text
    assert re.search(r"  > seat [01] ", text)  # the moves before yours, with absolute seats


def test_play__is_mcts_bots_and_bad_bot_names(capsys):
    for bots, words in [("ismcts:0", "ismcts:N with N an integer 1..5000"), ("nope", "--bots 'nope' is unknown")]:
        with pytest.raises(SystemExit):
            play.main(["--bots", bots])
        assert words in capsys.readouterr().err
    pytest.importorskip("agents.ismcts")
    text = _session(["--game", "duel", "--bots", "ismcts:3", "--rounds", "1"], ["0"] * 3 + ["quit"])
    assert "the bot plays 'ismcts:3'" in text and re.search(r"  > green (placed|played|passed|looked)", text)


def test_play__llm_bots_keep_their_transcript_however_the_game_ends(tmp_path, monkeypatch, capsys):
    import json

    from tests.test_llm import FakeEndpoint

    for name in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SABOTEUR_LLM_MODEL", "fake-model")
    with FakeEndpoint([("first_legal",)]) as fake:
        monkeypatch.setenv("SABOTEUR_LLM_BASE_URL", fake.url)
        path = tmp_path / "t.json"
        # a whole game: every llm decision is in the file, one record per bot seat
        text = _session(["--game", "duel", "--bots", "llm:constrain=none", "--rounds", "1", "--transcript",
                         str(path)], ["0"] * 300)  # fmt: skip
        assert "== game over" in text and f"llm transcript: {path}" in text
        data = json.loads(path.read_text())
        assert data["bots"] == "llm:constrain=none" and list(data["agent_logs"]) == ["1"]
        (log,) = data["agent_logs"]["1"]
        assert len(log["transcript"]) == log["failures"]["decisions"] == len(fake.requests) > 0
        assert log["failures"]["total_failures"] == 0
        # the person leaves at once: the decisions made so far are kept, in the default file in the working folder
        monkeypatch.chdir(tmp_path)
        before = len(fake.requests)
        text = _session(["--game", "base", "--players", "3", "--seat", "2", "--bots", "llm"], ["quit"])
        (kept,) = tmp_path.glob("play-llm-*.json")
        logs = json.loads(kept.read_text())["agent_logs"]
        assert sorted(logs) == ["0", "1"] and f"llm transcript: {kept.name}" in text
        assert sum(len(x[0]["transcript"]) for x in logs.values()) == len(fake.requests) - before > 0
    # bad input: --transcript without llm bots, a folder that is not there, an llm without an endpoint
    for argv, words in [(["--transcript", str(path)], "--transcript keeps llm bots' transcripts"),
                        (["--bots", "llm", "--transcript", str(tmp_path / "no" / "t.json")], "no folder"),
                        (["--bots", "llm:temperature=9"], "temperature=9.0 is out of range")]:  # fmt: skip
        with pytest.raises(SystemExit):
            play.main(argv)
        assert words in capsys.readouterr().err
