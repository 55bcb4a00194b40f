"""Saboteur: The Duel rules on hand-built positions (docs/rules.md §3, §4.4)."""

from __future__ import annotations

import numpy as np
import pytest

from saboteur_env import GameConfig, IllegalActionError, apply_action, legal_action_mask
from saboteur_env.duel import board
from saboteur_env.duel import cards as dc
from saboteur_env.duel.actions import PAIRS, DuelAction, duel_action_layout
from saboteur_env.duel.positions import duel_kind, make_duel_state
from saboteur_env.duel.state import DuelEvent

CFG = GameConfig(game="duel")
LAYOUT = duel_action_layout(CFG)
BLUE, GREEN = 0, 1
EMPTY = """
. . . . ? . . . .
B . . . . . ? . .
. . . . ? . . . ?
R . . . . . ? . .
. . . . ? . . . .
"""
GOALS = ("G01", "G02", "G03", "G04", "G06", "G08")


def cell(r: int, c: int) -> int:
    return CFG.cell_index(r, c)


def place(code: str, r: int, c: int, rot: int = 0, bribe: bool = False) -> int:
    o = dc.PLACEABLE.index((duel_kind(code), rot))
    return LAYOUT.encode(DuelAction("place_bribe" if bribe else "place", cell=cell(r, c), orientation=o))


def act(segment: str, **kw) -> int:
    if "rc" in kw:
        kw["cell"] = cell(*kw.pop("rc"))
    return LAYOUT.encode(DuelAction(segment, **kw))


def state(board_text: str = EMPTY, hands=None, **kw):
    return make_duel_state(board_text, goals=kw.pop("goals", GOALS), hands=hands or {0: {}, 1: {}}, **kw)


def legal(s, action: int) -> bool:
    return bool(legal_action_mask(s)[action])


def test_duel__doors_pass_their_colour_only_and_keys_open_them():
    """U02 (blue door on S) between the starts: blue passes it to the green start, green cannot enter from below."""
    s = state("""
    . . . . ? . . . .
    B . . . . . ? . .
    U02 . . . ? . . . ?
    R . . . . . ? . .
    . . . . ? . . . .
    """, hands={0: {"U06": 1}, 1: {"U06": 1, "KEY": 1}}, current=GREEN)  # fmt: skip
    assert s.reach[BLUE][cell(2, 0)] == 0b1111 and s.reach[BLUE][cell(3, 0)] != 0  # through its own door
    assert s.reach[GREEN][cell(2, 0)] == 0  # the blue door on the S arm faces the green start
    assert not legal(s, place("U06", 2, 1)) and legal(s, place("U06", 3, 1))
    s.current = BLUE
    s.board_changed()
    assert legal(s, place("U06", 2, 1))
    s.current = GREEN
    s.board_changed()
    assert legal(s, act("key", rc=(2, 0))) and not legal(s, act("key", rc=(1, 0)))  # only on doors
    s = apply_action(s, act("key", rc=(2, 0)))
    assert s.cell_key[cell(2, 0)] and s.keys_left == 1
    assert s.reach[GREEN][cell(2, 0)] == 0b1111 and s.reach[GREEN][cell(1, 0)] != 0  # keyed: both pass
    assert not legal_action_mask(s)[LAYOUT.offset["key"] : LAYOUT.offset["key"] + CFG.num_cells].any()


def test_duel__a_door_on_the_new_card_must_not_close_the_connecting_arm():
    s = state(hands={0: {"U02": 1}, 1: {"U02": 1}}, current=GREEN)
    # Green at (4,0) below its start: U02 at 0° has the blue door on N (after 180) or S.
    assert not legal(s, place("U02", 4, 0, rot=1))  # 180°: blue door on N, the only connecting arm
    assert legal(s, place("U02", 2, 0, rot=1))  # 180°: door on N faces the blue start; S connects to green
    assert not legal(s, place("U02", 2, 0, rot=0))  # 0°: door on S, facing the green start
    s.current = BLUE
    s.board_changed()
    assert legal(s, place("U02", 2, 0, rot=0)) and legal(s, place("U02", 2, 0, rot=1))  # its own colour


