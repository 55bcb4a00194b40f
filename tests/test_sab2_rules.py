"""Saboteur 2 rules on hand-built positions (docs/rules.md §2, decisions §4.3)."""

from __future__ import annotations

import numpy as np
import pytest

from saboteur_env import GameConfig, IllegalActionError, apply_action, encode_observation, legal_action_mask
from saboteur_env.sab2 import cards as sc
from saboteur_env.sab2.actions import PLACEABLE, Sab2Action, action_layout
from saboteur_env.sab2.cards import Sab2Role as R
from saboteur_env.sab2.positions import make_sab2_state, sab2_kind
from saboteur_env.sab2.state import Phase

EMPTY = """
. . . . . . . . ?
. . . . . . . . .
S . . . . . . . ?
. . . . . . . . .
. . . . . . . . ?
"""


def cfg(n: int = 5) -> GameConfig:
    return GameConfig(game="sab2", num_players=n)


def act(s, segment: str, **kw) -> int:
    if "rc" in kw:
        kw["cell"] = s.config.cell_index(*kw.pop("rc"))
    if "code" in kw:
        code = kw.pop("code")
        kw["orientation"] = PLACEABLE.index((sc.kind_of(code), kw.pop("rot", 0)))
    return action_layout(s.config).encode(Sab2Action(segment, **kw))


def legal(s, a: int) -> bool:
    return bool(legal_action_mask(s)[a])


def cfg_reading(reading: str, n: int = 5) -> GameConfig:
    return GameConfig(game="sab2", num_players=n, rules=reading)


LADDER_BOARD = """
. . . . . . . . ?
. . . . . T15' . . .
S . . . . . . . ?
. . . . . . . . .
. . . . . . . . ?
"""


@pytest.mark.parametrize("reading", ["seeds", "official"])
def test_sab2__ladder_next_to_an_unconnected_dead_end(reading):
    """Issue case: a ladder next to a dead-end stub that does not connect, no ladder beside it (E19 readings)."""
    s = make_sab2_state(cfg_reading(reading), LADDER_BOARD, hands={0: {"X04": 1}})
    a = act(s, "place", code="X04", rc=(2, 5))  # the ladder's N arm meets the S stub of T15 turned 180°
    assert not s.reach[s.config.cell_index(1, 5)]  # the dead end is connected to nothing
    assert legal(s, a) == (reading == "official")
    if reading == "seeds":
        with pytest.raises(IllegalActionError, match="no legal target or placement"):
            apply_action(s, a)


@pytest.mark.parametrize("reading", ["seeds", "official"])
def test_sab2__ladder_beside_another_ladder_or_the_start(reading):
    """Seeds: next to a ladder card or the start card a ladder need not connect; both readings allow it."""
    s = make_sab2_state(cfg_reading(reading), """
    . . . . . . . . ?
    . . . . . . . . .
    S . . . X04 . . . ?
    . . . . . . . . .
    . . . . . . . . ?
    """, hands={0: {"X04": 1, "X03": 1}})  # fmt: skip
    assert legal(s, act(s, "place", code="X04", rc=(2, 5)))  # beside the ladder at (2,4), no tunnel joins them
    assert legal(s, act(s, "place", code="X04", rc=(3, 0)))  # below the start card
    assert not legal(s, act(s, "place", code="X04", rc=(4, 3)))  # next to no maze card: never


@pytest.mark.parametrize("reading", ["seeds", "official"])
def test_sab2__ladders_never_touch_a_goal_and_join_the_start(reading):
    s2 = make_sab2_state(cfg_reading(reading), """
    . . . . . . . T04 ?
    . . . . . . . . .
    S . . . . . . . ?
    . . . . . . . . .
    . . . . . . . . ?
    """, hands={0: {"X03": 1}})  # fmt: skip
    assert not legal(s2, act(s2, "place", code="X03", rc=(1, 8)))  # beside the goals at (0,8) and (2,8)
    s = make_sab2_state(cfg_reading(reading), """
    . . . . . . . . ?
    . . . . . T04 . . .
    S . . . . . . . ?
    . . . . . . . . .
    . . . . . . . . ?
    """, hands={0: {"X04": 1}})  # fmt: skip
    a = act(s, "place", code="X04", rc=(2, 5))  # next to an unconnected card that is not a ladder
    assert legal(s, a) == (reading == "official")
    if reading == "official":
        s = apply_action(s, a)
        assert s.reach[s.config.cell_index(2, 5)] == 0b0001  # the ladder's tunnel is connected to the start
        assert s.reach[s.config.cell_index(1, 5)] & 0b0100  # and the T04 above it through the ladder


