"""Rules on hand-built positions (docs/rules.md §1, §4)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import EMPTY_BOARD, legal_moves, make_state, place

from saboteur_env import (
    GameConfig,
    IllegalActionError,
    apply_action,
    encode_observation,
    legal_action_mask,
    new_game,
    player_view,
)
from saboteur_env.base.actions import Action, ActionType, action_layout
from saboteur_env.base.cards import KIND_GOAL_STONE_A, KIND_GOAL_STONE_B, SHAPES, Role, Tool
from saboteur_env.base.observation import observation_layout
from saboteur_env.base.positions import kind_of
from saboteur_env.base.reference import digger_gold, saboteur_combination, saboteur_gold
from saboteur_env.common.geometry import geometry

CFG4 = GameConfig(num_players=4)

ROW2_TO_COL6 = """
. . . . . . . . ?
. . . . . . . . .
S T05 T05 T05 T05 T05 T05 . ?
. . . . . . . . .
. . . . . . . . ?
"""


def _state(board: str = EMPTY_BOARD, hand=None, **kw):
    hands = {0: hand if hand is not None else {"T01": 1}}
    return make_state(CFG4, board, hands=hands, **kw)


def _is_legal(state, action: int) -> bool:
    return bool(legal_action_mask(state)[action])


def test_rules__face_down_goal_is_not_a_tunnel():
    """A card next to a face-down goal cannot connect through it (the goal is not a node)."""
    board = """
    . . . . . . . . ?
    . . . . . . . . .
    S T05 T05 T05 T05 T05 T05 T05 ?
    . . . . . . . . .
    . . . . . . . . ?
    """
    s = _state(board, {"T04": 1})
    # (1,8) and (3,8) touch the face-down middle goal only: no connection.
    assert not _is_legal(s, place(s, "T04", 1, 8))
    assert not _is_legal(s, place(s, "T04", 3, 8))
    assert legal_moves(s) >= {"discard T04"}


def test_rules__dead_end_stub_does_not_connect():
    """A dead end's stubs are not joined: nothing can be built from its far stub."""
    board = EMPTY_BOARD.replace("S . .", "S T12 .")
    s = _state(board, {"T05": 1, "T01": 1})
    assert not _is_legal(s, place(s, "T05", 2, 2))
    assert not _is_legal(s, place(s, "T01", 2, 2))
    places = {m for m in legal_moves(s) if m.startswith("place")}
    # Only the start's free arms (N and S) are buildable: cells (1,0) and (3,0).
    assert {m.split(" at ")[1] for m in places} == {"(1,0)", "(3,0)"}


def test_rules__edge_mismatch_with_any_neighbour_is_illegal():
    """Every neighbouring maze card must match, connected or not."""
    board = """
    . . . . . . . . ?
    . . T05 . . . . . .
    S T05 . . . . . . ?
    . . . . . . . . .
    . . . . . . . . ?
    """
    s = _state(board, {"T01": 1, "T03": 1})
    assert not _is_legal(s, place(s, "T01", 2, 2))  # N open against T05's closed S
    assert _is_legal(s, place(s, "T03", 2, 2, rotation=1))  # ESW: N closed matches
    with pytest.raises(IllegalActionError, match="do not match"):
        apply_action(s, place(s, "T01", 2, 2))


def test_rules__hidden_goals_impose_no_constraint():
    """A card next to a face-down goal may have any edge towards it."""
    board = ROW2_TO_COL6.replace("T05 T05 T05 T05 T05 T05 .", "T05 T05 T05 T05 T05 T05 .")
    s = _state(board, {"T06": 1, "T05": 1}, goals=("stone_a", "stone_b", "gold"))
    assert _is_legal(s, place(s, "T06", 2, 7, rotation=1))  # SW: closed towards the goal
    assert _is_legal(s, place(s, "T05", 2, 7))  # EW: open towards the goal


def _goal_shape(state, slot):
    return SHAPES[state.cell_shape[geometry(state.config).goal_cells[slot]]]


def test_rules__stone_goal_turns_open_towards_reaching_card():
    """Stone A (NE) reached from the west is turned to 180° (SW), open towards the reaching card."""
    board = """
    T07' T05 T05 T05 T05 T05 T05 . ?
    T04 . . . . . . . .
    S . . . . . . . ?
    . . . . . . . . .
    . . . . . . . . ?
    """
    s = _state(board, {"T05": 1}, goals=("stone_a", "gold", "stone_b"))
    s2 = apply_action(s, place(s, "T05", 0, 7))
    assert s2.goal_revealed.tolist() == [True, False, False]
    shape = _goal_shape(s2, 0)
    assert shape.kind == KIND_GOAL_STONE_A and shape.rotation == 1
    assert not s2.game_over and s2.round == 0
    assert s2.cell_reach[8] != 0  # the revealed goal's tunnel is connected and can be built on


