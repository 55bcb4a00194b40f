"""Self-play tournaments between ladder agents, with crash-safe logs and a results table.

Examples::

    python -m experiments.tournament                                   # the README's short main job
    python -m experiments.tournament --miners suspicious --saboteurs covert --players 5 7 \\
        --games 2000 --workers 2 --out runs/x
    python -m experiments.tournament.report runs/x

Every combination of ``--miners`` x ``--saboteurs`` x ``--players`` is a cell. In a cell every gold-digger seat plays
the miner policy and every saboteur seat the saboteur policy (roles are dealt each round, so a seat switches policy with
its role). Game ``g`` of every cell uses seed ``seed + g`` (duplicate deals: the same decks, roles, goals and seats in
every compared cell). The agents' seeds are sealed: spawned from a tournament secret (``--secret``, default drawn from
``os.urandom`` once per process and printed when the run ends) mixed with the game's key, never from the public seed, so
an agent's seed says nothing about the deal; each game's own secret is logged with it (``seeds``), after the game.
Results are identical for the same arguments and ``--secret`` whatever ``--workers``. Only agents declared oracles
(``oracle = True``) are given the hidden state; tables mark them ``*``.

With ``--out DIR`` each finished game is appended to ``DIR/rounds.jsonl.gz`` (one gzip member per game, written and
fsync-ed before the next; format, keys and checks in :mod:`experiments.tournament.logs`) as one JSON record per round:
``header`` (seed, rules and package versions, commit and dirty flag, N, rounds, agents per seat, roles, left-over
role, gold goal slot),
``events`` (public, with the private part - a face-down discard's card, a map result - under ``private``),
``actions``, ``beliefs`` (the reference observer and a heuristic public observer after every decision, per mille;
each acting agent's own beliefs where it has any) and ``end`` (winner, reason, decisions, finder, nuggets).

Interruptions. A SIGKILL at any instant loses at most the games in flight. SIGTERM or SIGINT (Ctrl-C) finishes the
games in flight (the current game, or the chunks the workers are playing), logs them, prints the table so far and
exits with 128 + the signal number; a second signal stops at once. Re-running the same command resumes: games in
the log are skipped, a torn tail is cut off, incomplete or duplicated games are dropped and re-played once, and a
log of another package or rules version is refused. A worker process that dies (local pool or Ray actor) has its
games re-run on a new one. The main process keeps running aggregates, not records: memory stays flat in the
number of games; each worker keeps one environment per configuration.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import math
import multiprocessing
import os
import re
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

import numpy as np

from agents import CHEATING, DUEL_AGENTS, EVERY_GAME, LADDER, SAB2_AGENTS, make_agent
from agents.base import RoleDispatch
from agents.beliefs import BayesModel, SuspicionModel
from agents.tracker import LogTracker
from experiments.tournament.duel import DuelTable, play_duel, replay_duel
from experiments.tournament.duel import summary_table as duel_summary_table
from experiments.tournament.logs import (
    LOG_NAME,
    LogError,
    LogReader,
    LogWriter,
    claim_record,
    game_key,
    read_rounds,
    stamp,
)
from experiments.tournament.rounds import (
    ORACLE_NOTE,
    PROVENANCE,
    ReplayError,
    SecretError,
    draw_secret,
    first_difference,
    format_secret,
    game_secret,
    logged_secret,
    oracle_name,
    parse_secret,
    plain,
    replay_env,
    replay_rounds,
    seat_agents,
    seeds_record,
    session_secret,
)
from experiments.tournament.sab2 import Sab2Tables, play_sab2, replay_sab2
from experiments.tournament.sab2 import summary_table as sab2_summary_table
from experiments.tournament.stats import (
    RunningMean,
    bootstrap_counts,
    bootstrap_mean,
    bootstrap_ratio,
    paired_difference,
)
from saboteur_env import EventType, __version__, raw_env
from saboteur_env.base.cards import KIND_CODES, KIND_GOAL_GOLD
from saboteur_env.common.geometry import geometry
from saboteur_env.duel.variant import DUEL_LAYOUT_NAMES

__all__ = ["LOG_NAME", "Interrupted", "Summary", "TournamentWorker", "insert_seat", "play_game", "read_rounds",
           "replay_game", "replay_records", "run", "run_duel", "run_sab2", "summary_table"]  # fmt: skip

EVENT_NAMES = {int(t): t.name.lower() for t in EventType}
DEFAULT_MINERS = ("random", "suspicious")
DEFAULT_SABOTEURS = ("random", "covert")
MAX_RETRIES = 3  # times a chunk of games may lose its worker process before the run gives up on it


def _permille(p: Iterable[float]) -> list[int]:
    return [round(1000 * float(x)) for x in p]


def _event_record(game, index: int, round_index: int) -> dict:
    etype, actor, kind, target, cell, arg = (int(x) for x in game.events[index])
    cfg = game.config
    rec: dict = {"t": index, "type": EVENT_NAMES[etype], "actor": actor}
    if etype == EventType.DISCARD:
        rec["private"] = {"kind": KIND_CODES[kind]}  # known only to the discarder
    elif kind >= 0:
        rec["kind"] = KIND_CODES[kind]
    if target >= 0:
        rec["target"] = target
    if cell >= 0:
        rec["cell"] = list(cfg.cell_coords(cell))
    if arg >= 0:
        rec["arg"] = arg
    if etype == EventType.MAP:
        gold = game.round_goals[round_index][arg] == KIND_GOAL_GOLD  # the round's goals (a new round may have begun)
        rec["private"] = {"result": "gold" if gold else "stone"}
    return rec


def insert_seat(seed: int, num_players: int) -> int:
    """The seat an inserted agent takes in game ``seed`` (rotates over the seats from game to game)."""
    return seed % num_players


def _header(game, seed: int, miners: str, saboteurs: str, insert: str | None) -> dict:
    agents = [saboteurs if r else miners for r in game.roles.tolist()]
    extra = {}
    if insert is not None:
        seat = insert_seat(seed, game.config.num_players)
        agents[seat] = insert
        extra = {"insert": insert, "insert_seat": seat}
    return {
        "seed": seed,
        "rules_version": game.config.rules_version,
        "package_version": __version__,
        "players": game.config.num_players,
        "miners": miners,
        "saboteurs": saboteurs,
        **extra,
        "agents": agents,
        "rounds": game.config.rounds,
        "round": game.round,
        "starter": game.current,
        "roles": game.roles.tolist(),
        "leftover_role": game.leftover_role,
        "gold_goal": int(np.flatnonzero(game.goal_kind == KIND_GOAL_GOLD)[0]),
        "first_event": game.num_events,
        # Claims cells (agents claims:NAME / claims@K:NAME) play the claims rule with K claims per turn.
        **({"claims_per_turn": k} if (k := _claims_cell(miners, saboteurs, insert)) else {}),
    }


def _end(game, decisions: int) -> dict:
    result = game.round_results[-1]
    return {
        "winner": result["winner"],
        "reason": "gold_reached" if result["winner"] == "gold-diggers" else "exhausted",
        "decisions": decisions,
        "finder": result["finder"],
        "last_player": result["last_player"],
        "nuggets": result["nuggets"],
        "gold_cards": result["gold_cards"],
    }


def play_game(
    num_players: int,
    miners: str,
    saboteurs: str,
    seed: int,
    beliefs: bool = True,
    insert: str | None = None,
    env: raw_env | None = None,
    agent_secret: int | None = None,
) -> list[dict]:
    """Play one seeded game; returns one record per round.

    ``insert`` seats that agent (both roles) at :func:`insert_seat` instead of the cell's policies. ``env`` reuses
    an environment of the right player count (``reset`` re-deals everything, so reuse changes nothing).
    ``agent_secret`` is the game secret the seats' seeds are spawned from (:mod:`experiments.tournament.rounds`: independent of
    the deal; a fresh one when ``None``; ``LEGACY_SECRET`` re-plays logs from before sealed seeds). Only agents
    declared oracles (``oracle = True``) get the privileged state.
    """
    k = _claims_cell(miners, saboteurs, insert)
    claims = k > 0
    if env is None or env.config.num_players != num_players or env.config.claims != claims or (
            claims and env.config.claims_per_turn != k):
        env = raw_env(num_players=num_players, **({"claims": True, "claims_per_turn": k} if claims else {}))
    cfg = env.config.game_config

    def seat_agent(miner: str, saboteur: str) -> Any:
        agent = RoleDispatch(cfg, make_agent(_bare(miner), cfg, "miner"), make_agent(_bare(saboteur), cfg, "saboteur"))
        if not claims:
            return agent
        from agents.claims import ClaimsAgent

        return ClaimsAgent(agent, env.config)

    agents = [seat_agent(miners, saboteurs) for _ in range(num_players)]
    if insert is not None:
        agents[insert_seat(seed, num_players)] = seat_agent(insert, insert)
    env.reset(seed=seed)
    game = env.unwrapped.game
    secret = draw_secret() if agent_secret is None else agent_secret
    seat_agents(agents, secret, seed, env.state)
    goal_cells = geometry(cfg).goal_cells
    tracker = LogTracker(cfg)
    reference, heuristic = BayesModel(num_players, goal_cells), SuspicionModel(num_players, goal_cells)
    records: list[dict] = []

    def new_record() -> dict:
        rec = {"header": _header(game, seed, miners, saboteurs, insert), "events": [], "actions": [], "beliefs": []}
        if claims:
            rec["claims"] = []
        return rec

    current = new_record()
    decision = 0
    num_game_actions = env.unwrapped._layout.num_actions
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        seat = env.possible_agents.index(name)
        agent = agents[seat]
        action = agent.act(obs["observation"], obs["action_mask"])
        if claims and action >= num_game_actions:  # a claim: logged with its truth labels, not an action
            made = len(env.claims_log())
            env.step(action)
            current["claims"].extend(claim_record(c, decision) for c in env.claims_log()[made:])
            continue
        snapshot: dict = {"t": decision, "actor": seat}
        own = agent.role_beliefs() if beliefs else None
        if own is not None:
            snapshot["agent"] = _permille(own[s] for s in range(num_players))
        first = game.num_events
        env.step(action)
        current["actions"].append(action)
        round_over = False
        for ev in tracker.update(game):
            if ev.type == EventType.ROUND_END:
                round_over = True  # always the last event of a decision
            else:
                reference.observe(ev)
                heuristic.observe(ev)
        rnd = current["header"]["round"]
        current["events"].extend(_event_record(game, i, rnd) for i in range(first, game.num_events))
        if beliefs:  # observers' beliefs after this decision (before a round end resets them)
            snapshot["reference"] = _permille(reference.p_saboteur())
            snapshot["reference_gold"] = _permille(reference.p_gold())
            snapshot["heuristic"] = _permille(heuristic.p_saboteur())
            current["beliefs"].append(snapshot)
        if round_over:
            reference.reset_round(None, None)
            heuristic.reset_round(None, None)
        decision += 1
        if game.round_just_ended:
            current["end"] = _end(game, len(current["actions"]))
            records.append(current)
            decision = 0
            if not game.game_over:
                current = new_record()
    return [dict(r, **seeds_record(secret)) for r in records]


CLAIMS_PREFIX = "claims:"
_CLAIMS_K = re.compile(r"claims(?:@(\d+))?:(.+)")  # claims:NAME (K = 1) or claims@K:NAME


def _claims_k(name: str) -> int:
    """Claims per turn of an agent name: ``claims:NAME`` 1, ``claims@K:NAME`` K, anything else 0 (no claims)."""
    m = _CLAIMS_K.fullmatch(name)
    if m is None:
        return 0
    k = int(m.group(1) or 1)
    if not 1 <= k <= 8:
        raise ValueError(f"agent {name!r}: claims per turn {k} is out of range; valid: 1..8")
    return k


def _bare(name: str) -> str:
    m = _CLAIMS_K.fullmatch(name)
    return m.group(2) if m else name


def with_claims_per_turn(name: str, k: int) -> str:
    """``claims:NAME`` with K claims per turn (``claims@K:NAME``; K = 1 keeps ``claims:NAME``): the cell's name
    carries K, so logs of different K never share a key."""
    if not _claims_k(name):
        raise ValueError(f"--claims-per-turn applies to claims agents (claims:NAME), not {name!r}")
    return f"claims:{_bare(name)}" if k == 1 else f"claims@{k}:{_bare(name)}"


def _claims_cell(*names: str | None) -> int:
    """Claims per turn of a cell (0: no claims rule): its agents are named ``claims:NAME`` / ``claims@K:NAME``
    (ClaimsAgent around NAME), all of them with the same K, or none is."""
    given = [n for n in names if n is not None]
    ks = {_claims_k(n) for n in given}
    if len(ks) > 1:
        raise ValueError(f"agents {given}: either every agent of a cell is claims:NAME (the claims rule, one K) or "
                         "none is")  # fmt: skip
    return ks.pop()


def _play_claims_rounds(env: raw_env, agents: list[Any], header: Callable[[], dict], event: Callable[[Any], dict],
                        end: Callable[[dict], dict]) -> list[dict]:  # fmt: skip
    """:func:`experiments.tournament.rounds.play_rounds` for a claims environment: claims go to the round's ``claims`` (with
    ``t`` = the game decisions before them), ``actions`` and ``events`` stay the game's, so the log replays from its
    actions on the game without claims."""
    from experiments.tournament.logs import claim_record

    game = env.unwrapped.game
    num_game_actions = env.unwrapped._claim_layout.game_actions
    records: list[dict] = []

    def new_record() -> dict:
        return {"header": header(), "events": [], "actions": [], "claims": []}

    current = new_record()
    for name in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            env.step(None)
            continue
        action = agents[env.possible_agents.index(name)].act(obs["observation"], obs["action_mask"])
        if action >= num_game_actions:
            made = len(env.claims_log())
            env.step(action)
            current["claims"].extend(claim_record(c, len(current["actions"])) for c in env.claims_log()[made:])
            continue
        first = game.num_events
        env.step(action)
        current["actions"].append(action)
        current["events"].extend(event(game.events[i]) for i in range(first, game.num_events))
        if game.round_just_ended:
            current["end"] = dict(end(game.round_results[-1]), decisions=len(current["actions"]))
            records.append(current)
            if not game.game_over:
                current = new_record()
    return records


def play_sab2_claims(num_players: int, agent: str, seed: int, env: raw_env | None = None,
                     agent_secret: int | None = None) -> list[dict]:  # fmt: skip
    """:func:`experiments.tournament.sab2.play_sab2` with the claims rule: ``agent`` is ``claims:NAME`` / ``claims@K:NAME``,
    every seat a ``ClaimsAgent`` around NAME; the records also hold ``claims`` and ``header.claims_per_turn``."""
    from agents.claims import ClaimsAgent
    from experiments.tournament.sab2 import ReferenceObserver, make_sab2_agent
    from experiments.tournament.sab2 import _event as sab2_event
    from experiments.tournament.sab2 import _header as sab2_header

    k = _claims_cell(agent)
    if env is None or env.config.num_players != num_players or env.config.claims_per_turn != k:
        env = raw_env(game="sab2", num_players=num_players, claims=True, claims_per_turn=k)
    cfg = env.config.game_config
    agents = [ClaimsAgent(make_sab2_agent(_bare(agent), cfg), env.config) for _ in range(num_players)]
    env.reset(seed=seed)
    game = env.unwrapped.game
    secret = draw_secret() if agent_secret is None else agent_secret
    seat_agents(agents, secret, seed, env.state)
    observer = ReferenceObserver(game)

    def event(row: Any) -> dict:
        observer(row)
        return sab2_event(game, row)

    records = _play_claims_rounds(env, agents, lambda: dict(sab2_header(cfg, game, seed, agent), claims_per_turn=k),
                                  event, dict)  # fmt: skip
    scored = observer.rounds + [None] * (len(records) - len(observer.rounds))
    return [dict(r, observer=o, **seeds_record(secret)) for r, o in zip(records, scored, strict=False)]


def play_duel_claims(blue: str, green: str, seed: int, layout: str = "seed_5x9", env: raw_env | None = None,
                     agent_secret: int | None = None) -> list[dict]:  # fmt: skip
    """:func:`experiments.tournament.duel.play_duel` with the claims rule (both agents ``claims:NAME`` / ``claims@K:NAME``)."""
    from agents.claims import ClaimsAgent
    from experiments.tournament.duel import OBSERVER_FIELDS, DuelObserver, _Observed, make_duel_agent
    from experiments.tournament.duel import _end as duel_end
    from experiments.tournament.duel import _event as duel_event
    from experiments.tournament.duel import _header as duel_header

    k = _claims_cell(blue, green)
    if env is None or env.config.duel_layout != layout or env.config.claims_per_turn != k:
        env = raw_env(game="duel", duel_layout=layout, claims=True, claims_per_turn=k)
    cfg = env.config.game_config
    env.reset(seed=seed)
    game = env.unwrapped.game
    observer = DuelObserver(game)
    # The observer sees the game decisions only: it sits inside the ClaimsAgent, around the plain agent.
    agents = [ClaimsAgent(_Observed(make_duel_agent(_bare(name), cfg), observer, i), env.config)
              for i, name in enumerate((blue, green))]  # fmt: skip
    secret = draw_secret() if agent_secret is None else agent_secret
    seat_agents(agents, secret, seed, env.state)
    records = _play_claims_rounds(env, agents, lambda: dict(duel_header(cfg, game, seed, blue, green),
                                                            claims_per_turn=k),
                                  lambda row: duel_event(game, row), duel_end)  # fmt: skip
    out = []
    for r in records:
        sums = observer.sums[r["header"]["round"]]
        out.append(dict(r, observer=dict(zip(OBSERVER_FIELDS, np.round(sums, 6).tolist(), strict=True)),
                        **seeds_record(secret)))  # fmt: skip
    return out


def _replay_claims(records: list[dict]) -> None:
    """Re-play a logged Saboteur 2 game or duel of the claims rule from its seed and game actions (the claims never
    change the game), comparing headers (with ``claims_per_turn``), events and round ends with the log."""
    h = records[0]["header"]
    k = _claims_cell(*h["agents"])  # from the cell's names, as the game was played: a tampered header shows
    if h["game"] == "sab2":
        from experiments.tournament.sab2 import _event as sab2_event
        from experiments.tournament.sab2 import _header as sab2_header

        env = replay_env(h["seed"], "a Saboteur 2 game", game="sab2", num_players=h["players"])
        game = env.unwrapped.game
        replay_rounds(env, records, lambda _: dict(sab2_header(env.config, game, h["seed"], h["agent"]),
                                                   claims_per_turn=k),
                      lambda first, last, _: [sab2_event(game, game.events[i]) for i in range(first, last)],
                      lambda decisions: dict(game.round_results[-1], decisions=decisions))  # fmt: skip
        return
    from experiments.tournament.duel import _end as duel_end
    from experiments.tournament.duel import _event as duel_event
    from experiments.tournament.duel import _header as duel_header

    env = replay_env(h["seed"], "a duel", game="duel", duel_layout=h["duel_layout"])
    game = env.unwrapped.game
    blue, green = h["agents"]
    replay_rounds(env, records, lambda _: dict(duel_header(env.config, game, h["seed"], blue, green),
                                               claims_per_turn=k),
                  lambda first, last, _: [duel_event(game, game.events[i]) for i in range(first, last)],
                  lambda decisions: dict(duel_end(game.round_results[-1]), decisions=decisions))  # fmt: skip


def replay_game(records: list[dict]) -> None:
    """Re-play a logged base game (its rounds in order) from the seed and actions; raise
    :class:`~experiments.tournament.rounds.ReplayError` (an ``AssertionError``) naming the round and the first header field,
    event or round-end field that differs from the log (a tampered winner, action or rules version)."""
    h = records[0]["header"]
    env = replay_env(h["seed"], "a base game", num_players=h["players"])
    game = env.unwrapped.game
    replay_rounds(
        env,
        records,
        lambda lh: _header(game, h["seed"], lh["miners"], lh["saboteurs"], lh.get("insert")),
        lambda first, last, rnd: [_event_record(game, i, rnd) for i in range(first, last)],
        lambda decisions: _end(game, decisions),
    )


def task_of(records: list[dict]) -> Task:
    """The tournament task that plays a logged game again (agents included)."""
    h = records[0]["header"]
    secret = logged_secret(records)
    if h.get("game") == "duel":
        return "duel", h["agents"][0], h["agents"][1], h["seed"], h["duel_layout"], secret
    if h.get("game") == "sab2":
        return "sab2", h["players"], h["agent"], h["seed"], secret
    beliefs = any(r.get("beliefs") for r in records)
    return h["players"], h["miners"], h["saboteurs"], h["seed"], beliefs, h.get("insert"), secret


def replay_records(records: list[dict], full: bool = False) -> None:
    """Re-play a logged game of any of the three games from its seed and actions and compare it with the log
    (:class:`~experiments.tournament.rounds.ReplayError` at the first difference). ``full`` also plays the game again with its
    agents and compares the whole records (belief snapshots included; agents are deterministic per seed)."""
    game = records[0]["header"].get("game", "base")
    if game in ("duel", "sab2") and "claims_per_turn" in records[0]["header"]:
        _replay_claims(records)
    else:
        {"duel": replay_duel, "sab2": replay_sab2}.get(game, replay_game)(records)
    if full:
        fresh = plain(_task(task_of(records)))
        for rec, new in zip(records, fresh, strict=False):
            diff = first_difference(rec, new, "record", ignore=PROVENANCE)
            if diff:
                raise ReplayError(f"round {rec['header']['round']} (agents re-run): {diff}")


# Base: (players, miners, saboteurs, seed, beliefs, insert); duel: ("duel", blue, green, seed, layout);
# sab2: ("sab2", players, agent, seed); each optionally followed by the game secret of the agents' seeds (a task
# without one draws a fresh secret).
Task = tuple


def task_key(t: Task) -> tuple:
    """The log key (:func:`experiments.tournament.logs.game_key`) of the game a task plays."""
    if t[0] == "duel":
        _, blue, green, seed, layout = t[:5]
        return "duel", layout, blue, green, seed
    if t[0] == "sab2":
        _, n, agent, seed = t[:4]
        return "sab2", n, agent, seed
    n, miners, saboteurs, seed, _, insert = t[:6]
    return "base", n, miners, saboteurs, insert or "", seed


def _secret_of(t: Task, size: int) -> int | None:
    return t[size] if len(t) > size else None


def _task(args: Task) -> list[dict]:
    return TournamentWorker().play([args])[0]


class TournamentWorker:
    """One environment per configuration, reused across games (``reset`` re-deals everything, so reuse changes
    nothing); plays chunks of tasks. The body of a Ray actor and of each local pool process."""

    def __init__(self) -> None:
        self.envs: dict[tuple, raw_env] = {}

    def _env(self, key: tuple, make: Callable[[], raw_env]) -> raw_env:
        env = self.envs.get(key)
        if env is None:
            env = self.envs[key] = make()
        return env

    def play(self, tasks: list[Task]) -> list[list[dict]]:
        out = []
        for task in tasks:
            if task[0] == "sab2":
                _, n, agent, seed = task[:4]
                if k := _claims_cell(agent):
                    env = self._env(("sab2", n, k), lambda n=n, k=k: raw_env(game="sab2", num_players=n, claims=True,
                                                                             claims_per_turn=k))  # fmt: skip
                    out.append(play_sab2_claims(n, agent, seed, env=env, agent_secret=_secret_of(task, 4)))
                    continue
                env = self._env(("sab2", n), lambda n=n: raw_env(game="sab2", num_players=n))
                out.append(play_sab2(n, agent, seed, env=env, agent_secret=_secret_of(task, 4)))
            elif task[0] == "duel":
                _, blue, green, seed, layout = task[:5]
                if k := _claims_cell(blue, green):
                    env = self._env(("duel", layout, k), lambda layout=layout, k=k: raw_env(
                        game="duel", duel_layout=layout, claims=True, claims_per_turn=k))  # fmt: skip
                    out.append(play_duel_claims(blue, green, seed, layout, env=env, agent_secret=_secret_of(task, 5)))
                    continue
                env = self._env(("duel", layout), lambda layout=layout: raw_env(game="duel", duel_layout=layout))
                out.append(play_duel(blue, green, seed, layout, env=env, agent_secret=_secret_of(task, 5)))
            else:
                n, m, s, seed, beliefs, insert = task[:6]
                k = _claims_cell(m, s, insert)
                env = self._env(("base", n, k) if k else ("base", n), lambda n=n, k=k: raw_env(
                    num_players=n, **({"claims": True, "claims_per_turn": k} if k else {})))  # fmt: skip
                out.append(play_game(n, m, s, seed, beliefs, insert, env=env, agent_secret=_secret_of(task, 6)))
        return out

    def pid(self) -> int:
        return os.getpid()


# ---- stopping on signals ---------------------------------------------------------------------------------------------
class Interrupted(Exception):  # noqa: N818 - an outcome, not an error: every finished game is logged
    """Raised by the run generators after SIGTERM/SIGINT once the games in flight are logged."""

    def __init__(self, signum: int, played: int, total: int, out: Path | None) -> None:
        self.signum = signum
        where = f"; every finished game is in {out / LOG_NAME}: run the same command again to resume" if out else ""
        super().__init__(f"stopped by {signal.Signals(signum).name} after {played} of {total} games{where}")


class _Signals:
    """SIGINT/SIGTERM ask the run to stop after the games in flight; a second one stops at once."""

    def __init__(self) -> None:
        self.signum: int | None = None
        self._saved: dict[int, object] = {}

    def install(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # signals reach the main thread only; a run in another thread stops when its consumer does
        for sig in (signal.SIGINT, signal.SIGTERM):
            self._saved.setdefault(sig, signal.getsignal(sig))
            signal.signal(sig, self._handle)

    def _handle(self, signum: int, frame: object) -> None:
        if self.signum is not None:
            self.restore()
            raise KeyboardInterrupt
        self.signum = signum
        print(f"\n{signal.Signals(signum).name}: finishing the games in flight, then stopping (again: stop now)",
              file=sys.stderr)  # fmt: skip

    def restore(self) -> None:
        if threading.current_thread() is threading.main_thread():
            for sig, handler in self._saved.items():
                signal.signal(sig, handler)  # type: ignore[arg-type]
        self._saved.clear()

    @property
    def requested(self) -> bool:
        return self.signum is not None


# ---- backends: each yields games in task order and stops early (after the games in flight) on a signal -----------
def _local_results(tasks: list[Task], signals: _Signals) -> Iterator[list[dict]]:
    worker = TournamentWorker()
    for task in tasks:
        if signals.requested:
            return
        yield worker.play([task])[0]


_PROCESS_WORKER: TournamentWorker | None = None


def _pool_chunk(tasks: list[Task]) -> list[list[dict]]:
    global _PROCESS_WORKER
    if _PROCESS_WORKER is None:
        _PROCESS_WORKER = TournamentWorker()  # one per process: its environments serve every later chunk
    return _PROCESS_WORKER.play(tasks)


def _init_pool_worker(parent: int) -> None:
    # The main process decides when to stop (a Ctrl-C or a `timeout` reaches the whole process group).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)

    def exit_with_parent() -> None:  # a SIGKILLed main process leaves no orphans behind
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)

    threading.Thread(target=exit_with_parent, daemon=True).start()


@contextlib.contextmanager
def _workers_ignore_signals() -> Iterator[None]:
    """Start worker processes with SIGINT/SIGTERM ignored from their first instruction (a Ctrl-C or `timeout`
    reaching a worker still importing would kill it): the dispositions are SIG_IGN while ``submit`` spawns them,
    and the main thread blocks both meanwhile, so one arriving now stays pending and reaches the handler once
    restored. Threads started in here (the executor's) inherit the block and never take these signals."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    sigs = {signal.SIGINT, signal.SIGTERM}
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    pending = signal.sigpending() & sigs  # setting SIG_IGN discards these: raised again below
    saved = {sig: signal.signal(sig, signal.SIG_IGN) for sig in sigs}
    try:
        yield
    finally:
        for sig, handler in saved.items():
            signal.signal(sig, handler)
        for sig in pending:
            signal.raise_signal(sig)  # pending until the mask is restored
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _kill_workers(pool: ProcessPoolExecutor) -> None:
    """SIGKILL the pool's worker processes (they ignore SIGTERM: see _init_pool_worker)."""
    for process in list((getattr(pool, "_processes", None) or {}).values()):
        process.kill()


def _chunks(tasks: list[Task], chunk: int) -> list[list[Task]]:
    return [tasks[i : i + chunk] for i in range(0, len(tasks), chunk)]


def _pool_results(tasks: list[Task], workers: int, chunk: int, signals: _Signals) -> Iterator[list[dict]]:
    """Games on ``workers`` local processes, ``chunk`` per request, at most two requests per worker queued."""
    chunks = _chunks(tasks, chunk)
    context = multiprocessing.get_context("spawn")

    def new_pool() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(workers, mp_context=context, initializer=_init_pool_worker,
                                   initargs=(os.getpid(),))  # fmt: skip

    pool = new_pool()
    futures: dict[int, Future] = {}
    failures = [0] * len(chunks)

    def restart() -> None:
        """A worker died (killed, out of memory): run every chunk without a result on a new pool."""
        nonlocal pool
        # The broken pool's other workers ignore SIGTERM, so its manager thread cannot stop them; one blocked
        # sending results nobody reads any more (over a pipe's 64 KiB) would keep that thread, and the exit, waiting.
        _kill_workers(pool)
        pool.shutdown(wait=False, cancel_futures=True)
        pool = new_pool()
        lost = [j for j, f in futures.items()
                if not f.done() or f.cancelled() or isinstance(f.exception(), BrokenProcessPool)]  # fmt: skip
        print(f"\na worker process died; re-running {len(lost)} chunks of games on a new pool", file=sys.stderr)
        for j in lost:
            failures[j] += 1
            if failures[j] > MAX_RETRIES:
                raise RuntimeError(f"games {task_key(chunks[j][0])}...: lost their worker process "
                                   f"{failures[j]} times") from None  # fmt: skip
            submit(j)

    def submit(j: int) -> None:
        while True:
            try:
                with _workers_ignore_signals():  # submit() starts the worker processes
                    futures[j] = pool.submit(_pool_chunk, chunks[j])
                return
            except BrokenProcessPool:  # a worker died since the last request: nothing of this one is lost
                restart()

    def result(j: int) -> list[list[dict]]:
        while True:
            try:
                games = futures[j].result()
            except BrokenProcessPool:
                restart()
                continue
            del futures[j]
            return games

    submitted = 0
    try:
        for i in range(len(chunks)):
            while not signals.requested and submitted < min(len(chunks), i + 2 * workers):
                submit(submitted)
                submitted += 1
            if i not in futures:
                break
            yield from result(i)
            if signals.requested:
                break
        # Stopping: chunks not started are dropped; those a worker has taken still finish, and are logged.
        for j in sorted(futures):
            if futures[j].cancel():
                del futures[j]
        for j in sorted(futures):
            yield from result(j)
    except BaseException:  # a second signal, an error, an abandoned generator: stop now, not after the chunks
        _kill_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _ray_results(
    tasks: list[Task], workers: int, address: str | None, chunk: int, signals: _Signals
) -> Iterator[list[dict]]:
    """Games on ``workers`` Ray actors, ``chunk`` seeds per request, yielded in task order. Actors that die are
    restarted by Ray and their requests retried (``max_task_retries``); a request that still fails goes to a new
    actor, up to MAX_RETRIES times."""
    try:
        import ray
        from ray.exceptions import RayActorError
    except ImportError as err:  # pragma: no cover - depends on the optional extra
        raise ImportError("--backend ray needs the 'ray' extra: pip install -e '.[ray]'") from err
    if not ray.is_initialized():
        kwargs: dict = {"include_dashboard": False, "log_to_driver": False}
        if address:  # a cluster: ship this checkout to the workers
            root = Path(__file__).resolve().parents[1]
            kwargs["runtime_env"] = {"working_dir": str(root), "excludes": ["runs/", ".git/", ".venv*/", "*.gz"]}
        else:
            kwargs["num_cpus"] = workers
        ray.init(address=address, **kwargs)
        signals.install()  # ray.init installs a SIGTERM handler that exits at once; ours finishes the games
    actor_cls = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=MAX_RETRIES)(TournamentWorker)
    actors = [actor_cls.remote() for _ in range(workers)]
    chunks = _chunks(tasks, chunk)
    refs: dict[int, object] = {}
    failures = [0] * len(chunks)

    def submit(j: int) -> None:
        refs[j] = actors[j % workers].play.remote(chunks[j])

    def result(j: int) -> list[list[dict]]:
        while True:
            while not ray.wait([refs[j]], timeout=0.5)[0]:
                pass  # short waits: the signal handler runs in between
            try:
                return ray.get(refs.pop(j))
            except RayActorError:
                failures[j] += 1
                if failures[j] > MAX_RETRIES:
                    raise
                print(f"\na Ray actor died; re-running chunk {j} on a new actor", file=sys.stderr)
                with contextlib.suppress(Exception):
                    ray.kill(actors[j % workers])  # out of restarts, or restarting: replaced either way
                actors[j % workers] = actor_cls.remote()
                submit(j)

    submitted = 0
    try:
        for i in range(len(chunks)):
            while not signals.requested and submitted < min(len(chunks), i + 2 * workers):
                submit(submitted)
                submitted += 1
            if i not in refs:
                break
            yield from result(i)
            if signals.requested:
                break
        for j in sorted(refs):  # stopping: the requests already sent finish, and are logged
            yield from result(j)
    finally:
        for actor in actors:
            ray.kill(actor)


