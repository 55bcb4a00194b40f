"""Tournament logs (end to end, replay, resume, determinism) and report numbers on a hand-made fixture log."""

from __future__ import annotations

import gzip
import json
import math

import pytest

from experiments.tournament import stats
from experiments.tournament.cli import main
from experiments.tournament.logs.format import LogVersionError
from experiments.tournament.logs.read import read_rounds
from experiments.tournament.loop import replay
from experiments.tournament.report import build as report
from experiments.tournament.report import metrics
from experiments.tournament.run import run


def _games(records):
    games: dict = {}
    for r in records:
        h = r["header"]
        games.setdefault((h["players"], h["miners"], h["saboteurs"], h["seed"]), []).append(r)
    return games


def test_tournament__two_games_end_to_end(tmp_path, capsys):
    assert main(["--players", "4", "--games", "2", "--miners", "honest", "--saboteurs", "overt",
                 "--out", str(tmp_path)]) == 0  # fmt: skip
    assert "honest" in capsys.readouterr().out
    records = list(read_rounds(tmp_path))
    games = _games(records)
    assert len(games) == 2 and all(len(g) == 3 for g in games.values())
    for rounds in games.values():
        replay(rounds)  # the logged actions reproduce the logged events
        for r in rounds:
            assert r["end"]["decisions"] == len(r["actions"]) == len(r["beliefs"])
            assert len(r["beliefs"][0]["reference"]) == 4
    tables = report.build_report(tmp_path)
    assert (tmp_path / "report" / "summary.md").exists() and (tmp_path / "report" / "win_rate_vs_players.png").exists()
    assert tables["T1_balance"][0]["games"] == 2


def test_tournament__replay_detects_tampering(tmp_path):
    # A fixed secret: with a fresh one, about 1 game in 300 has the same action id at decisions 3 and 4, and the swap
    # is no tampering at all.
    records = [r for res in run([4], ["random"], ["random"], 1, seed=5, secret=0) for r in res]
    assert records[0]["actions"][3] != records[0]["actions"][4]
    records[0]["actions"][3], records[0]["actions"][4] = records[0]["actions"][4], records[0]["actions"][3]
    with pytest.raises(Exception):  # noqa: B017 - illegal action or differing events, either way it fails
        replay(records)


def test_tournament__resume_and_workers_give_identical_results(tmp_path):
    one = [r for res in run([4], ["greedy"], ["random"], 3, seed=1, workers=1, out=tmp_path / "a", secret=7)
           for r in res]  # fmt: skip
    # Interrupted after 1 game, then resumed with 2 workers (the same tournament secret: the same agent seeds).
    list(run([4], ["greedy"], ["random"], 1, seed=1, workers=1, out=tmp_path / "b", secret=7))
    two = [r for res in run([4], ["greedy"], ["random"], 3, seed=1, workers=2, out=tmp_path / "b", secret=7)
           for r in res]  # fmt: skip

    def key(r):
        return r["header"]["seed"], r["header"]["round"]

    assert sorted(one, key=key) == sorted(two, key=key)
    assert len(list(read_rounds(tmp_path / "b"))) == 9


def _round(seed, miners, won, roles=(0, 1, 0, 0), beliefs=None, events=(), rnd=0):
    return {
        "header": {"seed": seed, "players": 4, "miners": miners, "saboteurs": "random", "roles": list(roles),
                   "round": rnd},
        "events": list(events),
        "actions": [],
        "beliefs": beliefs or [],
        "end": {"winner": "gold-diggers" if won else "saboteurs", "reason": "gold_reached" if won else "exhausted",
                "decisions": 10},
    }


@pytest.fixture
def fixture_log(tmp_path):
    snap = [{"t": t, "actor": t % 4, "reference": [100, 700, 100, 100], "heuristic": [250, 250, 250, 250]}
            for t in range(8)]  # fmt: skip
    events = [
        {"t": 0, "type": "break", "actor": 0, "target": 1},  # miner breaks the saboteur: correct
        {"t": 1, "type": "break", "actor": 2, "target": 3},  # miner breaks a miner: friendly fire
        {"t": 2, "type": "place", "actor": 1, "kind": "T15", "cell": [2, 3], "arg": 0},  # saboteur dead end
    ]
    rounds = [
        _round(0, "greedy", True, beliefs=snap, events=events), _round(0, "greedy", True, rnd=1),
        _round(0, "greedy", False, rnd=2),
        *[_round(1, "greedy", False, rnd=r) for r in range(3)],
        *[_round(s, "random", False, rnd=r) for s in (0, 1) for r in range(3)],
    ]  # fmt: skip
    # An old-format log (one gzip member, no package version): read by the report, refused by resume.
    path = tmp_path / "rounds.jsonl.gz"
    with gzip.open(path, "wt") as f:
        for r in rounds:
            f.write(json.dumps(r) + "\n")
    return tmp_path


