"""The learner's talk over a claims run (``experiments.train.selfplay --claims``), from its ``progress.csv``.

    python -m experiments.train.selfplay.talk runs/talker5/progress.csv --windows 8

Prints one Markdown row per window of iterations (equal numbers of rows): the decisions at the window's start, per
role the claims per decision and the lies per claim about a known fact (means of the iterations' rates), each
role's claims by kind (shares of its claims in the window), and the round win rates. Rows of a run without claims,
or a file that is not a progress file, are a clear error.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

KINDS = ("goal", "accuse", "clear", "suspect")
ROLES = ("miner", "saboteur")


def _mean(rows: list[dict[str, str]], key: str) -> float:
    vals = [float(r[key]) for r in rows if r.get(key, "nan") not in ("", "nan")]
    vals = [v for v in vals if not math.isnan(v)]
    return sum(vals) / len(vals) if vals else math.nan


def last_run(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """The rows after the last place the iteration goes down (a run started afresh in the same folder while an
    earlier one still wrote its last row)."""
    start = 0
    for i in range(1, len(rows)):
        if int(rows[i]["iteration"]) <= int(rows[i - 1]["iteration"]):
            start = i
    return rows[start:]


def table(rows: list[dict[str, str]], windows: int) -> str:
    """The Markdown table of ``rows`` (``progress.csv`` dicts, in order; :func:`last_run`) in ``windows``
    windows."""
    rows = last_run(rows) if rows and "iteration" in rows[0] else rows
    if not rows or "claims_per_decision_miner" not in rows[0]:
        raise ValueError("not the progress.csv of a run with --claims (no claims_per_decision_miner column)")
    if not 1 <= windows <= len(rows):
        raise ValueError(f"windows={windows} is out of range; valid: 1..{len(rows)} (the rows of the file)")
    head = ["decisions"]
    head += [f"claims/decision {r}" for r in ROLES] + [f"lie rate {r}" for r in ROLES]
    head += [f"{r} claims: " + " / ".join(KINDS) for r in ROLES] + [f"win {r}" for r in ROLES]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    n = len(rows)
    for w in range(windows):
        part = rows[w * n // windows : (w + 1) * n // windows]
        cells = [f"{int(float(part[0]['decisions'])):,}"]
        cells += [f"{_mean(part, f'claims_per_decision_{r}'):.3f}" for r in ROLES]
        cells += [f"{_mean(part, f'lie_rate_{r}'):.2f}" for r in ROLES]
        for r in ROLES:
            counts = [sum(float(x[f"{k}_claims_{r}"]) for x in part) for k in KINDS]
            total = sum(counts) or 1.0
            cells.append(" / ".join(f"{c / total:.0%}" for c in counts))
        cells += [f"{_mean(part, f'win_{r}'):.3f}" for r in ROLES]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.train.selfplay.talk", description=__doc__.splitlines()[0])
    ap.add_argument("progress", type=Path, help="the run's progress.csv")
    ap.add_argument("--windows", type=int, default=8, help="windows of iterations (default 8)")
    args = ap.parse_args(argv)
    try:
        with args.progress.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        print(table(rows, args.windows))
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {args.progress}: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