def _check_backend(backend: str) -> None:
    if backend not in ("local", "ray"):
        raise ValueError(f"backend={backend!r}; valid: 'local', 'ray'")


def run(
    players: list[int],
    miners: list[str],
    saboteurs: list[str],
    games: int,
    seed: int = 0,
    workers: int = 1,
    out: Path | None = None,
    beliefs: bool = True,
    inserts: list[str | None] | None = None,
    backend: str = "local",
    address: str | None = None,
    chunk: int = 4,
    secret: int | None = None,
) -> Iterator[list[dict]]:
    """Play every cell; yields each game's round records (in a deterministic order, whatever the backend).

    ``inserts``: agents seated one at a time at :func:`insert_seat` (``None`` = no inserted seat); each is a cell.
    ``backend``: ``"local"`` (``workers`` processes) or ``"ray"`` (``workers`` actors on the Ray cluster at
    ``address``, a local one when ``None``); ``chunk`` games per request to a worker. With ``out``, games already in
    the log are yielded first (read back from it) and only the others are played. After SIGTERM/SIGINT the
    generator logs the games in flight and raises :class:`Interrupted`. ``secret``: the tournament secret the
    agents' seeds come from (:mod:`experiments.tournament.rounds`; ``None``: this process's :func:`session_secret`).
    """
    _check_backend(backend)
    inserts = [None] if not inserts else list(inserts)
    tasks: list[Task] = [
        (n, m, s, seed + g, beliefs, i)
        for n in players
        for m in miners
        for s in saboteurs
        for i in inserts
        for g in range(games)
    ]
    yield from _execute(tasks, workers, out, backend, address, chunk, secret)


