"""Tournament tasks: one game of any of the three games as a tuple, its log key, the worker that plays tasks (through
the one tournament loop, :mod:`experiments.tournament.loop`), and the re-play of a logged game."""

from __future__ import annotations

import os
from typing import cast

from experiments.tournament.claims import _claims_cell
from experiments.tournament.loop import env_options, logged_spec, play, replay
from experiments.tournament.rounds import (
    PROVENANCE,
    GameSpec,
    ReplayError,
    first_difference,
    plain,
)
from saboteur_env import raw_env


def replay_records(records: list[dict], full: bool = False) -> None:
    """Re-play a logged game of any of the three games from its seed and actions and compare it with the log
    (:class:`~experiments.tournament.rounds.ReplayError` at the first difference). ``full`` also plays the game again
    with its agents and compares the whole records (belief snapshots included; agents are deterministic per seed)."""
    replay(records)
    if full:
        fresh = cast(list, plain(play(logged_spec(records))))
        for rec, new in zip(records, fresh, strict=False):
            diff = first_difference(rec, new, "record", ignore=PROVENANCE)
            if diff:
                raise ReplayError(f"round {rec['header']['round']} (agents re-run): {diff}")


# Base: (players, miners, saboteurs, seed, beliefs, insert); duel: ("duel", blue, green, seed, layout);
# sab2: ("sab2", players, agent, seed, insert); each optionally followed by the game secret of the agents' seeds (a task
# without one draws a fresh secret). Tuples: what the run ships to its workers and keys its log by.
Task = tuple


def task_key(t: Task) -> tuple:
    """The log key (:func:`experiments.tournament.logs.format.game_key`) of the game a task plays."""
    if t[0] == "duel":
        _, blue, green, seed, layout = t[:5]
        return "duel", layout, blue, green, seed
    if t[0] == "sab2":
        _, n, agent, seed, insert = t[:5]
        # without an insert the key (and so the agents' sealed seeds) is what it was before inserts existed
        return ("sab2", n, agent, insert, seed) if insert else ("sab2", n, agent, seed)
    n, miners, saboteurs, seed, _, insert = t[:6]
    return "base", n, miners, saboteurs, insert or "", seed


def task_spec(t: Task) -> GameSpec:
    """The game a task plays, for the tournament loop."""
    if t[0] == "duel":
        _, blue, green, seed, layout = t[:5]
        return GameSpec("duel", 2, (blue, green), seed, layout=layout, secret=_secret_of(t, 5))
    if t[0] == "sab2":
        _, n, agent, seed, insert = t[:5]
        return GameSpec("sab2", n, (agent,), seed, insert=insert, secret=_secret_of(t, 5))
    n, miners, saboteurs, seed, beliefs, insert = t[:6]
    return GameSpec("base", n, (miners, saboteurs), seed, insert=insert, beliefs=beliefs, secret=_secret_of(t, 6))


def _secret_of(t: Task, size: int) -> int | None:
    return t[size] if len(t) > size else None


class TournamentWorker:
    """One environment per configuration, reused across games (``reset`` re-deals everything, so reuse changes
    nothing); plays chunks of tasks. The body of a Ray actor and of each local pool process."""

    def __init__(self) -> None:
        self.envs: dict[tuple, raw_env] = {}

    def play(self, tasks: list[Task]) -> list[list[dict]]:
        out = []
        for task in tasks:
            spec = task_spec(task)
            # One environment per configuration: the game, its player count (the Duel: its layout) and the claims
            # per turn of a claims cell.
            k = _claims_cell(*spec.agents)
            key = (spec.game, spec.layout if spec.game == "duel" else spec.players, *((k,) if k else ()))
            env = self.envs.get(key)
            if env is None:
                env = self.envs[key] = raw_env(**env_options(spec))
            out.append(play(spec, env=env))
        return out

    def pid(self) -> int:
        return os.getpid()