# Margin 1 (storage coordinates = frame + 1): the middle goal (2,8) has an east neighbour. The T01 placed at (2,7)
# connects the row-2 tunnel and, through (1,7), an unconnected tunnel around the goal: after the placement three
# cards reach the goal, from the west (the card just placed), the north (1,8) and the east (2,9).
AROUND_GOAL = """
. . . . . . . . . . .
. . . . . . . . . ? .
. . . . . . . . T07' T03' T06'
. S T05 T05 T05 T05 T05 T05 . ? T07
. . . . . . . . . . .
. . . . . . . . . ? .
. . . . . . . . . . .
"""


def test_rules__stone_goal_opens_towards_the_card_just_placed():
    """A5 (seeds 000/004: turn the goal to fit the card just played): stone A (NE) reached from N, E and W, with the
    card just placed on the W side, opens towards it (180°: SW), although 0° would open towards two reaching
    cards."""
    cfg = GameConfig(num_players=4, margin=1)
    s = make_state(cfg, AROUND_GOAL, hands={0: {"T01": 1}}, goals=("gold", "stone_a", "stone_b"))
    move = place(s, "T01", 2, 7)
    assert _is_legal(s, move)
    s2 = apply_action(s, move)
    assert s2.goal_revealed.tolist() == [False, True, False]
    c = cfg.cell_index
    for cell, facing in (((1, 8), 2), ((2, 9), 3), ((2, 7), 1)):  # N, E and W neighbours reach the goal
        assert (s2.cell_reach[c(*cell)] >> facing) & 1
    shape = _goal_shape(s2, 1)
    assert shape.kind == KIND_GOAL_STONE_A and shape.rotation == 1


def test_rules__stone_goal_from_north_keeps_zero_rotation():
    """Stone B (NW) reached from the north keeps 0° (its N edge is open)."""
    board = """
    . . . . . . . . ?
    . . . . . . . . .
    S . . . . . . . ?
    T06 T05 T05 T05 T05 T05 T05 T05 .
    . . . . . . . . ?
    """
    s = _state(board, {"T06": 1}, goals=("stone_a", "gold", "stone_b"))
    move = place(s, "T06", 3, 8, rotation=1)  # SW: west from the tunnel, south into the bottom goal
    s2 = apply_action(s, move)
    assert s2.goal_revealed.tolist() == [False, False, True]
    shape = _goal_shape(s2, 2)
    assert shape.kind == KIND_GOAL_STONE_B and shape.rotation == 0


def test_rules__one_card_reaches_two_goals():
    """A card between two goals reveals both."""
    board = """
    . . . . . . . . ?
    T07' T05 T05 T05 T05 T05 T05 T05 .
    S . . . . . . . ?
    . . . . . . . . .
    . . . . . . . . ?
    """
    s = _state(board, {"T02": 1}, goals=("stone_a", "stone_b", "gold"))
    move = place(s, "T02", 1, 8, rotation=1)  # NSW
    assert _is_legal(s, move)
    s2 = apply_action(s, move)
    assert s2.goal_revealed[0] and s2.goal_revealed[1] and not s2.goal_revealed[2]
    assert not s2.game_over and s2.round == 0


def test_rules__gold_reached_ends_round_and_finder_does_not_draw():
    s = _state(ROW2_TO_COL6, {"T05": 2}, goals=("stone_a", "gold", "stone_b"), roles=[0, 0, 1, 0])
    s2 = apply_action(s, place(s, "T05", 2, 7))
    assert s2.round == 1 and s2.round_results[0]["winner"] == "gold-diggers" and s2.round_results[0]["finder"] == 0
    assert s2.current == 1  # next round starts with the seat after the finder
    assert s2.round_results[0]["gold_cards"] == [2, 1, 0, 1]  # 4 cards over 3 diggers, finder first, CCW
    assert s2.last_rewards.tolist() == s2.round_results[0]["nuggets"] and s2.last_rewards[2] == 0
    one_round = make_state(GameConfig(num_players=4, rounds=1), ROW2_TO_COL6, hands={0: {"T05": 2}},
                           goals=("stone_a", "gold", "stone_b"))
    end = apply_action(one_round, place(one_round, "T05", 2, 7))
    assert end.game_over and end.goal_revealed[1] and end.hands[0].sum() == 1  # the finder did not draw


