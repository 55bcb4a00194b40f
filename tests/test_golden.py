"""Golden replays: recorded games must replay to the same observations, states and rewards.

A failure means game behaviour or the observation encoding changed. If that was intended, bump the variant's
``rules_version`` (and the environment card's Version History), then regenerate with
``python -m experiments.make_golden --write``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from experiments.make_golden import observation_digest
from saboteur_env import GameConfig, apply_action, encode_observation, new_game

FILES = sorted((Path(__file__).parent / "data").glob("golden_*.jsonl"))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_golden__replay_matches(path):
    header, *steps = [json.loads(line) for line in path.read_text().splitlines()]
    cfg = GameConfig(**header["config"])
    assert header["rules_version"] == cfg.rules_version
    state = new_game(cfg, np.random.default_rng(header["seed"]))
    for line in steps:
        assert state.current == line["seat"], f"step {line['step']}"
        assert observation_digest(encode_observation(state, state.current)) == line["obs"], f"step {line['step']}"
        state = apply_action(state, line["action"])
        assert state.fingerprint() == line["state"], f"step {line['step']}: {line['move']}"
        assert state.last_rewards.tolist() == line.get("rewards", [0.0] * cfg.num_players)
    assert state.game_over


def test_golden__files_exist_and_exercise_the_rules():
    assert len(FILES) >= 2
    moves = " ".join(json.loads(x).get("move", "") for p in FILES for x in p.read_text().splitlines())
    for word in ("place", "discard", "map", "broken", "repair"):
        assert word in moves
