"""The report's provenance table, its refusal to pool rules versions, oracle flags, and game-level intervals in the
expansion tables."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from experiments.tournament.logs.format import LOG_NAME, provenance
from experiments.tournament.logs.read import LogReader
from experiments.tournament.logs.write import encode_game
from experiments.tournament.report import build as report
from experiments.tournament.report import calibration
from experiments.tournament.run import run
from experiments.tournament.sab2 import Sab2Tables


@pytest.fixture(scope="module")
def small_log(tmp_path_factory):
    out = tmp_path_factory.mktemp("small")
    list(run([4], ["random"], ["random"], 2, seed=0, beliefs=False, out=out, secret=3))
    return out


def test_log_headers_record_versions_commit_and_dirty(small_log):
    info = provenance()
    for _, _, rec in LogReader(small_log).records():
        h = rec["header"]
        assert h["rules_version"] == "base-2" and h["package_version"]
        assert h["commit"] == info["commit"] and h["dirty"] == info["dirty"]
    assert info["commit"] is None or len(info["commit"]) == 40


def _relabel(src, dst, rules: str):
    dst.mkdir()
    games = list(LogReader(src).games())
    for g in games:
        for r in g:
            r["header"]["rules_version"] = rules
            r["header"]["seed"] += 100  # other games (same keys with other bytes are a conflict, refused earlier)
    (dst / LOG_NAME).write_bytes(b"".join(encode_game(g) for g in games))
    return dst


def test_report__prints_provenance(small_log, tmp_path):
    tables = report.build_report(small_log, tmp_path / "r", with_plots=False)
    info = provenance()
    [row] = tables["P0_provenance"]
    assert (row["game"], row["rules_version"], row["commit"], row["dirty"], row["games"]) == (
        "base", "base-2", info["commit"], info["dirty"], 2)  # fmt: skip
    assert f"| base | base-2 | {row['package_version']} | {info['commit']} |" in (tmp_path / "r/summary.md").read_text()


def test_report__refuses_to_mix_rules_versions(small_log, tmp_path, capsys):
    other = _relabel(small_log, tmp_path / "old", "base-1")
    with pytest.raises(report.MixedRulesError, match=r"mix base games of different rules versions: rules base-1 "
                       r"\(2 games, e\.g\. in .*old.*\); rules base-2 \(2 games"):  # fmt: skip
        report.build_report([small_log, other], tmp_path / "r", with_plots=False)
    with pytest.raises(SystemExit) as stop:
        report.main([str(small_log), str(other), "--no-plots", "--out", str(tmp_path / "r2")])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and "base-1" in err and "base-2" in err and "Traceback" not in err
    # Each version alone is fine.
    assert report.build_report(other, tmp_path / "r3", with_plots=False)["T1_balance"][0]["games"] == 2


def test_report__bad_boot_is_named(small_log, capsys):
    with pytest.raises(SystemExit):
        report.main([str(small_log), "--boot", "0"])
    assert "--boot 0 must be at least 1" in capsys.readouterr().err


def test_report__oracles_are_flagged_and_not_rated(tmp_path):
    out = tmp_path / "o"
    list(run([4], ["role_oracle", "greedy"], ["random"], 1, seed=0, beliefs=False, out=out, secret=5))
    tables = report.build_report(out, with_plots=False)
    assert {r["miners"] for r in tables["T1_balance"]} == {"role_oracle*", "greedy"}
    assert not any("oracle" in r["agent_role"] for r in tables["ratings"])
    text = (out / "report" / "summary.md").read_text()
    assert "\\* oracle: reads the hidden state" in text


def _sab2_round(seed: int, rnd: int, wins: list[bool]) -> dict:
    return {"header": {"game": "sab2", "players": 3, "agent": "random", "seed": seed, "round": rnd},
            "end": {"gold_reached": True, "roles": [0, 0, 0], "winners": wins, "gained": [1, 1, 1]}}  # fmt: skip


def test_sab2_tables__seats_of_a_game_are_not_independent():
    # 40 games, 3 seats of one role: all seats of a game win or all lose. 120 seat-rounds carry 40 games' worth.
    tables = Sab2Tables()
    for seed in range(40):
        tables.add(_sab2_round(seed, 0, [seed % 2 == 0] * 3))
    [row] = tables.role_rows()
    assert row["seat_rounds"] == 120 and row["games"] == 40 and row["win_rate"] == 0.5
    # The interval is that of 40 coin flips (half-width about 0.155), not of 120 (about 0.09).
    assert row["ci_high"] - row["ci_low"] > 0.25


def test_report__calibration_table_on_request(small_log, tmp_path, capsys):
    assert report.main([str(small_log), "--no-plots", "--calibration", "--boot", "50", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "T7 observer calibration" in text
    rows = list(csv.DictReader((tmp_path / "T7_calibration.csv").open()))
    got = [(r["model"], r["train_games"], r["test_games"]) for r in rows]
    assert got == [("fixed", "1", "1"), ("fitted", "1", "1")]
    assert "T7_calibration" not in report.build_report(small_log, tmp_path / "plain", with_plots=False)


def test_report__calibration_adds_the_policy_aware_observer_on_request(small_log, tmp_path, capsys):
    assert report.main([str(small_log), "--no-plots", "--calibration", "--policy-observer", "2", "--boot", "50",
                        "--out", str(tmp_path)]) == 0  # fmt: skip
    rows = list(csv.DictReader((tmp_path / "T7_calibration.csv").open()))
    got = [(r["model"], r["train_games"], r["test_games"]) for r in rows]
    assert got == [("fixed", "1", "1"), ("fitted", "1", "1"), ("policy", "1", "1")]
    # random play says nothing about roles: the policy-aware observer stays exactly at the prior all game long
    held_out = [g for g in LogReader(small_log, quiet=True).games()
                if not calibration.train_game(g[0]["header"]["seed"])]
    for traj, _ in calibration.policy_trajectory(held_out[0], samples=2):
        assert np.allclose(traj, traj[0, 0]) and 0 < traj[0, 0] < 1


def _insert_round(agent: str, seed: int, rnd: int, role: int, gold: float, players: int = 5) -> dict:
    roles = [0] * players
    roles[seed % players] = role
    nuggets = [0.0] * players
    nuggets[seed % players] = gold
    return {"header": {"insert": agent, "insert_seat": seed % players, "players": players, "seed": seed,
                       "round": rnd, "roles": roles}, "end": {"nuggets": nuggets}}  # fmt: skip


def test_ladder__ranks_inserted_agents_per_deal_by_their_seat_gold():
    pytest.importorskip("openskill", reason="needs the eval extra")
    from experiments.tournament.report.tables import table_ladder

    rounds = []
    for seed in range(40):
        role = 1 if seed % 4 == 0 else 0  # the seat is a saboteur in round 0 of every fourth deal
        for agent, gold in (("strong", 3.0), ("middle", 2.0), ("weak", 1.0)):
            rounds.append(_insert_round(agent, seed, 0, role, gold))
            rounds.append(_insert_round(agent, seed, 1, 0, 0.0))
    rounds += rounds[:6]  # a deal logged twice (the same cell in two logs) counts once
    rows = table_ladder(rounds, boot=5)
    assert [r["agent"] for r in rows] == ["strong", "middle", "weak"]
    assert [r["nuggets_per_game"] for r in rows] == [3.0, 2.0, 1.0]
    assert all(r["deals"] == 40 for r in rows)
    assert rows[0]["ordinal"] > rows[1]["ordinal"] > rows[2]["ordinal"]
    assert rows[0]["saboteur_ordinal"] > rows[2]["saboteur_ordinal"]  # 10 saboteur deals, same order
    tied = [_insert_round(a, s, 0, 0, 1.0) for s in range(20) for a in ("a", "b")]
    a, b = table_ladder(tied, boot=0)
    assert a["ordinal"] == b["ordinal"]  # equal gold on every deal: equal ratings
