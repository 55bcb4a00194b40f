"""Baseline agents for saboteur-env. ``make_agent(name, config)`` builds one by name."""

from __future__ import annotations

from agents.base import Agent, RandomAgent, RoleDispatch
from agents.scripted import ScriptedAgent
from saboteur_env import GameConfig

AGENTS = {"random": RandomAgent, "scripted": ScriptedAgent}


def make_agent(name: str, config: GameConfig) -> Agent:
    """An agent by name (``"random"``, ``"scripted"``)."""
    try:
        return AGENTS[name](config)
    except KeyError:
        raise ValueError(f"unknown agent {name!r}; valid: {', '.join(sorted(AGENTS))}") from None


__all__ = ["AGENTS", "Agent", "RandomAgent", "RoleDispatch", "ScriptedAgent", "make_agent"]
