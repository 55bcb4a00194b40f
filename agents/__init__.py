"""Agents for saboteur-env, by name: ``make_agent(name, config, role=None)`` looks ``name`` up in the agent registry
(``agents.registry``) for the config's game; ``agent_names(game)`` lists the names valid for a game.

Layout. Each game's scripted knowledge is one package that registers its agents: ``agents.base`` (the ladder
``agents.base.ladder``, the route planner and experts ``agents.base.planner`` / ``agents.base.expert``, the belief
models, the policy-aware observer), ``agents.sab2`` and ``agents.duel`` (each a ``ladder``, ``beliefs`` and
``expert`` module). The agents that play every game live here, registered below: ``random``; ``ismcts`` /
``ismcts:SIMS``, belief-sampled IS-MCTS with 100 / SIMS simulations per decision (``agents.ismcts``);
``search`` / ``search:BUDGET``, batched rollouts of the blueprint network from sampled determinizations, 128 /
BUDGET rollouts per move (``agents.search``);
``learned``, the self-play policy shipped for the config's game and player count (``agents/policies/``), and
``learned:PATH.npz``, one exported by ``experiments.train.selfplay`` (``agents.learned``; numpy, no torch needed);
``ppo:PATH``, a trained MaskablePPO model (``agents.ppo``; the ``train`` extra); ``llm`` / ``llm:KEY=VALUE,...``, a
chat endpoint named by ``SABOTEUR_LLM_*`` environment variables, with options such as
``llm:prompt=compact,constrain=grammar,max_tokens=32,move_timeout=30`` (``agents.llm.OPTIONS``); ``text:NAME``,
agent NAME reading only the text interface (``agents.text``); ``claims:NAME``, NAME talking in a ``claims=True``
game (``agents.claims``).

With ``role`` (``"miner"`` or ``"saboteur"``) ``make_agent`` builds the policy of that name for that role (the base
ladder's ``bayes`` and ``role_oracle`` differ by role); without it, such a name comes back as a role-dispatching
composite. ``heuristic`` is ``suspicious`` as a miner and ``covert`` as a saboteur; ``expert`` is ``planner`` as a
miner and ``blocker`` as a saboteur. For ``game="sab2"`` and ``game="duel"``, ``expert`` is the route planner of
``agents.sab2.expert`` / ``agents.duel.expert``.
"""

from __future__ import annotations

from typing import Any

from agents.agent import Agent, RandomAgent, RoleDispatch
from agents.registry import (
    AgentSpec,
    agent_names,
    agent_specs,
    find_agent,
    make_agent,
    oracle_names,
    register_agent,
    unregister_agent,
    usage,
    usage_by_game,
)
from saboteur_env import GameConfig


def _random(config: GameConfig, role: str | None, param: str | None) -> Agent:
    return RandomAgent(config)


# ``random`` first: every game lists it first, then its own names, then the names below that play every game.
register_agent("random", kind="scripted", factory=_random, summary="uniform over the legal actions")

# The games' packages register their scripted agents when imported (lazily built: their factories import the agent
# modules on first use, except the base ladder's classes, which are registered as data).
from agents import base as _base, duel as _duel, sab2 as _sab2  # noqa: E402, F401, I001


def _ismcts(config: GameConfig, role: str | None, sims: str | None) -> Agent:
    from agents.ismcts import ISMCTSAgent

    if sims is not None and not (sims.isascii() and sims.isdigit() and 1 <= int(sims) <= 1_000_000):
        raise ValueError(f"agent {'ismcts:' + sims!r}: ismcts:SIMS needs a whole number of simulations 1..1000000, "
                         f"got {sims!r}")  # fmt: skip
    return ISMCTSAgent(config, simulations=int(sims) if sims else 100)


_SEARCH_KEYS = {
    "depth": "decisions per rollout before the value head ends it",
    "blueprint": "the rollout network, a learned .npz of this game and count",
    "value": "the network whose value head ends cut rollouts (default: the blueprint's)",
    "candidates": "moves searched (the prior's best)",
    "margin": "standard errors by which a move must beat the prior's first choice (0: the best mean)",
    "halving": "1: sequential halving over the candidates (rounds keep the better half), 0: equal rollouts",
    "temperature": "rollout sampling temperature 0..100 (0: every seat plays the blueprint's top move; default 1)",
    "beliefs": "1: rollout seats read belief features followed in the rollouts (base game, a 'bayes' network), "
    "0: the observation-only network",
}


