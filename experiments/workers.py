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
    """``getattr(worker, method)(job)`` for each of ``jobs``, yielded in job order (see the module's docstring), on
    workers started for this call and stopped after it (:class:`WorkerSet` keeps them for several calls).

    At most two jobs per worker are queued ahead of the one yielded next. Once ``stop()`` is true no new job starts:
    the local backend stops before its next job, the pool and Ray finish (and yield) those already sent and drop the
    others. ``what`` names the jobs in the messages about lost workers."""
    check_backend(backend, workers, address)

    def run() -> Generator[Any, None, None]:
        with WorkerSet(worker_cls, method, backend, workers, address, what) as ws:
            yield from ws.results(jobs, stop)

    return run()


class WorkerSet:
    """Workers kept across calls of :meth:`results` (e.g. one call per training iteration: a process pool or Ray
    actors start once); a context manager that stops them on exit. One in-order loop serves every backend; each
    backend only sends a job, returns its result (re-running it where its worker died) and drops unsent ones."""

    def __init__(self, worker_cls: type, method: str, backend: str = "local", workers: int = 1,
                 address: str | None = None, what: str = "jobs") -> None:  # fmt: skip
        check_backend(backend, workers, address)
        self.workers = workers
        self._backend: _Backend
        if backend == "ray":
            self._backend = _RayBackend(worker_cls, method, workers, address, what)
        elif workers > 1:
            self._backend = _PoolBackend(worker_cls, method, workers, what)
        else:
            self._backend = _LocalBackend(worker_cls, method)

    def __enter__(self) -> WorkerSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._backend.close()

    def results(self, jobs: list[Any], stop: Callable[[], bool] = lambda: False) -> Generator[Any, None, None]:
        """The results of ``jobs`` in job order (see :func:`ordered_results`)."""
        backend = self._backend
        backend.begin(len(jobs))
        submitted = 0
        try:
            for i in range(len(jobs)):
                while not stop() and submitted < min(len(jobs), i + 2 * self.workers):
                    backend.submit(submitted, jobs[submitted])
                    submitted += 1
                if not backend.pending(i):
                    break
                yield backend.result(i)
                if stop():
                    break
            for j in backend.drain():  # stopping: the jobs a worker has taken finish, the others are dropped
                yield backend.result(j)
        except BaseException:  # a second signal, an error, an abandoned generator: stop now, not after the jobs
            backend.abort()
            raise


class _Backend:
    """Send job ``j``, wait for its result, drop what no worker has taken; ``failures`` counts lost workers per job."""

    failures: list[int]

    def begin(self, jobs: int) -> None:
        self.failures = [0] * jobs

    def submit(self, j: int, job: Any) -> None:
        raise NotImplementedError

    def pending(self, j: int) -> bool:
        raise NotImplementedError

    def result(self, j: int) -> Any:
        raise NotImplementedError

    def drain(self) -> list[int]:
        raise NotImplementedError

    def abort(self) -> None:
        """Stop the jobs in flight now (an error or a second signal)."""

    def close(self) -> None:
        """Stop the workers."""

    def lost(self, j: int, what: str) -> None:
        self.failures[j] += 1
        if self.failures[j] > MAX_RETRIES:
            raise RuntimeError(f"{what} {j}: lost its worker {self.failures[j]} times") from None


class _LocalBackend(_Backend):
    """This process: a job runs when its result is asked for, so a stop drops every job not yet run."""

    def __init__(self, worker_cls: type, method: str) -> None:
        self._call: Callable[[Any], Any] | None = None
        self._cls, self._method = worker_cls, method
        self._jobs: dict[int, Any] = {}

    def submit(self, j: int, job: Any) -> None:
        self._jobs[j] = job

    def pending(self, j: int) -> bool:
        return j in self._jobs

    def result(self, j: int) -> Any:
        if self._call is None:
            self._call = getattr(self._cls(), self._method)
        return self._call(self._jobs.pop(j))

    def drain(self) -> list[int]:
        self._jobs.clear()
        return []


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


