"""Command lines of experiments/: bad arguments are argparse errors, hostile input never crashes the play CLI,
make_golden writes only when asked, and a missing optional dependency names its extra."""

from __future__ import annotations

import hashlib
import io
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from experiments import bench, bench_ab, make_golden, play
from experiments._optional import require

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


def _usage_error(main: Callable[[list[str]], int], argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """Run ``main(argv)``, expect argparse's exit code 2, return its message."""
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" in err and "error:" in err and "Traceback" not in err
    return err


def _hashes(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir()) if p.is_file()}


# --- experiments.play: arguments


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--rounds", "5"], "--rounds"),
        (["--rounds", "0"], "--rounds"),
        (["--seed", "-1"], "--seed"),
        (["--seed", "x"], "--seed"),
        (["--seed", "1" + "0" * 5000], "--seed"),
        (["--players", "11"], "--players"),
        (["--players", "2"], "--players"),
        (["--game", "sab2", "--players", "13"], "--players"),
        (["--game", "duel", "--players", "3"], "--players"),
        (["--game", "chess"], "--game"),
        (["--seat", "4"], "--seat"),
        (["--seat", "-1"], "--seat"),
        (["--bots", "nope"], "--bots"),
        (["--game", "duel", "--bots", "heuristic"], "--bots"),
    ],
)
def test_play__bad_arguments_are_usage_errors(argv: list[str], expected: str, capsys) -> None:
    err = _usage_error(lambda a: play.main(a, stdin=io.StringIO(), stdout=io.StringIO()), argv, capsys)
    assert expected in err


def test_play__the_duel_defaults_to_a_duel_bot() -> None:
    out = io.StringIO()
    assert play.main(["--game", "duel", "--seed", "1"], stdin=io.StringIO(), stdout=out) == 0
    assert "the bot plays 'greedy'" in out.getvalue()


# --- experiments.play: hostile input

HOSTILE = [
    "1" + "0" * 5000,  # int() refuses more than 4,300 digits
    "9" * 40,
    "break cart ²",  # str.isdigit() is true for '²', int() rejects it
    "repair lantern ²",
    "²",
    "١",  # an Arabic-Indic digit: int() would take it
    "T05 ²,3",
    "T05 2,١",
    "T05 99999999999,3",
    "rock -,-",
    "break cart 99999999999",
    "map ²",
    "d ²",
    "",
    "   ",
    ",,",
    "\x00\x1b[2J",
    "💣" * 1000,
    "x" * 20000,
]


def _session(lines: list[str], *argv: str) -> str:
    out = io.StringIO()
    code = play.main(["--seed", "4", "--rounds", "1", *argv], stdin=io.StringIO("\n".join(lines) + "\n"), stdout=out)
    assert code == 0
    text = out.getvalue()
    assert "Traceback" not in text
    return text


@pytest.mark.parametrize("argv", [("--players", "3"), ("--game", "sab2", "--players", "3"), ("--game", "duel")])
def test_play__hostile_input_gets_a_message_and_the_game_goes_on(argv: tuple[str, ...]) -> None:
    text = _session([*HOSTILE, "quit"], *argv)
    assert text.count("  ! ") == len(HOSTILE) and text.count("move> ") == len(HOSTILE) + 1 and "bye" in text
    assert "no move number 100000000000..." in text and "0" * 100 not in text  # huge numbers are cut short
    assert max(len(line) for line in text.splitlines()) < 300  # so is any echoed text
    finished = _session([*HOSTILE, *["0"] * 400], *argv)
    assert "game over" in finished  # nothing hostile cost the game


def test_play__end_of_input_interrupt_and_undecodable_bytes_leave_cleanly() -> None:
    assert "end of input" in _session([], "--players", "3")

    class Interrupted(io.StringIO):
        def readline(self, size: int | None = -1) -> str:
            raise KeyboardInterrupt

    out = io.StringIO()
    assert play.main(["--players", "3", "--seed", "4"], stdin=Interrupted(), stdout=out) == 130
    assert "interrupted" in out.getvalue()
    raw = io.TextIOWrapper(io.BytesIO(b"\xff\xfe\xfd\n" + b"0\n" * 200), encoding="utf-8")
    out = io.StringIO()
    assert play.main(["--players", "3", "--seed", "4", "--rounds", "1"], stdin=raw, stdout=out) == 0
    assert "cannot read" in out.getvalue() and "game over" in out.getvalue()


