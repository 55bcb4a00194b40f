"""Running a tournament's games: locally, in a process pool or on Ray, with crash-safe logging, resumption and clean
interruption (SIGTERM / SIGINT)."""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from experiments.tournament.logs.format import LOG_NAME, game_key, stamp
from experiments.tournament.logs.read import LogReader
from experiments.tournament.logs.write import LogWriter
from experiments.tournament.rounds import (
    game_secret,
    session_secret,
)
from experiments.tournament.tasks import Task, TournamentWorker, task_key

MAX_RETRIES = 3  # times a chunk of games may lose its worker process before the run gives up on it


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
            root = Path(__file__).resolve().parents[2]
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