def test_duel__unbribed_troll_blocks_both_then_bribe_opens_it():
    s = state(hands={0: {"U01": 1, "U06": 1}, 1: {"U06": 2}})
    s = apply_action(s, place("U01", 1, 1))  # a troll may be placed; it blocks afterwards
    assert s.reach[BLUE][cell(1, 1)] == 0 and s.counters_left == 8
    s.current = BLUE
    s.board_changed()
    assert not legal(s, place("U06", 1, 2))
    bribe = act("bribe", rc=(1, 1))
    assert legal(s, bribe)
    hand_before = int(s.hands[BLUE].sum())
    s = apply_action(s, bribe)  # option E: no card, no draw
    assert s.cell_counter[cell(1, 1)] == BLUE and s.counters_left == 7 and int(s.hands[BLUE].sum()) == hand_before
    assert s.reach[BLUE][cell(1, 1)] == 0b1111 and s.events[-1][0] == DuelEvent.BRIBE
    s.current = GREEN
    s.board_changed()
    assert not legal(s, act("bribe", rc=(1, 1)))  # already bribed


def test_duel__troll_bribed_with_its_placement():
    s = state(hands={0: {"U10": 1}, 1: {}})
    a = place("U10", 1, 1, bribe=True)
    assert legal(s, a)
    s = apply_action(s, a)
    assert s.cell_counter[cell(1, 1)] == BLUE and s.counters_left == 7
    assert s.reach[BLUE][cell(1, 1)] == 0b1011  # U10 is N-E-W: all reachable once bribed
    s0 = state(hands={0: {"U10": 1}, 1: {}})
    s0.counters_left = 0
    s0.board_changed()
    assert legal(s0, place("U10", 1, 1)) and not legal(s0, place("U10", 1, 1, bribe=True))


def test_duel__ladder_joins_only_its_colours_start():
    text = """
    . . . . ? . . . .
    B . . . . . ? . .
    . . . . ? . . . ?
    R U06 U06 . . . ? . .
    . . . . ? . . . .
    """
    s = state(text, hands={0: {"U15": 1, "U17": 1}, 1: {}})
    # Blue's own ladder (U15 at 180°: S and E arms) beside the green tunnel: legal, joined to the blue start only.
    assert legal(s, place("U15", 4, 2, rot=1))
    # The green ladder there would join the green start, which blue does not reach: not reachable for blue.
    assert not legal(s, place("U17", 4, 2, rot=1))
    s = apply_action(s, place("U15", 4, 2, rot=1))
    assert s.reach[BLUE][cell(4, 2)] == 0b0110 and s.reach[GREEN][cell(4, 2)] == 0
    s.current = GREEN
    s.board_changed()
    s.hands[GREEN, duel_kind("U06")] = 1
    s.board_changed()
    assert not legal(s, place("U06", 4, 3))  # the blue ladder's tunnel is not green's
    s.current = BLUE
    s.hands[BLUE, duel_kind("U06")] = 1
    s.board_changed()
    assert legal(s, place("U06", 4, 3))


def test_duel__ladder_never_next_to_a_goal_or_gold():
    text = """
    . . . . ? . . . .
    B U06 U06 U06 . . ? . .
    . . . . ? . . . ?
    R . . . . . ? . .
    . . . . ? . . . .
    """
    s = state(text, hands={0: {"U15": 1}, 1: {}})
    table = board.placement_table(s, BLUE)
    o = dc.PLACEABLE.index((duel_kind("U15"), 0))
    assert not table[cell(0, 3), o]  # next to the goal at (0, 4)
    assert table[cell(0, 1), o]  # adjacent to a maze card, edges match, no goal or gold around
    assert not table[cell(1, 4), o] and not table[cell(0, 5), o]
    s.cell_shape[cell(0, 0)] = dc.shape_id(duel_kind("U05"), 0)  # a gold card next to (0, 1)
    s.board_changed()
    board.refresh_reach(s)
    assert not board.placement_table(s, BLUE)[cell(0, 1), o]


