"""Compile the games' kernels ahead of first use, in parallel processes (numba's on-disk cache keeps them).

    python -m saboteur_env.warmup                 # all three games, one process each, all at once
    python -m saboteur_env.warmup base --jobs 1   # one game, in this process

A game's kernels compile the first time the game is used in a process (about 13-17 s each on the 2-core
development machine, docs/performance.md) and load from the cache after (under a second). Compiling is single
threaded, so a machine with more than one core compiles the games side by side here: on two cores the three games
take the wall time of about two. Each game runs what its users run first: ``VectorEnv`` steps with float and
compact observations, int8 and bit masks, the lock-step sampler, ``observe`` and one ``raw_env`` game.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np

from saboteur_env import variants

# The registered games with a compiled core (the package's own, registered when it is imported).
GAMES = tuple(name for name in variants.names() if getattr(variants.get(name), "core", None))


def exercise(game: str) -> None:
    """Run every kernel of ``game`` once (compiling or loading each from the cache)."""
    import saboteur_env as se
    from saboteur_env.vector import LegalSampler, VectorEnv

    if game not in GAMES:
        raise ValueError(f"game={game!r} is not valid; valid: {', '.join(GAMES)}")
    config: dict[str, Any] = {"game": game}
    sampler = LegalSampler(0)
    for obs_format, mask_format in (("float", "int8"), ("compact", "bits")):
        venv = VectorEnv(4, obs_format=obs_format, mask_format=mask_format, **config)
        venv.reset(seed=0)
        for _ in range(3):
            venv.step(venv.sample_actions(sampler))
        venv.observe()
    env = se.raw_env(**config)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else se.sample_legal(obs["action_mask"], rng))


def warm(games: tuple[str, ...] = GAMES, jobs: int | None = None) -> float:
    """Compile ``games`` in up to ``jobs`` child processes at once (default: one per game, all at once: the
    processes share the cores, so the wall time is the CPU time over the cores); ``jobs=1`` compiles here, one game
    after another. Returns the wall seconds. Raises ``RuntimeError`` naming a game whose process failed."""
    bad = [g for g in games if g not in GAMES]
    if bad:
        raise ValueError(f"games {bad} are not valid; valid: {', '.join(GAMES)}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise ValueError(f"jobs={jobs!r} must be an int >= 1")
    jobs = jobs or len(games)
    start = time.perf_counter()
    if jobs == 1:
        for g in games:
            exercise(g)
        return time.perf_counter() - start
    pending = list(games)
    running: list[tuple[str, subprocess.Popen[bytes]]] = []
    failed: list[str] = []
    while pending or running:
        while pending and len(running) < jobs:
            g = pending.pop(0)
            cmd = [sys.executable, "-c", f"from saboteur_env.warmup import exercise; exercise({g!r})"]
            running.append((g, subprocess.Popen(cmd)))
        g, proc = running.pop(0)
        if proc.wait() != 0:
            failed.append(g)
    if failed:
        raise RuntimeError(f"compiling {', '.join(failed)} failed (see the output above)")
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("games", nargs="*", metavar="GAME", help=f"any of {', '.join(GAMES)} (default: all)")
    parser.add_argument("--jobs", type=int, default=None, help="processes at once (default: one per game)")
    args = parser.parse_args(argv)
    if args.jobs is not None and args.jobs < 1:
        parser.error(f"--jobs {args.jobs} must be >= 1")
    for g in args.games:
        if g not in GAMES:
            parser.error(f"game {g!r} is not valid; valid: {', '.join(GAMES)}")
    games = tuple(args.games) or GAMES
    seconds = warm(games, args.jobs)
    print(json.dumps({"games": list(games), "jobs": args.jobs or len(games), "wall_s": round(seconds, 1),
                      "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR", "(default: __pycache__)"),
                      "load_average": [round(x, 2) for x in os.getloadavg()]}))  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
