"""Saboteur 2 role belief (agents.sab2.beliefs): hand-built posteriors, brute force over every deal, the view
tracker on real games, and invariance under resampling hidden state."""

from __future__ import annotations

from collections import deque
from itertools import permutations

import numpy as np
import pytest

from agents.sab2.beliefs import (
    COPIES,
    DEAD_END,
    FIXED_SAB2_TABLES,
    SIDE,
    RoleEvent,
    Sab2BeliefTracker,
    Sab2RoleBelief,
    gold_probabilities,
    new_events,
    place_category,
    rockfall_category,
)
from saboteur_env import raw_env
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.cards import Sab2Role as R
from saboteur_env.sab2.state import Sab2Event as E
from saboteur_env.sab2.view import sab2_view
from tests.hidden import resample_sab2

DECK = np.repeat(np.arange(6), COPIES)  # role of each of the 15 labelled role cards
EPS = 0.1


def ev(etype: int, actor: int, kind: int = -1, target: int = -1, arg: int = 0) -> RoleEvent:
    return RoleEvent(int(etype), actor, kind, target, -1, arg)


def mix(x: np.ndarray) -> np.ndarray:
    return EPS + (1 - EPS) * x


# ---- hand-built positions with exact posteriors ----
def test_prior_of_a_public_observer_and_of_a_seat() -> None:
    b = Sab2RoleBelief(2)
    np.testing.assert_allclose(b.p_role(), np.tile(COPIES / 15, (2, 1)))
    b.reset_round(0, R.SABOTEUR)
    expect = (COPIES - np.eye(6)[R.SABOTEUR]) / 14
    np.testing.assert_allclose(b.p_role()[1], expect)
    np.testing.assert_allclose(b.p_role()[0], np.eye(6)[R.SABOTEUR])
    np.testing.assert_allclose(b.p_team()[1], [4 / 14, 4 / 14, 9 / 14, 2 / 14])


def test_inspection_then_swap_redraws_from_the_unseen_cards() -> None:
    b = Sab2RoleBelief(3)
    b.reset_round(0, R.BOSS)
    b.condition_role(1, R.SABOTEUR)  # I inspected seat 1
    assert b.p_role()[1, R.SABOTEUR] == pytest.approx(1.0)
    np.testing.assert_allclose(b.p_role()[2], (COPIES - np.eye(6)[R.BOSS] - np.eye(6)[R.SABOTEUR]) / 13)
    b.observe(ev(E.SWAP_HATS, 2, target=1))
    # Seat 2's card and the 12 reserve cards are exchangeable: the new card is one of those 13, uniformly.
    unseen = (COPIES - np.eye(6)[R.BOSS] - np.eye(6)[R.SABOTEUR]) / 13
    np.testing.assert_allclose(b.p_role()[1], unseen)
    np.testing.assert_allclose(b.p_role()[2], unseen)
    assert b.p_role()[1, R.BOSS] == 0.0  # I hold the only Boss
    np.testing.assert_allclose(b.p_reserve(), unseen)


def test_a_dead_end_weighs_by_the_place_table() -> None:
    b = Sab2RoleBelief(2)
    b.reset_round(0, R.GEOLOGIST)
    b.observe(ev(E.PLACE, 1, kind=10))  # T11: a dead end
    prior = (COPIES - np.eye(6)[R.GEOLOGIST]) / 14
    post = prior * mix(FIXED_SAB2_TABLES.place[:, DEAD_END])
    np.testing.assert_allclose(b.p_role()[1], post / post.sum())
    assert b.p_role()[1, R.SABOTEUR] > prior[R.SABOTEUR]


def test_a_break_weighs_pairs_of_sides() -> None:
    b = Sab2RoleBelief(2)
    b.observe(ev(E.BREAK, 0, kind=sc.FIRST_BASE_ACTION, target=1))
    joint = np.zeros((6, 6))
    for x in range(6):
        for y in range(6):
            ways = COPIES[x] * (COPIES[y] - (x == y))
            joint[x, y] = ways * mix(FIXED_SAB2_TABLES.hit[SIDE[x], SIDE[y]])
    joint /= joint.sum()
    np.testing.assert_allclose(b.p_role()[0], joint.sum(1))
    np.testing.assert_allclose(b.p_role()[1], joint.sum(0))
    b.observe(ev(E.BREAK, 1, kind=sc.FIRST_BASE_ACTION, target=1))  # on oneself: no evidence
    np.testing.assert_allclose(b.p_role()[1], joint.sum(0))