def test_report__known_numbers(fixture_log):
    tables = report.build_report(fixture_log, with_plots=False)
    balance = {(r["miners"]): r for r in tables["T1_balance"]}
    assert balance["greedy"]["miner_win"] == round(1 / 3, 4) and balance["random"]["miner_win"] == 0
    assert balance["greedy"]["gold_reached"] == round(2 / 6, 4)
    # Two games: seed 0 won 2 of 3 rounds, seed 1 none; the game-level bootstrap sees 2 units, not 6 rounds.
    assert (balance["greedy"]["miner_win_lo"], balance["greedy"]["miner_win_hi"]) == (0.0, round(2 / 3, 4))
    c1 = next(r for r in tables["claims"] if r["claim"] == "C1")
    # Paired over seeds: differences 2/3 and 0; percentile bootstrap over the two seeds; one-sided p vs 0.20.
    assert c1["difference"] == round(1 / 3, 4) and (c1["ci_low"], c1["ci_high"]) == (0.0, round(2 / 3, 4))
    z = (1 / 3 - 0.2) / (math.sqrt(2 / 9) / math.sqrt(2))
    assert c1["p_one_sided"] == round(stats.t_sf(z, 1), 6) and c1["holds"] is False
    assert c1["family"] == 1 and c1["p_holm"] == c1["p_one_sided"]  # the other claims' cells are not in the log
    assert all(r["paired_games"] == 0 and r["holds"] is None for r in tables["claims"] if r["claim"] != "C1")
    ref = next(r for r in tables["T5_beliefs"] if r["observer"] == "reference" and r["round_fraction"] == 1.0)
    assert ref["miners"] == "greedy" and ref["games"] == 1  # per cell: only the greedy cell has beliefs
    assert ref["brier"] == 0.03 and ref["log_loss"] == round(-(3 * math.log(0.9) + math.log(0.7)) / 4, 4)
    assert ref["auroc"] == 1.0 and ref["top_k_hit"] == 1.0 and ref["p_true_roles"] == round((3 * 0.9 + 0.7) / 4, 4)
    heur = next(r for r in tables["T5_beliefs"] if r["observer"] == "heuristic" and r["round_fraction"] == 1.0)
    assert heur["auroc"] == 0.5 and heur["top_k_hit"] == 0.25  # four seats tied for one place share it
    dec = next(r for r in tables["T6_deception"] if r["miners"] == "greedy")
    assert dec["saboteur_mass"] == 0.7 and dec["unsuspected_topk"] == 0.0 and dec["never_sustained"] == 0.0
    assert dec["km_median_turns"] == 2  # P > 0.5 on its own turns 1 and 2
    assert dec["miner_friendly_fire"] == 0.5
    assert dec["dead_ends_saboteurs"] == round(1 / 6, 3)
    ratings = {r["agent_role"]: r for r in tables["ratings"]}
    assert ratings["greedy/miner"]["mu"] > ratings["random/miner"]["mu"]
    assert ratings["greedy/miner"]["mu_lo"] <= ratings["greedy/miner"]["mu"] <= ratings["greedy/miner"]["mu_hi"]
    prov = tables["P0_provenance"]
    assert [(p["rules_version"], p["package_version"], p["commit"], p["games"]) for p in prov] == [
        ("not recorded", "not recorded", "not recorded", 4)]
    summary = (fixture_log / "report" / "summary.md").read_text()
    assert "Not reproducible from a commit" in summary and "P0 provenance" in summary
    with pytest.raises(LogVersionError, match="version not recorded: an old log"):  # read, but never appended to
        list(run([4], ["greedy"], ["random"], 2, out=fixture_log, secret=1))


