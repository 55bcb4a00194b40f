"""Balance table of the base game for agent line-ups: how often the gold is reached, by player count.

Usage::

    python -m experiments.analysis.balance --lineups expert heuristic --players 3 4 5 6 7 8 9 10 --games 100 --workers 2

A line-up is an agent name playing every seat (``expert``: ``planner`` as a gold-digger, ``blocker`` as a
saboteur) or ``MINERS/SABOTEURS`` (``suspicious/covert``). Game ``g`` of every line-up and player count uses seed
``seed + g`` (duplicate deals: the same decks, roles and goals for every line-up, so line-ups compare in pairs), and
the agents' seeds are sealed from ``--secret`` (fixed by default, so a run is reproducible) as in
:mod:`experiments.tournament`, whose game loop plays here.

Columns, per (players, line-up), over all rounds of all games (3 rounds a game):

* ``gold %``: rounds in which the gold was reached (the gold-diggers won the round);
* ``miners win % (contested)``: the same over rounds with at least one saboteur dealt (with 3-4 players the
  left-over card can leave nobody a saboteur, and those rounds are trivial);
* ``decisions``: mean decisions per round (long rounds: nobody could finish);
* intervals are 95% percentile bootstraps over games (rounds of one game are not independent);
* ``paired diff``: first line-up minus each other line-up in the per-game share of rounds with gold reached, on
  the shared seeds, with a bootstrap interval.

``--behaviour`` adds the gold-diggers' habits that the issue audit named: passage cards (no dead end) and break
cards discarded per round, maps per round and the share that re-peek a goal another digger mapped that round,
and the share of breaks / repairs on other seats that hit a saboteur.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field

from experiments.tournament.rounds import format_secret, parse_secret
from experiments.tournament.run import run
from experiments.tournament.stats import bootstrap_ratio, paired_difference

DEFAULT_SECRET = 0x5AB07E0B_A1A9CE00_0000_0000_0000_0015  # fixed: the documented tables re-run exactly


@dataclass
class Cell:
    """Per-game totals of one (players, line-up) cell, keyed by seed."""

    rounds: dict[int, int] = field(default_factory=dict)
    gold: dict[int, int] = field(default_factory=dict)
    contested: dict[int, int] = field(default_factory=dict)
    contested_gold: dict[int, int] = field(default_factory=dict)
    decisions: dict[int, int] = field(default_factory=dict)
    behaviour: dict[str, int] = field(default_factory=lambda: defaultdict(int))  # summed over games

    def add(self, records: list[dict]) -> None:
        seed = records[0]["header"]["seed"]
        self.rounds[seed] = len(records)
        gold = [r["end"]["winner"] == "gold-diggers" for r in records]
        live = [any(r["header"]["roles"]) for r in records]
        self.gold[seed] = sum(gold)
        self.contested[seed] = sum(live)
        self.contested_gold[seed] = sum(g and c for g, c in zip(gold, live, strict=True))
        self.decisions[seed] = sum(r["end"]["decisions"] for r in records)
        for r in records:
            self._behaviour(r)

    def _behaviour(self, record: dict) -> None:
        """Gold-diggers' habits the issue audit named (counts over the round; uses the logged private parts)."""
        roles = record["header"]["roles"]
        b = self.behaviour
        peeked_by_digger: set[int] = set()
        for ev in record["events"]:
            actor, etype = ev["actor"], ev["type"]
            if roles[actor]:  # a saboteur's move
                continue
            if etype == "map":
                b["maps"] += 1
                b["re-peeks"] += ev["arg"] in peeked_by_digger
                peeked_by_digger.add(ev["arg"])
            elif etype == "discard":
                kind = ev["private"]["kind"]
                b["discards"] += 1
                b["path discards"] += kind in _PASSAGES
                b["break discards"] += kind.startswith("BROKEN_")
            elif etype in ("break", "repair") and ev.get("target", actor) != actor:
                b[f"{etype}s"] += 1
                b[f"{etype}s of saboteurs"] += roles[ev["target"]]

    def rate(self, num: dict[int, int], den: dict[int, int]) -> tuple[float, float, float]:
        seeds = sorted(den)
        return bootstrap_ratio([num[s] for s in seeds], [den[s] for s in seeds])

    def share(self) -> dict[int, float]:
        return {s: self.gold[s] / self.rounds[s] for s in self.rounds}


_PASSAGES = frozenset(f"T0{i}" for i in range(1, 8))  # path cards that are no dead end


def parse_lineup(text: str) -> tuple[str, str]:
    miners, _, saboteurs = text.partition("/")
    return miners, saboteurs or miners


