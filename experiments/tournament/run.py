"""Running a tournament's games: locally, in a process pool or on Ray, with crash-safe logging, resumption and clean
interruption (SIGTERM / SIGINT)."""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Generator, Iterator
from pathlib import Path

from experiments.tournament.logs.format import LOG_NAME, game_key, stamp
from experiments.tournament.logs.read import LogReader
from experiments.tournament.logs.write import LogWriter
from experiments.tournament.rounds import (
    game_secret,
    session_secret,
)
from experiments.tournament.tasks import Task, TournamentWorker, task_key
from experiments.workers import check_backend, ordered_results


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


# ---- backends (experiments.workers): games in task order, stopping early (after the games in flight) on a signal --
def _results(
    tasks: list[Task], workers: int, backend: str, address: str | None, chunk: int, signals: _Signals
) -> Generator[list[dict], None, None]:
    """Each task's game records, in task order: in this process (one game at a time, so a signal stops after the
    game in flight), on ``workers`` local processes or on Ray actors (``chunk`` games per request)."""
    jobs = [[t] for t in tasks] if backend == "local" and workers == 1 else _chunks(tasks, chunk)
    chunks = ordered_results(TournamentWorker, "play", jobs, backend, workers, address,
                             stop=lambda: signals.requested, what="chunks of games")  # fmt: skip
    try:
        for games in chunks:
            yield from games
    finally:
        chunks.close()


def _chunks(tasks: list[Task], chunk: int) -> list[list[Task]]:
    return [tasks[i : i + chunk] for i in range(0, len(tasks), chunk)]


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
    check_backend(backend)
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
    check_backend(backend)
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
    inserts: list[str | None] | None = None,
) -> Iterator[list[dict]]:
    """Saboteur 2 cells (players x agent x insert: the agent in every seat but, with an insert, seat ``seed mod N``),
    game ``g`` on seed ``seed + g``."""
    check_backend(backend)
    ins = [None] if not inserts else list(inserts)
    tasks: list[Task] = [("sab2", n, a, seed + g, i) for n in players for a in agents for i in ins
                         for g in range(games)]  # fmt: skip
    yield from _execute(tasks, workers, out, backend, address, chunk, secret)


def run_tasks(
    tasks: list[Task],
    workers: int = 1,
    out: Path | None = None,
    chunk: int = 4,
    secret: int | None = None,
    game_secrets: list[int] | None = None,
) -> Iterator[list[dict]]:
    """Play arbitrary tournament tasks (``experiments.tournament.tasks.Task``: any game, any seeds, inserted seats)
    locally through the one loop, logged and resumable like :func:`run`; yields each game's records in task order.
    For experiments that choose their own deals (the bluffing benchmark's sealed seeds). ``game_secrets``: each
    task's game secret (default: derived from ``secret`` and the task's log key); paired arms that must draw the
    same agent randomness give their games the same one."""
    yield from _execute(list(tasks), workers, out, "local", None, chunk, secret, game_secrets)


def _execute(
    tasks: list[Task],
    workers: int,
    out: Path | None,
    backend: str,
    address: str | None,
    chunk: int,
    secret: int | None = None,
    game_secrets: list[int] | None = None,
) -> Iterator[list[dict]]:
    keys = [task_key(t) for t in tasks]
    if len(set(keys)) != len(keys):
        raise ValueError("the same game is listed twice (a player count, agent or insert given twice?)")
    secret = session_secret() if secret is None else secret
    if game_secrets is None:
        game_secrets = [game_secret(secret, k) for k in keys]  # sealed agent seeds
    if len(game_secrets) != len(tasks):
        raise ValueError(f"{len(game_secrets)} game secrets for {len(tasks)} tasks")
    tasks = [(*t, s) for t, s in zip(tasks, game_secrets, strict=True)]
    signals = _Signals()
    signals.install()
    writer: LogWriter | None = None
    results: Generator[list[dict], None, None] | None = None
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
        results = _results(tasks, workers, backend, address, chunk, signals)
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
        if results is not None:
            results.close()
        signals.restore()
        if writer is not None:
            writer.close()