def test_duel__gold_secured_by_its_reacher_and_kept_after_a_cut():
    text = """
    . . . . ? . . . .
    B U06 . . . . ? . .
    . . . . ? . . . ?
    R . . . . . ? . .
    . . . . ? . . . .
    """
    s = state(text, hands={0: {"U18": 1}, 1: {"ROCKFALL": 1}})
    s = apply_action(s, place("U18", 1, 2, rot=1))  # 180°: the gold tunnel joins W and N
    assert s.cell_counter[cell(1, 2)] == BLUE and s.counters_left == 7
    assert s.events[-1][0] == DuelEvent.SECURE and s.events[-1][1] == BLUE
    assert legal(s, act("rockfall", rc=(1, 1))) and not legal(s, act("rockfall", rc=(1, 2)))  # gold card stays
    s = apply_action(s, act("rockfall", rc=(1, 1)))
    assert s.reach[BLUE][cell(1, 2)] == 0 and s.cell_counter[cell(1, 2)] == BLUE  # the counter stays


def test_duel__gold_the_other_way_is_not_secured():
    s = state("""
    . . . . ? . . . .
    B U06 . . . . ? . .
    . . . . ? . . . ?
    R . . . . . ? . .
    . . . . ? . . . .
    """, hands={0: {"U18": 1}, 1: {}})  # fmt: skip
    s = apply_action(s, place("U18", 1, 2, rot=0))  # 0°: W joins N; the gold tunnel E-S is not reached
    assert s.cell_counter[cell(1, 2)] == -1 and s.counters_left == 8


def test_duel__rockfall_exclusions_and_key_return():
    text = """
    . . . . ? . . . .
    B U08+k U01 U15 . . ? . .
    U05 . . . G01 . . . ?
    R . . . . . ? . .
    . . . . ? . . . .
    """
    s = state(text, hands={0: {"ROCKFALL": 1}, 1: {}})
    targets = {CFG.cell_coords(int(c)) for c in np.flatnonzero(board.removable_cells(s))}
    assert targets == {(1, 1), (1, 3)}  # door and ladder; not starts, goals, trolls (U01) or gold (U05)
    assert s.keys_left == 1
    s = apply_action(s, act("rockfall", rc=(1, 1)))
    assert s.cell_shape[cell(1, 1)] == -1 and not s.cell_key[cell(1, 1)] and s.keys_left == 2


def test_duel__goal_reveal_turns_towards_the_reacher_and_secures_its_gold():
    text = """
    . . . . ? . . . .
    B U06 U06 U06 U06 . ? . .
    . . . . ? . . . ?
    R . . . . . ? . .
    . . . . ? . . . .
    """
    s = state(text, hands={0: {"U06": 1}, 1: {}}, goals=("G01", "G02", "G03", "G06", "G04", "G08"))
    s = apply_action(s, place("U06", 1, 5))
    slot = board.geometry(CFG).goal_slot[cell(1, 6)]
    assert s.goal_revealed[slot] and s.cell_shape[cell(1, 6)] == dc.shape_id(duel_kind("G06"), 0)
    assert s.cell_counter[cell(1, 6)] == BLUE  # 2 nuggets on the N-W tunnel, reached through W


def test_duel__round_ends_when_all_goals_are_face_up():
    text = """
    . . . . G01 . . . .
    B U06 U06 U06 U06 . ? . .
    . . . . G02 . . . G03
    R . . . . . G04 . .
    . . . . G08 . . . .
    """
    s = state(text, hands={0: {"U06": 1}, 1: {}}, goals=("G01", "G02", "G08", "G06", "G04", "G03"))
    s = apply_action(s, place("U06", 1, 5))
    assert s.round_just_ended and s.round == 1 and s.round_results[0]["reason"] == "all goals revealed"
    assert s.round_results[0]["gained"] == [2, 0]  # G06 secured by blue on the reveal
    assert s.goal_out[[duel_kind(g) - dc.FIRST_GOAL_KIND for g in ("G01", "G02", "G03", "G04", "G06", "G08")]].all()
    assert s.current == GREEN  # fewer nuggets starts the next round


def test_duel__round_ends_when_the_last_counter_is_used():
    s = state("""
    . . . . ? . . . .
    B U01 . . . . ? . .
    . . . . ? . . . ?
    R . . . . . ? . .
    . . . . ? . . . .
    """, hands={0: {}, 1: {"U06": 1}}, scores={0: [3, 1]})  # fmt: skip
    s.counters_left = 1
    s.board_changed()
    s = apply_action(s, act("bribe", rc=(1, 1)))
    assert s.round_results[0]["reason"] == "all counters used"
    assert s.score[BLUE] == [3]  # the troll bribed by blue costs blue its smallest card
    assert s.round_results[0]["gained"] == [-1, 0] and s.last_rewards.tolist() == [-1.0, 0.0]
    assert any(e[0] == DuelEvent.PAY and e[1] == BLUE and e[4] == 1 for e in s.events)