def test_sab2__bridge_connects_one_tunnel_only():
    s = make_sab2_state(cfg(), """
    . . . . . . . . ?
    . . . . . . . . .
    S X01 . . . . . . ?
    . . . . . . . . .
    . . . . . . . . ?
    """, hands={0: {"T04": 1, "T05": 1}})  # fmt: skip
    c = s.config.cell_index
    assert s.reach[c(2, 1)] == 0b1010  # E-W tunnel reached from the start; N-S not
    assert not legal(s, act(s, "place", code="T04", rc=(1, 1)))  # would join the unconnected N-S tunnel
    assert legal(s, act(s, "place", code="T05", rc=(2, 2)))


@pytest.mark.parametrize("reading", ["seeds", "official"])
def test_sab2__door_winner_table_on_the_board(reading):
    # Through a blue door, found by a blue digger: blue team, Boss, Profiteer (n = 3: 3, 2, 1), in both readings.
    assert _gold_route("X08", R.BLUE_DIGGER, reading) == ([1, 0, 1, 1, 0], [3, 0, 2, 1, 0])
    # Through a blue door, found by a green digger: only the blue team can win (the route has a blue door).
    assert _gold_route("X08", R.GREEN_DIGGER, reading) == ([0, 1, 1, 1, 0], [0, 3, 2, 1, 0])
    if reading == "official":  # door-free route found by a blue digger: the finder's team takes it
        assert _gold_route("T05", R.BLUE_DIGGER, reading) == ([1, 0, 1, 1, 0], [3, 0, 2, 1, 0])
    else:  # seeds: every team with a route it may pass wins (n = 4: 2, 2, 1, 0)
        assert _gold_route("T05", R.BLUE_DIGGER, reading) == ([1, 1, 1, 1, 0], [2, 2, 1, 0, 0])


@pytest.mark.parametrize("reading,winners_expected", [
    ("seeds", [1, 1, 1, 1, 1, 0, 0]),
    ("official", [0, 1, 1, 1, 1, 0, 0]),
])  # fmt: skip
def test_sab2__door_free_route_completed_by_a_green_digger(reading, winners_expected):
    """Issue case: 7 players [blue, green, green, Boss, Profiteer, saboteur, geologist], a door-free tunnel from the
    start to the gold completed by a green digger: seeds - both teams win; official - only green."""
    roles = [R.BLUE_DIGGER, R.GREEN_DIGGER, R.GREEN_DIGGER, R.BOSS, R.PROFITEER, R.SABOTEUR, R.GEOLOGIST]
    s = make_sab2_state(cfg_reading(reading, 7), """
    . . . . . . . . ?
    . . . . . . . . .
    S T05 T05 T05 T05 T05 T05 . ?
    . . . . . . . . .
    . . . . . . . . ?
    """, roles=roles, hands={1: {"T05": 1}}, current=1, goals=("stone_a", "gold", "stone_b"))  # fmt: skip
    s = apply_action(s, act(s, "place", code="T05", rc=(2, 7)))
    result = s.round_results[0]
    assert result["gold_reached"] and result["finder"] == 1
    assert result["open_blue"] and result["open_green"]
    assert result["winners"] == winners_expected
    n = sum(winners_expected)  # 5 winners -> 1 each (Boss -1, Profiteer -2, never below 0); 4 winners -> 2 each
    assert result["payouts"] == ([1, 1, 1, 0, 0, 0, 0] if n == 5 else [0, 2, 2, 1, 0, 0, 0])


