"""Saboteur 2 structured view: exact decoded values on hand-built positions, a round trip against the state over
random games, ``saboteur_env.player_view`` for the game, and that hidden facts of other seats never reach it."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import saboteur_env
from saboteur_env import GameConfig, apply_action, encode_observation, legal_action_mask, new_game, player_view
from saboteur_env.common.cards import EDGE_PAIRS
from saboteur_env.common.geometry import geometry
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.actions import action_layout
from saboteur_env.sab2.cards import Sab2Role as R
from saboteur_env.sab2.positions import make_sab2_state, sab2_kind
from saboteur_env.sab2.state import Phase, Sab2Event, Sab2State
from saboteur_env.sab2.view import PLANE_NAMES, Sab2View, sab2_view

BOARD = """
. . . . . . . . A
. . . . . . . . .
S T05 T05 . . . . . ?
. . . . . . . . .
. . . . . . . . ?
"""
CFG = GameConfig(game="sab2", num_players=4)


def _position(**kw: object) -> Sab2State:
    """Seat 0 (a geologist) to act; seat 1 has a broken lantern, seat 2 is trapped, seat 3 holds a Theft."""
    setup: dict[str, object] = dict(
        goals=("stone_a", "gold", "stone_b"),
        roles=[R.GEOLOGIST, R.SABOTEUR, R.BLUE_DIGGER, R.BOSS],
        hands={0: {"T05": 2, "MAP": 1}, 1: {"T01": 1}},
        broken={1: ["lantern"]},
        trapped=[2],
        theft={3: 5},
        gold=[1, 2, 3, 4],
    )
    setup.update(kw)
    return make_sab2_state(CFG, BOARD, **setup)  # type: ignore[arg-type]


def _play(s: Sab2State, text: str) -> Sab2State:
    layout = action_layout(s.config)
    for a in np.flatnonzero(legal_action_mask(s)).tolist():
        if layout.to_string(a) == text:
            return apply_action(s, a)
    raise AssertionError(f"{text!r} is not legal here")


def test_sab2_view__hand_built_position_decodes_exactly():
    s = make_sab2_state(CFG, BOARD, goals=("stone_a", "gold", "stone_b"),
                        roles=[R.GEOLOGIST, R.SABOTEUR, R.BLUE_DIGGER, R.BOSS],
                        hands={0: {"T05": 2, "MAP": 1}, 1: {"T01": 1}}, broken={1: ["lantern"]}, trapped=[2],
                        theft={3: 5}, gold=[1, 2, 3, 4])  # fmt: skip
    v = sab2_view(s, 0)
    assert v.seat == 0 and v.role == R.GEOLOGIST
    assert v.hand[sab2_kind("T05")] == 2 and v.hand[sab2_kind("MAP")] == 1 and v.hand.sum() == 3
    assert v.hand_sizes.tolist() == [3, 1, 6, 6]
    assert v.gold.tolist() == [1, 2, 3, 4]
    assert v.broken.tolist() == [[False] * 3, [False, True, False], [False] * 3, [False] * 3]
    assert v.trapped.tolist() == [False, False, True, False] and v.theft.tolist() == [False, False, False, True]
    # The revealed stone at slot 0 is known to everyone; the other goals to nobody.
    assert v.goal_revealed == (True, False, False) and v.goal_knowledge == ("stone", None, None)
    assert v.goal_stone[0, 8] and not v.goal_facedown[0, 8] and v.goal_facedown[2, 8] and v.goal_facedown[4, 8]
    assert v.start[2, 0] and v.path[2, 1] and v.path[2, 2] and not v.path[2, 3]
    assert v.open_bits[2, 1] == 0b1010 and v.conn_bits[2, 2] == 0b1010 and v.conn_bits[2, 3] == 0
    assert v.join_bits[2, 1] and not v.blue_door_bits.any() and not v.ladder.any()
    assert v.to_act == 0 and v.phase == Phase.TURN and v.pending == 0 and v.free_target is None
    assert v.round == 0 and v.last_roles is None and v.inspected_roles == (None,) * 4
    assert v.deck_size == s.deck_size and v.reserve_size == len(sc.ROLE_DECK) - 4 and v.thieves_pending == 0
    # Offsets: seat 2 sees the trapped seat (itself) at 0, the thief (seat 3) at 1 and seat 1 at 3.
    w = sab2_view(s, 2)
    assert w.role == R.BLUE_DIGGER and w.trapped.tolist() == [True, False, False, False]
    assert w.theft.tolist() == [False, True, False, False] and w.broken[3].tolist() == [False, True, False]
    assert w.gold.tolist() == [3, 4, 1, 2] and w.to_act == 2


def test_sab2_view__inspection_result_is_seen_only_by_the_inspector():
    s = _play(_position(hands={0: {"INSPECTION": 1, "T05": 1}}), "inspect seat+2")
    mine = sab2_view(s, 0)
    assert mine.inspected_roles == (None, None, R.BLUE_DIGGER, None)
    assert mine.inspected_by_me.tolist() == [False, False, True, False]
    assert mine.events[-1].type == Sab2Event.INSPECTION and mine.events[-1].actor == 0 and mine.events[-1].target == 2
    for seat in (1, 2, 3):
        view = sab2_view(s, seat)
        assert view.inspected_roles == (None,) * 4
        assert view.inspections[(0 - seat) % 4, (2 - seat) % 4]  # who inspected whom is public
    assert sab2_view(s, 2).inspected_me[2]  # seat 0 is offset 2 from seat 2


def test_sab2_view__a_map_tells_only_its_player_what_the_goal_is():
    s = _play(_position(), "map goal 1")
    mine = sab2_view(s, 0)
    assert mine.goal_knowledge == ("stone", "gold", None)
    assert mine.peeked_gold[2, 8] and not mine.peeked_stone.any() and mine.goal_facedown[2, 8]
    for seat in (1, 2, 3):
        other = sab2_view(s, seat)
        assert other.goal_knowledge == ("stone", None, None) and not other.peeked_gold.any()
        assert other.peeked[(0 - seat) % 4].tolist() == [False, True, False]  # that a map was used is public
        assert other.events[-1].type == Sab2Event.MAP and other.events[-1].arg == 1


def test_sab2_view__phase_pending_and_discards_during_a_pass():
    s = _play(_position(), "discard T05")
    mine, other = sab2_view(s, 0), sab2_view(s, 1)
    assert mine.phase == other.phase == Phase.PASS
    assert mine.to_act == 0 and other.to_act == 3
    assert mine.pending == 1 and other.pending == 0  # the running count is the acting seat's
    assert mine.discarded[0] == 1 and other.discarded[3] == 1
    assert other.events[-1].type == Sab2Event.DISCARD and other.events[-1].kind is None  # face down: no kind
    s = _play(s, "stop")
    after = sab2_view(s, 1)
    assert after.phase == Phase.TURN and after.to_act == 0 and after.hand_sizes[3] == 3  # drew one back
    assert after.events[-1].type == Sab2Event.PASS_END and after.events[-1].arg == 1


def test_sab2_view__option_c_target_is_the_acting_seats():
    s = _play(_position(broken={0: ["cart"]}), "free cart")
    mine, other = sab2_view(s, 0), sab2_view(s, 1)
    assert mine.phase == Phase.FREE and mine.free_target == 2 and mine.pending == 2
    assert other.phase == Phase.FREE and other.free_target is None and other.pending == 0


def _random_states(num_players: int, seed: int, every: int = 5):
    cfg = GameConfig(game="sab2", num_players=num_players)
    rng = np.random.default_rng(seed)
    s = new_game(cfg, rng)
    k = 0
    while True:
        if k % every == 0 or s.game_over:
            yield s
        if s.game_over:
            return
        s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))))
        k += 1


def _expected_board(s: Sab2State, seat: int) -> dict[str, np.ndarray]:
    """Every board field computed from the state (what ``seat`` may see of it)."""
    cfg = s.config
    geo = geometry(cfg)
    shape = s.cell_shape
    sid = np.maximum(shape, 0)
    has = shape >= 0
    kind = np.where(has, shape // 2, -1)

    def grid(values: np.ndarray) -> np.ndarray:
        return np.where(has, values, 0).reshape(cfg.rows, cfg.cols)

    join = np.zeros(cfg.num_cells, dtype=np.int64)
    groups = sc.SHAPE_ARM_GROUP[sid]
    for bit, (a, b) in enumerate(EDGE_PAIRS):
        join |= (((groups[:, a] >> b) & 1) > 0).astype(np.int64) << bit
    facedown = np.zeros(cfg.num_cells, dtype=bool)
    gold = np.zeros(cfg.num_cells, dtype=bool)
    stone = np.zeros(cfg.num_cells, dtype=bool)
    peek_gold = np.zeros(cfg.num_cells, dtype=bool)
    peek_stone = np.zeros(cfg.num_cells, dtype=bool)
    for slot, cell in enumerate(geo.goal_cells):
        is_gold = s.goal_kind[slot] == sc.KIND_GOALS[0]
        if s.goal_revealed[slot]:
            (gold if is_gold else stone)[cell] = True
        else:
            facedown[cell] = True
            if s.peeked[seat, slot]:
                (peek_gold if is_gold else peek_stone)[cell] = True

    def flat(a: np.ndarray) -> np.ndarray:
        return a.reshape(cfg.rows, cfg.cols)

    return {
        "open_bits": grid(sc.SHAPE_OPEN[sid]), "conn_bits": flat(s.reach & 15), "join_bits": grid(join),
        "blue_door_bits": grid(sc.SHAPE_DOOR[0, sid]), "green_door_bits": grid(sc.SHAPE_DOOR[1, sid]),
        "ladder": grid(sc.SHAPE_LADDER[sid]) > 0, "crystal": grid(sc.SHAPE_CRYSTALS[sid]) > 0,
        "start": flat(kind == sc.KIND_START), "path": flat((kind >= 0) & (kind < sc.NUM_PATH_KINDS)),
        "goal_facedown": flat(facedown), "goal_gold": flat(gold), "goal_stone": flat(stone),
        "peeked_gold": flat(peek_gold), "peeked_stone": flat(peek_stone),
    }  # fmt: skip


def _check_against_state(v: Sab2View, s: Sab2State, seat: int) -> None:
    cfg = s.config
    p = cfg.num_players
    order = (seat + np.arange(p)) % p
    for name, expected in _expected_board(s, seat).items():
        assert np.array_equal(getattr(v, name), expected), name
    gold_kind = sc.KIND_GOALS[0]
    knowledge = tuple(("gold" if k == gold_kind else "stone") if s.goal_revealed[i] or s.peeked[seat, i] else None
                      for i, k in enumerate(s.goal_kind.tolist()))  # fmt: skip
    assert v.goal_knowledge == knowledge and v.goal_revealed == tuple(s.goal_revealed.tolist())
    assert v.role == s.roles[seat] and np.array_equal(v.hand, s.hands[seat])
    assert np.array_equal(v.broken, s.broken[order]) and np.array_equal(v.trapped, s.trapped[order])
    assert np.array_equal(v.theft, s.theft[order]) and np.array_equal(v.hats_swapped, s.hats_swapped[order])
    assert np.array_equal(v.hand_sizes, s.hands[order].sum(1)) and np.array_equal(v.gold, s.gold[order])
    assert np.array_equal(v.peeked, s.peeked[order]) and np.array_equal(v.discarded, s.discarded[order])
    rel = s.inspections[order][:, order]
    assert np.array_equal(v.inspections, rel)
    assert np.array_equal(v.inspected_by_me, rel[0]) and np.array_equal(v.inspected_me, rel[:, 0])
    seen = [int(s.inspected[seat, t]) for t in order.tolist()]
    assert v.inspected_roles == tuple(None if r < 0 else r for r in seen)
    last = [s.round_results[-1]["roles"][t] for t in order.tolist()] if s.round_results else None
    assert v.last_roles == (None if last is None else tuple(last))
    assert v.deck_size == s.deck_size and v.reserve_size == len(sc.ROLE_DECK) - s.reserve_pos
    assert v.thieves_pending == len(s.thieves) and v.round == s.round and v.phase == s.phase
    assert v.to_act == (None if s.game_over else (s.current - seat) % p)
    acting = s.current == seat
    assert v.pending == (s.pending if acting else 0)
    assert v.free_target == (s.free_target if acting and s.phase == Phase.FREE else None)
    rows = s.events[-cfg.history_length :] if cfg.history_length else []
    assert len(v.events) == len(rows)
    for e, (etype, actor, kind, target, cell, arg) in zip(v.events, rows, strict=True):
        assert e.type == etype and e.kind == (None if kind < 0 else kind) and e.arg == max(arg, 0)
        assert e.actor == (None if actor < 0 else (actor - seat) % p)
        assert e.target == (None if target < 0 else (target - seat) % p)
        assert e.cell == (None if cell < 0 else cell)


@pytest.mark.parametrize(("n", "seed"), [(2, 0), (5, 1), (12, 2)])
def test_sab2_view__round_trip_over_random_games(n, seed):
    for s in _random_states(n, seed):
        for seat in range(n):
            _check_against_state(sab2_view(s, seat), s, seat)


def test_sab2_view__player_view_and_from_observation():
    s = _position()
    v = saboteur_env.player_view(s, 1)
    assert isinstance(v, Sab2View) and v.seat == 1 and v.role == R.SABOTEUR
    bare = Sab2View.from_observation(encode_observation(s, 1), s.config)
    assert bare.seat is None and bare.hand.tolist() == v.hand.tolist()
    assert len(PLANE_NAMES) == 31 and dataclasses.is_dataclass(v)
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.round = 2
    with pytest.raises(ValueError, match="read-only"):
        v.hand[0] = 5
    with pytest.raises(ValueError, match="shape"):
        Sab2View.from_observation(encode_observation(s, 1)[:-1], s.config)
    with pytest.raises(ValueError, match="shape"):
        Sab2View.from_observation(encode_observation(s, 1), GameConfig(game="sab2", num_players=5))


def _same(a: Sab2View, b: Sab2View) -> bool:
    for f in dataclasses.fields(Sab2View):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if not (np.array_equal(x, y) if isinstance(x, np.ndarray) else x == y):
            return False
    return True


@pytest.mark.parametrize("n", [3, 7])
def test_sab2_view__other_seats_hidden_facts_do_not_change_the_view(n):
    rng = np.random.default_rng(n)
    for s in _random_states(n, seed=10 + n, every=9):
        if s.game_over:
            continue
        seat = int(rng.integers(n))
        before = sab2_view(s, seat)
        other = (seat + 1 + int(rng.integers(n - 1))) % n
        t = s.clone()
        size = int(t.hands[other].sum())  # same number of cards, other kinds
        t.hands[other] = np.bincount(rng.integers(sc.NUM_DECK_KINDS, size=size), minlength=sc.NUM_DECK_KINDS)
        t.roles[other] = int(rng.integers(len(R)))
        unknown = ~t.goal_revealed & ~t.peeked[seat]
        t.goal_kind[unknown] = rng.permutation(t.goal_kind[unknown])
        t.board_changed()
        assert _same(before, sab2_view(t, seat))
        assert _same(before, sab2_view(s, seat))


def test_sab2_view__thieves_see_the_revealed_roles_of_the_round():
    """Roles are revealed at the round end (§2.8): in the theft phase the thief's view already shows them."""
    from saboteur_env.sab2.state import Phase

    found = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        s = new_game(GameConfig(game="sab2", num_players=6), rng)
        while not s.game_over and found < 3:
            if s.phase == Phase.THEFT:
                view = player_view(s, s.current)
                p = s.config.num_players
                assert view.last_roles == tuple(int(s.roles[(s.current + i) % p]) for i in range(p))
                found += 1
                break
            s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))), inplace=True)
        if found >= 3:
            break
    assert found >= 3
