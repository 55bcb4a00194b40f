"""Fitted honesty (agents.honesty) and the bluffing benchmark (experiments.bluff): the fit recovering a known honesty
from synthetic claims, the believers' exact update under a fitted model, metrics on a hand-made log, the sealed and
deterministic protocol, the version in every row, and bad input named."""

from __future__ import annotations

import json
from fractions import Fraction

import numpy as np
import pytest

from agents import make_agent
from agents.claims import ClaimsAgent, claims_kwargs
from agents.claims_beliefs import ClaimsObserver, HonestyModel, PublicClaims, phase_of
from agents.honesty import HonestyTable, handset_table, honesty_model
from experiments.bluff import cli
from experiments.bluff import leaderboard as lb
from experiments.bluff.cli import benchmark, main
from experiments.bluff.honesty import claim_rows, fit, held_out
from experiments.bluff.metrics import saboteur_metrics, seat_rounds
from experiments.bluff.protocol import SEED_OFFSET, VERSION, deal_seeds, protocol
from experiments.bluff.run import arm_name, benchmark_name
from experiments.tournament.claims import _bare, _claims_k, claims_options, with_claims_per_turn
from saboteur_env import GameConfig

CFG5 = GameConfig(num_players=5, claims=True)


# ---- phases and the fit ---------------------------------------------------------------------------------------
def test_phase_of__laps_of_the_round() -> None:
    assert [phase_of(t, 5) for t in (0, 9, 10, 24, 25, 99)] == [0, 0, 1, 1, 2, 2]


def _claim(t: int, speaker: int, kind: str, target: int, value: int, truth: bool, known: bool = True) -> dict:
    return {"t": t, "speaker": speaker, "kind": kind, "target": target, "value": value, "truth": truth,
            "known": known, "lie": known and not truth}  # fmt: skip


def _round(seed: int, roles: list[int], claims: list[dict], winner: str = "saboteurs", beliefs: list | None = None,
           insert_seat: int = 0) -> dict:  # fmt: skip
    return {"header": {"seed": seed, "players": len(roles), "roles": roles, "round": 0, "insert_seat": insert_seat,
                       "agents": ["claims:x"] * len(roles)},
            "claims": claims, "end": {"winner": winner}, "beliefs": beliefs or []}  # fmt: skip


def test_fit__recovers_a_known_honesty_from_synthetic_claims() -> None:
    # Saboteurs (seat 1) tell the truth in 20 of 100 early goal claims and in 60 of 60 late ones; diggers always.
    rng = np.random.default_rng(0)
    truths = rng.permutation([True] * 20 + [False] * 80)
    claims = [_claim(0, 1, "goal", 0, 1, bool(v)) for v in truths] + [_claim(50, 1, "goal", 0, 1, True)] * 60
    claims += [_claim(12, 0, "accuse", 1, 1, True)] * 9 + [_claim(12, 0, "accuse", 2, 1, False)]
    games = [[_round(7, [0, 1, 0, 0, 0], claims)]]
    assert sorted(set(claim_rows(games))) == [(0, 1, 1, False), (0, 1, 1, True), (1, 0, 0, False), (1, 0, 0, True),
                                              (1, 0, 2, True)]  # fmt: skip
    table = HonestyTable.fit(claim_rows(games), "base")
    assert table.counts[1, 0, 0].tolist() == [20, 80] and table.counts[1, 0, 2].tolist() == [60, 0]
    assert table.counts[0, 1, 1].tolist() == [9, 1]
    mean = table.mean()
    # Beta prior: the hand-set rate worth 2 claims (saboteur goal 0.3, digger accuse 0.7)
    assert mean[1, 0, 0] == pytest.approx((0.6 + 20) / 102)
    assert mean[1, 0, 2] == pytest.approx((0.6 + 60) / 62)
    assert mean[0, 1, 1] == pytest.approx((1.4 + 9) / 12)
    assert mean[1, 0, 1] == pytest.approx(0.3)  # no claims: the prior
    lo, hi = table.interval()
    assert lo[1, 0, 0] < 0.2 < hi[1, 0, 0] and hi[1, 0, 0] < 0.3  # the known 0.2 inside, the hand-set 0.3 out
    assert table.mean(pooled=True)[1, 0] == pytest.approx((0.6 + 80) / 162)


