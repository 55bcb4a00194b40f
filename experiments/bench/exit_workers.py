"""Expert iteration's collection on Ray actors, 1 against K (issue 37): ``python -m experiments.bench.exit_workers``.

Starts a local Ray cluster of ``--cpus`` CPUs once, then in ``--rounds`` interleaved rounds collects iteration 1 of
a tiny run (``experiments.train.exit``: ``search:BUDGET`` in every seat, ``--chunk`` decisions a chunk) into a
fresh folder with each worker count, and prints per run the wall time (actor start-up included, the cluster's
not), the decisions per second, and a hash of the chunks (the same for every worker count, or the command fails);
then the medians and the speed-up, with the load average before and after (other work on the machine shares it).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
                             cwd=Path(__file__).resolve().parent)  # fmt: skip
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.bench.exit_workers", description=__doc__.splitlines()[0])
    p.add_argument("--players", type=int, default=3)
    p.add_argument("--decisions", type=int, default=240, help="decisions per run (default: 240)")
    p.add_argument("--chunk", type=int, default=20, help="decisions per chunk (default: 20)")
    p.add_argument("--budget", type=int, default=8, help="rollouts per searched move (default: 8)")
    p.add_argument("--workers", default="1,2", help="worker counts to compare (default: 1,2)")
    p.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default: 3)")
    p.add_argument("--cpus", type=int, default=2, help="the local cluster's CPUs (default: 2)")
    args = p.parse_args(argv)
    counts = [int(w) for w in args.workers.split(",")]
    if not counts or min(counts) < 1 or max(counts) > args.cpus:
        raise SystemExit(f"--workers {args.workers!r}: each count must be in 1..--cpus={args.cpus}")

    from experiments._optional import require
    from experiments.train import exit as ex

    ray = require("ray", "ray", "this benchmark")
    load0 = os.getloadavg()
    print(f"commit {_commit()}, {os.cpu_count()} cores, load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}; "
          f"base {args.players} players, search:{args.budget}, {args.decisions} decisions in chunks of {args.chunk}",
          flush=True)  # fmt: skip
    ray.init(address="local", num_cpus=args.cpus, include_dashboard=False, log_to_driver=False)
    rates: dict[int, list[float]] = {k: [] for k in counts}
    hashes: set[str] = set()
    try:
        with tempfile.TemporaryDirectory(prefix="exit-workers-") as tmp:
            for r in range(args.rounds):
                for k in counts if r % 2 == 0 else counts[::-1]:  # alternate the order: drifting load hits both
                    out = Path(tmp) / f"r{r}-w{k}"
                    opt = ex.Options(players=args.players, iterations=1, decisions=args.decisions, chunk=args.chunk,
                                     budget=args.budget, num_envs=1, seed=0, backend="ray", workers=k,
                                     out=str(out))  # fmt: skip
                    t0 = time.perf_counter()
                    data = ex.ExitRun(opt, quiet=True).collect(1)
                    wall = time.perf_counter() - t0
                    h = hashlib.sha256()
                    for path in sorted((out / "it1").glob("chunk*.npz")):
                        h.update(path.read_bytes())
                    hashes.add(h.hexdigest()[:12])
                    rates[k].append(len(data) / wall)
                    print(f"round {r}  workers {k}: {len(data):,} decisions in {wall:.1f} s = "
                          f"{len(data) / wall:.1f} decisions/s  chunks {h.hexdigest()[:12]}  "
                          f"load {os.getloadavg()[0]:.2f}", flush=True)  # fmt: skip
    finally:
        ray.shutdown()
    if len(hashes) != 1:
        raise SystemExit(f"the chunks differ between runs: {sorted(hashes)}")
    load1 = os.getloadavg()
    base = statistics.median(rates[counts[0]])
    for k in counts:
        med = statistics.median(rates[k])
        print(f"workers {k}: median {med:.1f} decisions/s over {len(rates[k])} runs ({med / base:.2f}x workers "
              f"{counts[0]})")  # fmt: skip
    print(f"load average after: {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}; the chunks were identical in every run")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