def test_categories() -> None:
    codes = {sc.SPECS[k].code: k for k in range(sc.NUM_PATH_KINDS)}  # type: ignore[union-attr]
    assert place_category(codes["X07"]) == 2 and place_category(codes["X10"]) == 3  # blue, green door
    assert place_category(codes["X13"]) == 4 and place_category(codes["X03"]) == 5  # crystal dead end, ladder
    assert place_category(codes["T11"]) == DEAD_END and place_category(codes["X01"]) == 0
    assert rockfall_category(codes["T11"]) == 0 and rockfall_category(codes["X13"]) == 1
    with pytest.raises(ValueError, match="kind=40"):
        place_category(40)


def test_bad_input_names_the_value() -> None:
    with pytest.raises(ValueError, match="num_players=13"):
        Sab2RoleBelief(13)
    b = Sab2RoleBelief(3)
    with pytest.raises(ValueError, match="seat=3"):
        b.condition_role(3, 0)
    with pytest.raises(ValueError, match="role=6"):
        b.condition_role(0, 6)
    b.condition_role(0, R.BOSS)
    with pytest.raises(ValueError, match="contradict"):
        b.condition_role(1, R.BOSS)  # only one Boss card
    with pytest.raises(ValueError, match="more cards"):
        b.set_roles([R.BOSS, R.BOSS, 0])


# ---- brute force: every ordered deal of the 15 labelled role cards ----
def brute_force(n: int, script: list[tuple]) -> np.ndarray:
    swaps = sum(step[0] == "swap" for step in script)
    seqs = DECK[np.array(list(permutations(range(15), n + swaps)), dtype=np.int64)]
    cur = seqs[:, :n].copy()
    draw = n
    w = np.ones(len(seqs))
    t = FIXED_SAB2_TABLES
    for step in script:
        if step[0] == "swap":
            cur[:, step[1]] = seqs[:, draw]
            draw += 1
        elif step[0] == "fact":
            w *= cur[:, step[1]] == step[2]
        else:
            e: RoleEvent = step[1]
            a = cur[:, e.actor]
            if e.type == E.PLACE:
                w *= mix(t.place[a, place_category(e.kind)])
            elif e.type == E.ROCKFALL:
                w *= mix(t.rockfall[a, rockfall_category(e.arg)])
            elif e.target != e.actor:
                table = t.hit if e.type in (E.BREAK, E.TRAPPED) else t.help
                w *= mix(table[SIDE[a], SIDE[cur[:, e.target]]])
    return np.stack([(w[:, None] * (cur == x)).sum(0) for x in range(6)], axis=1) / w.sum()


def random_script(n: int, swaps: int, length: int, rng: np.random.Generator) -> list[tuple]:
    """Events, swaps and facts (own role at the start and after swaps on it, an inspection) of one true deal."""
    truth = DECK[rng.permutation(15)]
    cur, draw = truth[:n].copy(), n
    me = int(rng.integers(n))
    script: list[tuple] = [("fact", me, int(cur[me]))]
    slots = sorted(rng.choice(length, size=swaps, replace=False).tolist())
    for i in range(length):
        if i in slots:
            target = int(rng.integers(n))
            cur[target] = truth[draw]
            draw += 1
            script.append(("swap", target))
            if target == me:
                script.append(("fact", me, int(cur[me])))
            continue
        kind = int(rng.integers(4))
        actor, target = int(rng.integers(n)), int(rng.integers(n))
        if kind == 0:
            script.append(("event", ev(E.PLACE, actor, kind=int(rng.integers(sc.NUM_PATH_KINDS)))))
        elif kind == 1:
            script.append(("event", ev(E.ROCKFALL, actor, arg=int(rng.integers(sc.NUM_PATH_KINDS)))))
        elif kind == 2:
            script.append(("event", ev((E.BREAK, E.TRAPPED, E.REPAIR, E.FREE_AT_LAST)[int(rng.integers(4))], actor,
                                       target=target)))  # fmt: skip
        else:
            other = (me + 1 + int(rng.integers(n - 1))) % n
            script.append(("fact", other, int(cur[other])))  # an inspection I made
    return script


