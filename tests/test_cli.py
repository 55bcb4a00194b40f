"""The console scripts (saboteur-web, saboteur-play, saboteur-tournament): they run the repository's modules, and
say clearly what is missing outside a clone."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

from saboteur_env import cli

ROOT = Path(__file__).resolve().parents[1]


def test_every_console_script_names_a_callable_of_the_cli_module() -> None:
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == {"saboteur-web", "saboteur-play", "saboteur-tournament"}
    for target in scripts.values():
        module, name = target.split(":")
        assert module == "saboteur_env.cli" and callable(getattr(cli, name))


def test_a_script_runs_the_repository_module_with_its_arguments(monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(sys, "argv", ["saboteur-tournament", "--players", "4", "--games", "1", "--miners", "random",
                                      "--saboteurs", "random", "--seed", "3", "--no-beliefs"])  # fmt: skip
    assert cli.tournament() == 0
    out = capsys.readouterr().out
    assert "miner win" in out and "random" in out
    monkeypatch.setattr(sys, "argv", ["saboteur-web", "--port", "70000", "--no-browser"])
    with pytest.raises(SystemExit) as exc:  # the module's own argument checks answer
        cli.web()
    assert exc.value.code == 2 and "--port 70000 is out of range" in capsys.readouterr().err


def test_outside_a_clone_the_scripts_say_what_they_need(monkeypatch, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(cli, "_ROOT", tmp_path)
    monkeypatch.setattr(sys, "argv", ["saboteur-play"])
    assert cli.play() == 2
    err = capsys.readouterr().err
    assert "clone of the saboteur-env repository" in err and str(tmp_path) in err