def test_rules__broken_tool_forbids_placement():
    s = _state(ROW2_TO_COL6, {"T05": 1}, broken={0: ["cart"]})
    assert not legal_action_mask(s)[action_layout(CFG4).slices["place"]].any()


def test_rules__self_repair_and_break_targets():
    """Repairs may target yourself; a tool cannot be broken twice."""
    s = _state(hand={"REPAIR_PICKAXE": 1, "BROKEN_PICKAXE": 1}, broken={0: ["pickaxe"], 2: ["pickaxe"]})
    moves = legal_moves(s)
    assert "repair pickaxe seat+0" in moves
    assert "repair pickaxe seat+2" in moves
    assert "repair pickaxe seat+1" not in moves
    assert "break pickaxe seat+0" not in moves and "break pickaxe seat+2" not in moves
    assert "break pickaxe seat+1" in moves and "break pickaxe seat+3" in moves


def test_rules__double_repair_fixes_one_tool():
    s = _state(hand={"REPAIR_PICKAXE_LANTERN": 1}, broken={0: ["pickaxe", "lantern"]})
    moves = legal_moves(s)
    card = "seat+0 with REPAIR_PICKAXE_LANTERN"
    assert {f"repair pickaxe {card}", f"repair lantern {card}"} <= moves
    act = Action(ActionType.DOUBLE_REPAIR, kind_of("REPAIR_PICKAXE_LANTERN"), target=0, tool=Tool.PICKAXE)
    a = action_layout(CFG4).encode(act)
    s2 = apply_action(s, a)
    assert list(s2.broken[0]) == [False, True, False]


def test_rules__repair_needs_a_broken_tool():
    s = _state(hand={"REPAIR_CART": 1, "ROCKFALL": 1})
    assert legal_moves(s) == {"discard REPAIR_CART", "discard ROCKFALL"}


def test_rules__rockfall_never_removes_start_or_goals():
    board = """
    . . . . . . . . ?
    . . . . . . . . .
    S T05 T05 T05 T05 T05 T05 T05 A
    . . . . . . . . .
    . . . . . . . . ?
    """
    s = _state(board, {"ROCKFALL": 1}, goals=("gold", "stone_a", "stone_b"))
    rock = legal_action_mask(s)[action_layout(CFG4).slices["rockfall"]].reshape(5, 9)
    expected = np.zeros((5, 9), dtype=bool)
    expected[2, 1:8] = True
    assert (rock == expected).all()
    rockfall = Action(ActionType.ROCKFALL, kind_of("ROCKFALL"), row=2, col=3)
    s2 = apply_action(s, action_layout(CFG4).encode(rockfall))
    assert s2.cell_shape[2 * 9 + 3] == -1
    assert s2.cell_reach[2 * 9 + 4] == 0  # cut off from the start
    assert s2.discards[kind_of("T05")] == 1 and s2.discards[kind_of("ROCKFALL")] == 1


def test_rules__round_ends_only_when_deck_and_all_hands_are_empty():
    s = make_state(CFG4, hands={0: {"T01": 1}, 1: {"MAP": 2}, 2: {}, 3: {}}, deck=[], roles=[0, 1, 0, 0])
    s = apply_action(s, action_layout(CFG4).encode(Action(ActionType.DISCARD, kind_of("T01"))))
    assert s.round == 0 and s.current == 1  # seats 2, 3 are empty and will be skipped later
    s = apply_action(s, action_layout(CFG4).encode(Action(ActionType.DISCARD, kind_of("MAP"))))
    assert s.round == 0 and s.current == 1  # seat 1 still holds a card; others are skipped
    s = apply_action(s, action_layout(CFG4).encode(Action(ActionType.DISCARD, kind_of("MAP"))))
    assert s.round == 1 and s.round_results[0]["winner"] == "saboteurs"
    assert s.round_results[0]["last_player"] == 1 and s.current == 2  # next round: seat after the last player


def test_rules__ten_players_role_deck():
    """10 players: 7 gold-diggers + 4 saboteurs, one card left over."""
    for seed in range(20):
        s = new_game(GameConfig(num_players=10), np.random.default_rng(seed))
        cards = np.append(s.roles, s.leftover_role)
        assert (cards == Role.GOLD_DIGGER).sum() == 7 and (cards == Role.SABOTEUR).sum() == 4
        assert s.hands.sum(axis=1).tolist() == [4] * 10