def run_model(n: int, script: list[tuple], **kw: object) -> np.ndarray:
    b = Sab2RoleBelief(n, **kw)  # type: ignore[arg-type]
    for step in script:
        if step[0] == "swap":
            b.observe(ev(E.SWAP_HATS, 0, target=step[1]))
        elif step[0] == "fact":
            b.condition_role(step[1], step[2])
        else:
            b.observe(step[1])
    return b.p_role()


@pytest.mark.parametrize(("n", "swaps", "seed"), [(2, 2, 0), (2, 2, 1), (3, 1, 2), (3, 1, 3), (3, 2, 4), (4, 1, 5)])
def test_matches_brute_force(n: int, swaps: int, seed: int) -> None:
    script = random_script(n, swaps, 10, np.random.default_rng(seed))
    np.testing.assert_allclose(run_model(n, script), brute_force(n, script), atol=1e-12)


def test_particles_approximate_the_exact_filter() -> None:
    script = random_script(4, 2, 12, np.random.default_rng(9))
    exact = run_model(4, script)
    approx = run_model(4, script, exact_players=3, particles=40000, seed=1)
    assert np.abs(approx - exact).max() < 0.03
    again = run_model(4, script, exact_players=3, particles=40000, seed=1)
    np.testing.assert_array_equal(approx, again)  # deterministic for a seed


# ---- the goal belief and the history window ----
def test_gold_probabilities_follow_the_view() -> None:
    env = raw_env(game="sab2", num_players=3)
    env.reset(seed=0)
    game = env.unwrapped.game
    view = sab2_view(game, 0)
    np.testing.assert_allclose(gold_probabilities(view), [1 / 3] * 3)
    gold = [k == sc.KIND_GOALS[0] for k in game.goal_kind.tolist()].index(True)
    stone = (gold + 1) % 3
    game.peeked[0, stone] = True
    np.testing.assert_allclose(gold_probabilities(sab2_view(game, 0)), [0.5 if s != stone else 0.0 for s in range(3)])
    game.peeked[0, gold] = True
    np.testing.assert_allclose(gold_probabilities(sab2_view(game, 0)), np.eye(3)[gold])


def test_new_events_aligns_windows() -> None:
    assert new_events((1, 2), (1, 2, 3), 4) == (3,)
    assert new_events((), (1, 2), 4) == (1, 2)
    assert new_events((1, 2, 3, 4), (3, 4, 5, 6), 4) == (5, 6)
    assert new_events((1, 2, 3, 4), (4, 4, 4, 5), 4) == (4, 4, 5)
    assert new_events((1, 2, 3, 4), (7, 8, 9, 10), 4) == (7, 8, 9, 10)  # no overlap: all new (some lost)
    assert new_events((1, 2, 3, 4), (1, 2, 3, 4), 4) == ()  # a decision that logged nothing


# ---- real games through views ----
def play(n: int, seed: int, history: int, stop: int | None = None):
    """Play heuristic seats, updating every seat's tracker from its own views; yields (game, trackers) per step."""
    from agents import make_agent

    env = raw_env(game="sab2", num_players=n, history_length=history)
    env.reset(seed=seed)
    cfg = env.config
    agents = [make_agent("heuristic", cfg) for _ in range(n)]
    for i, a in enumerate(agents):
        a.reset(i, n, seed + i)
    trackers = [Sab2BeliefTracker(n, i, history, seed=i) for i in range(n)]
    for step, name in enumerate(env.agent_iter()):
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = int(name.split("_")[-1])
        trackers[seat].update(sab2_view(env.unwrapped.game, seat))
        yield env.unwrapped.game, trackers, seat
        if stop is not None and step >= stop:
            return
        env.step(agents[seat].act(obs["observation"], obs["action_mask"]))


def test_tracker_never_rules_out_the_truth() -> None:
    for game, trackers, seat in play(4, 3, 256):
        truth = game.roles
        p = trackers[seat].belief.p_role()
        assert np.all(p[np.arange(4), truth] > 0)
    assert all(t.missed == 0 and t.restarts == 0 for t in trackers)


