"""Learning curves of self-play runs side by side, from their ``progress.csv`` (docs/selfplay.md, issue 37).

    python -m experiments.train.selfplay.curve runs/curve_mlp/progress.csv runs/curve_compact/progress.csv \
        --names mlp compact --window 250000

Prints two Markdown tables: the ladder checks (``eval_diff`` with its 95% interval, one column per check; the mean
of each run's checks at the end), and per window of ``--window`` decisions the means over its iterations of the
learner's return and round win rates by role. Only a run's last start in its folder counts (``talk.last_run``).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

from experiments.train.selfplay.talk import _mean, last_run


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        rows = last_run(list(csv.DictReader(fh)))
    if not rows or "eval_diff" not in rows[0] or "decisions" not in rows[0]:
        raise ValueError(f"{path}: not a self-play progress.csv (no decisions / eval_diff columns)")
    return rows


def _checks(rows: list[dict[str, str]]) -> list[tuple[int, float, float, float]]:
    out = []
    for r in rows:
        if r.get("eval_diff", "") not in ("", "nan"):
            out.append((int(float(r["decisions"])), float(r["eval_diff"]), float(r["eval_lo"]), float(r["eval_hi"])))
    return out


def tables(runs: dict[str, list[dict[str, str]]], window: int) -> str:
    """The two tables (module docstring) of ``runs`` (name -> progress rows)."""
    if window < 1:
        raise ValueError(f"window={window} is out of range; valid: >= 1 decisions")
    checks = {name: {d: (m, lo, hi) for d, m, lo, hi in _checks(rows)} for name, rows in runs.items()}
    at = sorted({d for cs in checks.values() for d in cs})  # a column per decision count any run checked at
    if not at:
        raise ValueError("no ladder check in any run (train with --eval-every)")
    head = ["decisions"] + [f"{d / 1e6:.2f}M" for d in at] + ["mean of the checks"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, cs in checks.items():
        cells = [f"{cs[d][0]:+.2f} [{cs[d][1]:+.2f}, {cs[d][2]:+.2f}]" if d in cs else "-" for d in at]
        mean = sum(m for m, _, _ in cs.values()) / len(cs) if cs else math.nan
        out.append("| " + " | ".join([name, *cells, f"{mean:+.2f}"]) + " |")
    last = max(int(float(rows[-1]["decisions"])) for rows in runs.values())
    head = ["window"] + [f"{name} {col}" for name in runs for col in ("return", "win miner / saboteur")]
    out += ["", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for lo in range(0, last, window):
        cells = [f"{lo / 1e6:.2f}-{(lo + window) / 1e6:.2f}M"]
        for rows in runs.values():
            part = [r for r in rows if lo < int(float(r["decisions"])) <= lo + window]
            cells += [f"{_mean(part, 'return_mean'):.2f}",
                      f"{_mean(part, 'win_miner'):.3f} / {_mean(part, 'win_saboteur'):.3f}"]  # fmt: skip
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.train.selfplay.curve", description=__doc__.splitlines()[0])
    ap.add_argument("progress", type=Path, nargs="+", help="progress.csv files, one per run")
    ap.add_argument("--names", nargs="+", default=None, help="a name per run (default: the run's folder)")
    ap.add_argument("--window", type=int, default=250_000, help="decisions per window (default 250,000)")
    args = ap.parse_args(argv)
    names = args.names or [p.parent.name for p in args.progress]
    if len(names) != len(args.progress):
        ap.error(f"--names gives {len(names)} names for {len(args.progress)} files")
    try:
        print(tables({n: _read(p) for n, p in zip(names, args.progress, strict=True)}, args.window))
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
