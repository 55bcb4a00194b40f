"""Action codec: every id decodes, round-trips, and has a unique string."""

from __future__ import annotations

import pytest

from saboteur_env import ActionError, GameConfig, action_to_string, decode_action, encode_action, num_actions
from saboteur_env.base.actions import Action, ActionType, action_layout
from saboteur_env.base.cards import PLACEABLE


@pytest.mark.parametrize("config", [GameConfig(num_players=3), GameConfig(num_players=10), GameConfig(margin=2)])
def test_actions__roundtrip_and_unique_strings(config):
    n = num_actions(config)
    strings = set()
    for a in range(n):
        act = decode_action(config, a)
        assert encode_action(config, act) == a
        strings.add(action_to_string(config, a))
    assert len(strings) == n


def test_actions__sizes():
    assert len(PLACEABLE) == 26  # 16 kinds + 10 asymmetric ones at 180°
    assert num_actions(GameConfig(num_players=4)) == 45 * 26 + 12 * 4 + 45 + 3 + 27 == 1293
    assert num_actions(GameConfig(num_players=10)) == 1365
    assert num_actions(GameConfig(margin=1)) == 77 * 26 + 48 + 77 + 30


def test_actions__symmetric_cards_have_one_rotation():
    kinds = [k for k, r in PLACEABLE if r == 1]
    assert sorted(kinds) == [1, 2, 5, 6, 8, 9, 12, 13, 14, 15]  # T02 T03 T06 T07 T09 T10 T13 T14 T15 T16
    cfg = GameConfig()
    with pytest.raises(ActionError, match="symmetric"):
        encode_action(cfg, Action(ActionType.PLACE, 0, row=2, col=1, rotation=1))


def test_actions__frame_coordinates_with_margin():
    cfg = GameConfig(margin=2)
    act = decode_action(cfg, action_layout(cfg).offsets["rockfall"])
    assert (act.row, act.col) == (-2, -2)
    assert "(-2,-2)" in action_to_string(cfg, action_layout(cfg).offsets["rockfall"])


@pytest.mark.parametrize("bad", [-1, 1293, 10**9, 1.5, "3", None, True])
def test_actions__bad_ids_raise_clear_errors(bad):
    with pytest.raises(ActionError, match=r"0\.\.1292"):
        decode_action(GameConfig(), bad)
