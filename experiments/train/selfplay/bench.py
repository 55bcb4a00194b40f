"""Learner throughput of the self-play trainer, both networks, with connect_four's raw env as the scale (not a
test): ``python -m experiments.train.selfplay.bench``.

Each round runs, one after another in fresh processes, the connect_four_v3 raw env (``experiments.bench``'s
reference, random legal play) and ``python -m experiments.train.selfplay ... --bench`` for every (game, net) asked;
rounds repeat ``--repeats`` times (interleaved, so a change of the machine's load hits every line alike). Prints
each run's line, then the medians (end to end, and after each run's first iteration, which holds the start-up: a Ray
cluster's, the compiling), the ratio to the reference and the load averages before and after.

    python -m experiments.train.selfplay.bench --repeats 3 --steps 100000
    python -m experiments.train.selfplay.bench --configs base:5 sab2:6 duel:2 --nets mlp compact
    python -m experiments.train.selfplay.bench --configs base:5 --nets compact \
        --extra "--shards 2 --backend ray --workers 1" --extra "--shards 2 --backend ray --workers 2"

Each ``--extra`` is one more variant of every (game, net) line, run in the same rounds (the Ray variants start a
local cluster of ``--workers`` CPUs inside the trainer; its start-up counts in the end-to-end rate and not in the
rate after the first iteration).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np


def _trainer(game: str, players: int, net: str, steps: int, extra: list[str]) -> tuple[float, float]:
    """The run's decisions/s end to end and after its first iteration (start-up: a Ray cluster, compiling)."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "experiments.train.selfplay", "--game", game, "--players", str(players),
               "--num-envs", "256", "--steps", str(steps), "--net", net, "--out", out, "--bench", "--no-tensorboard",
               "--log-every", "1000", *extra]  # fmt: skip
        res = subprocess.run(cmd, capture_output=True, text=True, check=True)
    line = next(ln for ln in res.stdout.splitlines() if "rate=" in ln)
    print(f"  {net:8s} {' '.join(extra)} {line}", flush=True)
    m = re.search(r"rate=([\d,]+) decisions/s", line)
    st = re.search(r"steady=([\d,]+|nan) decisions/s", line)
    assert m is not None and st is not None
    return float(m.group(1).replace(",", "")), float(st.group(1).replace(",", ""))


def _reference(games: int) -> float:
    code = ("from experiments.bench.run import bench_connect_four; "
            f"print(bench_connect_four({games}, 0)[0])")  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rate = float(res.stdout.split()[-1])
    print(f"  connect_four raw env {rate:,.0f} decisions/s", flush=True)
    return rate


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.train.selfplay.bench", description=__doc__.splitlines()[0])
    p.add_argument("--configs", nargs="+", default=["base:5", "sab2:6", "duel:2"], help="GAME:PLAYERS")
    p.add_argument("--nets", nargs="+", default=["mlp", "compact"])
    p.add_argument("--steps", type=int, default=100_000, help="learner decisions per trainer run")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--games", type=int, default=200, help="connect_four games per reference run")
    p.add_argument("--extra", action="append", default=None,
                   help="more trainer options, e.g. '--epochs 1'; repeat to compare variants (default: none)")
    a = p.parse_args(argv)
    load0 = os.getloadavg()
    rates: dict[str, list[tuple[float, float]]] = {}
    ref: list[float] = []
    extras = a.extra or [""]
    for r in range(a.repeats):
        print(f"round {r + 1}/{a.repeats} (load {os.getloadavg()[0]:.2f})", flush=True)
        ref.append(_reference(a.games))
        for cfg in a.configs:
            game, players = cfg.split(":")
            for net in a.nets:
                # alternate the variants' order between rounds: a drifting load hits every variant alike
                for extra in extras if r % 2 == 0 else extras[::-1]:
                    key = f"{game} {players}p {net}" + (f" {extra}" if extra else "")
                    rates.setdefault(key, []).append(_trainer(game, int(players), net, a.steps, extra.split()))
    ref_m = float(np.median(ref))
    print(
        f"\nmedians of {a.repeats} (load averages 1/5/15 min: before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, "
        f"after {' '.join(f'{x:.2f}' for x in os.getloadavg())})"
    )
    print(f"connect_four raw env: {ref_m:,.0f} decisions/s")
    for key, v in rates.items():
        m, steady = float(np.median([x[0] for x in v])), float(np.median([x[1] for x in v]))
        print(f"{key:22s} {m:9,.0f} decisions/s  = {m / ref_m:5.2f} x connect_four  (runs: "
              f"{', '.join(f'{x[0]:,.0f}' for x in v)}); after the first iteration {steady:,.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
