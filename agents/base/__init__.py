"""The base game's scripted agents, registered with their names: the ladder (``agents.base.ladder``), the simple
``scripted`` policy, and the route-planning ``planner`` / ``blocker`` / ``expert`` (``agents.base.expert`` on
``agents.base.planner``). Their knowledge lives beside them: public-event tracking (``tracker``), board analysis
(``analysis``), belief models (``beliefs``), learned-policy features (``belief_features``), reward shaping
(``shaping``) and the policy-aware observer (``policy_observer``).

Every name has a miner and a saboteur policy (registered as data: ``make_agent(name, config, role)`` picks one).
"""

from __future__ import annotations

from agents.base.expert import BlockerSaboteur, PlannerMiner
from agents.base.ladder import (
    BayesMiner,
    BayesSaboteur,
    CovertSaboteur,
    GoldOracle,
    GreedyAgent,
    HonestAgent,
    OvertSaboteur,
    RoleOracle,
    RoleOracleSaboteur,
    SuspiciousMiner,
)
from agents.base.scripted import ScriptedAgent
from agents.determinize import Determinizer, RoleSampler, register_determinizer
from agents.registry import register_agent
from saboteur_env import GameConfig

# name -> (miner policy, saboteur policy), in ladder order (``random`` is every game's, registered by ``agents``).
# The route planners read base-game views only: Saboteur 2 has its own expert (agents.sab2).
_POLICIES = {
    "scripted": (ScriptedAgent, ScriptedAgent),
    "greedy": (GreedyAgent, GreedyAgent),
    "honest": (HonestAgent, HonestAgent),
    "overt": (OvertSaboteur, OvertSaboteur),
    "suspicious": (SuspiciousMiner, SuspiciousMiner),
    "covert": (CovertSaboteur, CovertSaboteur),
    "heuristic": (SuspiciousMiner, CovertSaboteur),
    "bayes": (BayesMiner, BayesSaboteur),
    "role_oracle": (RoleOracle, RoleOracleSaboteur),
    "gold_oracle": (GoldOracle, GoldOracle),
    "planner": (PlannerMiner, PlannerMiner),
    "blocker": (BlockerSaboteur, BlockerSaboteur),
    "expert": (PlannerMiner, BlockerSaboteur),
}
_ORACLES = frozenset({"role_oracle", "gold_oracle"})  # read hidden state: never mix into ratings

for _name, _roles in _POLICIES.items():
    register_agent(_name, games=("base",), roles=_roles, oracle=_name in _ORACLES)


def _determinizer(config: GameConfig, seat: int, roles: RoleSampler | None) -> Determinizer:
    from agents.base.determinize import BaseDeterminizer

    return BaseDeterminizer(config, seat, roles)


register_determinizer("base", _determinizer)
