"""The agent registry: every agent name, the games it plays and how it is built (modelled on
``saboteur_env.variants``).

>>> from agents import agent_names
>>> agent_names("duel", kind="scripted")
('random', 'greedy', 'believer', 'expert')

``register_agent(name, games=..., kind=..., factory=...)`` adds a name; a game's package (``agents.base``,
``agents.sab2``, ``agents.duel``) registers its scripted agents, ``agents/__init__.py`` the game-independent ones.
``make_agent(name, config, role=None)`` is a lookup: ``NAME`` or ``NAME:PARAM`` (``ismcts:SIMS``,
``learned:PATH``, ``ppo:PATH``, ``text:NAME``, ``claims:NAME``) finds the entry registered for the config's game,
and an unknown name is a ``ValueError`` that lists the names valid for that game.

A game that registers no agent of its own (a user's variant, e.g. ``tests/toy_variant.py``) plays the base game's
agents, as ``make_agent`` always did for any game other than ``sab2`` and ``duel``.

This module imports no game package: the packages import it to register (``import agents`` runs them all first),
and factories import their agent modules when called, so ``import agents`` stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from agents.agent import Agent, RoleDispatch
from saboteur_env import GameConfig

# What a name is, for the tools that pick from the registry (tournament, play, web, training):
# scripted - hand-written policies of a game's view (the ladders, the experts; ``random``);
# search   - planning by simulation (``ismcts``);
# model    - a trained policy loaded from a file (``learned``, ``ppo:PATH``);
# remote   - a policy behind a network endpoint (``llm``);
# wrapper  - NAME:OTHER plays another registered agent differently (``text:NAME``, ``claims:NAME``).
Kind = Literal["scripted", "search", "model", "remote", "wrapper"]
KINDS: tuple[Kind, ...] = ("scripted", "search", "model", "remote", "wrapper")
ROLES = ("miner", "saboteur")

# factory(config, role, param): ``role`` as given to make_agent; ``param`` the text after ``NAME:`` (None without
# a colon, so that ``learned`` and ``learned:`` stay different requests).
AgentFactory = Callable[[GameConfig, str | None, str | None], Agent]


@dataclass(frozen=True)
class AgentSpec:
    """One registered name for some games.

    ``roles`` is the (miner policy, saboteur policy) pair of a name whose policy differs by role (the base game's
    ladder: ``make_agent(name, config, role)`` builds one of them, and without a role a :class:`RoleDispatch` of
    both); ``factory`` builds any other. ``param`` is the metavar of the ``NAME:PARAM`` form ("" when there is
    none) and ``bare`` whether ``NAME`` alone is valid too. ``oracle`` declares a cheating upper bound that reads
    the hidden state: tables flag it and ratings, leagues, training and the browser table refuse it (an agent
    *instance* says so itself, ``agents.agent.is_oracle``; the declaration lets a tool refuse a name unbuilt).
    """

    name: str
    games: tuple[str, ...] | None  # None: every game
    kind: Kind
    factory: AgentFactory | None = None
    roles: tuple[Callable[[GameConfig], Agent], Callable[[GameConfig], Agent]] | None = None
    param: str = ""
    bare: bool = True
    oracle: bool = False
    summary: str = ""

    @property
    def usage(self) -> str:
        """How the name is written: ``greedy``, ``ismcts[:SIMS]``, ``text:NAME``."""
        if not self.param:
            return self.name
        return f"{self.name}[:{self.param}]" if self.bare else f"{self.name}:{self.param}"

    def build(self, config: GameConfig, role: str | None, param: str | None) -> Agent:
        if self.roles is None:
            assert self.factory is not None  # register_agent requires one of the two
            return self.factory(config, role, param)
        miner, saboteur = self.roles
        if role == "miner":
            return miner(config)
        if role == "saboteur":
            return saboteur(config)
        if miner is saboteur:
            return miner(config)
        return RoleDispatch(config, miner(config), saboteur(config))


_SPECS: list[AgentSpec] = []  # in registration order: the order every listing shows


def register_agent(
    name: str,
    *,
    games: Iterable[str] | None = None,
    kind: Kind = "scripted",
    factory: AgentFactory | None = None,
    roles: tuple[Callable[[GameConfig], Agent], Callable[[GameConfig], Agent]] | None = None,
    param: str = "",
    bare: bool = True,
    oracle: bool = False,
    summary: str = "",
    replace: bool = False,
) -> AgentSpec:
    """Register ``name`` for ``games`` (None: every game). Exactly one of ``factory`` and ``roles`` (see
    :class:`AgentSpec`). A name already registered for one of the games is an error unless ``replace=True``."""
    if not isinstance(name, str) or not name or ":" in name or name != name.strip():
        raise ValueError(f"agent name {name!r} must be a non-empty str without ':' or surrounding spaces")
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r} is unknown; valid: {', '.join(KINDS)}")
    if (factory is None) == (roles is None):
        raise ValueError(f"agent {name!r}: give exactly one of factory and roles")
    if not param and not bare:
        raise ValueError(f"agent {name!r}: a name without a bare form needs param (the NAME:PARAM metavar)")
    spec = AgentSpec(name, None if games is None else tuple(games), kind, factory, roles, param, bare, oracle, summary)
    if spec.games is not None and (not spec.games or not all(isinstance(g, str) and g for g in spec.games)):
        raise ValueError(f"agent {name!r}: games={spec.games!r} must name at least one game (or be None: all)")
    clashes = [s for s in _SPECS if s.name == name and _overlap(s.games, spec.games)]
    if clashes and not replace:
        raise ValueError(f"agent {name!r} is already registered for {_games_text(clashes[0].games)} "
                         "(pass replace=True)")  # fmt: skip
    for old in clashes:
        _SPECS.remove(old)
    _SPECS.append(spec)
    return spec


def unregister_agent(name: str, games: Iterable[str] | None = None) -> None:
    """Remove ``name`` for exactly ``games`` as registered (None: the every-game entry)."""
    key = None if games is None else tuple(games)
    for spec in _SPECS:
        if spec.name == name and spec.games == key:
            _SPECS.remove(spec)
            return
    raise ValueError(f"agent {name!r} is not registered for {_games_text(key)}")


def _overlap(a: tuple[str, ...] | None, b: tuple[str, ...] | None) -> bool:
    return a is None or b is None or bool(set(a) & set(b))


def _games_text(games: tuple[str, ...] | None) -> str:
    return "every game" if games is None else f"game {', '.join(games)}"


def _agent_game(game: str) -> str:
    """The game whose agents ``game`` plays: itself if it registered any of its own, else the base game's."""
    return game if any(s.games is not None and game in s.games for s in _SPECS) else "base"


