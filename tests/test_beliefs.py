"""Belief models: the exact Bayesian posterior against brute force, and the suspicion heuristic's directions."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from agents.base.beliefs import (
    BREAK_LIKELIHOOD,
    PLACE_LIKELIHOOD,
    REPAIR_LIKELIHOOD,
    BayesModel,
    SuspicionModel,
    event_categories,
)
from agents.base.tracker import PublicEvent
from saboteur_env.base.cards import KIND_GOAL_STONE_A
from saboteur_env.base.state import EventType

GOALS = (8, 26, 44)  # storage cells of the goal slots on the 5x9 frame


def _ev(etype, actor, target=-1, before=(5, 5, 5), after=(5, 5, 5), kind=0, cell=-1, dead_end=False):
    return PublicEvent(EventType(etype), actor, kind, target, cell, 0, np.array(before), np.array(after), dead_end)


EVENTS = [
    _ev(EventType.PLACE, 0, before=(6, 4, 6), after=(5, 3, 6)),  # progress towards goals 0 and 1
    _ev(EventType.BREAK, 1, target=0),
    _ev(EventType.PLACE, 2, before=(5, 3, 6), after=(5, 6, 6)),  # harm towards goal 1
    _ev(EventType.REPAIR, 3, target=2),
    _ev(EventType.REVEAL, 0, kind=KIND_GOAL_STONE_A, cell=GOALS[0]),
    _ev(EventType.PLACE, 4, before=(9, 2, 4), after=(9, 2, 4), dead_end=True),
]


def brute_force(num_players: int, saboteurs: int, events, eps: float, seat=None, role=None):
    """Enumerate every arrangement of the N+1 role cards (left-over card included) and every gold slot."""
    post_sab = np.zeros(num_players)
    post_gold = np.zeros(3)
    total = 0.0
    for sab_slots in combinations(range(num_players + 1), saboteurs):
        roles = np.zeros(num_players + 1, dtype=int)
        roles[list(sab_slots)] = 1
        roles = roles[:num_players]  # the last slot is the left-over card
        if seat is not None and roles[seat] != role:
            continue
        for g in range(3):
            like = 1.0
            for ev in events:
                if ev.type == EventType.REVEAL:
                    like *= GOALS.index(ev.cell) != g
                    continue
                cats = event_categories(ev)
                if cats is not None:
                    like *= eps + (1 - eps) * PLACE_LIKELIHOOD[roles[ev.actor], cats[g]]
                elif ev.type == EventType.BREAK and ev.target != ev.actor:
                    like *= eps + (1 - eps) * BREAK_LIKELIHOOD[roles[ev.actor], roles[ev.target]]
                elif ev.type == EventType.REPAIR and ev.target != ev.actor:
                    like *= eps + (1 - eps) * REPAIR_LIKELIHOOD[roles[ev.actor], roles[ev.target]]
            post_sab += like * roles
            post_gold[g] += like
            total += like
    return post_sab / total, post_gold / total


@pytest.mark.parametrize(("seat", "role"), [(None, None), (0, 0), (3, 1)])
def test_bayes__matches_brute_force(seat, role):
    model = BayesModel(5, GOALS, epsilon=0.1)
    model.reset_round(seat, role)
    for ev in EVENTS:
        model.observe(ev)
    p_sab, p_gold = brute_force(5, 2, EVENTS, 0.1, seat, role)
    assert np.allclose(model.p_saboteur(), p_sab)
    assert np.allclose(model.p_gold(), p_gold)
    assert np.isclose(model.posterior().sum(), 1.0)
    assert p_gold[0] == 0.0


def test_bayes__prior_matches_role_deck():
    """Before evidence a seat is a saboteur with probability S/(N+1) publicly, S/N for a miner's view of others."""
    for n, s in ((4, 1), (7, 3), (10, 4)):
        public = BayesModel(n, GOALS)
        assert np.allclose(public.p_saboteur(), s / (n + 1))
        mine = BayesModel(n, GOALS)
        mine.reset_round(0, 0)
        assert np.isclose(mine.p_saboteur()[0], 0) and np.allclose(mine.p_saboteur()[1:], s / n)
        assert len(public.sets) == len(list(combinations(range(n), s))) + len(list(combinations(range(n), s - 1)))


def test_bayes__saboteur_in_four_player_game_knows_everyone():
    model = BayesModel(4, GOALS)
    model.reset_round(2, 1)
    assert model.p_saboteur().tolist() == [0, 0, 1, 0]


def test_bayes__own_map_result_fixes_the_gold():
    model = BayesModel(5, GOALS)
    model.observe_peek(1, True)
    assert np.allclose(model.p_gold(), [0, 1, 0])


