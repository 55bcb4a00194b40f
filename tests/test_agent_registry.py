"""The agent registry (agents/registry.py): names per game, lookups, errors that list the valid names, metadata."""

from __future__ import annotations

import subprocess
import sys

import pytest

from agents import RandomAgent, agent_names, find_agent, make_agent, oracle_names, register_agent, unregister_agent
from agents.base.ladder import BayesMiner, BayesSaboteur
from saboteur_env import GameConfig


def test_registry__names_per_game_in_registration_order():
    assert agent_names("duel", kind="scripted") == ("random", "greedy", "believer", "expert")
    assert agent_names("sab2", kind="scripted")[:3] == ("random", "greedy", "heuristic")
    base = agent_names("base", kind="scripted")
    assert base[0] == "random" and {"planner", "blocker", "expert", "role_oracle"} <= set(base)
    for game in ("base", "sab2", "duel"):
        assert agent_names(game, kind="search") == ("ismcts", "search")
        assert {"learned", "ppo", "llm", "text", "claims"} <= set(agent_names(game))
        assert not oracle_names(game) & set(agent_names(game, oracles=False))
    assert agent_names("base-lite") == agent_names("base")  # a variant without agents of its own plays the base's


def test_registry__lookup_and_errors():
    duel = GameConfig(game="duel")
    assert find_agent("ismcts:40", "duel").name == "ismcts" and find_agent("ppo", "duel") is None
    assert find_agent("random:3", "base") is None and find_agent("planner", "sab2") is None
    valid = r"random, greedy, believer, expert, ismcts\[:SIMS\], search\[:BUDGET\], learned\[:PATH\], ppo:PATH, "
    valid += r"llm\[:KEY=VALUE,\.\.\.\], "
    valid += "text:NAME, claims:NAME"
    with pytest.raises(ValueError, match=f"unknown agent 'planner'; valid for game='duel': {valid}"):
        make_agent("planner", duel)
    with pytest.raises(ValueError, match="role='digger' must be"):
        make_agent("greedy", duel, "digger")
    with pytest.raises(TypeError):
        make_agent(None, duel)  # type: ignore[arg-type]
    cfg = GameConfig(num_players=4)
    assert type(make_agent("bayes", cfg, "miner")) is BayesMiner
    assert type(make_agent("bayes", cfg, "saboteur")) is BayesSaboteur
    assert make_agent("bayes", cfg).name == "bayes/bayes"


def test_registry__register_and_remove():
    def build(config, role, param):
        return RandomAgent(config)

    register_agent("toy_bot", games=("duel",), factory=build, summary="a test agent")
    try:
        assert "toy_bot" in agent_names("duel") and "toy_bot" not in agent_names("base")
        assert isinstance(make_agent("toy_bot", GameConfig(game="duel")), RandomAgent)
        with pytest.raises(ValueError, match="already registered"):
            register_agent("toy_bot", factory=build)
        for bad in ({"name": "a:b"}, {"name": ""}, {"kind": "magic"}, {"param": "", "bare": False}):
            with pytest.raises(ValueError):
                register_agent(**{"name": "x", "games": ("sab2",), "factory": build, **bad})
        with pytest.raises(ValueError, match="exactly one of factory and roles"):
            register_agent("x", games=("sab2",))
    finally:
        unregister_agent("toy_bot", games=("duel",))
    assert "toy_bot" not in agent_names("duel")
    with pytest.raises(ValueError, match="not registered"):
        unregister_agent("toy_bot", games=("duel",))


def test_registry__import_stays_cheap():
    """``import agents`` registers every name without importing the Saboteur 2 / Duel agents or the search."""
    code = ("import sys, agents; print(sorted(m for m in sys.modules if m.startswith('agents.') and "
            "m.split('.')[1] in ('sab2', 'duel', 'ismcts', 'determinize', 'learned', 'text', 'claims', 'llm')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    # the packages (registrations) and the determinizers' registry only: no game's determinizer, no agent module
    assert out.strip() == "['agents.determinize', 'agents.duel', 'agents.sab2']"