def _specs(game: str) -> list[AgentSpec]:
    game = _agent_game(game)
    return [s for s in _SPECS if s.games is None or game in s.games]


def agent_specs(game: str, *, kind: Kind | None = None, oracles: bool = True) -> tuple[AgentSpec, ...]:
    """The entries valid for ``game``, in registration order (of one ``kind``; without the oracles if
    ``oracles=False``)."""
    return tuple(s for s in _specs(game) if (kind is None or s.kind == kind) and (oracles or not s.oracle))


def agent_names(game: str, *, kind: Kind | None = None, oracles: bool = True) -> tuple[str, ...]:
    """The names valid for ``game`` (see :func:`agent_specs`); a name taking ``:PARAM`` is listed by its name."""
    return tuple(s.name for s in agent_specs(game, kind=kind, oracles=oracles))


def oracle_names(game: str) -> frozenset[str]:
    """The names declared oracles (cheating upper bounds that read hidden state) in ``game``."""
    return frozenset(s.name for s in _specs(game) if s.oracle)


def find_agent(name: str, game: str) -> AgentSpec | None:
    """The entry that builds ``name`` (``NAME`` or ``NAME:PARAM``) in ``game``, or None."""
    head, colon, _ = name.partition(":")
    for spec in _specs(game):
        if spec.name == head:
            return spec if (spec.param if colon else spec.bare) else None
    return None


def usage(game: str, *, kind: Kind | None = None, oracles: bool = True) -> str:
    """The names valid for ``game`` as written, for help and error messages (``random, greedy, ismcts[:SIMS]``)."""
    return ", ".join(s.usage for s in agent_specs(game, kind=kind, oracles=oracles))


def usage_by_game(games: Iterable[str], *, kind: Kind | None = None, oracles: bool = True) -> str:
    """One line per game, ``GAME: names``: for a command's ``--help``, before the game is known."""
    return "\n".join(f"  {g}: {usage(g, kind=kind, oracles=oracles)}" for g in games)


def make_agent(name: str, config: GameConfig, role: str | None = None) -> Agent:
    """The agent called ``name`` for ``config``; ``role`` (``"miner"`` / ``"saboteur"``) picks one policy of a
    name that has one per role (without it such a name plays both, switching with the dealt role)."""
    if not isinstance(name, str):
        raise TypeError(f"agent name {name!r} must be a str")
    if role not in (None, *ROLES):  # checked for every name (a name without per-role policies ignores it)
        raise ValueError(f"role={role!r} must be 'miner', 'saboteur' or None")
    spec = find_agent(name, config.game)
    if spec is None:
        raise ValueError(f"unknown agent {name!r}; valid for game={config.game!r}: {usage(config.game)}")
    _, colon, param = name.partition(":")
    return spec.build(config, role, param if colon else None)


__all__ = ["KINDS", "AgentFactory", "AgentSpec", "agent_names", "agent_specs", "find_agent", "make_agent",
           "oracle_names", "register_agent", "unregister_agent", "usage", "usage_by_game"]  # fmt: skip