def test_honesty_table__json_round_trip_and_the_handset_baseline(tmp_path) -> None:
    table = HonestyTable.fit([(1, 0, 0, False), (1, 0, 0, True), (0, 3, 2, True)], "base", name="x", seeds=[0, 3])
    path = tmp_path / "h.json"
    table.save(path)
    back = HonestyTable.load(path)
    assert back.counts.tolist() == table.counts.tolist() and back.meta == table.meta
    assert back.model() == table.model()
    # the named baseline: no counts, the hand-set numbers
    h = handset_table("base").model()
    assert h.truth(1, 0, 0) == pytest.approx(0.3) and h.truth(0, 2, 1) == pytest.approx(0.7)
    assert honesty_model("handset", "base", 5) == HonestyModel()
    assert honesty_model(str(path), "base", 5) == table.model()
    with pytest.raises(ValueError, match=r"honesty model .nope\.json.: no file .nope\.json.; valid: handset, fit"):
        honesty_model("nope.json", "base", 5)
    with pytest.raises(ValueError, match="was fitted for game 'base', not 'duel'"):
        honesty_model(str(path), "duel", 2)


def test_believers__exact_update_under_a_fitted_model_by_phase() -> None:
    # Goal claims: diggers true with 0.8 early, saboteurs 0.2 early; late both 0.5 (the claim says nothing).
    q = np.full((2, 4, 3), 0.5)
    q[0, 0, 0], q[1, 0, 0] = 0.8, 0.2
    nest = tuple(tuple(tuple(float(x) for x in k) for k in r) for r in q)
    model = HonestyModel(table=nest, pooled=tuple(tuple(float(x) for x in r[:, 0]) for r in q))
    obs = ClaimsObserver(CFG5, model)  # 5 players: prior P(saboteur) 2/6
    early = PublicClaims(goals=((1, 0, True),), goal_phases=(0,))
    p_gold, p_sab = obs.posterior(early)
    # P(claim | gold at 0) = 2/3 * 0.8 + 1/3 * 0.2 = 0.6; elsewhere 2/3 * 0.2 + 1/3 * 0.8 = 0.4
    assert p_gold == pytest.approx([3 / 7, 2 / 7, 2 / 7])
    assert p_sab[1] == pytest.approx(3 / 7 * (1 / 3 * 0.2 / 0.6) + 4 / 7 * (1 / 3 * 0.8 / 0.4))
    late = PublicClaims(goals=((1, 0, True),), goal_phases=(2,))
    assert obs.posterior(late)[0] == pytest.approx([1 / 3] * 3)
    # the hand-set model ignores phases: the same numbers as before phases existed
    hand = ClaimsObserver(CFG5)
    assert hand.posterior(early)[0] == pytest.approx(hand.posterior(PublicClaims(goals=((1, 0, True),)))[0])


def test_claims_agent__stamps_each_claim_with_the_lap_it_was_first_seen_in() -> None:
    agent = ClaimsAgent(make_agent("heuristic", CFG5.game_config), CFG5, **claims_kwargs(["fit"], CFG5))
    agent.reset(2, 5, 0)
    game_obs = np.zeros(agent.reader.game_size, dtype=np.float32)
    first = agent._stamped(PublicClaims(goals=((1, 0, True),)), game_obs)
    assert first.goal_phases == (0,)
    agent._laps = 3  # three own game decisions later: the middle phase
    later = agent._stamped(PublicClaims(goals=((1, 0, True), (3, 2, False)), seats=((4, 1, 0),)), game_obs)
    assert later.goal_phases == (0, 1) and later.seat_phases == (1,)
    assert agent.observer.model.table is not None  # +fit: the shipped fitted model


