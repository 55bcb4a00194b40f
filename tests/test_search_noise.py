"""experiments.analysis.search_noise: the measurement leaves the game it measures unchanged, and its numbers hold."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from agents import make_agent
from agents.search import SearchAgent
from experiments.analysis import search_noise
from experiments.tournament.rounds import seat_agents
from saboteur_env import GameConfig, apply_action, encode_observation, legal_action_mask, new_game

SECRET = 0x00112233445566778899AABBCCDDEEFF


def _plain_moves(config: GameConfig, seed: int, rollouts: int, secret: int) -> list[int]:
    """The search seat's moves in the same game played without any measurement."""
    p = config.num_players
    seat = seed % p
    state = new_game(config, np.random.default_rng(seed))
    agents: list[Any] = [SearchAgent(config, rollouts=rollouts) if s == seat else make_agent("expert", config)
                         for s in range(p)]  # fmt: skip
    seat_agents(agents, secret, seed)
    moves = []
    while not state.game_over:
        s = state.current
        mask = legal_action_mask(state).astype(np.int8)
        action = agents[s].act(encode_observation(state, s), mask)
        if s == seat and agents[s].last_stats.get("candidates", 1) > 1:
            moves.append(action)
        state = apply_action(state, action, inplace=True)
    return moves


def test_search_noise__measuring_does_not_change_the_game_and_values_are_consistent():
    config = GameConfig(num_players=4)
    seed = 7600000101
    game = search_noise.measure_game(config, seed, 16, 32, SECRET, rules=("16", "16,halving=1", "32,margin=1"))
    decisions = game["decisions"]
    assert decisions and game["seat"] == seed % 4
    assert [d["action"] for d in decisions] == _plain_moves(config, seed, 16, SECRET)
    for d in decisions:
        ref = d["reference"]
        assert len(ref) == d["candidates"] and ref[0] == 0.0  # advantages over the prior's first move
        assert d["realized"] == pytest.approx(ref[d["chosen"]], abs=1e-4)
        assert d["side"] in ("gold-digger", "saboteur")
        for rule in d["rules"].values():
            assert 0 <= rule["chosen"] < d["candidates"]
            assert rule["realized"] == pytest.approx(ref[rule["chosen"]], abs=1e-4)


def test_search_noise__cli_resumes_refuses_another_experiment_and_bad_rules(tmp_path, capsys):
    out = tmp_path / "noise.jsonl"
    args = ["--players", "4", "--games", "1", "--seed", "7600000102", "--reference", "16", "--rollouts", "8",
            "--rules", "8", "8,halving=1", "--secret", "00112233445566778899aabbccddeeff", "--out", str(out)]
    search_noise.main(args)
    first = out.read_text()
    assert len(first.splitlines()) == 1 and "selection rules" in capsys.readouterr().out
    search_noise.main(args)  # resumed: the finished game is not played again
    assert out.read_text() == first
    rec = json.loads(first)
    assert rec["rules"] == ["8", "8,halving=1"] and "seeds" in rec
    with pytest.raises(SystemExit):
        search_noise.main([*args[:-2], "--rollouts", "16", "--out", str(out)])  # another experiment, same file
    assert "holds another experiment" in capsys.readouterr().err
    for bad in ("0", "abc", "8,halving=2", "8,depth=3"):
        with pytest.raises(SystemExit):
            search_noise.main(["--rules", bad, "--out", str(tmp_path / "x.jsonl")])
        assert "rule" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        search_noise.main(["--reference", "2", "--out", str(tmp_path / "y.jsonl")])
    assert "--reference 2 is out of range; valid: 4..100000" in capsys.readouterr().err