def _gold_route(door: str, finder_role: int, reading: str = "seeds") -> tuple[list[int], list[int]]:
    board = f"""
    . . . . . . . . ?
    . . . . . . . . .
    S T05 T05 T05 T05 T05 {door} . ?
    . . . . . . . . .
    . . . . . . . . ?
    """
    roles = [finder_role, R.GREEN_DIGGER if finder_role == R.BLUE_DIGGER else R.BLUE_DIGGER, R.BOSS, R.PROFITEER,
             R.SABOTEUR]  # fmt: skip
    s = make_sab2_state(cfg_reading(reading), board, roles=roles, hands={0: {"T05": 1}},
                        goals=("stone_a", "gold", "stone_b"))  # fmt: skip
    s = apply_action(s, act(s, "place", code="T05", rc=(2, 7)))
    result = s.round_results[0]
    assert result["gold_reached"] and result["finder"] == 0 and s.round == 1
    return result["winners"], result["payouts"]


def _exhausted(n: int, roles, **kw):
    s = make_sab2_state(cfg(n), roles=roles, hands={i: ({"T05": 1} if i == 0 else {}) for i in range(n)}, **kw)
    s.deck_pos = s.round_decks.shape[1]  # empty draw pile
    return apply_action(s, act(s, "discard", kind=sab2_kind("T05")))  # last card: the round ends


def test_sab2__theft_order_stolen_gold_and_trapped_players():
    roles = [R.SABOTEUR, R.BLUE_DIGGER, R.GREEN_DIGGER, R.SABOTEUR]
    s = _exhausted(4, roles, theft={1: 5, 2: 9})
    assert s.phase == Phase.THEFT and s.current == 2  # the most recent thief steals first
    assert s.gold.tolist() == [4, 0, 0, 4]  # two winning saboteurs: 4 each
    steal = np.flatnonzero(legal_action_mask(s)) - action_layout(s.config).offset["steal"]
    assert sorted(steal.tolist()) == [1, 2]  # seats 3 and 0 (offsets from seat 2)
    s = apply_action(s, act(s, "steal", target=2))  # seat 2 takes 1 from seat 0
    assert s.current == 1 and s.gold.tolist() == [3, 0, 1, 4] and s.stolen_held.tolist() == [0, 0, 1, 0]
    offsets = np.flatnonzero(legal_action_mask(s)) - action_layout(s.config).offset["steal"]
    assert sorted(((1 + o) % 4) for o in offsets.tolist()) == [0, 3]  # seat 2's stolen gold is not stealable
    s = apply_action(s, act(s, "steal", target=2))  # seat 1 takes 1 from seat 3
    assert s.round == 1 and s.round_results[0]["gold"] == [3, 1, 1, 3]
    assert s.last_rewards.tolist() == [3, 1, 1, 3]
    # A trapped saboteur is no winner and is not paid; a trapped thief does not steal.
    t = _exhausted(4, roles, trapped=[3, 2], theft={2: 9})
    assert t.round == 1 and t.round_results[0]["winners"] == [1, 0, 0, 0] and t.gold.tolist() == [5, 0, 0, 0]


def test_sab2__geologists_share_crystals_and_profiteer_wins_with_saboteurs():
    board = """
    . . . . . . . . ?
    . . . . . . . . .
    S X15 X16 X17 . . . . ?
    . . . . . . . . .
    . . . . . . . . ?
    """
    s = make_sab2_state(cfg(4), board, roles=[R.GEOLOGIST, R.GEOLOGIST, R.PROFITEER, R.SABOTEUR],
                        hands={0: {"T05": 1}, 1: {}, 2: {}, 3: {}})  # fmt: skip
    s.deck_pos = s.round_decks.shape[1]
    s = apply_action(s, act(s, "discard", kind=sab2_kind("T05")))
    r = s.round_results[0]
    assert r["winners"] == [0, 0, 1, 1] and r["payouts"] == [1, 1, 2, 4]  # 3 crystals // 2; n = 2: 4 - 2, 4


