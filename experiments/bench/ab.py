"""A/B speed comparison of two revisions with ``experiments.bench`` (not a test).

    python -m experiments.bench.ab --old e561ee6                       # base game, 4 players
    python -m experiments.bench.ab --old e561ee6 --game sab2 --players 6 --rounds 5

Checks out ``--old`` (and ``--new``, default: the working tree) into temporary git worktrees, then runs
``python -m experiments.bench`` of each revision in its own interpreter, interleaved (A B A B ...), and prints the
median decisions/s of every target per revision and the ratio new/old. Interleaving spreads the noise of a shared
machine evenly over both revisions.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from experiments.bench.run import GAMES, check_counts, check_players

ROOT = Path(__file__).resolve().parents[2]
LINE = re.compile(r"^(engine|raw_env|env\(\))\s+(\S+)\s+([\d,]+)\s")


def _is_revision(rev: str) -> bool:
    """Whether ``rev`` names a commit of this checkout."""
    if rev.startswith("-"):  # never an option to git
        return False
    try:
        probe = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                               capture_output=True, check=False)  # fmt: skip
    except OSError:  # no git
        return False
    return probe.returncode == 0


def _worktree(rev: str, into: Path) -> Path:
    path = into / rev.replace("/", "_")
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(path), rev],
                   check=True, capture_output=True)  # fmt: skip
    return path


def _run(tree: Path, args: list[str]) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(tree))
    out = subprocess.run([sys.executable, "-m", "experiments.bench", *args], cwd=tree, env=env, check=True,
                         capture_output=True, text=True).stdout  # fmt: skip
    rates = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if m:
            rates[f"{m.group(1)} {m.group(2)}"] = float(m.group(3).replace(",", ""))
    if not rates:
        raise RuntimeError(f"no benchmark lines in the output of {tree}:\n{out}")
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--old", required=True, help="git revision A")
    parser.add_argument("--new", default=None, help="git revision B (default: the working tree)")
    parser.add_argument("--game", choices=GAMES, default="base")
    parser.add_argument("--players", type=int, nargs="+", default=[4], help="player counts (the duel: ignored)")
    parser.add_argument("--games", type=int, default=40, help="games per measurement")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved A B rounds")
    args = parser.parse_args(argv)
    check_counts(parser, args, "games", "rounds")
    if args.game != "duel":
        check_players(parser, args.game, args.players)
    for flag in ("old", "new"):
        rev = getattr(args, flag)
        if rev is not None and not _is_revision(rev):
            parser.error(f"--{flag} {rev!r} is not a commit of {ROOT}")
    bench_args = ["--game", args.game, "--games", str(args.games), "--repeats", "1"]
    if args.game != "duel":
        bench_args += ["--players", *map(str, args.players)]
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"old": _worktree(args.old, Path(tmp))}
        trees["new"] = _worktree(args.new, Path(tmp)) if args.new else ROOT
        try:
            samples: dict[str, dict[str, list[float]]] = {"old": {}, "new": {}}
            for _ in range(args.rounds):
                for side in ("old", "new"):
                    for key, rate in _run(trees[side], bench_args).items():
                        samples[side].setdefault(key, []).append(rate)
        finally:
            for tree in trees.values():
                if tree != ROOT:
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)],
                                   check=False, capture_output=True)  # fmt: skip
    print(f"{args.game}: old={args.old} new={args.new or 'working tree'}, {args.rounds} interleaved rounds of "
          f"{args.games} games (median decisions/s)")
    print(f"{'target':<22} {'old':>10} {'new':>10} {'new/old':>8}")
    for key in samples["old"]:
        old, new = statistics.median(samples["old"][key]), statistics.median(samples["new"][key])
        print(f"{key:<22} {old:>10,.0f} {new:>10,.0f} {new / old:>8.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