def _pct(ci: tuple[float, float, float]) -> str:
    point, lo, hi = ci
    return f"{100 * point:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def balance(
    lineups: list[str], players: list[int], games: int, seed: int = 0, workers: int = 1, secret: int = DEFAULT_SECRET
) -> dict[tuple[int, str], Cell]:
    cells: dict[tuple[int, str], Cell] = defaultdict(Cell)
    for lineup in lineups:
        miners, saboteurs = parse_lineup(lineup)
        start = time.perf_counter()
        for records in run(players, [miners], [saboteurs], games, seed=seed, workers=workers, beliefs=False,
                           secret=secret):  # fmt: skip
            cells[(records[0]["header"]["players"], lineup)].add(records)
        spent = time.perf_counter() - start
        print(f"{lineup}: {games * len(players)} games in {spent:.0f} s ({spent * workers / (games * len(players)):.2f}"
              f" worker-s per game, {workers} worker(s))", file=sys.stderr)  # fmt: skip
    return cells


def table(cells: dict[tuple[int, str], Cell], lineups: list[str], players: list[int]) -> str:
    head = "| players | line-up | games | gold % | miners win % (contested) | decisions / round | paired diff |"
    lines = [head, "|---|---|---|---|---|---|---|"]
    for n in players:
        ref = cells[(n, lineups[0])]
        for lineup in lineups:
            c = cells[(n, lineup)]
            rounds = sum(c.rounds.values())
            diff = "—"
            if lineup != lineups[0]:
                d, lo, hi, pairs = paired_difference(ref.share(), c.share())
                diff = f"{100 * d:+.1f} [{100 * lo:+.1f}, {100 * hi:+.1f}] ({pairs} seeds)"
            lines.append(
                f"| {n} | {lineup} | {len(c.rounds)} | {_pct(c.rate(c.gold, c.rounds))} | "
                f"{_pct(c.rate(c.contested_gold, c.contested))} | {sum(c.decisions.values()) / rounds:.1f} | {diff} |"
            )
    return "\n".join(lines)


def behaviour_table(cells: dict[tuple[int, str], Cell], lineups: list[str], players: list[int]) -> str:
    """Gold-diggers' moves per round: passage cards discarded, break cards discarded, maps and the share of maps
    on a goal another digger had already mapped this round, breaks and repairs of other seats and the share of
    them that hit a saboteur."""
    head = ("| players | line-up | passages discarded / round | breaks discarded / round | maps / round | re-peeks "
            "of a digger's map % | breaks on saboteurs % | repairs of saboteurs % |")  # fmt: skip
    lines = [head, "|---|---|---|---|---|---|---|---|"]
    for n in players:
        for lineup in lineups:
            c = cells[(n, lineup)]
            b, rounds = c.behaviour, sum(c.rounds.values())

            def share(part: str, whole: str, b: dict[str, int] = b) -> str:
                return f"{100 * b[part] / b[whole]:.0f} ({b[whole]})" if b[whole] else "—"

            per_round = " | ".join(f"{b[k] / rounds:.2f}" for k in ("path discards", "break discards", "maps"))
            shares = " | ".join(share(f"{k} of saboteurs", k) for k in ("breaks", "repairs"))
            lines.append(f"| {n} | {lineup} | {per_round} | {share('re-peeks', 'maps')} | {shares} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lineups", nargs="+", default=["expert", "heuristic"],
                        help="agent names or MINERS/SABOTEURS; the first is the reference of the paired diff")
    parser.add_argument("--players", nargs="+", type=int, default=list(range(3, 11)), help="player counts (3-10)")
    parser.add_argument("--games", type=int, default=100, help="games per cell (3 rounds each)")
    parser.add_argument("--seed", type=int, default=0, help="seed of game 0 (game g uses seed + g)")
    parser.add_argument("--workers", type=int, default=1, help="worker processes")
    parser.add_argument("--behaviour", action="store_true", help="also print the gold-diggers' habits table")
    parser.add_argument("--secret", default=format_secret(DEFAULT_SECRET), help="agent-seed secret (128-bit hex)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error(f"--games {args.games} must be at least 1")
    bad = [n for n in args.players if not 3 <= n <= 10]
    if bad:
        parser.error(f"--players {bad}: the base game has 3-10 players")
    if len(set(args.lineups)) != len(args.lineups):
        parser.error(f"--lineups {args.lineups}: each line-up once")
    from agents import agent_names

    valid = agent_names("base", kind="scripted", oracles=False)

    for lineup in args.lineups:
        for name in parse_lineup(lineup):
            if name not in valid:
                parser.error(f"unknown or cheating agent {name!r} in line-up {lineup!r}; valid: "
                             f"{', '.join(sorted(valid))}")  # fmt: skip
    try:
        secret = parse_secret(args.secret)
    except ValueError as exc:
        parser.error(str(exc))
    players = sorted(set(args.players))
    cells = balance(args.lineups, players, args.games, args.seed, args.workers, secret)
    print(table(cells, args.lineups, players))
    if args.behaviour:
        print()
        print(behaviour_table(cells, args.lineups, players))
    print(f"\nsecret {format_secret(secret)}; seeds {args.seed}..{args.seed + args.games - 1}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