def run_duel(
    agents: list[str],
    games: int,
    seed: int = 0,
    layout: str = "seed_5x9",
    workers: int = 1,
    out: Path | None = None,
    backend: str = "local",
    address: str | None = None,
    chunk: int = 4,
    secret: int | None = None,
) -> Iterator[list[dict]]:
    """Duels between every ordered pair of distinct ``agents`` (both colour assignments; one agent: self-play),
    game ``g`` on seed ``seed + g``; yields each game's round records in a deterministic order."""
    _check_backend(backend)
    pairs = [(a, b) for a in agents for b in agents if a != b] or [(agents[0], agents[0])]
    tasks: list[Task] = [("duel", a, b, seed + g, layout) for a, b in pairs for g in range(games)]
    yield from _execute(tasks, workers, out, backend, address, chunk, secret)


def run_sab2(
    players: list[int],
    agents: list[str],
    games: int,
    seed: int = 0,
    workers: int = 1,
    out: Path | None = None,
    backend: str = "local",
    address: str | None = None,
    chunk: int = 4,
    secret: int | None = None,
) -> Iterator[list[dict]]:
    """Saboteur 2 cells (players x agent, the agent in every seat), game ``g`` on seed ``seed + g``."""
    _check_backend(backend)
    tasks: list[Task] = [("sab2", n, a, seed + g) for n in players for a in agents for g in range(games)]
    yield from _execute(tasks, workers, out, backend, address, chunk, secret)


