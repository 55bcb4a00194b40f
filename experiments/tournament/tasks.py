"""Tournament tasks: one game of any of the three games as a tuple, its log key, the worker that plays tasks, and the
re-play of a logged game."""

from __future__ import annotations

import os
from collections.abc import Callable

from experiments.tournament.base import play_game, replay_game
from experiments.tournament.claims import (
    _claims_cell,
    _replay_claims,
    play_duel_claims,
    play_sab2_claims,
)
from experiments.tournament.duel import play_duel, replay_duel
from experiments.tournament.rounds import (
    PROVENANCE,
    ReplayError,
    first_difference,
    logged_secret,
    plain,
)
from experiments.tournament.sab2 import play_sab2, replay_sab2
from saboteur_env import raw_env


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
    (:class:`~experiments.tournament.rounds.ReplayError` at the first difference). ``full`` also plays the game again
    with its
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
    """The log key (:func:`experiments.tournament.logs.format.game_key`) of the game a task plays."""
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