def test_fit__held_out_deals_are_not_fitted_and_calibration_is_measured_on_them() -> None:
    seeds = list(range(40))
    test_seeds = [s for s in seeds if held_out(s, 0.25)]
    assert 0 < len(test_seeds) < 40 and test_seeds == [s for s in seeds if held_out(s, 0.25)]
    games = [[_round(s, [0, 1, 0, 0, 0], [_claim(0, 1, "goal", 0, 1, s in test_seeds)])] for s in seeds]
    table, calib = fit(games, "base", 5, 0.25)
    # only the training games' claims (all false) are counted
    assert table.counts[1, 0, 0].tolist() == [0, 40 - len(test_seeds)]
    assert calib["games"] == len(test_seeds) and set(calib) == {"games", "handset", "fit"}
    assert table.meta["seeds"] == [0, 40] and table.meta["held_out"] == len(test_seeds)


# ---- names ------------------------------------------------------------------------------------------------------
def test_claims_names__options_parse_and_keep_through_k() -> None:
    name = "claims+fit+deaf:bayes"
    assert (_claims_k(name), _bare(name), claims_options(name)) == (1, "bayes", ("fit", "deaf"))
    assert with_claims_per_turn(name, 2) == "claims@2+fit+deaf:bayes"
    assert claims_options("claims@3:text:random") == () and _bare("claims@3:text:random") == "text:random"
    assert arm_name(name, "mute") == "claims+fit+mute:bayes" and arm_name(name, "deaf") is None
    assert arm_name("claims+mute:heuristic", "deaf") is None
    with pytest.raises(ValueError, match="claims option 'loud' is unknown; valid: deaf, mute, fit, fit=PATH"):
        claims_kwargs(["loud"], CFG5)


# ---- metrics on a hand-made log ------------------------------------------------------------------------------
def test_saboteur_metrics__on_a_hand_made_round() -> None:
    # Seat 0 (saboteur) lies about goal 0 before decision 3; seat 1 (digger) held P(saboteur on 0) 0.3 at decision 1
    # and 0.2 at decision 6; seat 4 is the other saboteur (its beliefs do not count).
    beliefs = [{"t": 1, "actor": 1, "agent": [300, 0, 250, 250, 250]},
               {"t": 2, "actor": 4, "agent": [900, 100, 100, 100, 1000]},
               {"t": 6, "actor": 1, "agent": [200, 0, 300, 300, 300]}]  # fmt: skip
    game = [_round(11, [1, 0, 0, 0, 1], [_claim(3, 0, "goal", 0, 1, False)], "saboteurs", beliefs)]
    rs = seat_rounds(game, 0)
    assert (rs[0].seat, rs[0].role, rs[0].win) == (0, 1, True)
    m = saboteur_metrics(rs, ClaimsObserver(CFG5), 1)
    assert (m["rounds"], m["lies"], m["known_claims"]) == (1, 1, 1)
    assert m["lie_rate"][0] == 1.0 and m["lie_lap"][0] == 0.0 and m["lies_early"][0] == 1.0
    assert m["lie_shift"]["opponents"]["mean"][0] == pytest.approx(-0.1)
    # hand-set public observer: prior 1/3, after "goal 0 is gold" by seat 0: 17/39
    assert m["lie_shift"]["public"]["mean"][0] == pytest.approx(float(Fraction(17, 39) - Fraction(1, 3)))
    assert m["lie_shift"]["target_public"]["n"] == 0  # a goal lie points at no seat
    assert m["undetected"][0] == 1.0  # the digger's last P(saboteur) on it: 0.2
    assert m["win_rate"][0] == 1.0


# ---- the protocol --------------------------------------------------------------------------------------------------
def test_protocol__sealed_deals_from_the_secret_held_out_of_the_fit() -> None:
    p = protocol("base-5")
    a, b = deal_seeds(p, 1, 5), deal_seeds(p, 2, 5)
    assert a == deal_seeds(p, 1, 5) and a != b and len(set(a)) == 5
    assert all(s >= SEED_OFFSET for s in a + b)  # never a tournament's or the honesty fit's public seed
    p.check_honesty()  # the shipped honesty file is the one bluff-v1 pinned
    with pytest.raises(ValueError, match="deals=0 must be an int >= 1"):
        deal_seeds(p, 1, 0)


