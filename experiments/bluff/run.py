"""Playing the bluffing benchmark: an agent's arms on the protocol's sealed deals, through the one tournament loop
(``experiments.tournament.run.run_tasks``: the same games, logs, resumption and sealed agent seeds as any
tournament).

Seating, as the tournament's ``--insert``: in deal ``i`` the benchmarked agent takes one seat (the base game: seat
``seed mod N``, both roles; Saboteur 2: seat ``seed mod N``, whatever role it is dealt; the Duel: each colour once)
and the pool member of the deal every other seat. Four arms
play every deal:

* ``play`` - the agent as named;
* ``deaf`` - the same agent deaf to claims (``+deaf``: it talks, but plays as without claims);
* ``mute`` - the same agent silent (``+mute``: it never talks, and plays as without claims);
* ``pool`` - no agent: the pool member in that seat too (the reference its rating is measured against; one per
  deal, shared by every agent of a leaderboard).

Every arm of a deal gives every seat the same agent seed (one game secret per deal and game, drawn from the secret,
not from the log key that names the arm), so the paired differences come from the agent's talk and listening, not
from its dice.

An agent name without the claims prefix (``heuristic``, ``learned``, ``ismcts:50``, ``llm``) is benchmarked as
``claims+mute:NAME``: it plays its own moves and says nothing (its ``deaf`` and ``mute`` arms are itself, so they
are not played). A network trained with claims (``learned:PATH`` of ``experiments.train.selfplay --claims``) talks
by itself: it is benchmarked as ``claims+native:NAME`` (``agents.claims.NativeTalker``), whose ``deaf`` arm hears no
claims and whose ``mute`` arm never talks.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from agents import find_agent, make_agent
from experiments.bluff.protocol import SEED_OFFSET, VERSION, Protocol, deal_seeds, pool_member
from experiments.tournament.claims import (
    _bare,
    _claims_k,
    check_claims_options,
    claims_name,
    claims_options,
)
from experiments.tournament.run import run_tasks
from experiments.tournament.tasks import Task
from saboteur_env import GameConfig
from saboteur_env.common.seeding import game_secret

ARMS = ("play", "deaf", "mute")
LAYOUT = "seed_5x9"  # the Duel's geometry in every protocol of this version


def benchmark_name(agent: str, p: Protocol) -> str:
    """The claims name the agent plays under (module docstring); ``ValueError`` naming a name the protocol's game
    does not accept, with the valid forms."""
    if not isinstance(agent, str) or not agent.strip():
        raise ValueError(f"agent {agent!r} must be a non-empty name")
    if _claims_k(agent):
        if _claims_k(agent) != 1:
            raise ValueError(f"agent {agent!r}: protocol {p.id} plays one claim per turn (claims:NAME, not @K)")
        name = agent
    else:
        name = claims_name(agent, 1, ("native",) if _talks(agent, p) else ("mute",))
    bare = _bare(name)
    cfg = GameConfig(game=p.game, num_players=p.players)
    if find_agent(bare, p.game) is None or bare.startswith("claims"):
        from agents import usage

        raise ValueError(f"agent {agent!r} is unknown for game {p.game!r}; valid: {usage(p.game)}, claims:NAME, "
                         "claims+OPTION:NAME (options deaf, mute, fit, fit=PATH, native)")  # fmt: skip
    check_claims_options(name, p.game, p.players)
    try:  # build it once here: an agent that does not fit the game (no shipped policy, a missing file) says so now
        if "native" in claims_options(name):
            from agents.claims import make_native_talker

            make_native_talker(bare, _claims_config(p), None, claims_options(name))
        else:
            make_agent(bare, cfg)
    except (ValueError, TypeError, OSError, ImportError) as err:  # ImportError: an optional extra is missing
        raise ValueError(f"agent {agent!r} does not fit protocol {p.id} ({p.game}, {p.players} players): {err}"
                         ) from None  # fmt: skip
    return name


def _claims_config(p: Protocol) -> GameConfig:
    return GameConfig(game=p.game, num_players=p.players, claims=True)


def _talks(agent: str, p: Protocol) -> bool:
    """Whether a plain model, search or remote name (``learned:PATH``, ``learned``, ``search:N``, ``llm``) plays the
    claims game by itself: a network trained with claims (a file, or the talker shipped for the protocol), a search
    that rolls one out and a language model (offered the claims as moves) are benchmarked as ``claims+native:NAME``
    (they talk), every other agent silent."""
    from agents.claims import talks_natively

    entry = find_agent(agent, p.game)
    if entry is None or entry.kind not in ("model", "search", "remote"):
        return False
    try:
        return talks_natively(make_agent(agent, _claims_config(p)))
    except (ValueError, TypeError, OSError, ImportError):  # it plays silent; the build below names the cause
        return False


def arm_name(name: str, arm: str) -> str | None:
    """The name an arm seats (``None``: the arm is the agent itself, not played again)."""
    if arm == "play":
        return name
    opts = claims_options(name)
    if "mute" in opts or (arm == "deaf" and "deaf" in opts):
        return None
    kept = tuple(o for o in opts if o not in ("deaf", "mute"))
    return claims_name(_bare(name), 1, (*kept, arm))


def _tasks(p: Protocol, seed: int, member: tuple[str, ...], insert: str | None) -> list[Task]:
    if p.game == "duel":
        other = member[0]
        if insert is None:
            return [("duel", other, other, seed, LAYOUT)]
        return [("duel", insert, other, seed, LAYOUT), ("duel", other, insert, seed, LAYOUT)]
    if p.game == "sab2":
        return [("sab2", p.players, member[0], seed, insert)]
    return [(p.players, member[0], member[-1], seed, True, insert)]


@dataclass
class Played:
    """The games of one agent's (or the pool's) arms: ``games[arm][deal]`` = the list of that deal's games (each a
    list of round records; the Duel has two per deal, the agent blue then green)."""

    protocol: Protocol
    name: str | None
    seeds: list[int]
    games: dict[str, dict[int, list[list[dict]]]] = field(default_factory=dict)


def play(p: Protocol, name: str | None, secret: int, deals: int | None = None, arms: tuple[str, ...] = ARMS,
         workers: int = 1, out: Path | None = None) -> Played:  # fmt: skip
    """Play the arms of ``name`` (``None``: the ``pool`` arm) on the protocol's sealed deals under ``secret``."""
    seeds = deal_seeds(p, secret, deals)
    _check_held_out(p, seeds)
    plan: list[tuple[str, int, Task, int]] = []
    for arm in ("pool",) if name is None else arms:
        seated = None if name is None else arm_name(name, arm)
        if name is not None and seated is None:
            continue
        for i, seed in enumerate(seeds):
            # Every arm of a deal draws the same agent randomness (the same game secret): the arms differ in the
            # agent's talk and listening alone.
            plan += [(arm, i, t, game_secret(secret, (VERSION, p.name, "agents", i, j)))
                     for j, t in enumerate(_tasks(p, seed, pool_member(p, i), seated))]  # fmt: skip
    result = Played(p, name, seeds)
    games: Iterator[list[dict]] = run_tasks([t for _, _, t, _ in plan], workers=workers, out=out, secret=secret,
                                            game_secrets=[s for _, _, _, s in plan])  # fmt: skip
    for (arm, i, _, _), records in zip(plan, games, strict=True):
        result.games.setdefault(arm, {}).setdefault(i, []).append(records)
    return result


def _check_held_out(p: Protocol, seeds: list[int]) -> None:
    """Evaluation deals never overlap the deals the pool's honesty model was fitted on."""
    if not p.honesty.is_file():
        return
    from agents.honesty import HonestyTable

    fitted = HonestyTable.load(p.honesty).meta.get("seeds", [0, 0])
    lo, hi = int(fitted[0]), int(fitted[1])
    if hi > SEED_OFFSET or any(lo <= s < hi for s in seeds):
        raise ValueError(f"protocol {p.id}: evaluation deals overlap the honesty fit's seeds {lo}..{hi - 1}")


__all__ = ["ARMS", "Played", "arm_name", "benchmark_name", "play"]