def _execute(
    tasks: list[Task],
    workers: int,
    out: Path | None,
    backend: str,
    address: str | None,
    chunk: int,
    secret: int | None = None,
) -> Iterator[list[dict]]:
    keys = [task_key(t) for t in tasks]
    if len(set(keys)) != len(keys):
        raise ValueError("the same game is listed twice (a player count, agent or insert given twice?)")
    secret = session_secret() if secret is None else secret
    tasks = [(*t, game_secret(secret, k)) for t, k in zip(tasks, keys, strict=True)]  # sealed agent seeds
    signals = _Signals()
    signals.install()
    writer: LogWriter | None = None
    results: Iterator[list[dict]] | None = None
    total, played = len(tasks), 0
    try:
        if out is not None:
            writer = LogWriter(out)  # checks versions, cuts a torn tail, drops duplicates and incomplete games
            skipped = set(keys) & writer.done
            if skipped:
                print(f"resuming: {len(skipped)} of {total} games already in {writer.path}", file=sys.stderr)
                tasks = [t for t, k in zip(tasks, keys, strict=True) if k not in skipped]
                for records in LogReader(writer.path, quiet=True).games():
                    if game_key(records[0]["header"]) in skipped:
                        yield records
        if backend == "ray":
            results = _ray_results(tasks, workers, address, chunk, signals)
        elif workers > 1:
            results = _pool_results(tasks, workers, chunk, signals)
        else:
            results = _local_results(tasks, signals)
        start = time.perf_counter()
        todo = len(tasks)
        for records in results:
            stamp(records)  # the commit and dirty flag of the checkout that writes the log
            if writer is not None:
                writer.write_game(records)  # durable before anyone sees the game
            played += 1
            rate = played / (time.perf_counter() - start)
            if sys.stderr.isatty() or played == todo or played % 200 == 0:
                eta = (todo - played) / rate
                end = "\n" if played == todo or not sys.stderr.isatty() else ""
                print(f"\r{played}/{todo} games  {rate:.2f} games/s  ETA {eta:,.0f}s   ", end=end, file=sys.stderr)
            yield records
        if signals.signum is not None:
            raise Interrupted(signals.signum, total - todo + played, total, out)
    finally:
        if results is not None and hasattr(results, "close"):
            results.close()  # type: ignore[union-attr]
        signals.restore()
        if writer is not None:
            writer.close()


