"""First-use compile time of the compiled core, per game (not a test).

    NUMBA_CACHE_DIR=$(mktemp -d) python -m experiments.bench.compile_time base sab2 duel

With an empty ``NUMBA_CACHE_DIR`` every kernel compiles cold; run it again with the same directory to measure the
cached start. For each game it times ``saboteur_env.warmup.exercise``: the first ``VectorEnv`` steps (float and
compact observations, int8 and bit masks, the lock-step sampler, ``observe``) and one whole ``raw_env`` game, what a
user's first run of that game pays. (``python -m saboteur_env.warmup`` compiles the games side by side in
child processes instead.) ``first_use_s`` is wall
time; ``cpu_s`` is this process's CPU time over the same span (compiling is single-threaded, so on an idle machine
the two agree; on a loaded one ``cpu_s`` is the steadier measure).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import time

GAMES = ("base", "sab2", "duel")


def first_use(game: str) -> tuple[float, float]:
    from saboteur_env.warmup import exercise

    start, cpu = time.perf_counter(), time.process_time()
    exercise(game)
    return time.perf_counter() - start, time.process_time() - cpu


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("games", nargs="+", choices=GAMES)
    args = parser.parse_args(argv)
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()  # fmt: skip
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    for game in args.games:
        seconds, cpu = first_use(game)
        print(json.dumps({"game": game, "first_use_s": round(seconds, 1), "cpu_s": round(cpu, 1), "commit": commit,
                          "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR", "(default: __pycache__)"),
                          "load_average": [round(x, 2) for x in os.getloadavg()]}), flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
