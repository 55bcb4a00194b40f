"""The ``rules`` option: the seed documents' reading (default) or the publisher's, validated and versioned."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from saboteur_env import ConfigError, GameConfig, apply_action, legal_action_mask, new_game, variants


@pytest.mark.parametrize("value", ["bga", "Seeds", "", 1, None, ["seeds"]])
def test_readings__bad_values_are_config_errors(value):
    with pytest.raises(ConfigError, match=r"rules=.* is not valid; valid: 'seeds', 'official'"):
        GameConfig(rules=value)


def test_readings__part_of_the_rules_version_and_of_the_config_identity():
    seeds, official = GameConfig(game="sab2"), GameConfig(game="sab2", rules="official")
    assert seeds.rules == "seeds"
    assert seeds.rules_version == "sab2-2/seeds" and official.rules_version == "sab2-2/official"
    assert seeds != official and hash(seeds) != hash(official)
    assert pickle.loads(pickle.dumps(official)) == official


@pytest.mark.parametrize("game", ["base", "duel"])
def test_readings__games_with_one_reading_refuse_the_option(game):
    assert GameConfig(game=game).rules_version == variants.get(game).rules_version  # no reading to record
    with pytest.raises(ConfigError, match="rules='official' only applies to game='sab2'"):
        GameConfig(game=game, rules="official")


def test_readings__versions_were_bumped_for_the_changed_rules():
    assert variants.rules_versions() == {"base": "base-2", "sab2": "sab2-2", "duel": "duel-2"} | {
        name: variants.get(name).rules_version for name in variants.names() if name not in ("base", "sab2", "duel")
    }


def test_readings__sab2_games_differ_between_readings_somewhere():
    """Over random games the two readings must disagree on some ladder placement (else the option would be dead)."""
    differ = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        s = new_game(GameConfig(game="sab2", num_players=6), rng)
        o = new_game(GameConfig(game="sab2", num_players=6, rules="official"), np.random.default_rng(seed))
        while not s.game_over and differ == 0:
            ms, mo = legal_action_mask(s), legal_action_mask(o)
            if not np.array_equal(ms, mo):
                differ += 1
                break
            a = int(rng.choice(np.flatnonzero(ms)))
            s, o = apply_action(s, a), apply_action(o, a)
        if differ:
            break
    assert differ
