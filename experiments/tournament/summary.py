"""The base game's results table, from running aggregates (memory flat in the number of games)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

import numpy as np

from experiments.tournament.logs.format import game_key
from experiments.tournament.rounds import (
    ORACLE_NOTE,
    insert_rank,
    oracle_name,
)
from experiments.tournament.stats import (
    RunningMean,
    bootstrap_counts,
    bootstrap_mean,
    bootstrap_ratio,
    paired_difference,
)


# ---- the results table (running aggregates) -------------------------------------------------------------------------
def _cell(h: dict) -> tuple[int, str, str, str]:
    return h["players"], h["miners"], h["saboteurs"], h.get("insert") or ""


class Summary:
    """Running aggregates behind :func:`summary_table`, fed one game at a time (``add``): a few numbers per cell,
    plus the inserted seat's nuggets per seed (one number per game, needed for the paired comparison)."""

    def __init__(self, inserts: Sequence[str | None] | None = None) -> None:
        # The inserts in the order the command listed them (the first is the paired comparison's reference);
        # without it, the order their games arrived in (a resumed log yields its games first).
        self.insert_order = [x for x in inserts or [] if x]
        # cell -> (rounds won, rounds) -> games: a histogram of per-game shares (flat memory, exact bootstrap)
        self.games: dict[tuple[int, str, str, str], Counter[tuple[int, int]]] = {}
        self.decisions: dict[tuple[int, str, str, str], RunningMean] = {}
        # cell -> [gold-digger, saboteur] -> nuggets one player of that role won in a round
        self.role_nuggets: dict[tuple[int, str, str, str], tuple[RunningMean, RunningMean]] = {}
        self.seat_nuggets: dict[tuple[int, str, str, str], dict[int, float]] = {}
        # cell -> seed -> [won as miner, rounds as miner, won as saboteur, rounds as saboteur]
        self.seat_wins: dict[tuple[int, str, str, str], dict[int, list[int]]] = {}
        # cell -> seed -> the seat's nuggets won in its rounds as [miner, saboteur] (the deal fixes each round's
        # roles, so the same seed gives the seat the same roles whoever plays it: per-role pairs)
        self.seat_role_nuggets: dict[tuple[int, str, str, str], dict[int, list[float]]] = {}

    def add(self, records: list[dict]) -> None:
        h = records[0]["header"]
        key = _cell(h)
        won = sum(r["end"]["winner"] == "gold-diggers" for r in records)
        self.games.setdefault(key, Counter())[(won, len(records))] += 1
        decisions = self.decisions.setdefault(key, RunningMean())
        by_role = self.role_nuggets.setdefault(key, (RunningMean(), RunningMean()))
        for r in records:
            decisions.add(r["end"]["decisions"])
            for role, nuggets in zip(r["header"]["roles"], r["end"]["nuggets"], strict=True):
                by_role[1 if role else 0].add(float(nuggets))
        if h.get("insert"):
            seat = h["insert_seat"]
            self.seat_nuggets.setdefault(key, {})[h["seed"]] = float(sum(r["end"]["nuggets"][seat] for r in records))
            wins = self.seat_wins.setdefault(key, {}).setdefault(h["seed"], [0, 0, 0, 0])
            by_role = self.seat_role_nuggets.setdefault(key, {}).setdefault(h["seed"], [0.0, 0.0])
            for r in records:
                role = r["header"]["roles"][seat]
                wins[2 * role] += r["end"]["winner"] == ("saboteurs" if role else "gold-diggers")
                wins[2 * role + 1] += 1
                by_role[role] += float(r["end"]["nuggets"][seat])

    def table(self) -> str:
        """Per cell, results per round by role: the share of rounds each team won (a game = the share of its rounds
        won; 95% bootstrap interval over games, ``n/a`` with a single game, where no interval exists), the nuggets one
        player of each role won per round, and decisions per round.

        With inserted seats, a second table gives the inserted agent's nuggets per game (bootstrap 95% interval)
        and its team's round win rate by role, and a third the paired difference in nuggets per game between each
        insert and the first one listed, over the same seeds (same deals, same seat; bootstrap over seeds), in all
        and per role (the nuggets of the seat's rounds in that role, over the games where it played that role).
        """
        with_insert = any(k[3] for k in self.games)
        width = max([12, *(len(k[3]) for k in self.games)])
        head = f"{'N':>3} {'miners':<12} {'saboteurs':<12} " + (f"{'insert':<{width}} " if with_insert else "")
        header = head + (f"{'games':>6} {'rounds':>6} {'miner win [95% CI]':>22} {'sab. win [95% CI]':>22} "
                         f"{'nuggets/miner':>14} {'nuggets/sab.':>12} {'decisions':>9}")  # fmt: skip
        lines = ["Per round: the share of rounds each team won, nuggets one player of the role won, decisions.",
                 header, "-" * len(header)]  # fmt: skip
        single = False
        for key in sorted(self.games):
            hist = self.games[key]
            count = sum(hist.values())
            rounds = sum(k * c for (_, k), c in hist.items())
            rate, lo, hi = bootstrap_counts([w / k for w, k in hist], list(hist.values()))
            single |= math.isnan(lo)
            n, m, s, ins = key
            flag = " *" if any(oracle_name(x) for x in (m, s, ins) if x) else ""
            cols = f"{n:>3} {m:<12} {s:<12} " + (f"{ins or '-':<{width}} " if with_insert else "")
            digger, sab = self.role_nuggets[key]
            lines.append(
                f"{cols}{int(count):>6} {rounds:>6} {_share(rate, lo, hi):>22} {_share(1 - rate, 1 - hi, 1 - lo):>22} "
                f"{digger.mean:>14.2f} {sab.mean:>12.2f} {self.decisions[key].mean:>9.1f}{flag}"
            )
        if single:
            lines.append("n/a: an interval needs at least 2 games (the bootstrap resamples games).")
        if self.seat_nuggets:
            lines += ["", "Inserted seat (seat = seed mod N, both roles):"]
            header = (f"{'N':>3} {'miners':<12} {'saboteurs':<12} {'insert':<{width}} {'games':>6} "
                      f"{'nuggets/game':>13} {'95% CI':>16} {'win as miner [95% CI]':>22} "
                      f"{'win as sab. [95% CI]':>22}")  # fmt: skip
            lines += [header, "-" * len(header)]
            listed = sorted(self.seat_nuggets, key=lambda k: (*k[:3], insert_rank(self.insert_order, k[3])))
            for key in listed:  # the order the inserts were listed
                mean, lo, hi = bootstrap_mean(list(self.seat_nuggets[key].values()))
                w = np.array(list(self.seat_wins[key].values()), dtype=float)
                rates = []
                for role in (0, 1):
                    rate, rlo, rhi = bootstrap_ratio(w[:, 2 * role], w[:, 2 * role + 1])
                    rates.append(f"{rate:.1%} [{rlo:.0%}, {rhi:.0%}]" if w[:, 2 * role + 1].sum() else "-")
                n, m, s, ins = key
                lines.append(
                    f"{n:>3} {m:<12} {s:<12} {ins:<{width}} {len(self.seat_nuggets[key]):>6} {mean:>13.2f} "
                    f"{f'[{lo:.2f}, {hi:.2f}]':>16} {rates[0]:>22} {rates[1]:>22}"
                )
            by_base: dict[tuple[int, str, str], list[str]] = {}
            for n, m, s, ins in listed:
                by_base.setdefault((n, m, s), []).append(ins)
            pairs = [(b, ins[0], other) for b, ins in by_base.items() for other in ins[1:]]
            if pairs:
                lines += ["", "Paired difference in the inserted seat's nuggets per game (same seeds):"]
                for (n, m, s), ref, other in pairs:
                    d, lo, hi, k = paired_difference(self.seat_nuggets[(n, m, s, other)],
                                                     self.seat_nuggets[(n, m, s, ref)])  # fmt: skip
                    lines.append(f"  N={n} {m}/{s}: {other} - {ref} = {d:+.2f} [{lo:+.2f}, {hi:+.2f}] over {k} games")
                    for role, name in ((0, "miner"), (1, "saboteur")):
                        # Games where the seat played this role in at least one round; the nuggets of those rounds.
                        a_k, b_k = self.seat_wins[(n, m, s, other)], self.seat_wins[(n, m, s, ref)]
                        a_n, b_n = self.seat_role_nuggets[(n, m, s, other)], self.seat_role_nuggets[(n, m, s, ref)]
                        a = {g: v[role] for g, v in a_n.items() if a_k[g][2 * role + 1]}
                        b = {g: v[role] for g, v in b_n.items() if b_k[g][2 * role + 1]}
                        d, lo, hi, k = paired_difference(a, b)
                        lines.append(f"      as {name:<8}: {d:+.2f} [{lo:+.2f}, {hi:+.2f}] nuggets per game over {k} "
                                     f"games with {name} rounds")  # fmt: skip
        if any(oracle_name(x) for key in self.games for x in key[1:] if x):
            lines += ["", ORACLE_NOTE]
        return "\n".join(lines)


def _share(rate: float, lo: float, hi: float) -> str:
    """A share with its interval; ``n/a`` for an interval that does not exist (one game), never ``[nan%, nan%]``."""
    ci = "n/a" if math.isnan(lo) or math.isnan(hi) else f"[{lo:.1%}, {hi:.1%}]"
    return f"{rate:.1%} {ci}"


def _by_game(rounds: Iterable[dict]) -> Iterator[list[dict]]:
    """Group round records into games (records of one game need not be adjacent)."""
    games: dict[tuple, list[dict]] = {}
    for r in rounds:
        games.setdefault(game_key(r["header"]), []).append(r)
    for records in games.values():
        yield sorted(records, key=lambda r: r["header"]["round"])


def summary_table(rounds: Iterable[dict]) -> str:
    """The base game's results table (:meth:`Summary.table`) from round records."""
    summary = Summary()
    for records in _by_game(rounds):
        summary.add(records)
    return summary.table()