def test_sab2__swap_your_hand_draws_for_the_target_only():
    s = make_sab2_state(cfg(3), hands={0: {"SWAP_HAND": 1, "T05": 2}, 1: {"T06": 3}, 2: {"T07": 1}})
    top = int(s.round_decks[0][s.deck_pos])
    s = apply_action(s, act(s, "swap_hand", target=1))
    assert s.hands[0, sab2_kind("T06")] == 3 and s.hands[0].sum() == 3  # no draw for the player
    assert s.hands[1, sab2_kind("T05")] == 2 + (top == sab2_kind("T05")) and s.hands[1].sum() == 3
    assert not legal(make_sab2_state(cfg(3), hands={0: {"SWAP_HAND": 1}}), act(s, "swap_hand", target=0))


def test_sab2__swap_your_hats_private_result_and_inspection():
    s = make_sab2_state(cfg(4), roles=[R.BLUE_DIGGER, R.SABOTEUR, R.GREEN_DIGGER, R.BOSS],
                        hands={0: {"SWAP_HATS": 1, "INSPECTION": 1}})  # fmt: skip
    new_role = int(s.round_roles[0][s.reserve_pos])
    before = encode_observation(s, 0)
    s = apply_action(s, act(s, "swap_hats", target=1))
    assert s.roles[1] == new_role and s.hats_swapped[1]
    from saboteur_env.sab2.observation import sab2_observation_layout

    lay = sab2_observation_layout(s.config)
    assert lay.split(encode_observation(s, 1))["role"].argmax() == new_role  # the target sees its new role
    assert lay.split(encode_observation(s, 0))["inspected"].sum() == 0  # nobody else does
    assert before.shape == encode_observation(s, 0).shape
    s.current = 0
    s.board_changed()
    s = apply_action(s, act(s, "inspection", target=1))
    v0 = lay.split(encode_observation(s, 0))
    assert v0["inspected"][1].argmax() == new_role and v0["inspections"][0, 1] == 1
    v2 = lay.split(encode_observation(s, 2))
    assert v2["inspected"].sum() == 0 and v2["inspections"][(0 - 2) % 4, (1 - 2) % 4] == 1  # public: who inspected


def test_sab2__trapped_blocks_placing_until_freed():
    s = make_sab2_state(cfg(3), hands={0: {"T05": 1, "TRAPPED": 1}, 1: {"T05": 2, "FREE_AT_LAST": 1}, 2: {}})
    assert not legal(s, act(s, "trapped", target=0))  # not on yourself
    s = apply_action(s, act(s, "trapped", target=1))
    assert s.trapped[1] and s.current == 1
    assert not legal(s, act(s, "place", code="T05", rc=(2, 1)))
    s = apply_action(s, act(s, "free_at_last", target=0))
    assert not s.trapped[1]


def test_sab2__free_yourself_and_pass_sequences():
    s = make_sab2_state(cfg(3), hands={0: {"T05": 2, "MAP": 1}, 1: {"T05": 1}, 2: {"T05": 1}}, broken={0: ["cart"]})
    s = apply_action(s, act(s, "free", tool=2))
    assert s.phase == Phase.FREE and s.current == 0
    with pytest.raises(IllegalActionError):
        apply_action(s, act(s, "stop"))  # option C needs exactly two discards
    s = apply_action(s, act(s, "discard", kind=sab2_kind("T05")))
    s = apply_action(s, act(s, "discard", kind=sab2_kind("MAP")))
    assert not s.broken[0].any() and s.hands[0].sum() == 2 and s.current == 1  # discard 2, draw 1
    p = make_sab2_state(cfg(3), hands={0: {"T05": 3, "T06": 1}, 1: {"T05": 1}, 2: {"T05": 1}})
    p = apply_action(p, act(p, "discard", kind=sab2_kind("T05")))
    assert p.phase == Phase.PASS and legal(p, act(p, "stop"))
    p = apply_action(p, act(p, "discard", kind=sab2_kind("T05")))
    p = apply_action(p, act(p, "discard", kind=sab2_kind("T06")))  # the third discard ends the pass
    assert p.current == 1 and p.hands[0].sum() == 4  # 4 - 3 + 3 drawn
    q = make_sab2_state(cfg(3), hands={0: {"T05": 3}, 1: {"T05": 1}, 2: {"T05": 1}})
    q = apply_action(q, act(q, "discard", kind=sab2_kind("T05")))
    q = apply_action(q, act(q, "stop"))
    assert q.current == 1 and q.hands[0].sum() == 3


