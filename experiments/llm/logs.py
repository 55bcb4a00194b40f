"""What the ``llm`` seats of tournament or benchmark logs did: ``python -m experiments.llm.logs LOG [LOG ...]``.

A LOG is a tournament log file or folder (``rounds.jsonl.gz``; the bluffing benchmark writes one per arm under
``--out``). Every game's last round carries ``agent_logs`` (seat -> the ``log_record()`` of each llm agent in it:
``experiments.tournament.loop``); this prints one Markdown row per LOG from the transcripts: games with an llm seat,
llm decisions, the share that did not fall back (valid) and that the first reply named (first try), failures by
kind, fallbacks, requests by constraint, the longest prompt in tokens and the seconds per decision (median, p95).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from agents.files import write_atomic
from experiments.tournament.logs.read import cli_warnings, read_games
from experiments.tournament.loop import agent_logs


def save_transcripts(path: Path, agents: dict[int, Any], header: dict[str, Any]) -> bool:
    """The log records of the llm agents among ``agents`` (seat -> agent; ``agents.llm.LLMAgent.log_record``: every
    prompt and reply, failures, fallbacks, token counts) under ``"agent_logs"`` (seat -> records, as a tournament log
    has them) with ``header``, written atomically to ``path`` (terminal play, the web table); False (nothing written)
    without llm agents."""
    seats = {str(q): found for q, a in agents.items() if (found := agent_logs(a))}
    if not seats:
        return False
    data = (json.dumps({**header, "agent_logs": seats}, indent=1) + "\n").encode()
    write_atomic(Path(path), lambda fh: fh.write(data))
    return True


def summary(path: str | Path) -> dict[str, Any]:
    """The counts of one log's llm transcripts (module docstring)."""
    games = decisions = valid = first = 0
    kinds: Counter[str] = Counter()
    sent: Counter[str] = Counter()
    seconds: list[float] = []
    longest = 0
    for game in read_games(path):
        logs = [lg for rnd in game for seat in (rnd.get("agent_logs") or {}).values() for lg in seat]
        if not logs:
            continue
        games += 1
        for lg in logs:
            longest = max(longest, int(lg.get("usage", {}).get("max_prompt_tokens", 0)))
            for entry in lg.get("transcript", []):
                decisions += 1
                tries = entry.get("tries", [])
                fell = any("fallback" in t for t in tries)
                valid += not fell
                first += bool(tries) and bool(tries[0].get("ok"))
                kinds.update(t["kind"] for t in tries if t.get("ok") is False and t.get("kind"))
                sent.update(str(t.get("constraint")) for t in tries if "try" in t)
                seconds.append(float(entry.get("seconds", 0.0)))
    return {"games": games, "decisions": decisions, "valid": valid, "first_try": first, "failures": dict(kinds),
            "fallbacks": decisions - valid, "sent": dict(sent), "max_prompt_tokens": longest,
            "seconds_median": float(np.median(seconds)) if seconds else float("nan"),
            "seconds_p95": float(np.percentile(seconds, 95)) if seconds else float("nan")}  # fmt: skip


def table(rows: dict[str, dict[str, Any]]) -> str:
    head = ["log", "games", "llm decisions", "valid", "first try", "failures", "fallbacks", "requests by constraint",
            "longest prompt (tokens)", "s / decision: median, p95"]  # fmt: skip
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, s in rows.items():
        n = max(s["decisions"], 1)
        fails = ", ".join(f"{k} {v}" for k, v in sorted(s["failures"].items())) or "none"
        sent = ", ".join(f"{k} {v}" for k, v in sorted(s["sent"].items())) or "-"
        out.append(f"| {name} | {s['games']} | {s['decisions']} | {100 * s['valid'] / n:.1f}% | "
                   f"{100 * s['first_try'] / n:.1f}% | {fails} | {s['fallbacks']} | {sent} | "
                   f"{s['max_prompt_tokens']} | {s['seconds_median']:.2f}, {s['seconds_p95']:.2f} |")  # fmt: skip
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m experiments.llm.logs", description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+", type=Path, metavar="LOG", help="tournament log files or folders")
    args = ap.parse_args(argv)
    rows = {}
    for path in args.logs:
        if not path.exists():
            ap.error(f"{path} does not exist")
        try:
            with cli_warnings():
                rows[str(path)] = summary(path)
        except (OSError, ValueError) as err:
            print(f"error: {path}: {err}", file=sys.stderr)
            return 2
    print(table(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