@pytest.mark.parametrize(("n", "hand"), [(3, 6), (5, 6), (6, 5), (7, 5), (8, 4), (10, 4)])
def test_rules__hand_sizes(n, hand):
    s = new_game(GameConfig(num_players=n), np.random.default_rng(0))
    assert s.hands.sum(axis=1).tolist() == [hand] * n
    assert s.deck_size == 67 - n * hand


def _gold_state(roles, gold_order):
    cfg = GameConfig(num_players=len(roles))
    s = make_state(cfg, roles=roles)
    s.gold_deck[: len(gold_order)] = gold_order
    return s


def test_gold__digger_picking_order_counter_clockwise():
    """Finder picks first, then counter-clockwise over gold-diggers only; highest value first."""
    s = _gold_state([0, 1, 0, 0, 1], [3, 1, 2, 1, 2])
    got = digger_gold(s, finder=0)
    # drawn 5 cards sorted: 3,2,2,1,1; digger order from seat 0 CCW: 0, 3, 2
    assert got == [[3, 1], [], [2], [2, 1], []]
    assert s.gold_left.sum() == 28 - 5


def test_gold__saboteur_finder_nearest_digger_ccw_picks_first():
    s = _gold_state([0, 1, 0, 0, 1], [3, 1, 2, 1, 2])
    got = digger_gold(s, finder=4)  # saboteur finder; CCW from 4: 3 is the nearest digger
    assert got == [[2], [], [2, 1], [3, 1], []]


def test_gold__nine_cards_at_most_and_penalty_rule():
    cfg = GameConfig(num_players=10, broken_tool_penalty=True)
    s = make_state(cfg, roles=[0] * 7 + [1] * 3, broken={0: ["cart"]})
    got = digger_gold(s, finder=0)
    assert sum(len(g) for g in got) == 9 and got[0] == []  # seat 0 broken: skipped
    assert got[6][0] == max(max(g) for g in got if g)  # nearest eligible digger CCW from seat 0 picks first


def test_gold__saboteur_combinations():
    assert saboteur_combination((16, 8, 4), 4) == (1, 0, 1)  # 3+1 rather than 2+2
    assert saboteur_combination((16, 8, 4), 3) == (0, 0, 1)
    assert saboteur_combination((16, 8, 0), 3) == (1, 1, 0)
    assert saboteur_combination((0, 0, 4), 4) == (0, 0, 1)  # fallback: 3 below 4
    assert saboteur_combination((0, 0, 0), 2) == (0, 0, 0)


def test_gold__saboteur_payouts_by_count():
    s = make_state(GameConfig(num_players=5), roles=[1, 0, 1, 0, 0])
    cards, bank = saboteur_gold(s)
    assert cards == [[3], [], [3], [], []] and bank == [0] * 5
    s = make_state(GameConfig(num_players=4), roles=[0, 0, 0, 0])
    cards, bank = saboteur_gold(s)
    assert cards == [[]] * 4 and bank == [0] * 4
    s = make_state(GameConfig(num_players=10), roles=[1] * 4 + [0] * 6)
    cards, _ = saboteur_gold(s)
    assert [sum(c) for c in cards[:4]] == [2, 2, 2, 2]


def test_rules__map_result_is_private():
    s = _state(hand={"MAP": 1}, goals=("stone_a", "gold", "stone_b"))
    s2 = apply_action(s, action_layout(CFG4).encode(Action(ActionType.MAP, kind_of("MAP"), goal=1)))
    mine, other = player_view(s2, 0), player_view(s2, 1)
    assert mine.goal_knowledge == (None, "gold", None)
    assert other.goal_knowledge == (None, None, None)
    assert other.peeked[3, 1]  # seat 1 sees that seat 0 (offset 3 from seat 1) peeked goal 1
    lay = observation_layout(CFG4)
    planes = lay.split(encode_observation(s2, 1))["board"]
    assert planes[24:].sum() == 0


def test_rules__illegal_action_leaves_state_unchanged():
    s = _state(hand={"T05": 1})
    before = s.fingerprint()
    with pytest.raises(IllegalActionError, match="holds no"):
        apply_action(s, place(s, "T01", 2, 1), inplace=True)
    assert s.fingerprint() == before