def _search(config: GameConfig, role: str | None, param: str | None) -> Agent:
    from agents.search import DEFAULT_ROLLOUTS, MAX_ROLLOUTS, SearchAgent

    # search[:BUDGET][,KEY=VALUE...]: BUDGET rollouts per move; keys in _SEARCH_KEYS (paths from the command line)
    spec = "search:" + (param or "")
    parts = (param or "").split(",")
    budget = parts[0]
    if budget and not (budget.isascii() and budget.isdigit() and 1 <= int(budget) <= MAX_ROLLOUTS):
        raise ValueError(f"agent {spec!r}: search:BUDGET needs a whole number of rollouts per move 1..{MAX_ROLLOUTS}, "
                         f"got {budget!r}")  # fmt: skip
    kwargs: dict[str, Any] = {}
    for part in parts[1:]:
        key, eq, value = part.partition("=")
        if key not in _SEARCH_KEYS or not eq or not value or key in kwargs:
            valid = "; ".join(f"{k}= ({v})" for k, v in _SEARCH_KEYS.items())
            raise ValueError(f"agent {spec!r}: {part!r} is not a KEY=VALUE option (once each); valid keys: {valid}")
        if key in ("depth", "candidates"):
            if not (value.isascii() and value.isdigit()):
                raise ValueError(f"agent {spec!r}: {key}={value!r} needs a whole number")
            kwargs[key] = int(value)
        elif key in ("margin", "temperature"):
            try:
                kwargs[key] = float(value)
            except ValueError:
                valid = "0..10" if key == "margin" else "0..100"
                raise ValueError(f"agent {spec!r}: {key}={value!r} needs a number {valid}") from None
        elif key in ("halving", "beliefs"):
            if value not in ("0", "1"):
                raise ValueError(f"agent {spec!r}: {key}={value!r} needs 0 or 1")
            kwargs[key] = value == "1"
        else:
            kwargs[key] = value
    return SearchAgent(config, rollouts=int(budget) if budget else DEFAULT_ROLLOUTS, **kwargs)


def _learned(config: GameConfig, role: str | None, path: str | None) -> Agent:
    if path is None:  # the policy shipped for this game and player count (agents/policies/)
        from agents.learned import shipped_agent

        return shipped_agent(config)
    from agents.learned import LearnedAgent

    return LearnedAgent(path, config)


def _ppo(config: GameConfig, role: str | None, path: str | None) -> Agent:
    from agents.ppo import PPOAgent

    return PPOAgent(path or "", config)


def _llm(config: GameConfig, role: str | None, param: str | None) -> Agent:
    from agents.llm import from_options, parse_options

    try:  # llm:KEY=VALUE,... (agents.llm.OPTIONS); the endpoint and key default to the SABOTEUR_LLM_* variables
        return from_options(config, parse_options(param) if param is not None else {})
    except ValueError as e:
        raise ValueError(f"agent {'llm:' + param if param is not None else 'llm'!r}: {e}") from None


def _text(config: GameConfig, role: str | None, inner: str | None) -> Agent:
    from agents.text import TextAgent

    inner = inner or ""
    wrapped = find_agent(inner, config.game)
    # The text carries only the seat's view: an oracle would read past it, an endpoint reads text already.
    if inner.startswith("text:") or (wrapped is not None and (wrapped.oracle or wrapped.kind == "remote")):
        raise ValueError(f"text:{inner} is not allowed: text:NAME wraps a scripted agent that reads only its "
                         f"view (not {inner!r})")  # fmt: skip
    return TextAgent(make_agent(inner, config, role), config)


def _claims(config: GameConfig, role: str | None, inner: str | None) -> Agent:
    from agents.claims import make_claims_agent  # a claims=True game's talking agent (docs/claims.md)

    return make_claims_agent(inner or "", config, role)  # ValueError unless config.claims


register_agent("ismcts", kind="search", factory=_ismcts, param="SIMS", summary="IS-MCTS, SIMS simulations (100)")
register_agent(
    "search",
    kind="search",
    factory=_search,
    param="BUDGET",
    summary="rollouts of the blueprint network, BUDGET rollouts per move (128); options ,depth=D "
    ",blueprint=PATH ,value=PATH ,candidates=M ,margin=Z ,halving=1 ,beliefs=0|1 ,temperature=T",
)
register_agent("learned", kind="model", factory=_learned, param="PATH", summary="the shipped or a PATH.npz policy")
register_agent("ppo", kind="model", factory=_ppo, param="PATH", bare=False, summary="a MaskablePPO model file")
register_agent(
    "llm",
    kind="remote",
    factory=_llm,
    param="KEY=VALUE,...",
    summary="a chat endpoint (SABOTEUR_LLM_* variables; options as in agents.llm.OPTIONS)",
)
register_agent("text", kind="wrapper", factory=_text, param="NAME", bare=False, summary="NAME through the text")
register_agent("claims", kind="wrapper", factory=_claims, param="NAME", bare=False, summary="NAME talking")

__all__ = [
    "Agent",
    "AgentSpec",
    "RandomAgent",
    "RoleDispatch",
    "agent_names",
    "agent_specs",
    "find_agent",
    "make_agent",
    "oracle_names",
    "register_agent",
    "unregister_agent",
    "usage",
    "usage_by_game",
]
