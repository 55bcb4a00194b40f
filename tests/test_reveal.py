"""The goal-orientation tie-breaks (A5, changed to follow seeds 000/004), on the pure function every game uses."""

from __future__ import annotations

from saboteur_env.common.reveal import goal_rotation

NE, SW, NW, SE = 0b0011, 0b1100, 0b1001, 0b0110  # stone A at 0° / 180°, stone B at 0° / 180° (bit d = N, E, S, W)
REACH_OPEN = (True, True)
CLOSED = (False, False)
OPEN = (True, False)


def test_reveal__the_card_just_placed_comes_first():
    # Reaching from N, E and W; the card just placed is W: 180° (SW) although 0° opens to two reaching cards.
    assert goal_rotation([NE, SW], [REACH_OPEN, REACH_OPEN, None, REACH_OPEN], placed_dir=3) == 1
    # The same position with the card just placed on N: 0° (NE) opens towards it and towards E.
    assert goal_rotation([NE, SW], [REACH_OPEN, REACH_OPEN, None, REACH_OPEN], placed_dir=0) == 0


def test_reveal__a_placed_card_that_does_not_reach_does_not_count():
    # The card just placed (S) is next to the goal but does not reach it: the most reaching cards decide (N, E).
    assert goal_rotation([NE, SW], [REACH_OPEN, REACH_OPEN, OPEN, None], placed_dir=2) == 0


def test_reveal__then_most_reaching_then_fewest_mismatches_then_zero():
    # Reached from N and S: both rotations of stone A open towards one reaching card; mismatches with the other
    # neighbours decide: an open arm facing the goal from the E suits NE, one from the W suits SW.
    assert goal_rotation([NE, SW], [REACH_OPEN, OPEN, REACH_OPEN, None], placed_dir=-1) == 0
    assert goal_rotation([NE, SW], [REACH_OPEN, CLOSED, REACH_OPEN, OPEN], placed_dir=-1) == 1
    # More reaching cards beat fewer mismatches: reached from N and E, a W neighbour open towards the goal.
    assert goal_rotation([NE, SW], [REACH_OPEN, REACH_OPEN, None, OPEN], placed_dir=-1) == 0
    # A full tie: 0°.
    assert goal_rotation([0b1111, 0b1111], [REACH_OPEN, None, None, None], placed_dir=0) == 0


def test_reveal__a_game_preference_before_zero_degrees():
    # Full tie on the first three steps: the Duel's gold preference picks 180°.
    assert goal_rotation([0b1111, 0b1111], [REACH_OPEN, None, None, None], placed_dir=0, prefer=[False, True]) == 1
    # But it never overrides the card just placed.
    assert goal_rotation([NE, SW], [REACH_OPEN, None, None, REACH_OPEN], placed_dir=3, prefer=[True, False]) == 1