# ---- the results table (running aggregates) -------------------------------------------------------------------------
def _cell(h: dict) -> tuple[int, str, str, str]:
    return h["players"], h["miners"], h["saboteurs"], h.get("insert") or ""


class Summary:
    """Running aggregates behind :func:`summary_table`, fed one game at a time (``add``): a few numbers per cell,
    plus the inserted seat's nuggets per seed (one number per game, needed for the paired comparison)."""

    def __init__(self) -> None:
        # cell -> (rounds won, rounds) -> games: a histogram of per-game shares (flat memory, exact bootstrap)
        self.games: dict[tuple[int, str, str, str], Counter[tuple[int, int]]] = {}
        self.decisions: dict[tuple[int, str, str, str], RunningMean] = {}
        # cell -> [gold-digger, saboteur] -> nuggets one player of that role won in a round
        self.role_nuggets: dict[tuple[int, str, str, str], tuple[RunningMean, RunningMean]] = {}
        self.seat_nuggets: dict[tuple[int, str, str, str], dict[int, float]] = {}
        # cell -> seed -> [won as miner, rounds as miner, won as saboteur, rounds as saboteur]
        self.seat_wins: dict[tuple[int, str, str, str], dict[int, list[int]]] = {}
        # cell -> seed -> the seat's nuggets won in its rounds as [miner, saboteur] (the deal fixes each round's
        # roles, so the same seed gives the seat the same roles whoever plays it: per-role pairs)
        self.seat_role_nuggets: dict[tuple[int, str, str, str], dict[int, list[float]]] = {}

    def add(self, records: list[dict]) -> None:
        h = records[0]["header"]
        key = _cell(h)
        won = sum(r["end"]["winner"] == "gold-diggers" for r in records)
        self.games.setdefault(key, Counter())[(won, len(records))] += 1
        decisions = self.decisions.setdefault(key, RunningMean())
        by_role = self.role_nuggets.setdefault(key, (RunningMean(), RunningMean()))
        for r in records:
            decisions.add(r["end"]["decisions"])
            for role, nuggets in zip(r["header"]["roles"], r["end"]["nuggets"], strict=True):
                by_role[1 if role else 0].add(float(nuggets))
        if h.get("insert"):
            seat = h["insert_seat"]
            self.seat_nuggets.setdefault(key, {})[h["seed"]] = float(sum(r["end"]["nuggets"][seat] for r in records))
            wins = self.seat_wins.setdefault(key, {}).setdefault(h["seed"], [0, 0, 0, 0])
            by_role = self.seat_role_nuggets.setdefault(key, {}).setdefault(h["seed"], [0.0, 0.0])
            for r in records:
                role = r["header"]["roles"][seat]
                wins[2 * role] += r["end"]["winner"] == ("saboteurs" if role else "gold-diggers")
                wins[2 * role + 1] += 1
                by_role[role] += float(r["end"]["nuggets"][seat])

    def table(self) -> str:
        """Per cell, results per round by role: the share of rounds each team won (a game = the share of its rounds
        won; 95% bootstrap interval over games, ``n/a`` with a single game, where no interval exists), the nuggets one
        player of each role won per round, and decisions per round.

        With inserted seats, a second table gives the inserted agent's nuggets per game (bootstrap 95% interval)
        and its team's round win rate by role, and a third the paired difference in nuggets per game between each
        insert and the first one listed, over the same seeds (same deals, same seat; bootstrap over seeds), in all
        and per role (the nuggets of the seat's rounds in that role, over the games where it played that role).
        """
        with_insert = any(k[3] for k in self.games)
        width = max([12, *(len(k[3]) for k in self.games)])
        head = f"{'N':>3} {'miners':<12} {'saboteurs':<12} " + (f"{'insert':<{width}} " if with_insert else "")
        header = head + (f"{'games':>6} {'rounds':>6} {'miner win [95% CI]':>22} {'sab. win [95% CI]':>22} "
                         f"{'nuggets/miner':>14} {'nuggets/sab.':>12} {'decisions':>9}")  # fmt: skip
        lines = ["Per round: the share of rounds each team won, nuggets one player of the role won, decisions.",
                 header, "-" * len(header)]  # fmt: skip
        single = False
        for key in sorted(self.games):
            hist = self.games[key]
            count = sum(hist.values())
            rounds = sum(k * c for (_, k), c in hist.items())
            rate, lo, hi = bootstrap_counts([w / k for w, k in hist], list(hist.values()))
            single |= math.isnan(lo)
            n, m, s, ins = key
            flag = " *" if any(oracle_name(x) for x in (m, s, ins) if x) else ""
            cols = f"{n:>3} {m:<12} {s:<12} " + (f"{ins or '-':<{width}} " if with_insert else "")
            digger, sab = self.role_nuggets[key]
            lines.append(
                f"{cols}{int(count):>6} {rounds:>6} {_share(rate, lo, hi):>22} {_share(1 - rate, 1 - hi, 1 - lo):>22} "
                f"{digger.mean:>14.2f} {sab.mean:>12.2f} {self.decisions[key].mean:>9.1f}{flag}"
            )
        if single:
            lines.append("n/a: an interval needs at least 2 games (the bootstrap resamples games).")
        if self.seat_nuggets:
            lines += ["", "Inserted seat (seat = seed mod N, both roles):"]
            header = (f"{'N':>3} {'miners':<12} {'saboteurs':<12} {'insert':<{width}} {'games':>6} "
                      f"{'nuggets/game':>13} {'95% CI':>16} {'win as miner [95% CI]':>22} "
                      f"{'win as sab. [95% CI]':>22}")  # fmt: skip
            lines += [header, "-" * len(header)]
            for key in sorted(self.seat_nuggets):
                mean, lo, hi = bootstrap_mean(list(self.seat_nuggets[key].values()))
                w = np.array(list(self.seat_wins[key].values()), dtype=float)
                rates = []
                for role in (0, 1):
                    rate, rlo, rhi = bootstrap_ratio(w[:, 2 * role], w[:, 2 * role + 1])
                    rates.append(f"{rate:.1%} [{rlo:.0%}, {rhi:.0%}]" if w[:, 2 * role + 1].sum() else "-")
                n, m, s, ins = key
                lines.append(
                    f"{n:>3} {m:<12} {s:<12} {ins:<{width}} {len(self.seat_nuggets[key]):>6} {mean:>13.2f} "
                    f"{f'[{lo:.2f}, {hi:.2f}]':>16} {rates[0]:>22} {rates[1]:>22}"
                )
            by_base: dict[tuple[int, str, str], list[str]] = {}
            for n, m, s, ins in self.seat_nuggets:  # insertion order = the order the inserts were listed
                by_base.setdefault((n, m, s), []).append(ins)
            pairs = [(b, ins[0], other) for b, ins in by_base.items() for other in ins[1:]]
            if pairs:
                lines += ["", "Paired difference in the inserted seat's nuggets per game (same seeds):"]
                for (n, m, s), ref, other in pairs:
                    d, lo, hi, k = paired_difference(self.seat_nuggets[(n, m, s, other)],
                                                     self.seat_nuggets[(n, m, s, ref)])  # fmt: skip
                    lines.append(f"  N={n} {m}/{s}: {other} - {ref} = {d:+.2f} [{lo:+.2f}, {hi:+.2f}] over {k} games")
                    for role, name in ((0, "miner"), (1, "saboteur")):
                        # Games where the seat played this role in at least one round; the nuggets of those rounds.
                        a_k, b_k = self.seat_wins[(n, m, s, other)], self.seat_wins[(n, m, s, ref)]
                        a_n, b_n = self.seat_role_nuggets[(n, m, s, other)], self.seat_role_nuggets[(n, m, s, ref)]
                        a = {g: v[role] for g, v in a_n.items() if a_k[g][2 * role + 1]}
                        b = {g: v[role] for g, v in b_n.items() if b_k[g][2 * role + 1]}
                        d, lo, hi, k = paired_difference(a, b)
                        lines.append(f"      as {name:<8}: {d:+.2f} [{lo:+.2f}, {hi:+.2f}] nuggets per game over {k} "
                                     f"games with {name} rounds")  # fmt: skip
        if any(oracle_name(x) for key in self.games for x in key[1:] if x):
            lines += ["", ORACLE_NOTE]
        return "\n".join(lines)


