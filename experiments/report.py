"""Tables and plots from tournament logs alone (no re-play).

    python -m experiments.report runs/x            # writes runs/x/report/{summary.md, *.csv, *.png}
    python -m experiments.report runs/a runs/b --out runs/ab   # several logs read as one (each game once)

The log is streamed through :mod:`experiments.logs` (each complete game once; duplicates, incomplete games and a
torn tail are skipped with a warning; damage is an error naming the file and record), and ``summary.md`` says how
many games were read, by which versions, and what was skipped.

Tables (CSV and Markdown):

* T1 balance per player count and cell: miner win rate (Wilson 95% interval over games; a game counts the share of
  its rounds the miners won), round-end reasons, mean decisions per round.
* T2 miner-policy x saboteur-policy matrix of miner win rates, per player count.
* Claims C1-C4: paired differences between cells over the same seeds (duplicate deals), mean and 95% interval.
* T5 belief quality per observer (reference Bayesian observer, heuristic observer, agents' own beliefs): Brier
  score, log-loss, AUROC and top-k hit rate at 25/50/75/100% of the round.
* T6 deception and behaviour: fraction of decisions a saboteur is unsuspected by the reference observer, own turns
  to first sustained suspicion, miners' friendly-fire and correct-break rates, dead ends placed per round by role.
* Ratings per (agent, role) with openskill's Plackett-Luce model (cheating oracles excluded).

Plots (PNG): miner win rate vs N with 95% bands, T2 heatmaps, belief trajectories (mean probability given to the
true roles over the round), survival of "saboteur still unsuspected".
"""

from __future__ import annotations

import argparse
import csv
import math
import warnings
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from agents import CHEATING
from experiments._optional import require
from experiments.duel import DuelTable
from experiments.logs import LogError, LogReader, LogWarning, cli_warnings, log_path
from experiments.sab2 import Sab2Tables
from experiments.stats import paired_difference, wilson_interval

FRACTIONS = (0.25, 0.5, 0.75, 1.0)
OBSERVERS = ("reference", "heuristic", "agent")
EPS = 1e-3


# ---- helpers ---------------------------------------------------------------------------------------------------------
def cell_key(rec: dict) -> tuple[int, str, str]:
    """(N, miners, saboteurs); a cell with an inserted seat is labelled ``MINERS +INSERT``."""
    h = rec["header"]
    insert = h.get("insert")
    return h["players"], f"{h['miners']} +{insert}" if insert else h["miners"], h["saboteurs"]


def miner_won(rec: dict) -> bool:
    return rec["end"]["winner"] == "gold-diggers"


def per_game_wins(rounds: Iterable[dict]) -> dict[tuple[int, str, str], dict[int, float]]:
    """cell -> seed -> share of that game's rounds won by the miners."""
    acc: dict[tuple[int, str, str], dict[int, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for r in rounds:
        acc[cell_key(r)][r["header"]["seed"]].append(miner_won(r))
    return {k: {s: float(np.mean(v)) for s, v in d.items()} for k, d in acc.items()}


def game_interval(values: list[float]) -> tuple[float, float, float]:
    """Mean and Wilson 95% interval with games as the unit."""
    n = len(values)
    mean = float(np.mean(values)) if n else 0.0
    lo, hi = wilson_interval(round(mean * n), n)
    return mean, lo, hi


def brier(p: np.ndarray, y: np.ndarray) -> float:
    return float(np.mean((p - y) ** 2))


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, EPS, 1 - EPS)
    return float(-np.mean(y * np.log(p) + (1 - y) * np.log(1 - p)))


def auroc(p: np.ndarray, y: np.ndarray) -> float:
    """Probability that a random saboteur gets a higher score than a random miner (ties count half)."""
    pos, neg = p[y == 1], p[y == 0]
    if pos.size == 0 or neg.size == 0:
        return float("nan")
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (pos.size * neg.size))


def _snapshot(r: dict, fraction: float) -> dict | None:
    """A round's belief snapshot at a fraction of the round (compact or full record)."""
    if "snapshots" in r:
        return r["snapshots"].get(fraction)
    return snapshot_at(r.get("beliefs", []), fraction)