def test_report__suspicion_needs_to_beat_the_boundary():
    import numpy as np

    p = np.array([[0.4, 0.4, 0.4, 0.4, 0.4], [0.9, 0.5, 0.5, 0.1, 0.1], [0.9, 0.8, 0.2, 0.2, 0.0]])
    assert metrics.suspected(p).tolist() == [
        [False] * 5,  # nobody stands out: nobody is suspected
        [True, False, False, False, False],  # k = 2, but seats 1 and 2 tie for the second place
        [True, True, False, False, False],
    ]
    # The tie-robust membership: tied seats share the places left (k = 2 in every row).
    assert metrics.topk_weight(p).tolist() == [
        [0.4] * 5,  # 2 places among 5 tied seats: the prior, whatever the tie convention
        [1.0, 0.5, 0.5, 0.0, 0.0],
        [1.0, 1.0, 0.0, 0.0, 0.0],
    ]


def test_tournament__inserted_seat(tmp_path, capsys):
    """--insert seats one agent at seat seed mod N (both roles); the tables compare inserts over the same deals."""
    argv = ["--players", "4", "--games", "2", "--seed", "6", "--miners", "greedy", "--saboteurs", "overt",
            "--insert", "random", "honest", "--no-beliefs", "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Inserted seat" in out and "honest - random" in out and "over 2 games" in out
    records = list(read_rounds(tmp_path))
    assert len(records) == 12  # 2 inserts x 2 games x 3 rounds
    for r in records:
        h = r["header"]
        assert h["insert"] in ("random", "honest") and h["insert_seat"] == h["seed"] % 4
        expected = ["overt" if role else "greedy" for role in h["roles"]]
        expected[h["insert_seat"]] = h["insert"]
        assert h["agents"] == expected
    by_insert = {}
    for r in records:
        by_insert.setdefault(r["header"]["insert"], []).append(r["header"]["roles"])
    assert by_insert["random"] == by_insert["honest"]  # duplicate deals: the same roles in both cells
    # The random seat is really random: its actions differ from the honest seat's in the same deal.
    assert [r["actions"] for r in records[:3]] != [r["actions"] for r in records[6:9]]
    # Resuming skips both cells' games; the report labels the cells by their insert.
    resumed = list(run([4], ["greedy"], ["overt"], 2, seed=6, out=tmp_path, beliefs=False,
                       inserts=["random", "honest"]))  # fmt: skip
    assert len(resumed) == 4 and sum(len(g) for g in resumed) == 12  # one list per game, read back from the log
    tables = report.build_report(tmp_path, with_plots=False)
    assert {row["miners"] for row in tables["T1_balance"]} == {"greedy +random", "greedy +honest"}


@pytest.mark.parametrize(("game", "agents", "k"), [("sab2", ["heuristic"], 2), ("duel", ["greedy"], 1)])
def test_tournament__claims_cells_for_sab2_and_the_duel_log_and_replay(tmp_path, capsys, game, agents, k):
    import copy

    from experiments.tournament.logs.format import _schema_problem
    from experiments.tournament.rounds import ReplayError
    from experiments.tournament.tasks import replay_records

    argv = ["--game", game, "--games", "1", "--seed", "3", "--agents", *[f"claims:{a}" for a in agents],
            "--claims-per-turn", str(k), "--out", str(tmp_path), "--secret", "0" * 31 + "5"]
    if game == "sab2":
        argv += ["--players", "5"]
    assert main(argv) == 0
    name = f"claims@{k}:{agents[0]}" if k > 1 else f"claims:{agents[0]}"
    assert name in capsys.readouterr().out  # a cell of its own in the table
    records = list(read_rounds(tmp_path))
    h = records[0]["header"]
    assert h["game"] == game and h["claims_per_turn"] == k and name in h["agents"]
    assert all(_schema_problem(r) is None for r in records) and sum(len(r["claims"]) for r in records) > 0
    assert all(len(r["actions"]) == r["end"]["decisions"] for r in records)  # claims are not actions
    replay_records(records, full=True)  # the game's actions replay it; the agents re-run to the same claims
    bad = copy.deepcopy(records)
    for r in bad:
        r["header"]["claims_per_turn"] = k + 1
    with pytest.raises(ReplayError, match="claims_per_turn"):
        replay_records(bad)
    bad = copy.deepcopy(records)
    r = next(r for r in bad if r["claims"])
    r["claims"][0]["speaker"] = (r["claims"][0]["speaker"] + 1) % h["players"]  # the game replays; the agents do not
    with pytest.raises(ReplayError, match="agents re-run"):
        replay_records(bad, full=True)


def test_tournament__claims_per_turn_option_errors(capsys):
    with pytest.raises(SystemExit):
        main(["--game", "sab2", "--agents", "heuristic", "--claims-per-turn", "2", "--games", "1"])
    assert "applies to claims agents" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--game", "duel", "--agents", "claims:greedy", "--claims-per-turn", "9", "--games", "1"])
    assert "--claims-per-turn 9 is out of range; valid: 1..8" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--game", "duel", "--agents", "claims:greedy", "random", "--games", "1"])
    assert "every agent of a cell" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--miners", "claims@9:honest", "--saboteurs", "claims@9:covert", "--games", "1"])
    assert "claims per turn 9 is out of range; valid: 1..8" in capsys.readouterr().err


def test_tournament__cli_seats_ismcts_and_text_agents_in_every_game_and_refuses_cheats(tmp_path, capsys):
    assert main(["--players", "3", "--miners", "random", "--saboteurs", "random", "--insert", "text:random",
                 "ismcts:1", "--games", "1", "--no-beliefs", "--out", str(tmp_path / "b")]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "ismcts:1 - text:random" in out
    assert main(["--game", "duel", "--agents", "ismcts:1", "text:random", "--games", "1",
                 "--out", str(tmp_path / "d")]) == 0  # fmt: skip
    capsys.readouterr()
    for argv, word in ((["--miners", "text:role_oracle", "--saboteurs", "random"], "text:role_oracle"),
                       (["--game", "sab2", "--agents", "text:nobody"], "text:nobody"),
                       (["--game", "duel", "--agents", "ismcts", "text:heuristic"], "text:heuristic")):  # fmt: skip
        with pytest.raises(SystemExit):
            main([*argv, "--games", "1"])
        err = capsys.readouterr().err
        assert "unknown" in err and repr(word) in err


def test_tournament__sab2_inserted_seat_logs_replays_and_keeps_the_old_keys(tmp_path):
    """Saboteur 2 seats an inserted agent at seat seed mod N (the bluffing benchmark's seating): its header says so,
    the game logs and re-plays, and a game without an insert keeps the log key (so the sealed seeds) it always had."""
    from experiments.tournament.logs.format import describe, game_key
    from experiments.tournament.run import run_tasks
    from experiments.tournament.tasks import replay_records, task_key

    tasks = [("sab2", 5, "random", 7, "heuristic"), ("sab2", 5, "random", 7, None)]
    assert task_key(tasks[1]) == ("sab2", 5, "random", 7)
    assert task_key(tasks[0]) == ("sab2", 5, "random", "heuristic", 7)
    inserted, plain = list(run_tasks(tasks, out=tmp_path, secret=3))
    h = inserted[0]["header"]
    assert h["insert"] == "heuristic" and h["insert_seat"] == 7 % 5 == 2
    assert h["agents"] == ["random", "random", "heuristic", "random", "random"]
    assert "insert" not in plain[0]["header"] and plain[0]["header"]["agents"] == ["random"] * 5
    assert [game_key(g[0]["header"]) for g in (inserted, plain)] == [task_key(t) for t in tasks]
    assert describe(game_key(h)) == "sab2 N=5 random +heuristic seed 7"
    assert inserted[0]["header"]["roles"] == plain[0]["header"]["roles"]  # the same deal
    from experiments.tournament.logs.read import LogReader

    for g in LogReader(tmp_path, quiet=True).games():
        replay_records(g, full=True)  # the agents re-run from the logged header give the same records
    # resuming finds both games in the log and plays nothing again
    assert list(run_tasks(tasks, out=tmp_path, secret=3)) == [inserted, plain]


def test_tournament__sab2_insert_from_the_cli_pairs_the_inserted_seat_by_side(tmp_path, capsys):
    """``--game sab2 --agents T --insert A B`` seats A, then B, at seat seed mod N of a table of T on the same deals,
    and prints the inserted seat's gold and its paired difference overall and per side of the deal, numbers that
    are recomputed here from the log."""
    from experiments.tournament.logs.read import LogReader
    from experiments.tournament.sab2 import SIDE_OF_ROLE

    argv = ["--game", "sab2", "--agents", "random", "--insert", "random", "greedy", "--players", "4", "--games", "3",
            "--seed", "11", "--no-beliefs", "--secret", "0" * 31 + "7", "--out", str(tmp_path)]  # fmt: skip
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "Inserted seat" in out and "gold-digger" in out and "blue team" not in out  # no all-seat cell was played
    gold: dict = {"random": {}, "greedy": {}}
    side_gold: dict = {"random": {}, "greedy": {}}
    rounds_as_digger: dict = {}
    for g in LogReader(tmp_path, quiet=True).games():
        h = g[0]["header"]
        seat = h["insert_seat"]
        assert seat == h["seed"] % 4 and h["agents"][seat] == h["insert"]
        assert all(a == "random" for i, a in enumerate(h["agents"]) if i != seat)
        gold[h["insert"]][h["seed"]] = sum(r["end"]["gained"][seat] for r in g)
        for r in g:
            side = SIDE_OF_ROLE[r["header"]["roles"][seat]]
            acc = side_gold[h["insert"]].setdefault(h["seed"], [0.0, 0.0, 0.0])
            acc[side] += r["end"]["gained"][seat]
            rounds_as_digger[h["seed"]] = rounds_as_digger.get(h["seed"], 0) + (side == 0)
    assert sorted(gold["random"]) == sorted(gold["greedy"]) == [11, 12, 13]
    d = sum(gold["greedy"][s] - gold["random"][s] for s in gold["random"]) / 3
    assert f"greedy - random = {d:+.2f}" in out
    # per side: over the games where the deal gave the seat a gold-digger round (the same games for both inserts)
    diggers = [s for s in (11, 12, 13) if rounds_as_digger[s]]
    assert diggers  # these deals give the seat gold-digger rounds
    d = sum(side_gold["greedy"][s][0] - side_gold["random"][s][0] for s in diggers) / len(diggers)
    assert f"as gold-digger : {d:+.2f} [" in out and f"over {len(diggers)} games with gold-digger" in out
    # the deal fixes every round's roles: both inserts met the same roles in the same rounds
    roles = {}
    for g in LogReader(tmp_path, quiet=True).games():
        for r in g:
            key = (r["header"]["seed"], r["header"]["round"])
            assert roles.setdefault(key, r["header"]["roles"]) == r["header"]["roles"]
    assert len(roles) == 9
    # a re-run resumes from the log and prints the same table
    assert main(argv) == 0
    assert capsys.readouterr().out.split("Inserted seat")[1] == out.split("Inserted seat")[1]
    # the report's table S3 holds the same numbers
    s3 = report.build_report(tmp_path, with_plots=False)["S3_sab2_inserted"]
    assert [(r["insert"], r["reference"]) for r in s3] == [("random", ""), ("greedy", "random")]
    assert s3[1]["difference"] == pytest.approx(round(sum(gold["greedy"][s] - gold["random"][s] for s in gold["random"])
                                                      / 3, 3))  # fmt: skip


@pytest.mark.parametrize("game", ["base", "sab2"])
def test_tournament__the_reference_is_the_first_insert_listed_even_when_the_log_has_the_others_first(
    tmp_path, capsys, game
):
    """A log started with ``--insert greedy`` and resumed with ``--insert random greedy``: its greedy games come back
    first, but the comparison is greedy - random (the first listed is the reference) and random's row comes first."""
    table = ["--game", "sab2", "--agents", "random"] if game == "sab2" else ["--miners", "random", "--saboteurs",
                                                                            "random"]  # fmt: skip
    common = [*table, "--players", "4", "--games", "2", "--no-beliefs", "--secret", "0" * 31 + "5",
              "--out", str(tmp_path)]  # fmt: skip
    assert main([*common, "--insert", "greedy"]) == 0
    capsys.readouterr()
    assert main([*common, "--insert", "random", "greedy"]) == 0
    out = capsys.readouterr().out
    assert "greedy - random = " in out and "random - greedy" not in out
    rows = [line.split() for line in out.split("Inserted seat")[1].splitlines()]
    inserts = [r[3 if game == "base" else 2] for r in rows if r and r[0] == "4"]
    assert inserts == ["random", "greedy"]


@pytest.mark.parametrize(("argv", "words"), [
    (["--game", "sab2", "--miners", "expert"], ["--miners is for the base game", "--agents"]),
    (["--game", "sab2", "--saboteurs", "expert"], ["--saboteurs is for the base game"]),
    (["--game", "duel", "--miners", "expert"], ["--miners is for the base game"]),
    (["--game", "duel", "--agents", "greedy", "random", "--insert", "expert"], ["--insert is for the base game"]),
    (["--game", "sab2", "--agents", "greedy", "--insert", "nobody"], ["unknown", "'nobody'"]),
    (["--game", "sab2", "--agents", "greedy", "--insert", "random", "random"], ["--insert", "random"]),
])  # fmt: skip
def test_tournament__options_of_another_game_are_refused_not_ignored(capsys, argv, words):
    with pytest.raises(SystemExit):
        main([*argv, "--games", "1"])
    err = capsys.readouterr().err
    assert all(w in err for w in words), err
