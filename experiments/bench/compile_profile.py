"""Where a game's cold compile goes: numba's compile events, per function (not a test).

    NUMBA_CACHE_DIR=$(mktemp -d) python -m experiments.bench.compile_profile base --top 10

Runs ``saboteur_env.warmup.exercise(game)`` (what ``experiments.bench.compile_time`` times) with two of numba's event
listeners: ``numba:compile`` (one event per function compiled, nested: a kernel's event contains its helpers'),
reported as each function's *exclusive* seconds (its own typing, lowering and optimisation, without the functions
compiled inside it), and ``numba:llvm_lock`` (the time spent in LLVM: optimisation and machine code), reported as
one total. With a warm cache nothing compiles (the table is empty): give it a fresh ``NUMBA_CACHE_DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from typing import Any

from numba.core import event

GAMES = ("base", "sab2", "duel")


class _Exclusive(event.Listener):
    """Exclusive seconds per compiled function (``numba:compile`` events nest)."""

    def __init__(self) -> None:
        self.seconds: Counter[str] = Counter()
        self._stack: list[list[Any]] = []

    def on_start(self, ev: event.Event) -> None:
        disp = ev.data.get("dispatcher") if isinstance(ev.data, dict) else None
        name = getattr(getattr(disp, "py_func", None), "__qualname__", "?")
        module = getattr(getattr(disp, "py_func", None), "__module__", "?")
        self._stack.append([f"{module}.{name}", time.perf_counter(), 0.0])

    def on_end(self, ev: event.Event) -> None:
        name, start, inner = self._stack.pop()
        took = time.perf_counter() - start
        self.seconds[name] += took - inner
        if self._stack:
            self._stack[-1][2] += took


class _Outermost(event.Listener):
    """Seconds inside the outermost of nested events of one kind."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self._depth = 0
        self._start = 0.0

    def on_start(self, ev: event.Event) -> None:
        if self._depth == 0:
            self._start = time.perf_counter()
        self._depth += 1

    def on_end(self, ev: event.Event) -> None:
        self._depth -= 1
        if self._depth == 0:
            self.seconds += time.perf_counter() - self._start


def profile(game: str) -> dict[str, Any]:
    from saboteur_env.warmup import exercise

    functions, llvm = _Exclusive(), _Outermost()
    event.register("numba:compile", functions)
    event.register("numba:llvm_lock", llvm)
    start = time.perf_counter()
    try:
        exercise(game)
    finally:
        event.unregister("numba:compile", functions)
        event.unregister("numba:llvm_lock", llvm)
    return {"game": game, "wall_s": time.perf_counter() - start, "llvm_s": llvm.seconds,
            "functions": functions.seconds}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("game", choices=GAMES)
    parser.add_argument("--top", type=int, default=15, help="functions to list (most exclusive seconds first)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    args = parser.parse_args(argv)
    if args.top < 1:
        parser.error(f"--top {args.top} must be >= 1")
    out = profile(args.game)
    top = out["functions"].most_common(args.top)
    total = sum(out["functions"].values())
    if args.json:
        from experiments.bench.run import machine_facts  # package, commit, dirty flag, versions, load

        print(json.dumps({"game": out["game"], "wall_s": round(out["wall_s"], 2), "llvm_s": round(out["llvm_s"], 2),
                          "compiled_s": round(total, 2), "top": [[k, round(v, 2)] for k, v in top],
                          "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR", "(default: __pycache__)"),
                          **machine_facts()}))  # fmt: skip
        return 0
    print(f"{out['game']}: {out['wall_s']:.1f} s wall, {total:.1f} s in compiles, {out['llvm_s']:.1f} s of it in LLVM")
    for name, seconds in top:
        print(f"{seconds:7.2f} s  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