def _share(rate: float, lo: float, hi: float) -> str:
    """A share with its interval; ``n/a`` for an interval that does not exist (one game), never ``[nan%, nan%]``."""
    ci = "n/a" if math.isnan(lo) or math.isnan(hi) else f"[{lo:.1%}, {hi:.1%}]"
    return f"{rate:.1%} {ci}"


def _by_game(rounds: Iterable[dict]) -> Iterator[list[dict]]:
    """Group round records into games (records of one game need not be adjacent)."""
    games: dict[tuple, list[dict]] = {}
    for r in rounds:
        games.setdefault(game_key(r["header"]), []).append(r)
    for records in games.values():
        yield sorted(records, key=lambda r: r["header"]["round"])


def summary_table(rounds: Iterable[dict]) -> str:
    """The base game's results table (:meth:`Summary.table`) from round records."""
    summary = Summary()
    for records in _by_game(rounds):
        summary.add(records)
    return summary.table()


# ---- command line ---------------------------------------------------------------------------------------------------
def _unique(parser: argparse.ArgumentParser, option: str, values: list) -> None:
    seen = set()
    for v in values:
        if v in seen:
            parser.error(f"{option} lists {v!r} twice")
        seen.add(v)


MODEL_PREFIXES = ("ppo:", "learned:")  # agents loaded from a file: ppo:PATH (MaskablePPO), learned:PATH.npz