def snapshot_at(beliefs: list[dict], fraction: float) -> dict | None:
    if not beliefs:
        return None
    i = max(0, math.ceil(fraction * len(beliefs)) - 1)
    return beliefs[i]


def suspected(p: np.ndarray) -> np.ndarray:
    """(T, N) bool: seat in the observer's top k at time t, k = round(expected number of saboteurs).

    Ties at the boundary count as unsuspected (a seat must beat the (k+1)-th highest probability), so an observer
    that has learnt nothing suspects nobody rather than the lowest seat numbers.
    """
    k = np.rint(p.sum(axis=1)).astype(int)
    order = -np.sort(-p, axis=1)  # descending
    padded = np.concatenate([order, np.full((p.shape[0], 1), -1.0)], axis=1)
    threshold = padded[np.arange(p.shape[0]), np.clip(k, 0, p.shape[1])]
    return (p > threshold[:, None]) & (k[:, None] > 0)


def compact(r: dict) -> dict:
    """The parts of a round record the tables need (read once per round; keeps big logs small in memory)."""
    beliefs = r.get("beliefs", [])
    roles = r["header"]["roles"]
    out = {
        "header": r["header"],
        "end": r["end"],
        "snapshots": {f: snapshot_at(beliefs, f) for f in FRACTIONS},
        "unsuspected": {},
        "first_suspicion": {},
        "own_turns": {},
        "miner_breaks": [],
        "dead_ends": {"miner": 0, "saboteur": 0},
    }
    sabs = [s for s, role in enumerate(roles) if role == 1]
    if beliefs and sabs:
        ref = np.array([x["reference"] for x in beliefs], dtype=float) / 1000  # (T, N)
        actors = np.array([x["actor"] for x in beliefs])
        susp = suspected(ref)
        for s in sabs:
            out["unsuspected"][s] = float(1 - susp[:, s].mean())
            own = susp[actors == s, s]
            out["own_turns"][s] = int(own.size)
            both = np.flatnonzero(own[:-1] & own[1:])  # suspected on two consecutive own turns
            out["first_suspicion"][s] = int(both[0]) if both.size else None
    for ev in r["events"]:
        if ev["type"] == "break" and ev.get("target", -1) != ev["actor"] and roles[ev["actor"]] == 0:
            out["miner_breaks"].append(roles[ev["target"]])
        if ev["type"] == "place" and ev.get("kind", "") in _DEAD_END_CODES:
            out["dead_ends"]["saboteur" if roles[ev["actor"]] else "miner"] += 1
    return out


