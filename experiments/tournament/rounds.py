"""What the one tournament loop (:mod:`experiments.tournament.loop`) and the games' hooks share: the description of
one game to play (:class:`GameSpec`), what a game supplies to the loop (:class:`Recording`, :class:`Observer`), the
re-play check shared by all three games (``experiments.tournament.logs verify``, ``experiments.tournament.replay``)
and the sealed agent seeds.

Sealed seeds. The deal of game ``g`` comes from its public seed (``seed + g``, the same in every compared cell), but the
agents' random generators must not: seeded from the public seed, an agent could re-derive its seed for every candidate
game seed, find the game, and rebuild every hand, role and goal. So each run draws a *tournament secret* (128 bits from
``os.urandom``, drawn once per process, or ``--secret``) and each game gets ``game_secret(secret, key)`` = a
SeedSequence of the secret and the game's log key; the seats' seeds are spawned from the game secret alone. The game
secret is written into the game's records (``seeds.secret``), which reach the log only after the game is over, so any
logged game re-plays exactly (``verify --full``) while an agent playing it holds a seed that carries no information
about the deal. The tournament secret itself is printed once the run ends (``--secret`` re-runs the whole run); a game
secret reveals nothing about other games' (one-way derivation). The scheme itself lives in the library
(``saboteur_env.common.seeding``, which ``SingleSeatEnv`` uses too); its names are re-exported here.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from agents.agent import bind_oracle
from saboteur_env import raw_env
from saboteur_env.common import seeding
from saboteur_env.common.seeding import SecretError, format_secret, parse_secret, sealed_seeds

# The one seeding scheme lives in the library (SingleSeatEnv uses it too); these names stay importable from here.
SECRET_BITS = seeding.SECRET_BITS
draw_secret = seeding.draw_secret
session_secret = seeding.session_secret
game_secret = seeding.game_secret
seat_seeds = seeding.seat_seeds

SEED_SCHEME = "sealed-v1"
LEGACY_SECRET = -1  # logs from before sealed seeds: agent seeds spawned from the public game seed


def agent_seeds(secret: int, public_seed: int, n: int) -> list[int]:
    """The seats' agent seeds of a game: spawned from its game secret (``saboteur_env.common.seeding.sealed_seeds``;
    ``LEGACY_SECRET``: from the public seed, only to re-play logs from before sealed seeds)."""
    if secret == LEGACY_SECRET:
        return [int(ss.generate_state(1)[0]) for ss in np.random.SeedSequence(public_seed).spawn(n)]
    return sealed_seeds(secret, n)


def seeds_record(secret: int) -> dict:
    """What a game's records carry about its agent seeds (nothing for a legacy game, whose log had no such key)."""
    return {} if secret == LEGACY_SECRET else {"seeds": {"scheme": SEED_SCHEME, "secret": format_secret(secret)}}


def logged_secret(records: Sequence[dict]) -> int:
    """The game secret a logged game was played with (``LEGACY_SECRET`` for logs without one)."""
    seeds = records[0].get("seeds")
    if seeds is None:
        return LEGACY_SECRET
    if not isinstance(seeds, dict) or seeds.get("scheme") != SEED_SCHEME or not isinstance(seeds.get("secret"), str):
        raise SecretError(f"record field 'seeds' {seeds!r} is not a {SEED_SCHEME} seed record")
    return parse_secret(seeds["secret"])


def insert_rank(order: list[str], name: str) -> int:
    """Where the inserted agent ``name`` stands in the command's list ``order`` (the first is the paired comparison's
    reference); names not listed rank after them (a stable sort keeps them in the order their games arrived)."""
    return order.index(name) if name in order else len(order)


@functools.cache
def oracle_name(name: str, game: str = "base") -> bool:
    """Whether the agent called ``name`` in ``game`` reads hidden state (flagged in tables, never rated): asked of
    the agent object itself (``agents.agent.is_oracle``), built the way the tournaments seat it, so that every wrapper
    (``claims:NAME``, ``claims@K:NAME``, ``text:NAME``, a role-dispatching pair) answers for what it wraps. Names
    that load a model file or call a chat endpoint read only observations; names that build no agent (table labels)
    are not oracles."""
    from agents import RoleDispatch, make_agent
    from agents.agent import is_oracle
    from saboteur_env import GameConfig

    bare = CLAIMS_NAME.sub(r"\1", name)
    if bare.startswith(("ppo:", "learned:", "text:ppo:", "text:learned:", "llm:")) or bare in ("learned", "llm"):
        return False  # file- or endpoint-backed policies of the observation only (and costly to build)
    claims = bare != name
    try:
        cfg = GameConfig(game=game, claims=claims)
        inner = cfg.game_config if claims else cfg
        if game == "base":  # the base tournament seats each name as a miner / saboteur pair
            agent: object = RoleDispatch(inner, make_agent(bare, inner, "miner"), make_agent(bare, inner, "saboteur"))
        else:
            agent = make_agent(bare, inner)
        if claims:
            from agents.claims import ClaimsAgent

            agent = ClaimsAgent(agent, cfg)  # type: ignore[arg-type]
    except (ValueError, KeyError, TypeError):
        return False
    return is_oracle(agent)


