"""What an inserted seat does, by its role (issue 14): ``python -m experiments.train.behaviour RUNS [RUNS ...]``.

Reads base-game tournament logs written with ``--insert`` (``experiments.tournament``) and counts, for each cell's
inserted seat and each role it was dealt, its moves per round it played in that role: paths placed (and how
many of them dead ends), tools broken (on whom: a seat of its own team or of the other), tools repaired,
rockfalls, maps and discards. Paired with the same table for ``heuristic`` in that seat (same seeds), it shows
whether a learned policy plays its role: a saboteur that blocks, breaks diggers' tools and drops rockfalls,
a digger that builds and repairs.

Only public moves are counted, with the roles from the log's header (the evaluation knows them; the agents do
not).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Iterable

from experiments.tournament.logs.read import read_rounds
from saboteur_env.common.cards import BASE_PATH_CARDS

DEAD_ENDS = frozenset(s.code for s in BASE_PATH_CARDS if s.dead_end)  # T08-T16, from the card data
COLUMNS = ("rounds", "moves", "place", "dead_end", "break_other_team", "break_own_team", "repair", "rockfall",
           "map", "discard")  # fmt: skip
ROLES = ("gold-digger", "saboteur")


def count(rounds: Iterable[dict]) -> dict[tuple[int, str, str, str, int], Counter[str]]:
    """``(players, miners, saboteurs, insert, role) -> counts`` over the inserted seat's rounds."""
    out: dict[tuple[int, str, str, str, int], Counter[str]] = {}
    for r in rounds:
        h = r["header"]
        if not h.get("insert") or h.get("game", "base") != "base":
            continue
        seat, roles = h["insert_seat"], h["roles"]
        role = roles[seat]
        c = out.setdefault((h["players"], h["miners"], h["saboteurs"], h["insert"], role), Counter())
        c["rounds"] += 1
        for e in r["events"]:
            if e.get("actor") != seat or e["type"] in ("round_end", "reveal"):
                continue
            c["moves"] += 1
            t = e["type"]
            if t == "place":
                c["place"] += 1
                c["dead_end"] += e.get("kind") in DEAD_ENDS
            elif t == "break":
                c["break_own_team" if roles[e["target"]] == role else "break_other_team"] += 1
            elif t in ("repair", "rockfall", "map", "discard"):
                c[t] += 1
    return out


def table(counts: dict[tuple[int, str, str, str, int], Counter[str]]) -> str:
    """Markdown: one row per (cell, inserted agent, role); moves per round in that role."""
    head = "| players | table | seat played by | role | rounds | " + " | ".join(COLUMNS[1:]) + " |"
    lines = [head, "|---" * (5 + len(COLUMNS) - 1) + "|"]
    for (n, m, s, ins, role), c in sorted(counts.items()):
        k = max(c["rounds"], 1)
        vals = " | ".join(f"{c[col] / k:.2f}" for col in COLUMNS[1:])
        lines.append(f"| {n} | {m}/{s} | {ins} | {ROLES[role]} | {c['rounds']} | {vals} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m experiments.train.behaviour", description=__doc__.splitlines()[0])
    p.add_argument("runs", nargs="+", help="tournament output folders (rounds.jsonl.gz) with --insert cells")
    ns = p.parse_args(argv)
    counts: dict[tuple[int, str, str, str, int], Counter[str]] = {}
    try:
        for run in ns.runs:
            for k, v in count(read_rounds(run)).items():
                counts.setdefault(k, Counter()).update(v)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if not counts:
        print(f"error: no base-game rounds with an inserted seat in {', '.join(ns.runs)}", file=sys.stderr)
        return 2
    print("Moves per round by the inserted seat, by the role it was dealt:\n")
    print(table(counts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