# ---- tables ----------------------------------------------------------------------------------------------------
def table_balance(rounds: list[dict]) -> list[dict]:
    games = per_game_wins(rounds)
    reasons: dict[tuple, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    decisions: dict[tuple, list[int]] = defaultdict(list)
    for r in rounds:
        reasons[cell_key(r)][r["end"]["reason"]] += 1
        decisions[cell_key(r)].append(r["end"]["decisions"])
    rows = []
    for key in sorted(games):
        mean, lo, hi = game_interval(list(games[key].values()))
        total = sum(reasons[key].values())
        rows.append(
            {
                "players": key[0],
                "miners": key[1],
                "saboteurs": key[2],
                "games": len(games[key]),
                "rounds": total,
                "miner_win": round(mean, 4),
                "ci_low": round(lo, 4),
                "ci_high": round(hi, 4),
                "gold_reached": round(reasons[key]["gold_reached"] / total, 4),
                "exhausted": round(reasons[key]["exhausted"] / total, 4),
                "decisions_per_round": round(float(np.mean(decisions[key])), 2),
            }
        )
    return rows


def table_matrix(balance: list[dict]) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = defaultdict(list)
    for row in balance:
        out[row["players"]].append(row)
    return out


def table_t2(balance: list[dict]) -> list[dict]:
    """T2: one row per (N, miner policy), one column per saboteur policy: "rate [low, high]"."""
    sabs = sorted({row["saboteurs"] for row in balance})
    rows = []
    for n, cells in sorted(table_matrix(balance).items()):
        for miners in sorted({c["miners"] for c in cells}):
            row: dict = {"players": n, "miners": miners}
            for s in sabs:
                c = next((c for c in cells if c["miners"] == miners and c["saboteurs"] == s), None)
                row[s] = f"{c['miner_win']:.3f} [{c['ci_low']:.3f}, {c['ci_high']:.3f}]" if c else ""
            rows.append(row)
    return rows


CLAIMS = (
    ("C1", "greedy/random - random/random >= 0.20", ("greedy", "random"), ("random", "random"), 0.20),
    ("C2", "honest/random - honest/overt >= 0.10", ("honest", "random"), ("honest", "overt"), 0.10),
    ("C3", "suspicious/overt - honest/overt > 0", ("suspicious", "overt"), ("honest", "overt"), 0.0),
    ("C4", "suspicious/overt - suspicious/covert > 0", ("suspicious", "overt"), ("suspicious", "covert"), 0.0),
)


def table_claims(rounds: list[dict]) -> list[dict]:
    games = per_game_wins(rounds)
    rows = []
    for n in sorted({k[0] for k in games}):
        for name, text, a, b, threshold in CLAIMS:
            ka, kb = (n, *a), (n, *b)
            if ka not in games or kb not in games:
                continue
            mean, lo, hi, pairs = paired_difference(games[ka], games[kb])
            rows.append(
                {
                    "claim": name,
                    "players": n,
                    "statement": text,
                    "difference": round(mean, 4),
                    "ci_low": round(lo, 4),
                    "ci_high": round(hi, 4),
                    "paired_games": pairs,
                    "holds": bool(lo > threshold) if threshold > 0 else bool(lo > 0),
                }
            )
    return rows


def _round_unsuspected(r: dict) -> float | None:
    """Share of (saboteur, decision) pairs in which the reference observer does not suspect the saboteur."""
    values = list(r["unsuspected"].values())
    return float(np.mean(values)) if values else None


def _round_scores(r: dict, observer: str, fraction: float) -> tuple[float, float, float] | None:
    """(Brier, log-loss, mean P(true role)) of an observer at a fraction of one round."""
    snap = _snapshot(r, fraction)
    if snap is None or observer not in snap:
        return None
    y = np.array(r["header"]["roles"], dtype=float)
    p = np.array(snap[observer], dtype=float) / 1000
    return brier(p, y), log_loss(p, y), float(np.mean(np.where(y == 1, p, 1 - p)))


def table_belief_claims(rounds: list[dict]) -> list[dict]:
    """C4b (covert saboteurs stay unsuspected longer) and C5 (the reference observer learns, and beats the
    heuristic observer), as paired differences over the same rounds."""
    rows = []
    by_cell: dict[tuple, dict[tuple[int, int], dict]] = defaultdict(dict)
    for r in rounds:
        by_cell[cell_key(r)][(r["header"]["seed"], r["header"]["round"])] = r
    for n in sorted({k[0] for k in by_cell}):
        covert, overt = by_cell.get((n, "suspicious", "covert")), by_cell.get((n, "suspicious", "overt"))
        if covert and overt:
            a = {k: v for k, r in covert.items() if (v := _round_unsuspected(r)) is not None}
            b = {k: v for k, r in overt.items() if (v := _round_unsuspected(r)) is not None}
            rows.append(_claim_row("C4b", n, "unsuspected share: covert - overt (vs suspicious miners) > 0", a, b))
        every = [r for k, cell in by_cell.items() if k[0] == n for r in cell.values()]
        keyed = {(cell_key(r), r["header"]["seed"], r["header"]["round"]): r for r in every}
        late = {k: s[2] for k, r in keyed.items() if (s := _round_scores(r, "reference", 1.0))}
        early = {k: s[2] for k, r in keyed.items() if (s := _round_scores(r, "reference", 0.25))}
        rows.append(_claim_row("C5a", n, "reference P(true roles): end - quarter of the round > 0", late, early))
        for i, metric in ((0, "Brier"), (1, "log-loss")):
            for f in (0.5, 1.0):
                heur = {k: s[i] for k, r in keyed.items() if (s := _round_scores(r, "heuristic", f))}
                ref = {k: s[i] for k, r in keyed.items() if (s := _round_scores(r, "reference", f))}
                rows.append(_claim_row("C5b", n, f"{metric} at {f:.0%}: heuristic - reference > 0", heur, ref))
    return rows


def _claim_row(name: str, n: int, statement: str, a: dict, b: dict) -> dict:
    mean, lo, hi, pairs = paired_difference(a, b)
    return {
        "claim": name,
        "players": n,
        "statement": statement,
        "difference": round(mean, 4),
        "ci_low": round(lo, 4),
        "ci_high": round(hi, 4),
        "paired_games": pairs,
        "holds": bool(lo > 0),
    }


def table_beliefs(rounds: list[dict]) -> list[dict]:
    """Belief quality per (N, observer, round fraction), pooled over cells."""
    acc: dict[tuple[int, str, float], dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for r in rounds:
        roles = np.array(r["header"]["roles"], dtype=float)
        n = roles.size
        k = int(roles.sum())
        for f in FRACTIONS:
            snap = _snapshot(r, f)
            if snap is None:
                continue
            for obs in OBSERVERS:
                if obs not in snap:
                    continue
                p = np.array(snap[obs], dtype=float) / 1000
                keep = np.ones(n, dtype=bool)
                if obs == "agent":
                    keep[snap["actor"]] = False  # an agent knows its own role: score the others
                label = obs if obs != "agent" else f"agent:{r['header']['agents'][snap['actor']]}"
                bucket = acc[(n, label, f)]
                bucket["p"].append(p[keep])
                bucket["y"].append(roles[keep])
                if k > 0:
                    top = np.argsort(-p, kind="stable")[:k]
                    bucket["hit"].append(roles[top].mean())
                bucket["true_role_prob"].append(float(np.mean(np.where(roles[keep] == 1, p[keep], 1 - p[keep]))))
    rows = []
    for (n, obs, f), b in sorted(acc.items()):
        p, y = np.concatenate(b["p"]), np.concatenate(b["y"])
        rows.append(
            {
                "players": n,
                "observer": obs,
                "round_fraction": f,
                "brier": round(brier(p, y), 4),
                "log_loss": round(log_loss(p, y), 4),
                "auroc": round(auroc(p, y), 4),
                "top_k_hit": round(float(np.mean(b["hit"])), 4) if b["hit"] else float("nan"),
                "p_true_roles": round(float(np.mean(b["true_role_prob"])), 4),
                "samples": int(y.size),
            }
        )
    return rows


def table_deception(rounds: list[dict]) -> tuple[list[dict], dict[tuple, list[tuple[int | None, int]]]]:
    acc: dict[tuple, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    survival: dict[tuple, list[tuple[int | None, int]]] = defaultdict(list)
    for r in rounds:
        key = cell_key(r)
        b = acc[key]
        for s, frac in r["unsuspected"].items():
            b["unsuspected"].append(frac)
            first = r["first_suspicion"][s]
            survival[key].append((first, r["own_turns"][s]))
            if first is not None:
                b["time_to_suspicion"].append(first)
        b["miner_breaks"].extend(r["miner_breaks"])
        b["dead_ends_saboteur"].append(r["dead_ends"]["saboteur"])
        b["dead_ends_miner"].append(r["dead_ends"]["miner"])
    rows = []
    for key in sorted(acc):
        b = acc[key]
        n_rounds = len(b["dead_ends_miner"])
        mb = b["miner_breaks"]
        rows.append(
            {
                "players": key[0],
                "miners": key[1],
                "saboteurs": key[2],
                "saboteur_unsuspected": round(float(np.mean(b["unsuspected"])), 4) if b["unsuspected"] else None,
                "never_suspected": round(sum(1 for f, _ in survival[key] if f is None) / max(1, len(survival[key])), 4),
                "own_turns_to_suspicion": round(float(np.mean(b["time_to_suspicion"])), 2)
                if b["time_to_suspicion"]
                else None,
                "miner_breaks_per_round": round(len(mb) / n_rounds, 3),
                "miner_friendly_fire": round(1 - float(np.mean(mb)), 4) if mb else None,
                "miner_correct_break": round(float(np.mean(mb)), 4) if mb else None,
                "dead_ends_per_round_saboteurs": round(sum(b["dead_ends_saboteur"]) / n_rounds, 3),
                "dead_ends_per_round_miners": round(sum(b["dead_ends_miner"]) / n_rounds, 3),
            }
        )
    return rows, survival


_DEAD_END_CODES = {f"T{i:02d}" for i in range(8, 17)}


def table_ratings(rounds: list[dict], seed: int = 0) -> list[dict]:
    """Plackett-Luce ratings per (agent, role): each round is a match miners vs saboteurs (order shuffled)."""
    model = require("openskill.models", "eval", "experiments.report (ratings)").PlackettLuce()
    ratings: dict[str, object] = {}
    matches = [
        r
        for r in rounds
        if sum(r["header"]["roles"]) > 0 and not ({r["header"]["miners"], r["header"]["saboteurs"]} & CHEATING)
    ]
    order = np.random.default_rng(seed).permutation(len(matches))
    for i in order:
        r = matches[i]
        m, s = f"{r['header']['miners']}/miner", f"{r['header']['saboteurs']}/saboteur"
        for name in (m, s):
            if name not in ratings:
                ratings[name] = model.rating(name=name)
        ranks = [0, 1] if miner_won(r) else [1, 0]
        [[rm], [rs]] = model.rate([[ratings[m]], [ratings[s]]], ranks=ranks)
        ratings[m], ratings[s] = rm, rs
    rows = [
        {"agent_role": name, "mu": round(r.mu, 3), "sigma": round(r.sigma, 3), "ordinal": round(r.ordinal(), 3)}
        for name, r in ratings.items()
    ]
    return sorted(rows, key=lambda x: -x["ordinal"])


# ---- output ----------------------------------------------------------------------------------------------------
def write_csv(path: Path, rows: list[dict]) -> None:
    if not rows:
        path.write_text("")
        return
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def markdown(rows: list[dict]) -> str:
    if not rows:
        return "(no data)\n"
    cols = list(rows[0])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in rows:
        lines.append("| " + " | ".join(_fmt(row[c]) for c in cols) + " |")
    return "\n".join(lines) + "\n"


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    return str(v)


def plots(out: Path, balance: list[dict], beliefs_rows: list[dict], rounds: list[dict], survival: dict) -> list[str]:
    matplotlib = require("matplotlib", "eval", "experiments.report (plots; --no-plots skips them)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    # Miner win rate vs N with CI bands, per cell.
    fig, ax = plt.subplots(figsize=(6, 4))
    by_cell: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in balance:
        by_cell[(row["miners"], row["saboteurs"])].append(row)
    for (m, s), rows in sorted(by_cell.items()):
        rows.sort(key=lambda x: x["players"])
        n = [x["players"] for x in rows]
        ax.plot(n, [x["miner_win"] for x in rows], marker="o", label=f"{m} vs {s}")
        ax.fill_between(n, [x["ci_low"] for x in rows], [x["ci_high"] for x in rows], alpha=0.2)
    written.append(_save(fig, ax, out / "win_rate_vs_players.png", "players", "miner win rate (95% CI)", (0, 1)))
    # T2 heatmaps.
    for n, rows in sorted(table_matrix(balance).items()):
        miners = sorted({x["miners"] for x in rows})
        sabs = sorted({x["saboteurs"] for x in rows})
        grid = np.full((len(miners), len(sabs)), np.nan)
        for x in rows:
            grid[miners.index(x["miners"]), sabs.index(x["saboteurs"])] = x["miner_win"]
        fig, ax = plt.subplots(figsize=(1.5 + 1.2 * len(sabs), 1 + 0.6 * len(miners)))
        im = ax.imshow(grid, vmin=0, vmax=1, cmap="viridis")
        ax.set_xticks(range(len(sabs)), sabs)
        ax.set_yticks(range(len(miners)), miners)
        for i in range(len(miners)):
            for j in range(len(sabs)):
                if not np.isnan(grid[i, j]):
                    ax.text(j, i, f"{grid[i, j]:.2f}", ha="center", va="center", color="w", fontsize=8)
        ax.set_xlabel("saboteurs")
        ax.set_ylabel("miners")
        ax.set_title(f"miner win rate, {n} players")
        fig.colorbar(im)
        fig.tight_layout()
        fig.savefig(out / f"matrix_{n}p.png", dpi=100)
        plt.close(fig)
        written.append(f"matrix_{n}p.png")
    # Belief trajectories: mean probability of the true roles over the round.
    fig, ax = plt.subplots(figsize=(6, 4))
    for (n, obs), rows in sorted(_group(beliefs_rows, ("players", "observer")).items()):
        if obs.startswith("agent:"):
            continue  # observers only; agents' own beliefs are in the T5 table
        rows.sort(key=lambda x: x["round_fraction"])
        fractions = [x["round_fraction"] for x in rows]
        ax.plot(fractions, [x["p_true_roles"] for x in rows], marker="o", label=f"{obs}, {n}p")
    written.append(_save(fig, ax, out / "belief_trajectories.png", "fraction of the round", "mean P(true role)"))
    # Survival of "saboteur still unsuspected" (Kaplan-Meier over own turns, censored at round end).
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, items in sorted(survival.items()):
        if not items:
            continue
        horizon = max(t for _, t in items)
        alive = []
        at_risk_curve = 1.0
        for turn in range(horizon + 1):
            at_risk = sum(1 for f, t in items if (f is None or f >= turn) and t > turn)
            events = sum(1 for f, _ in items if f == turn)
            if at_risk:
                at_risk_curve *= 1 - events / at_risk
            alive.append(at_risk_curve)
        ax.step(range(horizon + 1), alive, where="post", label=f"{key[1]} vs {key[2]}, {key[0]}p")
    written.append(_save(fig, ax, out / "survival_unsuspected.png", "saboteur's own turns", "P(not yet suspected)",
                         (0, 1)))  # fmt: skip
    return written


def _save(fig, ax, path: Path, xlabel: str, ylabel: str, ylim: tuple[float, float] | None = None) -> str:
    import matplotlib.pyplot as plt

    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path.name


def _group(rows: list[dict], keys: tuple[str, ...]) -> dict[tuple, list[dict]]:
    out: dict[tuple, list[dict]] = defaultdict(list)
    for row in rows:
        out[tuple(row[k] for k in keys)].append(row)
    return out


def build_report(
    log: Path | list[Path], out: Path | None = None, with_plots: bool = True
) -> dict[str, list[dict]]:
    """Compute every table (and the plots) from the log(s) at ``log``; returns the tables.

    The log is streamed (:class:`experiments.logs.LogReader`: every complete game once, duplicates and a torn tail
    skipped with a warning, damage a ``LogError``). Base-game rounds are kept in compact form (header, end, four
    belief snapshots and a few per-round statistics) for T1-T6 and the ratings; duel and Saboteur 2 rounds only
    update running aggregates: the head-to-head table D1 and the tables S1/S2.
    """
    logs = [Path(log)] if isinstance(log, str | Path) else [Path(p) for p in log]
    reader = LogReader(logs)
    rounds: list[dict] = []
    duels, sab2 = DuelTable(), Sab2Tables()
    counts = {"duel": 0, "sab2": 0}
    for records in reader.games():
        for r in records:
            game = r["header"].get("game")
            if game == "duel":
                duels.add(r)
            elif game == "sab2":
                sab2.add(r)
            else:
                rounds.append(compact(r))
            if game in counts:
                counts[game] += 1
    if len({(rules, package) for _, rules, package in reader.stats.versions}) > 1:
        warnings.warn(f"{', '.join(map(str, logs))} mixes versions ({reader.version_summary()}): tables pool games "
                      "of different rules or code", LogWarning, stacklevel=2)  # fmt: skip
    log = logs[0]
    out = out or (log if log.is_dir() else log.parent) / "report"
    out.mkdir(parents=True, exist_ok=True)
    tables: dict[str, list[dict]] = {}
    survival: dict = {}
    if rounds:
        balance = table_balance(rounds)
        deception, survival = table_deception(rounds)
        tables.update({
            "T1_balance": balance,
            "T2_matrix": table_t2(balance),
            "claims": table_claims(rounds) + table_belief_claims(rounds),
            "T5_beliefs": table_beliefs(rounds),
            "T6_deception": deception,
            "ratings": table_ratings(rounds),
        })  # fmt: skip
    if counts["duel"]:
        tables["D1_head_to_head"] = duels.rows()
    if counts["sab2"]:
        tables["S1_sab2_roles"] = sab2.role_rows()
        tables["S2_sab2_teams"] = sab2.team_rows()
    for name, rows in tables.items():
        write_csv(out / f"{name}.csv", rows)
    st = reader.stats
    skipped = [f"{st.duplicates} duplicate records"] if st.duplicates else []
    skipped += [f"{len(st.incomplete)} incomplete games"] if st.incomplete else []
    skipped += ["a torn tail"] if st.torn else []
    source = ", ".join(f"`{p}`" for p in logs)
    parts = [f"# Tournament report\n\nSource: {source} ({st.games} games: {len(rounds)} base-game rounds, "
             f"{counts['duel']} duel rounds, {counts['sab2']} Saboteur 2 rounds; written by "
             f"{reader.version_summary() or 'no records'}" + (f"; skipped {', '.join(skipped)}" if skipped else "")
             + ").\n"]  # fmt: skip
    titles = {
        "T1_balance": "T1 balance (miner win rate per cell, Wilson 95% interval over games)",
        "T2_matrix": "T2 miner policy x saboteur policy: miner win rate [95% interval]",
        "claims": "Claims C1-C5 (paired differences over the same seeds or rounds, 95% interval; `paired_games` counts "
        "games for C1-C4 and rounds for C4b/C5)",
        "T5_beliefs": "T5 belief quality",
        "T6_deception": "T6 deception and behaviour (reference observer)",
        "ratings": "Ratings per (agent, role), openskill Plackett-Luce",
        "S1_sab2_roles": "S1 Saboteur 2 by role at the round end (win rate with Wilson 95% interval over seat-rounds, "
        "gold per round after thefts with a normal 95% interval, share of rounds where the gold was reached)",
        "S2_sab2_teams": "S2 Saboteur 2 outcomes per round by side (Wilson 95% intervals for the team win rates)",
        "D1_head_to_head": "D1 duel head-to-head (A score = wins + half the draws, Wilson 95% interval; nugget "
        "difference A - B per seed over both colour games, normal 95% interval)",
    }
    for name, rows in tables.items():
        parts.append(f"## {titles[name]}\n\n{markdown(rows)}")
    if with_plots and rounds:
        for png in plots(out, tables["T1_balance"], tables["T5_beliefs"], rounds, survival):
            parts.append(f"![{png}]({png})\n")
    (out / "summary.md").write_text("\n".join(parts))
    return tables


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path, nargs="+",
                        help="tournament log directories (or rounds.jsonl.gz files), read as one log")  # fmt: skip
    parser.add_argument("--out", type=Path, default=None, help="output directory (default: the first LOG/report)")
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args(argv)
    for path in args.log:
        if not path.exists():
            parser.error(f"{path} does not exist")
        if not log_path(path).is_file():
            parser.error(f"{path}: no {log_path(path).name} there (a tournament run with --out DIR writes one)")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} is a file; give a directory")
    with cli_warnings():
        try:
            build_report(args.log if len(args.log) > 1 else args.log[0], args.out, not args.no_plots)
        except LogError as err:
            parser.exit(2, f"error: {err}\n")
    first = args.log[0]
    out = args.out or (first if first.is_dir() else first.parent) / "report"
    print((out / "summary.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