def test_duel__round_ends_when_the_cards_run_out():
    s = state(hands={0: {"U06": 1}, 1: {}}, deck=[])
    assert legal(s, act("pass", kind=duel_kind("U06")))
    s = apply_action(s, act("pass", kind=duel_kind("U06")))
    assert s.round_results[0]["reason"] == "cards exhausted"


def test_duel__empty_hand_may_pass_without_discarding_or_bribe():
    s = state("""
    . . . . ? . . . .
    B U01 . . . . ? . .
    . . . . ? . . . ?
    R . . . . . ? . .
    . . . . ? . . . .
    """, hands={0: {}, 1: {"U06": 1}}, deck=[])  # fmt: skip
    assert {LAYOUT.to_string(int(a)) for a in np.flatnonzero(legal_action_mask(s))} == {
        "pass", "bribe at (1,1)"}  # fmt: skip
    s = apply_action(s, act("pass"))
    assert s.current == GREEN and not s.round_just_ended


def test_duel__breaks_target_the_opponent_repairs_yourself():
    s = state(hands={0: {"BROKEN_CART": 1, "REPAIR_PICKAXE_CART": 1, "U06": 1, "MAP": 1}, 1: {}},
              broken={0: ["pickaxe", "cart"], 1: ["lantern"]})  # fmt: skip
    assert legal(s, act("break", tool=2)) and not legal(s, act("place", cell=cell(1, 1), orientation=0))
    dr = duel_kind("REPAIR_PICKAXE_CART")
    for choice in (0, 1, 2):
        assert legal(s, act("double_repair", kind=dr, choice=choice))
    s2 = apply_action(s, act("double_repair", kind=dr, choice=2))  # both tools at once
    assert not s2.broken[BLUE].any()
    s3 = state(hands={0: {"BROKEN_LANTERN": 1}, 1: {}}, broken={1: ["lantern"]})
    assert not legal(s3, act("break", tool=1))  # already broken


def test_duel__repair_by_discarding_two_cards():
    s = state(hands={0: {"U06": 1, "MAP": 1}, 1: {}}, broken={0: ["cart"]}, deck=["U07", "U07", "U07"])
    pair = PAIRS.index(tuple(sorted((duel_kind("U06"), duel_kind("MAP")))))
    assert legal(s, act("repair_discard", pair=pair, tool=2)) and not legal(s, act("repair_discard", pair=pair, tool=0))
    s = apply_action(s, act("repair_discard", pair=pair, tool=2))
    assert not s.broken[BLUE].any() and int(s.hands[BLUE].sum()) == 1  # discard 2, draw 1
    s4 = state(hands={0: {"U06": 1}, 1: {}}, broken={0: ["cart"]})
    assert not legal_action_mask(s4)[LAYOUT.offset["repair_discard"] : LAYOUT.offset["pass"]].any()  # needs 2 cards


def test_duel__pass_discards_one_or_two_and_draws_as_many():
    s = state(hands={0: {"U06": 2}, 1: {}}, deck=["U07", "U07", "U07"])
    pair = PAIRS.index((duel_kind("U06"), duel_kind("U06")))
    s = apply_action(s, act("pass", pair=pair))
    assert s.hands[BLUE, duel_kind("U07")] == 2 and s.deck_size == 1


def test_duel__map_private_result_and_illegal_actions_leave_the_state():
    s = state(hands={0: {"MAP": 1}, 1: {}})
    with pytest.raises(IllegalActionError, match="holds no"):
        apply_action(s, act("rockfall", rc=(1, 1)))
    s = apply_action(s, act("map", slot=3))
    assert s.peeked[BLUE, 3] and not s.peeked[GREEN].any()


