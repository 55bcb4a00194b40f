"""The learner's talk over a claims run (``experiments.train.selfplay --claims``), from its ``progress.csv``.

    python -m experiments.train.selfplay.talk runs/talker5/progress.csv --windows 8
    python -m experiments.train.selfplay.talk runs/talker6s/progress.csv --roles blue_gold_digger,saboteur

Prints one Markdown row per window of iterations (equal numbers of rows): the decisions at the window's start, per
role of the run (Saboteur 2's six, or those of ``--roles``) the claims per decision and the lies per claim about a
known fact (means of the iterations' rates), each role's claims by kind (shares of its claims in the window), and the
round win rates. Rows of a run without claims, or a file that is not a progress file, are a clear error.
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from pathlib import Path

KINDS = ("goal", "accuse", "clear", "suspect")
PREFIX = "claims_per_decision_"


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


def table(rows: list[dict[str, str]], windows: int, roles: list[str] | None = None) -> str:
    """The Markdown table of ``rows`` (``progress.csv`` dicts, in order; :func:`last_run`) in ``windows``
    windows, for ``roles`` (default: every role of the run, in its columns' order)."""
    rows = last_run(rows) if rows and "iteration" in rows[0] else rows
    found = [k[len(PREFIX) :] for k in (rows[0] if rows else {}) if k.startswith(PREFIX)]
    if not found:
        raise ValueError(f"not the progress.csv of a run with --claims (no {PREFIX}ROLE column)")
    bad = [r for r in roles or [] if r not in found]
    if bad:
        raise ValueError(f"roles {bad} are not in this run; valid: {', '.join(found)}")
    shown = roles or found
    if not 1 <= windows <= len(rows):
        raise ValueError(f"windows={windows} is out of range; valid: 1..{len(rows)} (the rows of the file)")
    head = ["decisions"]
    head += [f"claims/decision {r}" for r in shown] + [f"lie rate {r}" for r in shown]
    head += [f"{r} claims: " + " / ".join(KINDS) for r in shown] + [f"win {r}" for r in shown]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    n = len(rows)
    for w in range(windows):
        part = rows[w * n // windows : (w + 1) * n // windows]
        cells = [f"{int(float(part[0]['decisions'])):,}"]
        cells += [f"{_mean(part, f'claims_per_decision_{r}'):.3f}" for r in shown]
        cells += [f"{_mean(part, f'lie_rate_{r}'):.2f}" for r in shown]
        for r in shown:
            counts = [sum(float(x[f"{k}_claims_{r}"]) for x in part) for k in KINDS]
            total = sum(counts) or 1.0
            cells.append(" / ".join(f"{c / total:.0%}" for c in counts))
        cells += [f"{_mean(part, f'win_{r}'):.3f}" for r in shown]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.train.selfplay.talk", description=__doc__.splitlines()[0])
    ap.add_argument("progress", type=Path, help="the run's progress.csv")
    ap.add_argument("--windows", type=int, default=8, help="windows of iterations (default 8)")
    ap.add_argument("--roles", default="", help="comma-separated roles to show (default: every role of the run)")
    args = ap.parse_args(argv)
    try:
        with args.progress.open(newline="") as fh:
            rows = list(csv.DictReader(fh))
        print(table(rows, args.windows, [r for r in args.roles.split(",") if r] or None))
    except (OSError, ValueError, KeyError) as err:
        print(f"error: {args.progress}: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