def test_suspicion__directions():
    model = SuspicionModel(5, GOALS)
    base = model.p_saboteur().copy()
    model.observe(_ev(EventType.PLACE, 0, before=(6, 4, 6), after=(5, 3, 5)))
    model.observe(_ev(EventType.PLACE, 1, before=(5, 3, 5), after=(7, 6, 7)))
    model.observe(_ev(EventType.PLACE, 2, before=(3, 3, 3), after=(3, 3, 3), dead_end=True))
    p = model.p_saboteur()
    assert p[0] < base[0] and p[1] > base[1] and p[2] > base[2] and p[3] == base[3]


# ---- fitted behaviour tables (the calibrated observer) -----------------------------------------------------------
def test_behaviour_counts__exact_counts_and_smoothed_tables():
    from agents.base.beliefs import BehaviourCounts

    c = BehaviourCounts()
    roles = [0, 1, 0, 0]
    c.decision(1, roles)  # a saboteur's decision: 3 miners it could have acted on
    c.decision(0, roles)  # a miner's: 2 miners and 1 saboteur
    c.event(_ev(EventType.PLACE, 1, before=(6, 4, 6), after=(6, 5, 6)), roles, gold_slot=1)  # harm at the gold
    c.event(_ev(EventType.PLACE, 0, before=(6, 4, 6), after=(5, 3, 6)), roles, gold_slot=1)  # progress
    c.event(_ev(EventType.BREAK, 0, target=1), roles, gold_slot=1)
    c.event(_ev(EventType.BREAK, 0, target=0), roles, gold_slot=1)  # own tools: not evidence, not counted
    assert c.place.tolist() == [[1, 0, 0], [0, 0, 1]]
    assert c.breaks.tolist() == [[0, 1], [0, 0]] and c.exposure.tolist() == [[2, 1], [3, 0]]
    t = c.fit(pseudo=1.0)
    assert t.place[0] == pytest.approx([2 / 4, 1 / 4, 1 / 4]) and t.place[1] == pytest.approx([1 / 4, 1 / 4, 2 / 4])
    assert t.breaks == pytest.approx(np.array([[1 / 4, 2 / 3], [1 / 5, 1 / 2]]))
    with pytest.raises(ValueError, match="pseudo=0"):
        c.fit(pseudo=0)


def test_behaviour_tables__bad_shapes_and_epsilon_are_named():
    from agents.base.beliefs import FIXED_TABLES, BehaviourTables

    with pytest.raises(ValueError, match=r"BehaviourTables.place must be a \(2, 3\) array"):
        BehaviourTables("x", np.ones((3, 2)), FIXED_TABLES.breaks, FIXED_TABLES.repairs)
    with pytest.raises(ValueError, match=r"BehaviourTables\.breaks"):
        BehaviourTables("x", FIXED_TABLES.place, -np.ones((2, 2)), FIXED_TABLES.repairs)
    with pytest.raises(ValueError, match=r"epsilon=1\.5"):
        BayesModel(4, GOALS, epsilon=1.5)


def test_fixed_tables_are_the_baseline_of_the_reference_observer():
    """The report's re-played observer with the fixed tables is exactly the tournament's logged reference."""
    from experiments.tournament.loop import play
    from experiments.tournament.report import calibration as report
    from experiments.tournament.rounds import GameSpec

    records = play(GameSpec("base", 4, ("random", "covert"), seed=11))
    for (traj, roles), rec in zip(report.observer_trajectory(records), records, strict=True):
        assert roles == rec["header"]["roles"]
        assert [[round(1000 * x) for x in row] for row in traj] == [b["reference"] for b in rec["beliefs"]]


def test_calibration__fitted_tables_beat_the_fixed_ones_on_held_out_games(tmp_path):
    """Against random agents the fixed tables are over-confident (the audit: ECE 0.13-0.15); tables fitted on one
    half of the games calibrate much better on the other half."""
    from experiments.tournament.report import calibration as report
    from experiments.tournament.run import run

    list(run([4], ["random"], ["random"], 30, seed=0, beliefs=False, out=tmp_path, secret=9))
    rows, points = report.table_calibration([tmp_path / "rounds.jsonl.gz"], boot=200)
    by_model = {r["model"]: r for r in rows}
    assert by_model["fixed"]["train_games"] == 15 and by_model["fixed"]["test_games"] == 15
    assert by_model["fitted"]["ece"] < 0.5 * by_model["fixed"]["ece"]
    assert by_model["fixed"]["ece_lo"] <= by_model["fixed"]["ece"] <= by_model["fixed"]["ece_hi"]
    assert sum(p["samples"] for p in points if p["model"] == "fixed") == by_model["fixed"]["samples"]
