"""Saboteur 2's scripted agents, registered with their names: the role-aware heuristic and its believer and oracles
(``agents.sab2.ladder``), the route planner ``expert`` (``agents.sab2.expert``), and the exact role filter they read
(``agents.sab2.beliefs``). The factories import the agent modules on first use.

Every role-dispatching name of the base ladder plays the role-aware ``Sab2Agent`` here (the base policies read
base-game views); ``greedy`` is its role-blind digger; the oracles are its cheating variants.
"""

from __future__ import annotations

from agents.agent import Agent
from agents.determinize import Determinizer, RoleSampler, register_determinizer
from agents.registry import AgentFactory, register_agent
from saboteur_env import GameConfig

GAMES = ("sab2",)


def _heuristic(role_aware: bool) -> AgentFactory:
    def build(config: GameConfig, role: str | None, param: str | None) -> Agent:
        from agents.sab2.ladder import Sab2Agent

        return Sab2Agent(config, role_aware=role_aware)

    return build


def _believer(config: GameConfig, role: str | None, param: str | None) -> Agent:
    from agents.sab2.ladder import Sab2Believer

    return Sab2Believer(config)


def _oracle(knows: str) -> AgentFactory:
    def build(config: GameConfig, role: str | None, param: str | None) -> Agent:
        from agents.sab2.ladder import Sab2Oracle

        return Sab2Oracle(config, knows=knows)

    return build


def _expert(config: GameConfig, role: str | None, param: str | None) -> Agent:
    from agents.sab2.expert import Sab2Expert

    return Sab2Expert(config)


register_agent("greedy", games=GAMES, factory=_heuristic(role_aware=False), summary="role-blind digger")
for _name in ("heuristic", "honest", "overt", "suspicious", "covert", "bayes", "scripted"):
    register_agent(_name, games=GAMES, factory=_heuristic(role_aware=True), summary="role-aware heuristic")
register_agent("believer", games=GAMES, factory=_believer, summary="the heuristic on the exact role filter")
register_agent("role_oracle", games=GAMES, factory=_oracle("roles"), oracle=True, summary="reads the roles")
register_agent("gold_oracle", games=GAMES, factory=_oracle("gold"), oracle=True, summary="reads the gold goal")
register_agent("expert", games=GAMES, factory=_expert, summary="route planner (Sab2Expert)")


def _determinizer(config: GameConfig, seat: int, roles: RoleSampler | None) -> Determinizer:
    from agents.sab2.determinize import Sab2Determinizer

    return Sab2Determinizer(config, seat, roles)


register_determinizer("sab2", _determinizer)