def _known(name: str, valid: tuple[str, ...] | dict) -> bool:
    """Whether ``name`` plays a game whose scripted names are ``valid``: those, model files, ``ismcts[:N]`` (every
    game) and ``text:NAME`` of a known scripted NAME (make_agent names the exact error of a bad N or NAME)."""
    if name in valid or name.startswith(MODEL_PREFIXES) or name in EVERY_GAME or name.startswith("ismcts:"):
        return True
    if name == SHIPPED:
        return True
    return name.startswith("text:") and name[5:] in valid and name[5:] not in CHEATING


SHIPPED = "learned"  # the learned policy shipped for the game and player count (agents/policies/)


def _check_shipped(parser: argparse.ArgumentParser, names: list[str], configs: list[Any]) -> None:
    """``learned`` needs a shipped policy for every configuration of the run: say so now, not inside a worker."""
    if SHIPPED in names:
        from agents.learned import shipped_agent
        from saboteur_env import GameConfig

        for kwargs in configs:
            try:
                shipped_agent(GameConfig(**kwargs))
            except ValueError as err:
                parser.error(f"agent {SHIPPED!r}: {err}")


def _check_ppo(parser: argparse.ArgumentParser, names: list[str]) -> None:
    for name in names:
        for prefix in MODEL_PREFIXES:
            if name.startswith(prefix) and not Path(name[len(prefix) :]).is_file():
                parser.error(f"agent {name!r}: no model file {name[len(prefix) :]!r}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--game", choices=("base", "duel", "sab2"), default="base", help="rule set")
    parser.add_argument("--agents", nargs="+", default=["greedy", "random"],
                        help="duel: every ordered pair plays (both colours on the same seeds); sab2: one cell per "
                        "agent, which plays every seat")  # fmt: skip
    parser.add_argument("--duel-layout", choices=DUEL_LAYOUT_NAMES, default="seed_5x9", help="duel geometry")
    parser.add_argument("--miners", nargs="+", default=list(DEFAULT_MINERS), help="miner policies")
    parser.add_argument("--saboteurs", nargs="+", default=list(DEFAULT_SABOTEURS), help="saboteur policies")
    parser.add_argument("--insert", nargs="+", default=None, metavar="AGENT",
                        help="seat one AGENT (both roles) at seat seed mod N; each is a cell, the first is the "
                        "reference of the paired comparison")  # fmt: skip
    parser.add_argument("--players", type=int, nargs="+", default=None,
                        help="player counts (base 3-10, default 5; sab2 2-12, default 5; the duel is 2-player)")
    parser.add_argument("--games", type=int, default=12, help="games per cell (each game has 3 rounds)")
    parser.add_argument("--seed", type=int, default=0, help="seed of game 0 (game g uses seed + g)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (local) or actors (ray)")
    parser.add_argument("--backend", choices=("local", "ray"), default="local", help="where the games run")
    parser.add_argument("--address", default=None, help="Ray cluster address (ray backend; default: a local one)")
    parser.add_argument("--chunk", type=int, default=4, help="games per request to a worker process or Ray actor")
    parser.add_argument("--out", type=Path, default=None,
                        help="log directory (DIR/rounds.jsonl.gz; crash-safe; re-run the same command to resume)")
    parser.add_argument("--no-beliefs", action="store_true", help="skip observers and belief snapshots (faster)")
    parser.add_argument("--claims-per-turn", type=int, default=None, metavar="K",
                        help="claims per turn (1-8) of the claims cells (agents claims:NAME; the cells are then "
                        "named claims@K:NAME)")  # fmt: skip
    parser.add_argument("--secret", default=None, metavar="HEX",
                        help="tournament secret the agents' seeds come from (128-bit hex; default: drawn from "
                        "os.urandom and printed at the end). Each game's own secret is in its log records")  # fmt: skip
    args = parser.parse_args(argv)
    try:
        secret = session_secret() if args.secret is None else parse_secret(args.secret)
    except SecretError as err:
        parser.error(f"--secret: {err}")
    if args.games < 1 or args.workers < 1 or args.chunk < 1:
        parser.error("--games, --workers and --chunk must be at least 1")
    if args.seed < 0:
        parser.error(f"--seed {args.seed} must be at least 0")
    if args.address and args.backend != "ray":
        parser.error("--address needs --backend ray")
    if args.backend == "ray" and importlib.util.find_spec("ray") is None:
        parser.error("--backend ray needs the 'ray' extra: pip install -e '.[ray]'")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} is a file; give a log directory")
    common = {"workers": args.workers, "out": args.out, "backend": args.backend, "address": args.address,
              "chunk": args.chunk, "secret": secret}  # fmt: skip
    if args.claims_per_turn is not None:
        if not 1 <= args.claims_per_turn <= 8:
            parser.error(f"--claims-per-turn {args.claims_per_turn} is out of range; valid: 1..8")
        try:
            for option in ("agents", "miners", "saboteurs", "insert"):
                names = getattr(args, option)
                if names is not None and (args.game != "base") == (option == "agents"):
                    setattr(args, option, [with_claims_per_turn(n, args.claims_per_turn) for n in names])
        except ValueError as err:
            parser.error(str(err))
    if args.game == "duel":
        if args.players not in (None, [2]):
            parser.error("--players: the duel is a two-player game")
        _unique(parser, "--agents", args.agents)
        try:
            _claims_cell(*args.agents)
        except ValueError as err:
            parser.error(str(err))
        for name in args.agents:
            if _claims_k(name) and _bare(name) in DUEL_AGENTS:
                continue
            if not _known(name, DUEL_AGENTS):
                parser.error(f"unknown duel agent {name!r}; valid: {', '.join(DUEL_AGENTS)}, ismcts[:N], text:NAME, "
                             "ppo:PATH, learned or learned:PATH.npz")  # fmt: skip
        _check_ppo(parser, args.agents)
        _check_shipped(parser, args.agents, [{"game": "duel", "duel_layout": args.duel_layout}])
        duels = DuelTable()
        games = run_duel(args.agents, args.games, args.seed, args.duel_layout, **common)
        return _consume(parser, games, lambda records: [duels.add(r) for r in records],
                        lambda: duel_summary_table(duels), secret)  # fmt: skip
    players = args.players or [5]
    _unique(parser, "--players", players)
    if args.game == "sab2":
        for n in players:
            if not 2 <= n <= 12:
                parser.error(f"--players {n} is out of range for sab2; valid: 2..12")
        _unique(parser, "--agents", args.agents)
        try:
            for name in args.agents:
                _claims_k(name)
        except ValueError as err:
            parser.error(str(err))
        for name in args.agents:
            if _claims_k(name) and _bare(name) in SAB2_AGENTS:
                continue
            if not _known(name, SAB2_AGENTS) or name.startswith("ppo:"):
                parser.error(f"unknown Saboteur 2 agent {name!r}; valid: {', '.join(SAB2_AGENTS)}, ismcts[:N], "
                             "text:NAME, learned or learned:PATH.npz")  # fmt: skip
        _check_ppo(parser, args.agents)
        _check_shipped(parser, args.agents, [{"game": "sab2", "num_players": n} for n in players])
        tables = Sab2Tables()
        games = run_sab2(players, args.agents, args.games, args.seed, **common)
        return _consume(parser, games, lambda records: [tables.add(r) for r in records],
                        lambda: sab2_summary_table(tables), secret)  # fmt: skip
    for n in players:
        if not 3 <= n <= 10:
            parser.error(f"--players {n} is out of range; valid: 3..10")
    for option, names in (("--miners", args.miners), ("--saboteurs", args.saboteurs), ("--insert", args.insert or [])):
        _unique(parser, option, names)
        for name in names:
            try:
                if _claims_k(name) and _bare(name) in LADDER:
                    continue
            except ValueError as err:
                parser.error(str(err))
            if not _known(name, LADDER):
                parser.error(f"unknown agent {name!r}; valid: {', '.join(sorted(LADDER))}, ismcts[:N], text:NAME, "
                             "ppo:PATH, learned or learned:PATH.npz")  # fmt: skip
        _check_ppo(parser, names)
        _check_shipped(parser, names, [{"num_players": n} for n in players])
    try:
        for m in args.miners:
            for sab in args.saboteurs:
                for ins in args.insert or [None]:
                    _claims_cell(m, sab, ins)
    except ValueError as err:
        parser.error(str(err))
    summary = Summary()
    games = run(players, args.miners, args.saboteurs, args.games, args.seed, beliefs=not args.no_beliefs,
                inserts=args.insert, **common)  # fmt: skip
    return _consume(parser, games, summary.add, summary.table, secret)