def test_sab2__theft_and_hands_off():
    s = make_sab2_state(cfg(3), hands={0: {"THEFT": 2}, 1: {"HANDS_OFF": 1}, 2: {}})
    s = apply_action(s, act(s, "theft"))
    assert s.theft[0] and not legal(s, act(s, "theft"))
    s = apply_action(s, act(s, "hands_off", target=2))  # seat 1 -> seat 0
    assert not s.theft[0]


@pytest.mark.parametrize("reading", ["seeds", "official"])
def test_sab2__stone_goal_opens_towards_the_card_just_placed(reading):
    """A5 in Saboteur 2 (the base test's position, margin 1): stone A reached from N, E and W, the card just placed
    on the W side: 180° (S-W)."""
    board = """
    . . . . . . . . . . .
    . . . . . . . . . ? .
    . . . . . . . . T07' T03' T06'
    . S T05 T05 T05 T05 T05 T05 . ? T07
    . . . . . . . . . . .
    . . . . . . . . . ? .
    . . . . . . . . . . .
    """
    s = make_sab2_state(GameConfig(game="sab2", num_players=4, margin=1, rules=reading), board,
                        hands={0: {"T01": 1}}, goals=("gold", "stone_a", "stone_b"))  # fmt: skip
    s2 = apply_action(s, act(s, "place", code="T01", rc=(2, 7)))
    cell = s.config.cell_index(2, 8)
    assert s2.goal_revealed.tolist() == [False, True, False]
    assert s2.cell_shape[cell] == 2 * sc.KIND_GOALS[1] + 1


@pytest.mark.parametrize("reading", ["seeds", "official"])
def test_sab2__ladder_rules_edge_matching_and_goals(reading):
    """Both readings: a ladder that connects is still refused next to a goal; beside another ladder edge matching
    still applies."""
    x04_open = int(sc.SHAPE_OPEN[2 * sc.kind_of("X04")])
    assert x04_open == 0b0001  # X04: a ladder with one arm, N
    s = make_sab2_state(cfg_reading(reading), """
    . . . . . . . . ?
    T07' T05 T05 T05 T05 T05 T05 T06' .
    S . . . . . . . ?
    . . . . . . . . .
    . . . . . . . . ?
    """, hands={0: {"X04": 1, "T15": 1}})  # fmt: skip
    c = s.config.cell_index
    assert (s.reach[c(1, 7)] >> 2) & 1  # the S arm above (2,7) is connected to the start
    assert not legal(s, act(s, "place", code="X04", rc=(2, 7)))  # connects, but the goal (2,8) is next to it
    assert legal(s, act(s, "place", code="T15", rc=(2, 7)))  # the same arms on a card without a ladder: fine
    t = make_sab2_state(cfg_reading(reading), """
    . . . . . . . . ?
    . . . . . . . . .
    S . . . X04 . . . ?
    . . . . . . . . .
    . . . . . . . . ?
    """, hands={0: {"X04": 1}})  # fmt: skip
    assert legal(t, act(t, "place", code="X04", rc=(2, 5)))  # beside the ladder, edges match (both closed)
    assert not legal(t, act(t, "place", code="X04", rc=(3, 4)))  # its N arm meets the ladder's closed S edge
    assert not legal(t, act(t, "place", code="X04", rc=(1, 4)))  # its closed S edge meets the ladder's N arm