@pytest.mark.parametrize("layout", ["seed_5x9", "official_5x10"])
def test_duel__layouts(layout):
    cfg = GameConfig(game="duel", duel_layout=layout)
    geo = board.geometry(cfg)
    expected = {"seed_5x9": [(0, 4), (2, 4), (4, 4), (1, 6), (3, 6), (2, 8)],
                "official_5x10": [(0, 5), (2, 5), (4, 5), (1, 7), (3, 7), (2, 9)]}[layout]  # fmt: skip
    assert [cfg.cell_coords(c) for c in geo.goal_cells] == expected
    assert [cfg.cell_coords(c) for c in geo.start_cells] == [(1, 0), (3, 0)]
    assert (cfg.rows, cfg.cols) == ((5, 9) if layout == "seed_5x9" else (5, 10))


def test_duel__reveal_prefers_the_rotation_whose_gold_the_actor_reaches():
    """Tie-breaks 1-3 tie (one reaching card above, one mismatch either way); G15's blue door sits on N at 0°,
    so for green the 180° form (door on S) is chosen, and green secures its 3 nuggets through N."""
    text = """
    . . . . ? U14' . . .
    B . . U14' U06 U14 ? U07 .
    . . . U07 ? . . . ?
    R U06 U06 U14 . . ? . .
    . . . . ? . . . .
    """
    goals = ("G01", "G02", "G03", "G15", "G04", "G08")
    s = state(text, hands={0: {}, 1: {"U11": 1}}, goals=goals, current=GREEN)
    s = apply_action(s, place("U11", 0, 6))
    assert s.cell_shape[cell(1, 6)] == dc.shape_id(duel_kind("G15"), 1)
    assert s.cell_counter[cell(1, 6)] == GREEN
    s = state(text, hands={0: {}, 1: {"U11": 1}}, goals=("G01", "G02", "G03", "G13", "G04", "G08"), current=GREEN)
    s = apply_action(s, place("U11", 0, 6))
    assert s.cell_shape[cell(1, 6)] == dc.shape_id(duel_kind("G13"), 0)  # gold reachable either way: 0°


def test_duel__next_starter_on_a_tie_is_blue_and_win_rewards():
    s = state(hands={0: {"U06": 1}, 1: {}}, deck=[], current=GREEN)
    s.hands[GREEN] = 0
    s.hands[BLUE] = 0
    s.hands[GREEN, duel_kind("U07")] = 1
    s.board_changed()
    s = apply_action(s, act("pass", kind=duel_kind("U07")))  # green passes its last card: round over, 0-0
    assert s.round == 1 and s.current == BLUE
    cfg = GameConfig(game="duel", reward="win", rounds=1)
    w = make_duel_state(EMPTY, config=cfg, goals=GOALS, hands={0: {"U06": 1}, 1: {}}, deck=[], scores={1: [2]})
    w = apply_action(w, act("pass", kind=duel_kind("U06")))
    assert w.game_over and w.last_rewards.tolist() == [-1.0, 1.0]


def test_duel__stone_goal_opens_towards_the_card_just_placed():
    """A5 in the Duel: G07 (N-E) at (2,4) reached from N, E and W by the crossroads just placed on the W side turns
    to 180° (S-W), although 0° opens towards two reaching cards; a double curve placed there (its tunnels do not
    reach the goal) leaves the most-reaching rotation, 0°."""
    from saboteur_env import action_to_string

    text = """
    . . . . ? . . . .
    B U06 U16' U14' U16' . ? . .
    . . U16 . ? U16' . . ?
    R . . U16 U06 U14 ? . .
    . . . . ? . . . .
    """
    goals = ("G01", "G07", "G02", "G03", "G04", "G01")
    for card, rotation in (("U02", 1), ("U19", 0)):
        s = make_duel_state(text, goals=goals, hands={0: {card: 1}, 1: {}}, current=0)
        cfg = s.config
        moves = [int(a) for a in np.flatnonzero(legal_action_mask(s)) if action_to_string(cfg, int(a)).startswith(
            f"place {card}") and action_to_string(cfg, int(a)).endswith("at (2,3)")]  # fmt: skip
        s2 = apply_action(s, moves[0])
        cell = cfg.cell_index(2, 4)
        assert s2.goal_revealed.tolist() == [False, True, False, False, False, False]
        either = s2.reach[0] | s2.reach[1]
        for rc, facing in (((1, 4), 2), ((2, 5), 3)):
            assert (either[cfg.cell_index(*rc)] >> facing) & 1  # reaching from N and E
        assert s2.cell_shape[cell] == dc.shape_id(duel_kind("G07"), rotation), card