def test_incremental_equals_one_shot_without_swaps_on_me() -> None:
    game, trackers, seat = deque(play(4, 14, 256, stop=100), maxlen=1)[0]
    me_swapped = any(e[0] == E.SWAP_HATS and e[3] == seat for e in game.events if e[0] != E.ROUND_END)
    fresh = Sab2BeliefTracker(4, seat, 256, seed=seat)
    one_shot = fresh.update(sab2_view(game, seat)).p_role()
    assert len(game.events) >= 100
    assert game.round == 0 and not me_swapped  # the case this test is about (seed chosen for it)
    np.testing.assert_allclose(trackers[seat].belief.p_role(), one_shot, atol=1e-12)


def test_invariant_under_resampling_hidden_state() -> None:
    rng = np.random.default_rng(0)
    changed = 0
    game, _, seat = deque(play(5, 21, 256, stop=90), maxlen=1)[0]
    base = Sab2BeliefTracker(5, seat, 256).update(sab2_view(game, seat)).p_role()
    for _ in range(5):
        other = resample_sab2(game, seat, rng)
        changed += not np.array_equal(other.roles, game.roles)
        again = Sab2BeliefTracker(5, seat, 256).update(sab2_view(other, seat)).p_role()
        np.testing.assert_array_equal(base, again)
    assert changed > 0  # the resampler did move hidden roles


# ---- the believer agent (agents.sab2.ladder.Sab2Believer) ----
def test_believer_hits_the_believed_opponent() -> None:
    from agents.sab2.ladder import Sab2Believer

    env = raw_env(game="sab2", num_players=4)
    env.reset(seed=0)
    agent = Sab2Believer(env.config)
    agent.reset(2, 4, 0)
    agent.belief.set_roles([R.BLUE_DIGGER, R.SABOTEUR, R.SABOTEUR, R.BOSS])  # seat 2 (me) is a saboteur
    layout = agent.layout
    hits = [layout.encode(layout.decode(a)) for a in range(layout.offset["break"], layout.offset["break"] + 12)]
    by_target = {layout.decode(a).target: a for a in hits if layout.decode(a).tool == 0}
    view = sab2_view(env.unwrapped.game, 2)
    # Offsets from seat 2: 1 -> seat 3 (Boss, gold side), 2 -> seat 0 (blue), 3 -> seat 1 (my fellow saboteur).
    choice = agent._hit(view, [by_target[3], by_target[1]], R.SABOTEUR)
    assert layout.decode(choice).target == 1
    assert agent._after_placing(view, {"break": [by_target[3]]}, R.SABOTEUR) is None  # saboteurs: rule 4 instead
    agent.belief.set_roles([R.BLUE_DIGGER, R.SABOTEUR, R.BLUE_DIGGER, R.BOSS])  # now I am a blue digger
    assert agent._after_placing(view, {"break": [by_target[1], by_target[3]]}, R.BLUE_DIGGER) == by_target[3]
    assert agent._before_placing(view, {"repair": []}, R.BLUE_DIGGER) is None


def test_believer_maps_only_open_goals() -> None:
    from agents.sab2.ladder import Sab2Believer

    env = raw_env(game="sab2", num_players=3)
    env.reset(seed=4)
    game = env.unwrapped.game
    agent = Sab2Believer(env.config)
    agent.reset(0, 3, 0)
    maps = [agent.layout.offset["map"] + slot for slot in range(3)]
    game.peeked[0, 1] = True
    view = sab2_view(game, 0)
    assert agent._information(view, "map", maps) == maps[0]
    game.peeked[0, :] = True
    assert agent._information(sab2_view(game, 0), "map", maps) is None


def test_believer_actions_do_not_leak() -> None:
    from agents.sab2.ladder import Sab2Believer
    from saboteur_env.sab2.observation import encode_observation
    from saboteur_env.sab2.reference import legal_action_mask

    rng = np.random.default_rng(3)
    game, _, seat = deque(play(5, 8, 256, stop=70), maxlen=1)[0]
    seat = game.current

    def action(state) -> int:
        agent = Sab2Believer(state.config)
        agent.reset(seat, 5, 123)
        return agent.act(encode_observation(state, seat), legal_action_mask(state).astype(np.int8))

    ref = action(game)
    for _ in range(4):
        assert action(resample_sab2(game, seat, rng)) == ref
