"""Baseline agents for saboteur-env (see ``agents.ladder`` for the ladder).

``make_agent(name, config, role=None)`` builds one by name. With ``role`` (``"miner"`` or ``"saboteur"``) it builds
the policy of that name for that role (``bayes`` and ``role_oracle`` differ by role); without it, names that play
both roles come back as a role-dispatching composite. ``heuristic`` is ``suspicious`` as a miner and ``covert``
as a saboteur. ``planner`` / ``blocker`` (``agents.expert``) plan routes in placements still needed
(``agents.planner``); ``expert`` is ``planner`` as a miner and ``blocker`` as a saboteur. For ``game="sab2"`` and
``game="duel"``, ``expert`` is the route planner of ``agents.expert_sab2`` / ``agents.expert_duel``.
"""

from __future__ import annotations

from agents.base import Agent, RandomAgent, RoleDispatch
from agents.expert import BlockerSaboteur, PlannerMiner
from agents.ladder import (
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
from agents.scripted import ScriptedAgent
from saboteur_env import GameConfig

# name -> (miner policy, saboteur policy)
LADDER: dict[str, tuple[type, type]] = {
    "random": (RandomAgent, RandomAgent),
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
}  # planner / blocker / expert read base-game views only: not in SAB2_AGENTS
AGENTS = LADDER  # names accepted by make_agent and the tournament
# names for game="duel" (greedy = agents.duel.DuelGreedyAgent; believer = agents.duel.DuelBeliever)
DUEL_AGENTS = ("random", "greedy", "believer", "expert")  # expert = agents.expert_duel.DuelExpert
# Names for game="sab2": random; greedy = the role-blind digger; every role-dispatching ladder name plays the
# role-aware Sab2Agent (the base policies read base-game views); the oracles are its cheating variants; expert =
# agents.expert_sab2.Sab2Expert.
SAB2_AGENTS = ("random", "greedy", "heuristic", "honest", "overt", "suspicious", "covert", "bayes", "scripted",
               "believer", "role_oracle", "gold_oracle", "expert")  # fmt: skip
EVERY_GAME = ("ismcts",)  # names (and ``ismcts:SIMS``) that play all three games
CHEATING = frozenset({"role_oracle", "gold_oracle"})  # read hidden state: never mix into ratings


def make_agent(name: str, config: GameConfig, role: str | None = None) -> Agent:
    """An agent by name; ``role`` picks the miner or saboteur policy of names that have both.

    ``ppo:PATH`` loads a trained MaskablePPO model (``agents.ppo``; needs the ``train`` extra). ``llm`` plays through
    a chat endpoint named by ``SABOTEUR_LLM_*`` environment variables (``agents.llm``); ``text:NAME`` is agent NAME
    reading only the text interface (``agents.text``). ``ismcts`` / ``ismcts:SIMS`` is belief-sampled IS-MCTS with
    100 / SIMS simulations per decision (``agents.ismcts``). ``learned:PATH.npz`` plays a self-play policy exported by
    ``experiments.selfplay`` in numpy (``agents.learned``; no torch needed); ``learned`` plays the policy shipped for
    the config's game and player count (``agents/policies/``).
    """
    if name == "llm":
        from agents.llm import LLMAgent

        return LLMAgent(config)
    if name.startswith("text:"):
        from agents.text import TextAgent

        inner = name[5:]
        if inner in CHEATING or inner == "llm" or inner.startswith("text:"):
            raise ValueError(f"text:{inner} is not allowed: text:NAME wraps a scripted agent that reads only its "
                             f"view (not {inner!r})")  # fmt: skip
        return TextAgent(make_agent(inner, config, role), config)
    if name.startswith("claims:"):  # a claims=True game's talking agent (agents.claims; docs/claims.md)
        from agents.claims import make_claims_agent

        return make_claims_agent(name[len("claims:") :], config, role)  # ValueError unless config.claims
    if name == "learned":  # the policy shipped for this game and player count (agents/policies/; agents.learned)
        from agents.learned import shipped_agent

        return shipped_agent(config)
    if name.startswith("learned:"):
        from agents.learned import LearnedAgent

        return LearnedAgent(name[8:], config)
    if name.startswith("ppo:"):
        from agents.ppo import PPOAgent

        return PPOAgent(name[4:], config)
    if name == "ismcts" or name.startswith("ismcts:"):  # every game (agents.ismcts; docs/ismcts.md)
        from agents.ismcts import ISMCTSAgent

        budget = name.partition(":")[2]
        if name != "ismcts" and not (budget.isascii() and budget.isdigit() and 1 <= int(budget) <= 1_000_000):
            raise ValueError(f"agent {name!r}: ismcts:SIMS needs a whole number of simulations 1..1000000, "
                             f"got {budget!r}")  # fmt: skip
        return ISMCTSAgent(config, simulations=int(budget) if budget else 100)
    if config.game == "duel":  # two players, no roles
        if name == "random":
            return RandomAgent(config)
        if name == "greedy":
            from agents.duel import DuelGreedyAgent

            return DuelGreedyAgent(config)
        if name == "believer":
            from agents.duel import DuelBeliever

            return DuelBeliever(config)
        if name == "expert":
            from agents.expert_duel import DuelExpert

            return DuelExpert(config)
        raise ValueError(f"unknown duel agent {name!r}; valid for game='duel': {', '.join(DUEL_AGENTS)}")
    if config.game == "sab2":
        if name == "random":
            return RandomAgent(config)
        if name in ("role_oracle", "gold_oracle"):
            from agents.sab2 import Sab2Oracle

            return Sab2Oracle(config, knows=name.split("_")[0].replace("role", "roles"))
        if name == "believer":
            from agents.sab2 import Sab2Believer

            return Sab2Believer(config)
        if name == "expert":
            from agents.expert_sab2 import Sab2Expert

            return Sab2Expert(config)
        if name in SAB2_AGENTS:
            from agents.sab2 import Sab2Agent

            return Sab2Agent(config, role_aware=name != "greedy")
        raise ValueError(f"unknown Saboteur 2 agent {name!r}; valid for game='sab2': {', '.join(SAB2_AGENTS)}")
    if name not in LADDER:
        raise ValueError(f"unknown agent {name!r}; valid: {', '.join(sorted(LADDER))}")
    miner, saboteur = LADDER[name]
    if role == "miner":
        return miner(config)
    if role == "saboteur":
        return saboteur(config)
    if role is not None:
        raise ValueError(f"role={role!r} must be 'miner', 'saboteur' or None")
    if miner is saboteur:
        return miner(config)
    return RoleDispatch(config, miner(config), saboteur(config))


__all__ = [
    "AGENTS",
    "CHEATING",
    "DUEL_AGENTS",
    "EVERY_GAME",
    "LADDER",
    "SAB2_AGENTS",
    "Agent",
    "RandomAgent",
    "RoleDispatch",
    "ScriptedAgent",
    "make_agent",
]
