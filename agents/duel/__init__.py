"""The Duel's scripted agents, registered with their names: ``greedy`` and ``believer`` (``agents.duel.ladder``),
the route planner ``expert`` (``agents.duel.expert``), and the goal-pool and hand beliefs they read
(``agents.duel.beliefs``). Two players and no roles. The factories import the agent modules on first use.
"""

from __future__ import annotations

from agents.agent import Agent
from agents.determinize import Determinizer, RoleSampler, register_determinizer
from agents.registry import register_agent
from saboteur_env import GameConfig

GAMES = ("duel",)


def _greedy(config: GameConfig, role: str | None, param: str | None) -> Agent:
    from agents.duel.ladder import DuelGreedyAgent

    return DuelGreedyAgent(config)


def _believer(config: GameConfig, role: str | None, param: str | None) -> Agent:
    from agents.duel.ladder import DuelBeliever

    return DuelBeliever(config)


def _expert(config: GameConfig, role: str | None, param: str | None) -> Agent:
    from agents.duel.expert import DuelExpert

    return DuelExpert(config)


register_agent("greedy", games=GAMES, factory=_greedy, summary="greedy digger (DuelGreedyAgent)")
register_agent("believer", games=GAMES, factory=_believer, summary="greedy on goal-pool beliefs (DuelBeliever)")
register_agent("expert", games=GAMES, factory=_expert, summary="route planner (DuelExpert)")


def _determinizer(config: GameConfig, seat: int, roles: RoleSampler | None) -> Determinizer:
    from agents.duel.determinize import DuelDeterminizer

    return DuelDeterminizer(config, seat)  # no roles in the Duel


register_determinizer("duel", _determinizer)
