"""Saboteur 2's own checks: conservation with the cards set aside, reach against a recompute and gold held by
thieves over random games, the placement table against the rules text, the single-seat view, error messages.

PettingZoo conformance, the generic random-play invariants (summed rewards equal the gold), purity/pickle/
determinism and the leak test (resampler: tests/hidden.py) are in tests/test_conformance.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from saboteur_env import GameConfig, apply_action, legal_action_mask, new_game
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.board import reach
from saboteur_env.sab2.scoring import card_conservation
from saboteur_env.sab2.state import Phase, Sab2State


def _invariants(s: Sab2State) -> None:
    """A running game's invariants (the reference's card count runs on a reference copy of a core state; the
    reach check reads the core's own flood fill)."""
    if s.phase != Phase.THEFT:
        ref = s if isinstance(s, Sab2State) else s.to_reference()  # type: ignore[attr-defined]
        assert (card_conservation(ref) == sc.DECK_COUNTS).all()
    from saboteur_env.common.geometry import geometry

    geo = geometry(s.config)
    assert np.array_equal(s.reach, reach(s.cell_shape, geo.nbr_list, geo.start_cell))
    assert (s.gold >= s.stolen_held).all() and (s.stolen_held >= 0).all()
    assert len(set(s.roles.tolist()) - set(range(6))) == 0


@pytest.mark.parametrize("n", [2, 3, 6, 9, 12])
def test_sab2__random_play_invariants(n):
    cfg = GameConfig(game="sab2", num_players=n)
    for seed in range(2):
        rng = np.random.default_rng(seed)
        s = new_game(cfg, rng)
        while not s.game_over:
            _invariants(s)
            s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))), inplace=True)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(40))
def test_sab2__random_play_invariants_slow(seed):
    n = 2 + seed % 11
    rng = np.random.default_rng(seed)
    s = new_game(GameConfig(game="sab2", num_players=n), rng)
    while not s.game_over:
        _invariants(s)
        s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))), inplace=True)


def test_sab2__single_seat_env_and_error_messages():
    from agents import make_agent
    from saboteur_env import IllegalActionError, SingleSeatEnv

    cfg = GameConfig(game="sab2", num_players=5)
    e = SingleSeatEnv(lambda seat: make_agent("heuristic", cfg), game="sab2", num_players=5)
    e.reset(seed=4)
    rng = np.random.default_rng(4)
    total, done = 0.0, False
    while not done:
        _, reward, done, _, _ = e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
        total += reward
    assert total == e.game.gold[e.seat]
    s = new_game(cfg, np.random.default_rng(0))
    bad = int(np.flatnonzero(~legal_action_mask(s))[-1])  # a steal outside the theft phase
    with pytest.raises(IllegalActionError, match=r"\(steal seat\+\d\) .* no legal target"):
        apply_action(s, bad)


def _reference_placeable(s, cell: int, kind: int, rot: int) -> bool:
    """docs/rules.md §1.9.1 and §2.5 read directly: empty non-goal cell, edge matching with every neighbouring
    maze card, and a connected facing arm; a ladder never next to a goal, and besides a connection (seeds) next
    to a ladder or the start card, or (official) instead of a connection next to any maze card."""
    from saboteur_env.common.geometry import geometry

    geo = geometry(s.config)
    if s.cell_shape[cell] >= 0 or geo.is_goal_cell[cell]:
        return False
    sid = 2 * kind + rot
    mine = int(sc.SHAPE_OPEN[sid])
    adjacent = connected = beside_ladder = False
    for d, j in enumerate(geo.nbr_list[cell]):
        if j < 0:
            continue
        if sc.SHAPE_LADDER[sid] and geo.is_goal_cell[j]:
            return False
        if s.cell_shape[j] < 0:
            continue
        adjacent = True
        beside_ladder |= bool(sc.SHAPE_LADDER[s.cell_shape[j]]) or s.cell_shape[j] // 2 == sc.KIND_START
        theirs = (int(sc.SHAPE_OPEN[s.cell_shape[j]]) >> ((d + 2) % 4)) & 1
        if ((mine >> d) & 1) != theirs:
            return False
        if theirs and (mine >> d) & 1 and (s.reach[j] >> ((d + 2) % 4)) & 1:
            connected = True
    if not sc.SHAPE_LADDER[sid]:
        return connected
    return connected or beside_ladder if s.config.rules == "seeds" else adjacent


@pytest.mark.parametrize("reading", ["seeds", "official"])
def test_sab2__placement_table_matches_the_rules_text(reading):
    from saboteur_env.sab2.actions import PLACEABLE
    from saboteur_env.sab2.reference import placement_table

    rng = np.random.default_rng(7)
    s = new_game(GameConfig(game="sab2", num_players=4, rules=reading), rng)
    checked = 0
    while not s.game_over and checked < 12:
        if s.num_decisions % 9 == 0 and s.phase == Phase.TURN:
            table = placement_table(s.to_reference())  # the reference's table on the core's game
            for cell in range(s.config.num_cells):
                for o, (kind, rot) in enumerate(PLACEABLE):
                    assert table[cell, o] == _reference_placeable(s, cell, kind, rot), (cell, kind, rot)
            checked += 1
        s = apply_action(s, int(rng.choice(np.flatnonzero(legal_action_mask(s)))), inplace=True)
    assert checked == 12
