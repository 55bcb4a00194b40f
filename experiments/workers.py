"""Deterministic jobs on several workers, results in job order: in this process, a local process pool, or Ray actors.

Shared by the tournament (chunks of games) and expert iteration (chunks of search decisions), issue 37.
:func:`ordered_results` calls ``getattr(worker, method)(job)`` for every job, where ``worker`` is an instance of
``worker_cls`` made once per process (backend ``local``: this process for one worker, a spawn pool otherwise) or a Ray
actor (backend ``ray``: ``workers`` actors on the cluster at ``address``, a local cluster when ``None``), and yields
the results in job order. A worker that dies (killed, out of memory, its node lost) loses only its jobs in flight:
they run again on a new worker, up to :data:`MAX_RETRIES` times each. Jobs must be deterministic (their result may
depend neither on the worker nor on the time it runs), so a re-run returns what the lost run would have, and the
output equals a one-process run's.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from experiments._optional import require

MAX_RETRIES = 3  # times a job may lose its worker before the run gives up on it
BACKENDS = ("local", "ray")
MAX_WORKERS = 1024


def check_backend(backend: str, workers: int = 1, address: str | None = None) -> None:
    """ValueError naming the bad value and the valid ones: an unknown ``backend``, ``workers`` not an integer in
    1..MAX_WORKERS, or an ``address`` without the ray backend."""
    if backend not in BACKENDS:
        raise ValueError(f"backend={backend!r}; valid: {', '.join(map(repr, BACKENDS))}")
    if isinstance(workers, bool) or not isinstance(workers, int) or not 1 <= workers <= MAX_WORKERS:
        raise ValueError(f"workers={workers!r} is out of range; valid: integers 1..{MAX_WORKERS}")
    if address is not None and backend != "ray":
        raise ValueError(f"address={address!r} needs backend='ray' (backend={backend!r}); the local backend uses "
                         "this machine's processes")  # fmt: skip


def ordered_results(
    worker_cls: type,
    method: str,
    jobs: list[Any],
    backend: str = "local",
    workers: int = 1,
    address: str | None = None,
    stop: Callable[[], bool] = lambda: False,
    what: str = "jobs",
) -> Generator[Any, None, None]:
    """``getattr(worker, method)(job)`` for each of ``jobs``, yielded in job order (see the module's docstring).

    At most two jobs per worker are queued ahead of the one yielded next. Once ``stop()`` is true no new job starts:
    the local backend stops before its next job, the pool and Ray finish (and yield) those already sent and drop the
    others. ``what`` names the jobs in the messages about lost workers."""
    check_backend(backend, workers, address)
    if backend == "ray":
        return _ray_results(worker_cls, method, jobs, workers, address, stop, what)
    if workers > 1:
        return _pool_results(worker_cls, method, jobs, workers, stop, what)
    return _local_results(worker_cls, method, jobs, stop)


def _local_results(
    worker_cls: type, method: str, jobs: list[Any], stop: Callable[[], bool]
) -> Generator[Any, None, None]:
    call = getattr(worker_cls(), method)
    for job in jobs:
        if stop():
            return
        yield call(job)


# ---- a local process pool -------------------------------------------------------------------------------------------
_PROCESS_WORKERS: dict[type, Any] = {}


def _pool_call(worker_cls: type, method: str, job: Any) -> Any:
    worker = _PROCESS_WORKERS.get(worker_cls)
    if worker is None:  # one per process and class: its state (environments, caches) serves every later job
        worker = _PROCESS_WORKERS[worker_cls] = worker_cls()
    return getattr(worker, method)(job)


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


def _pool_results(worker_cls: type, method: str, jobs: list[Any], workers: int, stop: Callable[[], bool],
                  what: str) -> Generator[Any, None, None]:  # fmt: skip
    context = multiprocessing.get_context("spawn")

    def new_pool() -> ProcessPoolExecutor:
        return ProcessPoolExecutor(workers, mp_context=context, initializer=_init_pool_worker,
                                   initargs=(os.getpid(),))  # fmt: skip

    pool = new_pool()
    futures: dict[int, Future] = {}
    failures = [0] * len(jobs)

    def restart() -> None:
        """A worker died (killed, out of memory): run every job without a result on a new pool."""
        nonlocal pool
        # The broken pool's other workers ignore SIGTERM, so its manager thread cannot stop them; one blocked
        # sending results nobody reads any more (over a pipe's 64 KiB) would keep that thread, and the exit, waiting.
        _kill_workers(pool)
        pool.shutdown(wait=False, cancel_futures=True)
        pool = new_pool()
        lost = [j for j, f in futures.items()
                if not f.done() or f.cancelled() or isinstance(f.exception(), BrokenProcessPool)]  # fmt: skip
        print(f"\na worker process died; re-running {len(lost)} {what} on a new pool", file=sys.stderr)
        for j in lost:
            failures[j] += 1
            if failures[j] > MAX_RETRIES:
                raise RuntimeError(f"{what} {j}: lost its worker process {failures[j]} times") from None
            submit(j)

    def submit(j: int) -> None:
        while True:
            try:
                with _workers_ignore_signals():  # submit() starts the worker processes
                    futures[j] = pool.submit(_pool_call, worker_cls, method, jobs[j])
                return
            except BrokenProcessPool:  # a worker died since the last request: nothing of this one is lost
                restart()

    def result(j: int) -> Any:
        while True:
            try:
                out = futures[j].result()
            except BrokenProcessPool:
                restart()
                continue
            del futures[j]
            return out

    submitted = 0
    try:
        for i in range(len(jobs)):
            while not stop() and submitted < min(len(jobs), i + 2 * workers):
                submit(submitted)
                submitted += 1
            if i not in futures:
                break
            yield result(i)
            if stop():
                break
        # Stopping: jobs not started are dropped; those a worker has taken still finish.
        for j in sorted(futures):
            if futures[j].cancel():
                del futures[j]
        for j in sorted(futures):
            yield result(j)
    except BaseException:  # a second signal, an error, an abandoned generator: stop now, not after the jobs
        _kill_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


# ---- Ray actors -----------------------------------------------------------------------------------------------------
def ray_init(address: str | None, num_cpus: int) -> Any:
    """The ``ray`` module, connected: to the cluster at ``address`` (this checkout shipped to its workers), else to a
    local one of ``num_cpus`` CPUs; an existing connection is kept. The caller's SIGINT/SIGTERM handlers survive
    (``ray.init`` installs a SIGTERM handler that exits at once)."""
    ray = require("ray", "ray", "--backend ray")
    if not ray.is_initialized():
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            root = Path(__file__).resolve().parents[1]
            kwargs["runtime_env"] = {"working_dir": str(root), "excludes": ["runs/", ".git/", ".venv*/", "*.gz"]}
        else:
            kwargs["num_cpus"] = num_cpus
        main = threading.current_thread() is threading.main_thread()
        saved = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)} if main else {}
        ray.init(address=address, **kwargs)
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    return ray


def _ray_results(worker_cls: type, method: str, jobs: list[Any], workers: int, address: str | None,
                 stop: Callable[[], bool], what: str) -> Generator[Any, None, None]:  # fmt: skip
    """Actors that die are restarted by Ray and their requests retried (``max_task_retries``); a request that still
    fails (the actor killed for good, ``ray.kill``) goes to a new actor, up to MAX_RETRIES times. Actors are named
    ``<class>-<run>-<k>.<generation>`` in the driver's namespace (``ray.util.list_named_actors()`` finds them)."""
    ray = ray_init(address, workers)
    from ray.exceptions import RayActorError

    actor_cls = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=MAX_RETRIES)(worker_cls)
    run_id = uuid.uuid4().hex[:8]
    generation = [0] * workers

    def new_actor(k: int) -> Any:
        generation[k] += 1
        return actor_cls.options(name=f"{worker_cls.__name__}-{run_id}-{k}.{generation[k]}").remote()

    actors = [new_actor(k) for k in range(workers)]
    refs: dict[int, tuple[Any, Any]] = {}  # job -> (its result's reference, the actor it was sent to)
    failures = [0] * len(jobs)

    def submit(j: int) -> None:
        actor = actors[j % workers]
        refs[j] = getattr(actor, method).remote(jobs[j]), actor

    def result(j: int) -> Any:
        while True:
            while not ray.wait([refs[j][0]], timeout=0.5)[0]:
                pass  # short waits: the signal handler runs in between
            ref, actor = refs.pop(j)
            try:
                return ray.get(ref)
            except RayActorError:
                failures[j] += 1
                if failures[j] > MAX_RETRIES:
                    raise
                k = j % workers
                print(f"\na Ray actor died; re-running {what} {j} on a new actor", file=sys.stderr)
                if actors[k] is actor:  # not replaced yet (by an earlier job it lost)
                    with contextlib.suppress(Exception):
                        ray.kill(actor)  # out of restarts, or restarting: replaced either way
                    actors[k] = new_actor(k)
                submit(j)

    submitted = 0
    try:
        for i in range(len(jobs)):
            while not stop() and submitted < min(len(jobs), i + 2 * workers):
                submit(submitted)
                submitted += 1
            if i not in refs:
                break
            yield result(i)
            if stop():
                break
        for j in sorted(refs):  # stopping: the requests already sent finish
            yield result(j)
    finally:
        for actor in actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