CLAIMS_NAME = re.compile(r"^claims(?:@\d+)?(?:\+[^:+]+)*:(.+)$")  # claims[@K][+OPTION...]:NAME -> NAME


ORACLE_NOTE = "* oracle: reads the hidden state (declared `oracle = True`); an upper bound, never in ratings"


class ReplayError(AssertionError):
    """A logged game that the engine does not re-play as logged; the message names the round and the first
    difference (an ``AssertionError``, as before: replaying a log is a check)."""


def seat_agents(agents: Sequence, secret: int, public_seed: int, state_fn: Callable | None = None) -> None:
    """Reset every agent for its seat with its sealed seed (:func:`agent_seeds`); with ``state_fn``, hand the
    privileged state to the declared oracles among them (and nobody else)."""
    n = len(agents)
    for i, (agent, seed) in enumerate(zip(agents, agent_seeds(secret, public_seed, n), strict=True)):
        agent.reset(i, n, seed)
        if state_fn is not None:
            bind_oracle(agent, state_fn)


@dataclass(frozen=True)
class GameSpec:
    """One game for the tournament loop: the game, its player count, the cell's agent names, the public seed and the
    game secret of the agents' seeds (``None``: a fresh one).

    ``names`` by game: base ``(miners, saboteurs)``; Saboteur 2 ``(agent,)`` (every seat); the Duel ``(blue,
    green)``. Names ``claims:NAME`` / ``claims@K:NAME`` (all of a cell's, or none) play the claims rule around NAME:
    the claims layer is an option of the game, not another game. ``insert``: an inserted agent at seat ``seed mod N``
    (the base game: both roles; Saboteur 2: whatever role it is dealt); ``beliefs``: the base game's observers and
    belief snapshots; ``layout``: the Duel's geometry."""

    game: str
    players: int
    names: tuple[str, ...]
    seed: int
    insert: str | None = None
    beliefs: bool = True
    layout: str = "seed_5x9"
    secret: int | None = None

    @property
    def agents(self) -> tuple[str, ...]:
        """Every agent name of the cell (the claims rule applies to all of them or none)."""
        return self.names if self.insert is None else (*self.names, self.insert)


class Observer(Protocol):
    """What one game adds to its round records beyond the common part (header, events, actions, claims, end), fed by
    the loop as the game goes: a fresh one per game (:attr:`Recording.observer`)."""

    lists: tuple[str, ...]  # per-round lists the record holds right after ``actions`` (the base game: ``beliefs``)

    def decided(self, seat: int, agent: Any, action: int, record: dict) -> None:
        """A game action was chosen (claims are not decisions), before it is played."""

    def stepped(self, first: int, record: dict) -> None:
        """The action was played; its events are ``game.events[first:game.num_events]``, already in ``record``."""

    def closing(self, records: list[dict]) -> list[dict]:
        """After the game: per round record, the keys to add after its ``end``."""
        ...


@dataclass(frozen=True)
class Recording:
    """A game's hooks of the tournament loop: everything that differs between the games, as data and small
    functions. ``game`` below is the engine's state (``env.unwrapped.game``); ``names`` are the bare agent names
    (the claims prefix stripped: the loop wraps claims agents itself)."""

    what: str  # the game in messages: "a base game"
    options: Callable[[GameSpec], dict]  # raw_env keyword arguments (without the claims rule)
    seats: Callable[[GameSpec], list[tuple[str, ...]]]  # per seat, the agent names its agent is made of
    agent: Callable[..., Any]  # (game config, *names) -> the seat's agent
    header: Callable[[Any, GameSpec], dict]  # the round header (as the round begins)
    event: Callable[[Any, int, int], dict]  # (game, event index, round) -> the event's record
    end: Callable[[Any, int], dict]  # (game, decisions) -> the round's end record (as the round ends)
    observer: Callable[[Any, GameSpec], Observer]  # after the deal: what this game's records add
    spec: Callable[[list[dict]], GameSpec]  # the spec of a logged game (its records), secret included