class _PoolBackend(_Backend):
    """A spawn process pool; a worker that dies breaks the pool: every job without a result runs on a new one."""

    def __init__(self, worker_cls: type, method: str, workers: int, what: str) -> None:
        self._cls, self._method, self._workers, self._what = worker_cls, method, workers, what
        self._pool: ProcessPoolExecutor | None = None
        self._futures: dict[int, Future] = {}
        self._jobs: dict[int, Any] = {}

    def _new_pool(self) -> ProcessPoolExecutor:
        context = multiprocessing.get_context("spawn")
        return ProcessPoolExecutor(self._workers, mp_context=context, initializer=_init_pool_worker,
                                   initargs=(os.getpid(),))  # fmt: skip

    def _restart(self) -> None:
        """A worker died (killed, out of memory): run every job without a result on a new pool."""
        # The broken pool's other workers ignore SIGTERM, so its manager thread cannot stop them; one blocked
        # sending results nobody reads any more (over a pipe's 64 KiB) would keep that thread, and the exit, waiting.
        assert self._pool is not None
        _kill_workers(self._pool)
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = self._new_pool()
        lost = [j for j, f in self._futures.items()
                if not f.done() or f.cancelled() or isinstance(f.exception(), BrokenProcessPool)]  # fmt: skip
        print(f"\na worker process died; re-running {len(lost)} {self._what} on a new pool", file=sys.stderr)
        for j in lost:
            self.lost(j, self._what)
            self.submit(j, self._jobs[j])

    def submit(self, j: int, job: Any) -> None:
        self._jobs[j] = job
        while True:
            try:
                with _workers_ignore_signals():  # submit() starts the worker processes
                    if self._pool is None:
                        self._pool = self._new_pool()
                    self._futures[j] = self._pool.submit(_pool_call, self._cls, self._method, job)
                return
            except BrokenProcessPool:  # a worker died since the last request: nothing of this one is lost
                self._restart()

    def pending(self, j: int) -> bool:
        return j in self._futures

    def result(self, j: int) -> Any:
        while True:
            try:
                out = self._futures[j].result()
            except BrokenProcessPool:
                self._restart()
                continue
            del self._futures[j], self._jobs[j]
            return out

    def drain(self) -> list[int]:
        for j in sorted(self._futures):
            if self._futures[j].cancel():
                del self._futures[j], self._jobs[j]
        return sorted(self._futures)

    def abort(self) -> None:
        if self._pool is not None:
            _kill_workers(self._pool)
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._futures.clear()
        self._jobs.clear()


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


class _RayBackend(_Backend):
    """Actors that die are restarted by Ray and their requests retried (``max_task_retries``); a request that still
    fails (the actor killed for good, ``ray.kill``) goes to a new actor, up to MAX_RETRIES times. Actors are named
    ``<class>-<run>-<k>.<generation>`` in the driver's namespace (``ray.util.list_named_actors()`` finds them)."""

    def __init__(self, worker_cls: type, method: str, workers: int, address: str | None, what: str) -> None:
        self._cls, self._method, self._workers, self._address, self._what = worker_cls, method, workers, address, what
        self._actors: list[Any] = []
        self._generation = [0] * workers
        self._run_id = uuid.uuid4().hex[:8]
        self._refs: dict[int, tuple[Any, Any]] = {}  # job -> (its result's reference, the actor it was sent to)
        self._jobs: dict[int, Any] = {}

    def _start(self) -> None:
        self._ray = ray_init(self._address, self._workers)
        self._actor_cls = self._ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=MAX_RETRIES)(self._cls)
        self._actors = [self._new_actor(k) for k in range(self._workers)]

    def _new_actor(self, k: int) -> Any:
        self._generation[k] += 1
        name = f"{self._cls.__name__}-{self._run_id}-{k}.{self._generation[k]}"
        return self._actor_cls.options(name=name).remote()

    def submit(self, j: int, job: Any) -> None:
        if not self._actors:
            self._start()
        self._jobs[j] = job
        actor = self._actors[j % self._workers]
        self._refs[j] = getattr(actor, self._method).remote(job), actor

    def pending(self, j: int) -> bool:
        return j in self._refs

    def result(self, j: int) -> Any:
        from ray.exceptions import RayActorError

        while True:
            while not self._ray.wait([self._refs[j][0]], timeout=0.5)[0]:
                pass  # short waits: the signal handler runs in between
            ref, actor = self._refs.pop(j)
            try:
                out = self._ray.get(ref)
            except RayActorError:
                self.lost(j, self._what)
                k = j % self._workers
                print(f"\na Ray actor died; re-running {self._what} {j} on a new actor", file=sys.stderr)
                if self._actors[k] is actor:  # not replaced yet (by an earlier job it lost)
                    with contextlib.suppress(Exception):
                        self._ray.kill(actor)  # out of restarts, or restarting: replaced either way
                    self._actors[k] = self._new_actor(k)
                self.submit(j, self._jobs[j])
                continue
            del self._jobs[j]
            return out

    def drain(self) -> list[int]:
        return sorted(self._refs)  # requests already sent finish

    def close(self) -> None:
        for actor in self._actors:
            with contextlib.suppress(Exception):
                self._ray.kill(actor)
        self._actors = []
        self._refs.clear()
        self._jobs.clear()
