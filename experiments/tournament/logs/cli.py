"""python -m experiments.tournament.logs verify | merge | repair: re-play logged games, merge logs, keep every intact
game."""

from __future__ import annotations

import argparse
import random
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from experiments.tournament.logs.format import (
    LOG_NAME,
    LogError,
    describe,
    game_key,
    log_path,
)
from experiments.tournament.logs.read import LogReader, cli_warnings
from experiments.tournament.logs.write import merge, repair


# ---- verify, merge, repair ------------------------------------------------------------------------------------------
def verify(
    paths: str | Path | Sequence[str | Path],
    sample: int | None = None,
    seed: int = 0,
    full: bool = False,
    progress: Callable[[str], None] | None = None,
) -> tuple[int, int, list[str]]:
    """Re-play the logged games (all, or a random ``sample`` of them) and compare them with the log.

    Returns (games in the log, games re-played, mismatch messages naming the file, record and first difference).
    ``full`` re-runs the agents from the seed as well and compares whole records (belief snapshots included).
    """
    from experiments.tournament.tasks import replay_records

    reader = LogReader(paths)
    chosen: Iterable[tuple[Path, int, list[dict]]]
    if sample is None:
        chosen = reader.numbered_games()
    else:  # reservoir sample: one pass, ``sample`` games in memory
        rng = random.Random(seed)
        kept: list[tuple[Path, int, list[dict]]] = []
        for i, item in enumerate(reader.numbered_games()):
            if len(kept) < sample:
                kept.append(item)
            elif (j := rng.randrange(i + 1)) < sample:
                kept[j] = item
        chosen = sorted(kept, key=lambda x: (str(x[0]), x[1]))
    problems, count = [], 0
    for path, line, records in chosen:
        count += 1
        try:
            replay_records(records, full=full)
        except AssertionError as err:
            problems.append(f"{path}, record {line}: {describe(game_key(records[0]['header']))}: {err}")
        if progress and count % 100 == 0:
            progress(f"{count} games re-played, {len(problems)} mismatches")
    return reader.stats.games, count, problems


def _mismatch_kind(message: str) -> str:
    """What differed, without the numbers: ``header.rules_version``, ``end.winner``, ``events[].kind``..."""
    detail = message.rsplit(": round ", 1)[-1]
    match = re.search(r"(header|events|end|record)[\w.\[\]]*(?=:)", detail)
    what = match.group(0) if match else re.sub(r"\d+", "N", detail.split(":", 1)[-1].strip())[:60]
    return re.sub(r"\[\d+\]", "[]", what)


def _existing_log(parser: argparse.ArgumentParser, value: Path) -> Path:
    path = log_path(value)
    if not path.is_file():
        parser.error(f"{value}: no log there (a tournament run with --out DIR writes DIR/{LOG_NAME})")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments.tournament.logs", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("verify", help="re-play logged games and report every mismatch with the log")
    p.add_argument("log", type=Path, nargs="+", help="log directories (or rounds.jsonl.gz files)")
    p.add_argument("--sample", type=int, default=None, metavar="K", help="re-play K random games (default: all)")
    p.add_argument("--seed", type=int, default=0, help="seed of the sample")
    p.add_argument("--full", action="store_true", help="also re-run the agents and compare whole records")
    p.add_argument("--show", type=int, default=20, metavar="N", help="mismatches listed in full (default 20)")
    p = sub.add_parser("merge", help="append the games of several logs to one (duplicates once)")
    p.add_argument("out", type=Path, help="output log directory (created if needed)")
    p.add_argument("inputs", type=Path, nargs="+", help="input log directories or files")
    p = sub.add_parser("repair", help="keep every intact game of a damaged log (the original is kept aside)")
    p.add_argument("log", type=Path, help="log directory")
    args = parser.parse_args(argv)
    with cli_warnings():
        try:
            if args.command == "verify":
                if args.sample is not None and args.sample < 1:
                    parser.error("--sample must be at least 1")
                if args.show < 0:
                    parser.error("--show must be at least 0")
                paths = [_existing_log(parser, p) for p in args.log]
                total, played, problems = verify(paths, args.sample, args.seed, args.full,
                                                 progress=lambda s: print(s, file=sys.stderr))  # fmt: skip
                for line in problems[: args.show]:
                    print(f"MISMATCH {line}")
                if len(problems) > args.show:
                    print(f"... and {len(problems) - args.show} more mismatches (--show N lists more)")
                kinds: dict[str, int] = {}
                for line in problems:
                    kinds[_mismatch_kind(line)] = kinds.get(_mismatch_kind(line), 0) + 1
                for kind, n in sorted(kinds.items(), key=lambda x: -x[1]):
                    print(f"  {n} x {kind}")
                print(f"verified {played} of {total} games: {len(problems)} mismatches")
                return 1 if problems else 0
            if args.command == "merge":
                inputs = [_existing_log(parser, p) for p in args.inputs]
                if (args.out / LOG_NAME).resolve() in {p.resolve() for p in inputs}:
                    parser.error("the output must not be one of the inputs")
                if args.out.exists() and not args.out.is_dir():
                    parser.error(f"{args.out} is a file; give a log directory")
                added, skipped = merge(args.out, inputs)
                print(f"{log_path(args.out)}: {added} games added, {skipped} already there")
                return 0
            _existing_log(parser, args.log)
            print(repair(args.log))
            return 0
        except LogError as err:
            parser.exit(2, f"error: {err}\n")
    return 0  # pragma: no cover