PROVENANCE = ("package_version", "commit", "dirty")  # header fields that say which code wrote a record


def plain(value: object) -> object:
    """``value`` as it reads back from JSON (tuples -> lists, numpy scalars -> numbers)."""
    return json.loads(json.dumps(value, default=lambda x: x.item() if hasattr(x, "item") else str(x)))


def first_difference(logged: object, replayed: object, where: str, ignore: Sequence[str] = ()) -> str | None:
    """Where two JSON values first differ, e.g. ``end.winner: logged 'saboteurs', re-played 'gold-diggers'``
    (``ignore``: object keys left out at any depth)."""
    if isinstance(logged, dict) and isinstance(replayed, dict):
        for key in [*logged, *(k for k in replayed if k not in logged)]:
            if key in ignore:
                continue
            if key not in replayed:
                return f"{where}.{key}: logged {logged[key]!r}, absent from the re-play"
            if key not in logged:
                return f"{where}.{key}: absent from the log, re-played {replayed[key]!r}"
            diff = first_difference(logged[key], replayed[key], f"{where}.{key}", ignore)
            if diff:
                return diff
        return None
    if isinstance(logged, list) and isinstance(replayed, list):
        for i, (a, b) in enumerate(zip(logged, replayed, strict=False)):
            diff = first_difference(a, b, f"{where}[{i}]", ignore)
            if diff:
                return diff
        if len(logged) != len(replayed):
            return f"{where}: {len(logged)} logged, {len(replayed)} re-played"
        return None
    if logged != replayed or type(logged) is not type(replayed):
        return f"{where}: logged {logged!r}, re-played {replayed!r}"
    return None


def replay_env(seed: int, what: str, **config: object) -> raw_env:
    """A ``raw_env`` for the logged configuration, reset with the logged seed (:class:`ReplayError` naming ``what``
    when the log's configuration is not one)."""
    try:
        env = raw_env(**config)
    except ValueError as err:
        raise ReplayError(f"the logged configuration is not {what}: {err}") from None
    env.reset(seed=seed)
    return env


def replay_rounds(
    env,
    records: Sequence[dict],
    header: Callable[[dict], dict],
    events: Callable[[int, int, int], list[dict]],
    end: Callable[[int], dict],
) -> None:
    """Re-play logged rounds on ``env`` (reset with the game's seed) from their actions alone and compare each
    round's header (``header(logged header)``, before the round's first action), events (``events(first, last,
    round)`` for each decision, right after it, as they were logged: a duel's map result reads the round's goals,
    which the next round replaces) and end (``end(decisions)``, after its last action) with the log. Raise
    :class:`ReplayError` at the first difference (package version, commit and dirty flag are not compared: a log
    re-plays under any code with the same rules version)."""
    game = env.unwrapped.game
    for rec in records:
        h = rec["header"]
        rnd = h["round"]
        if game.game_over:
            raise ReplayError(f"round {rnd}: the game is over before this record")
        # Records from before the crash-safe log writer have no ``rounds``; no record's package version is compared.
        ignore = (*PROVENANCE, "rounds") if "rounds" not in h else PROVENANCE
        diff = first_difference(h, plain(header(h)), "header", ignore)
        if diff:
            raise ReplayError(f"round {rnd}: {diff}")
        replayed: list[dict] = []
        actions = rec["actions"]
        for d, action in enumerate(actions):
            if d and game.round_just_ended:
                raise ReplayError(f"round {rnd}: the round ends after {d} of the {len(actions)} logged decisions")
            if isinstance(action, bool) or not isinstance(action, int):
                raise ReplayError(f"round {rnd} decision {d}: logged action {action!r} is not an action id")
            first = game.num_events
            try:
                env.step(action)
            except (ValueError, IndexError, KeyError, TypeError) as err:
                msg = f"round {rnd} decision {d}: logged action {action} cannot be played: {err}"
                raise ReplayError(msg) from None
            replayed += events(first, game.num_events, rnd)
        if not game.round_just_ended:
            raise ReplayError(f"round {rnd}: the round goes on after the {len(actions)} logged decisions")
        diff = first_difference(rec["events"], plain(replayed), "events") or (
            first_difference(rec["end"], plain(end(len(actions))), "end")
        )
        if diff:
            raise ReplayError(f"round {rnd}: {diff}")
    if not game.game_over:
        raise ReplayError(f"the log ends after {len(records)} rounds, before the game does")