def test_play__real_process_survives_hostile_bytes() -> None:
    stdin = ("1" + "0" * 5000 + "\nbreak cart ²\n").encode() + b"\xff\xfe\n" + b"0\n" * 200
    run = subprocess.run([sys.executable, "-m", "experiments.play", "--players", "3", "--seed", "4", "--rounds", "1"],
                         cwd=ROOT, input=stdin, capture_output=True, timeout=120, check=False)  # fmt: skip
    out, err = run.stdout.decode(errors="replace"), run.stderr.decode(errors="replace")
    assert run.returncode == 0, err
    assert "Traceback" not in out + err and "game over" in out and out.count("  ! ") == 3


# --- experiments.make_golden


def test_make_golden__help_and_dry_run_leave_tests_data_untouched(tmp_path: Path, capsys) -> None:
    before = _hashes(DATA)
    with pytest.raises(SystemExit) as exc:
        make_golden.main(["--help"])
    assert exc.value.code == 0
    run = subprocess.run([sys.executable, "-m", "experiments.make_golden", "--help"], cwd=ROOT, capture_output=True,
                         text=True, timeout=120, check=False)  # fmt: skip
    assert run.returncode == 0 and "--write" in run.stdout
    assert make_golden.main([]) == 0  # dry run
    assert "nothing written" in capsys.readouterr().out
    assert _hashes(DATA) == before
    assert make_golden.main(["--write", "--out", str(tmp_path / "g")]) == 0
    assert _hashes(tmp_path / "g") == before  # same games, written only where asked
    assert _hashes(DATA) == before


def test_make_golden__out_must_be_a_directory(tmp_path: Path, capsys) -> None:
    (tmp_path / "f").write_text("")
    assert "--out" in _usage_error(make_golden.main, ["--write", "--out", str(tmp_path / "f")], capsys)


# --- experiments.bench, experiments.bench_ab, experiments.train_rllib


@pytest.mark.parametrize(
    "argv",
    [
        ["--games", "0"],
        ["--repeats", "0"],
        ["--games", "-5"],
        ["--seed", "-1"],
        ["--players", "2"],
        ["--players", "4", "11"],
        ["--game", "sab2", "--players", "13"],
        ["--game", "sab2", "--players", "1"],
        ["--game", "nope"],
        ["--players"],
    ],
)
def test_bench__bad_arguments_are_usage_errors(argv: list[str], capsys) -> None:
    _usage_error(bench.main, argv, capsys)


@pytest.mark.parametrize(
    "argv",
    [
        [],  # --old is required
        ["--old", "HEAD", "--games", "0"],
        ["--old", "HEAD", "--rounds", "0"],
        ["--old", "HEAD", "--players", "11"],
        ["--old", "HEAD", "--game", "sab2", "--players", "0"],
        ["--old", "HEAD", "--game", "go"],
    ],
)
def test_bench_ab__bad_arguments_are_usage_errors(argv: list[str], capsys) -> None:
    _usage_error(bench_ab.main, argv, capsys)


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs a git checkout")
@pytest.mark.parametrize("argv", [["--old", "no-such-revision"], ["--old", "HEAD", "--new", "no-such-revision"]])
def test_bench_ab__unknown_revisions_are_usage_errors(argv: list[str], capsys) -> None:
    assert "is not a commit" in _usage_error(bench_ab.main, argv, capsys)


@pytest.mark.parametrize(
    "argv",
    [
        ["--players", "2"],
        ["--players", "11"],
        ["--iterations", "0"],
        ["--batch", "0"],
        ["--minibatch", "0"],
        ["--batch", "100", "--minibatch", "200"],
        ["--epochs", "0"],
        ["--hidden", "0"],
        ["--env-runners", "-1"],
        ["--lr", "0"],
        ["--lr", "nan"],
        ["--lr", "-1e-3"],
        ["--seed", "-1"],
    ],
)
def test_train_rllib__bad_arguments_are_usage_errors(argv: list[str], capsys) -> None:
    pytest.importorskip("ray.rllib")
    from experiments import train_rllib

    _usage_error(train_rllib.main, argv, capsys)


# --- optional dependencies


def test_require__names_the_extra_to_install() -> None:
    assert require("json", "eval") is sys.modules["json"]
    with pytest.raises(SystemExit, match=r"'no_such_module_xyz'.*pip install -e '\.\[eval\]'"):
        require("no_such_module_xyz.models", "eval", "report ratings")
    with pytest.raises(ValueError, match="unknown extra"):
        require("json", "gpu")