def test_benchmark__deterministic_for_a_fixed_secret_with_the_version_in_every_row(tmp_path) -> None:
    p = protocol("base-5")
    one = benchmark(p, ["claims:random", "random"], secret=7, deals=2, quiet=True)
    two = benchmark(p, ["claims:random", "random"], secret=7, deals=2, quiet=True)
    lb.write_json([one], tmp_path / "a.json")
    lb.write_json([two], tmp_path / "b.json")
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()
    data = json.loads((tmp_path / "a.json").read_text())
    rows = data["boards"][0]["rows"]
    assert [r["agent"] for r in rows] == ["claims:random", "random"]
    assert all(r["version"] == VERSION and r["protocol"] == f"{VERSION}/base-5" for r in rows)
    assert rows[1]["seated_as"] == "claims+mute:random" and rows[1]["claims_per_round"][0] == 0
    assert rows[1]["talk_value"] == [None, None, None]  # a silent agent has no silent arm
    lb.write_markdown([one], tmp_path / "a.md")
    table_rows = [ln for ln in (tmp_path / "a.md").read_text().splitlines() if ln.startswith("| `")]
    assert table_rows and all(f"| {VERSION} |" in ln for ln in table_rows)


@pytest.mark.parametrize(("argv", "words"), [
    (["nosuchagent"], "agent 'nosuchagent' is unknown for game 'base'; valid: random"),
    (["claims:heuristic", "--deals", "0"], "--deals 0 must be at least 1"),
    (["claims@2:heuristic"], "protocol bluff-v1/base-5 plays one claim per turn"),
    (["claims+loud:heuristic"], "claims option 'loud' is unknown"),
    (["greedy", "--game", "duel", "--players", "5"], "no bluff-v1 protocol for game 'duel' with players 5; valid:"),
    (["heuristic", "--players", "6"], "no bluff-v1 protocol for game 'base' with players 6; valid: --game base "
                                      "--players 5, --game base --players 7, --game sab2 --players 6"),
    (["ppo:/no/such/model.zip"], "does not fit protocol bluff-v1/base-5"),
    ([], "give at least one AGENT"),
])  # fmt: skip
def test_cli__bad_input_is_named(argv: list[str], words: str, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert words in capsys.readouterr().err


def test_benchmark_name__silent_plain_agents() -> None:
    p = protocol("base-5")
    assert benchmark_name("heuristic", p) == "claims+mute:heuristic"
    assert benchmark_name("claims+fit:bayes", p) == "claims+fit:bayes"


def test_benchmark__arms_share_agent_seeds_so_talk_that_changes_nothing_measures_zero() -> None:
    # In the Duel claims change no move (honest talk, no reaction): with the same agent seeds in every arm, the
    # paired differences are exactly 0 on every deal.
    b = benchmark(protocol("duel"), ["claims:greedy"], secret=5, deals=2, quiet=True)
    r = b["rows"][0]
    assert r["talk_value"] == (0.0, 0.0, 0.0) and r["listening_value"] == (0.0, 0.0, 0.0)
    assert r["version"] == VERSION and r["protocol"] == f"{VERSION}/duel"


def test_seat_rounds__saboteur2_roles_as_saboteur_or_not_and_wins_by_pay() -> None:
    # Saboteur 2 deals six roles; the benchmark reads them as saboteur (SABOTEUR, 5) or not, and a seat wins a round
    # it is paid in (the end record's ``winners``); the inserted seat is the header's.
    rec = {"header": {"game": "sab2", "players": 4, "seed": 9, "insert": "x", "insert_seat": 1,
                      "roles": [5, 0, 3, 1]},
           "end": {"winners": [False, True, False, True]}, "claims": []}  # fmt: skip
    (r,) = seat_rounds([rec], deal=0)
    assert (r.seat, r.role, r.roles, r.win) == (1, 0, (1, 0, 0, 0), True)
    (s,) = seat_rounds([rec], deal=0, seat=0)
    assert (s.role, s.win) == (1, False)


def test_protocols__base_7_and_saboteur2_6_pin_their_shipped_honesty_files() -> None:
    for name, game, players in (("base-7", "base", 7), ("sab2-6", "sab2", 6)):
        p = protocol(name)
        assert (p.game, p.players) == (game, players) and p.honesty_sha256
        p.check_honesty()
        assert all(s >= SEED_OFFSET for s in deal_seeds(p, 3, 4))


def test_benchmark__saboteur2_seats_the_agent_and_measures_both_sides() -> None:
    b = benchmark(protocol("sab2-6"), ["claims:random"], secret=11, deals=2, quiet=True)
    (r,) = b["rows"]
    assert r["protocol"] == f"{VERSION}/sab2-6" and r["seated_as"] == "claims:random"
    assert r["saboteur"]["rounds"] + r["digger"]["rounds"] == 2 * 3  # every round of both deals, one side each


def test_benchmark__a_row_with_fewer_deals_is_paired_on_the_first_of_the_boards_deals(tmp_path) -> None:
    p = protocol("base-5")
    full = benchmark(p, ["claims:random", "random"], secret=7, deals=3, quiet=True, row_deals={"random": 2})
    short = benchmark(p, ["random"], secret=7, deals=2, quiet=True)
    rows = {r["agent"]: r for r in full["rows"]}
    assert full["deals"] == 3 and rows["claims:random"]["deals"] == 3 and rows["random"]["deals"] == 2
    # the same two deals, agent seeds and pool games: every number of the row is the 2-deal board's
    assert json.dumps(lb._clean(rows["random"])) == json.dumps(lb._clean(short["rows"][0]))
    lb.write_markdown([full], tmp_path / "a.md")
    text = (tmp_path / "a.md").read_text()
    assert "| `random` (2 deals) |" in text and "| `claims:random` |" in text
    assert "Deals per agent: 3, the first of them where a row names fewer" in text


def test_benchmark_name__a_language_model_is_offered_the_claims_and_talks_natively(monkeypatch) -> None:
    monkeypatch.setenv("SABOTEUR_LLM_BASE_URL", "http://127.0.0.1:9/v1")  # never asked: names are checked offline
    monkeypatch.setenv("SABOTEUR_LLM_MODEL", "m")
    assert make_agent("llm", GameConfig(num_players=5, claims=True)).talks
    assert not make_agent("llm", GameConfig(num_players=5)).talks
    assert benchmark_name("llm", protocol("base-5")) == "claims+native:llm"
    assert arm_name("claims+native:llm", "deaf") == "claims+native+deaf:llm"


def test_cli__leaderboard_without_a_local_model_stops_at_once_naming_the_install(monkeypatch, capsys,
                                                                                  tmp_path) -> None:  # fmt: skip
    import experiments.llm.local as local

    monkeypatch.delenv("SABOTEUR_LLM_BASE_URL", raising=False)
    monkeypatch.setattr(local, "missing", lambda: "llama_cpp not installed: pip install llama-cpp-python[server]")
    with pytest.raises(SystemExit) as e:
        main(["--leaderboard", "--secret", "3fa0f95ad717f8c3617134ec22671dd7", "--md", str(tmp_path / "x.md")])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "the leaderboard's llm rows" in err and "llama_cpp not installed" in err and "SABOTEUR_LLM_BASE_URL" in err
    assert not (tmp_path / "x.md").exists()


def test_cli__leaderboard_rows_merge_into_the_stored_board_only_with_its_secret_and_deals(tmp_path, capsys,
                                                                                          monkeypatch) -> None:
    """``--leaderboard AGENT...``: the rows of one protocol's board measured and merged into the stored file (a
    row replaced, the others and the other boards kept, the leaderboard's order); a secret, deal count or agent the
    board does not pair with is refused before anything is played."""
    p5, p7 = protocol("base-5"), protocol("base-7")
    a = benchmark(p5, ["heuristic", "claims:heuristic"], secret=7, deals=2, quiet=True)
    other = benchmark(p7, ["heuristic"], secret=9, deals=1, quiet=True)
    path, md = tmp_path / "lb.json", tmp_path / "lb.md"
    stale = json.loads(json.dumps(lb._clean(a)))
    stale["rows"] = [dict(stale["rows"][1], win_rate="stale")]  # only claims:heuristic, out of date
    lb.write_json([stale, other], path)
    before = json.loads(path.read_text())["boards"][1]
    main(["--leaderboard", "heuristic", "claims:heuristic", "--secret", "7", "--deals", "2",
          "--json", str(path), "--md", str(md)])  # fmt: skip
    boards = json.loads(path.read_text())["boards"]
    assert boards[1] == before  # the other board untouched
    assert [r["agent"] for r in boards[0]["rows"]] == ["claims:heuristic", "heuristic"]  # the leaderboard's order
    assert boards[0]["rows"] == json.loads(json.dumps(lb._clean(a)))["rows"][::-1]  # measured again, exactly
    assert "| `heuristic` |" in md.read_text()
    def no_games(*a: object, **k: object) -> None:
        raise AssertionError("played games before refusing")

    monkeypatch.setattr(cli, "benchmark", no_games)
    (tmp_path / "bad.json").write_text(json.dumps({"version": VERSION, "boards": [{"protocol": "x", "rows": [1]}]}))
    for argv, needle in ((["heuristic", "--secret", "8", "--deals", "2"], "secret_sha256"),
                         (["heuristic", "--secret", "7", "--deals", "2", "--json", str(tmp_path / "bad.json"),
                           "--md", str(md)], "bad.json: not a leaderboard file"),
                         (["heuristic", "--secret", "7", "--deals", "2", "--json", str(path)], "give both --json"),
                         (["heuristic", "--secret", "7", "--deals", "3"], "'deals': (2, 3)"),
                         (["random", "--secret", "7", "--deals", "2"], "not among the base-5 board's agents"),
                         (["--game", "sab2", "--players", "6", "heuristic", "--secret", "7"],
                          "no board bluff-v1/sab2-6")):  # fmt: skip
        files = [] if "--json" in argv else ["--json", str(path), "--md", str(md)]
        with pytest.raises(SystemExit):
            main(["--leaderboard", *argv, *files])
        assert needle in capsys.readouterr().err
    assert json.loads(path.read_text())["boards"][0] == boards[0]
    monkeypatch.undo()
    # a pool that no longer plays as when the board was measured: refused before the agents' rows are played
    changed = json.loads(path.read_text())
    changed["boards"][0]["calibration"]["fit"]["ece"] = [0.5, 0.4, 0.6]
    path.write_text(json.dumps(changed))
    monkeypatch.setattr(cli, "play", _only_the_pool(cli.play))
    with pytest.raises(SystemExit):
        main(["--leaderboard", "heuristic", "--secret", "7", "--deals", "2", "--json", str(path), "--md", str(md)])
    assert "no longer plays as when the stored board was measured" in capsys.readouterr().err


def _only_the_pool(play):  # type: ignore[no-untyped-def]
    def wrapped(p, name, *a, **k):  # type: ignore[no-untyped-def]
        assert name is None, f"played {name} after the pool"
        return play(p, name, *a, **k)

    return wrapped


def test_leaderboard_file__too_large_or_malformed_is_refused_naming_it(tmp_path, monkeypatch) -> None:
    path = tmp_path / "lb.json"
    lb.write_json([], path)
    assert lb.read_json(path) == []
    monkeypatch.setattr(lb, "MAX_FILE_BYTES", 10)
    with pytest.raises(ValueError, match=r"lb.json: not a leaderboard file .*a leaderboard file is read up to 10"):
        lb.read_json(path)