def _consume(
    parser: argparse.ArgumentParser,
    games: Iterator[list[dict]],
    add: Callable[[list[dict]], object],
    table: Callable[[], str],
    secret: int,
) -> int:
    """Feed every game to the running aggregates, then print the table (also after an interruption) and, once no
    game of the run is being played any more, the tournament secret."""
    from experiments.tournament.logs import cli_warnings

    with cli_warnings(), _reveal(secret):
        try:
            for records in games:
                add(records)
        except Interrupted as stop:
            print(table())
            print(stop, file=sys.stderr)
            return 128 + stop.signum
        except KeyboardInterrupt:  # a second signal: stopped at once, the games in flight are lost
            print("\nstopped at once; every game logged so far is kept: run the same command again to resume",
                  file=sys.stderr)  # fmt: skip
            return 130
        except LogError as err:
            parser.exit(2, f"error: {err}\n")
    print(table())
    return 0


@contextlib.contextmanager
def _reveal(secret: int) -> Iterator[None]:
    try:
        yield
    finally:  # after the last game (or the interruption): no agent of this run is playing any more
        print(f"agent-seed secret: {format_secret(secret)} (--secret {format_secret(secret)} re-runs the agents' "
              "randomness; each logged game carries its own game secret)", file=sys.stderr)  # fmt: skip


if __name__ == "__main__":
    raise SystemExit(main())
