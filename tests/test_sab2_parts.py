"""Saboteur 2 tables and end-of-round scoring (docs/rules.md §2.1, §2.7-§2.10); the engine itself is not yet built."""

from __future__ import annotations

import pytest

from saboteur_env.sab2 import cards
from saboteur_env.sab2.cards import Sab2Role as R
from saboteur_env.sab2.scoring import payouts, stealable, theft_order, winners


def test_sab2_cards__counts():
    assert cards.DECK_SIZE == 112 and cards.NUM_PATH_CARDS == 64 and cards.NUM_ACTION_CARDS == 48
    assert sum(s.copies for s in cards.EXPANSION_PATH_CARDS) == 24 and sum(cards.EXPANSION_ACTION_COPIES) == 21
    assert len(cards.ROLE_DECK) == 15
    specs = cards.EXPANSION_PATH_CARDS
    assert sum(s.copies for s in specs if s.ladder) == 4 and sum(s.copies for s in specs if s.crystals) == 10
    assert [sum(1 for s in specs for _, c in s.doors if c == colour) for colour in ("blue", "green")] == [3, 3]


def test_sab2_winners__rulebook_example():
    """§2.9: 1 blue digger, 2 green diggers, Boss, Profiteer, 2 saboteurs; the Boss completes the only route,
    through a blue door -> blue team, Boss and Profiteer win (n = 3): 3, 2 and 1 gold."""
    roles = [R.BLUE_DIGGER, R.GREEN_DIGGER, R.GREEN_DIGGER, R.BOSS, R.PROFITEER, R.SABOTEUR, R.SABOTEUR]
    free = [False] * 7
    for finder in (3, 1):  # the Boss, or a green digger: the same result
        win = winners(roles, free, True, finder, open_blue=True, open_green=False)
        assert win == [True, False, False, True, True, False, False]
        assert payouts(roles, win, free, crystals=0) == [3, 0, 0, 2, 1, 0, 0]


def test_sab2_winners__door_table():
    roles = [R.BLUE_DIGGER, R.GREEN_DIGGER, R.SABOTEUR, R.GEOLOGIST]
    free = [False] * 4
    # A door-free route (both open). Seeds (default): every team with a passable route wins, whoever found it.
    for finder in (0, 1, 2):
        assert winners(roles, free, True, finder, True, True) == [True, True, False, False]
    # Official: a digger finder's own team takes precedence; a non-digger finder lets both win.
    assert winners(roles, free, True, 0, True, True, "official") == [True, False, False, False]
    assert winners(roles, free, True, 1, True, True, "official") == [False, True, False, False]
    assert winners(roles, free, True, 2, True, True, "official") == [True, True, False, False]
    # Only one team's route is passable: that team alone, in both readings.
    for reading in ("seeds", "official"):
        assert winners(roles, free, True, 1, True, False, reading) == [True, False, False, False]
    with pytest.raises(ValueError, match="reading"):
        winners(roles, free, True, 0, True, True, "bga")
    # Every route has doors of both colours: no team; nobody here is Boss or Profiteer.
    assert winners(roles, free, True, 0, False, False) == [False, False, False, False]
    # Gold not reached: saboteurs (and a Profiteer) win.
    assert winners(roles, free, False) == [False, False, True, False]
    assert winners([R.PROFITEER, R.BLUE_DIGGER], [False, False], False) == [True, False]


def test_sab2_payouts__trapped_geologists_and_clamps():
    roles = [R.BLUE_DIGGER, R.BLUE_DIGGER, R.BLUE_DIGGER, R.BOSS, R.PROFITEER, R.GEOLOGIST, R.GEOLOGIST]
    trapped = [False, True, False, False, False, True, False]
    win = winners(roles, trapped, True, 0, True, False)
    assert win == [True, False, True, True, True, False, False]  # the trapped digger is not a winner
    # n = 4 -> 2 each; Boss 1; Profiteer max(0, 0); geologists floor(5 / 2) = 2, the trapped one 0.
    assert payouts(roles, win, trapped, crystals=5) == [2, 0, 2, 1, 0, 0, 2]


def test_sab2_theft__order_and_stealable_gold():
    assert theft_order([1, 4, 6], most_recent=4, num_players=7) == [4, 6, 1]
    with pytest.raises(ValueError, match="most_recent"):
        theft_order([1, 4], most_recent=2, num_players=5)
    assert stealable([5, 3, 2], [1, 0, 2]) == [4, 3, 0]


def _maze(cards_at: dict[tuple[int, int], tuple[str, int]]):
    """Base-frame storage (5x9) with the start at (2, 0) and the given (code, rotation) cards."""
    import numpy as np

    from saboteur_env import GameConfig
    from saboteur_env.common.geometry import geometry
    from saboteur_env.sab2 import cards as sc

    geo = geometry(GameConfig())
    shape = np.full(45, -1, dtype=np.int16)
    shape[geo.start_cell] = 2 * sc.KIND_START
    for (r, c), (code, rot) in cards_at.items():
        shape[r * 9 + c] = 2 * sc.kind_of(code) + rot
    return shape, geo.nbr_list, geo.start_cell


def test_sab2_board__door_routes_ladders_and_crystals():
    from saboteur_env.sab2.board import crystals_on_board, reach, team_routes

    gold = 2 * 9 + 2
    shape, nbr, start = _maze({(2, 1): ("X08", 0), (2, 2): ("GOLD", 0)})
    assert team_routes(shape, nbr, start, gold) == (True, False)  # only route: through a blue door
    shape, nbr, start = _maze({(2, 1): ("X08", 0), (2, 2): ("GOLD", 0), (1, 0): ("T07", 1), (1, 1): ("T05", 0),
                               (1, 2): ("T06", 1)})  # fmt: skip
    assert team_routes(shape, nbr, start, gold) == (True, True)  # plus a door-free route round the top
    shape, nbr, start = _maze({(2, 1): ("X11", 0), (2, 2): ("GOLD", 0)})
    assert team_routes(shape, nbr, start, gold) == (False, True)  # a green door
    # A ladder far from the start is connected through the ladder link, and carries the gold's route.
    shape, nbr, start = _maze({(4, 3): ("X04", 0), (3, 3): ("GOLD", 0)})
    assert reach(shape, nbr, start)[4 * 9 + 3] == 0b0001 and team_routes(shape, nbr, start, 3 * 9 + 3) == (True, True)
    shape, nbr, start = _maze({(2, 1): ("X15", 0), (2, 2): ("X16", 0), (0, 0): ("X13", 0)})
    assert crystals_on_board(shape) == 3


def test_sab2_actions__layout_round_trip():
    from saboteur_env.sab2.actions import PLACEABLE, Sab2ActionLayout

    for p in (2, 7, 12):
        layout = Sab2ActionLayout(p, 45)
        # place, break + repair (6P), double repair (6P), rockfall, map, theft, six seat-targeted cards (6P),
        # discard, stop, free, steal (P)
        assert layout.num_actions == 45 * len(PLACEABLE) + 6 * p + 6 * p + 90 + 3 + 1 + 6 * p + 55 + 1 + 4 + p
        for a in range(layout.num_actions):
            assert layout.encode(layout.decode(a)) == a
