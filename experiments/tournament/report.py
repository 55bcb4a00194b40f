"""Tables and plots from tournament logs alone (no re-play).

    python -m experiments.tournament.report runs/x            # writes runs/x/report/{summary.md, *.csv, *.png}
    python -m experiments.tournament.report runs/a runs/b --out runs/ab   # several logs read as one (each game once)

The log is streamed through :mod:`experiments.tournament.logs` (each complete game once; duplicates, incomplete games and a
torn tail are skipped with a warning; damage is an error naming the file and record), and ``summary.md`` says how
many games were read, by which versions, and what was skipped.

Tables (CSV and Markdown; method in docs/evaluation.md). Every interval is a 95% percentile bootstrap that
resamples whole games (paired claims: the seeds two cells share), with a fixed seed:

* P0 provenance: games per (game, rules version, package version, commit, dirty tree). Logs that hold one game's
  games under two rules versions are refused (:class:`MixedRulesError`).
* T1 balance per cell: miner round win rate, share of rounds the gold was reached, decisions per round.
* T2 miner-policy x saboteur-policy matrix of miner win rates, per player count.
* Claims C1-C5: paired differences between cells over the same seeds (one value per game), one-sided paired t
  p-values and Holm's adjustment over the rows printed.
* T5 belief quality per (N, cell, observer, fraction of the round): Brier, log-loss, AUROC, mean P(true role),
  top-k hit rate (tied seats share the places left).
* T6 deception per cell: posterior mass on the saboteurs, top-k unsuspected share (split ties), Kaplan-Meier turns
  to sustained suspicion (never-suspected saboteurs censored), miners' friendly fire, dead ends by role.
* Ratings per (agent, role) with openskill's Plackett-Luce model (oracles excluded), bootstrap re-ratings.
* S1/S2 (Saboteur 2) and D1 (duel) when the logs hold those games.

Declared oracles are marked ``NAME*`` in every table, with a footnote.

Plots (PNG): miner win rate vs N with 95% bands, T2 heatmaps, belief trajectories per cell (mean probability given
to the true roles over the round), Kaplan-Meier curves of "no sustained suspicion yet".
"""

from __future__ import annotations

import argparse
import csv
import math
import warnings
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from experiments._optional import require
from experiments.tournament.duel import DuelTable
from experiments.tournament.logs.format import LogError, LogVersionError, LogWarning, log_path
from experiments.tournament.logs.read import LogReader, cli_warnings
from experiments.tournament.rounds import ORACLE_NOTE, oracle_name, replay_env
from experiments.tournament.sab2 import Sab2Tables
from experiments.tournament.stats import (
    BOOT,
    NAN,
    bootstrap_ratio,
    cluster_bootstrap,
    holm,
    kaplan_meier,
    km_median,
    km_survival_at,
    one_sided_p,
    paired_difference,
    resample_weights,
)
from saboteur_env.common.cards import BASE_PATH_CARDS

FRACTIONS = (0.25, 0.5, 0.75, 1.0)
OBSERVERS = ("reference", "heuristic", "agent")
EPS = 1e-3
RATING_BOOT = 50  # re-ratings behind the ratings' intervals (each re-plays every match through openskill)


# ---- helpers ---------------------------------------------------------------------------------------------------------
def cell_key(rec: dict) -> tuple[int, str, str]:
    """(N, miners, saboteurs); a cell with an inserted seat is labelled ``MINERS +INSERT``."""
    h = rec["header"]
    insert = h.get("insert")
    return h["players"], f"{h['miners']} +{insert}" if insert else h["miners"], h["saboteurs"]


def miner_won(rec: dict) -> bool:
    return rec["end"]["winner"] == "gold-diggers"


def by_game(rounds: Iterable[dict]) -> dict[tuple, dict[int, list[dict]]]:
    """cell -> seed -> that game's rounds (in round order): the unit every interval resamples."""
    out: dict[tuple, dict[int, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for r in rounds:
        out[cell_key(r)][r["header"]["seed"]].append(r)
    for games in out.values():
        for rs in games.values():
            rs.sort(key=lambda r: r["header"]["round"])
    return out


def per_game_wins(rounds: Iterable[dict]) -> dict[tuple[int, str, str], dict[int, float]]:
    """cell -> seed -> share of that game's rounds won by the miners."""
    games = by_game(rounds)
    return {k: {s: float(np.mean([miner_won(r) for r in rs])) for s, rs in g.items()} for k, g in games.items()}


def _ratio(games: Iterable[list[dict]], num, den, boot: int, seed: int = 0) -> tuple[float, float, float]:
    """sum over games of num(round) / sum of den(round), bootstrapped over games."""
    pairs = [(sum(num(r) for r in rs), sum(den(r) for r in rs)) for rs in games]
    if not pairs:
        return NAN, NAN, NAN
    x, d = zip(*pairs, strict=True)
    return bootstrap_ratio(np.array(x, dtype=float), np.array(d, dtype=float), boot, seed)


def _ci(prefix: str, value: tuple[float, float, float], digits: int = 4) -> dict:
    mean, lo, hi = value
    return {prefix: _round(mean, digits), f"{prefix}_lo": _round(lo, digits), f"{prefix}_hi": _round(hi, digits)}


def _round(x: float, digits: int) -> float:
    return x if not math.isfinite(x) else round(x, digits)


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
    """(T, N) bool: seat in the observer's top k at time t, k = round(expected number of saboteurs), where seats
    tied at the boundary count as unsuspected (kept for comparison with old reports; see :func:`topk_weight`)."""
    k = np.rint(p.sum(axis=1)).astype(int)
    order = -np.sort(-p, axis=1)  # descending
    padded = np.concatenate([order, np.full((p.shape[0], 1), -1.0)], axis=1)
    threshold = padded[np.arange(p.shape[0]), np.clip(k, 0, p.shape[1])]
    return (p > threshold[:, None]) & (k[:, None] > 0)


def topk_weight(p: np.ndarray, k: np.ndarray | None = None) -> np.ndarray:
    """(T, N) in [0, 1]: how much each seat is in the observer's top k at time t (k = round(sum of p) unless
    given). Tie rule: seats strictly above the boundary value count 1; the seats tied *at* it share the remaining
    places equally (the expected membership under a uniformly random tie-break), so the metric cannot flip with a
    tie convention and an observer that has learnt nothing gives every seat k/N."""
    t, n = p.shape
    if k is None:
        k = np.rint(p.sum(axis=1)).astype(int)
    k = np.clip(np.asarray(k, dtype=int), 0, n)
    order = -np.sort(-p, axis=1)
    out = np.zeros_like(p, dtype=float)
    for i in range(t):
        if k[i] == 0:
            continue
        boundary = order[i, k[i] - 1]
        above = p[i] > boundary
        tied = p[i] == boundary
        out[i, above] = 1.0
        out[i, tied] = (k[i] - above.sum()) / tied.sum()
    return out


SUSPICION_THRESHOLD = 0.5  # "suspected": the reference observer thinks the seat more likely a saboteur than not


def compact(r: dict) -> dict:
    """The parts of a round record the tables need (read once per round; keeps big logs small in memory)."""
    beliefs = r.get("beliefs", [])
    roles = r["header"]["roles"]
    out = {
        "header": r["header"],
        "end": r["end"],
        "snapshots": {f: snapshot_at(beliefs, f) for f in FRACTIONS},
        "saboteurs": [],  # per saboteur: posterior mass, top-k membership, own turns, first sustained suspicion
        "miner_breaks": [],
        "dead_ends": {"miner": 0, "saboteur": 0},
    }
    sabs = [s for s, role in enumerate(roles) if role == 1]
    if beliefs and sabs:
        ref = np.array([x["reference"] for x in beliefs], dtype=float) / 1000  # (T, N)
        actors = np.array([x["actor"] for x in beliefs])
        top = topk_weight(ref)
        for s in sabs:
            own = ref[actors == s, s] > SUSPICION_THRESHOLD
            both = np.flatnonzero(own[:-1] & own[1:])  # suspected after two consecutive own turns
            out["saboteurs"].append({
                "mass": float(ref[:, s].mean()),  # tie-free: mean P(saboteur) the observer gives it
                "unsuspected_topk": float(1 - top[:, s].mean()),
                "own_turns": int(own.size),
                # own turns played when suspicion became sustained (event), or censored at own_turns
                "sustained_at": int(both[0]) + 2 if both.size else None,
            })  # fmt: skip
    for ev in r["events"]:
        if ev["type"] == "break" and ev.get("target", -1) != ev["actor"] and roles[ev["actor"]] == 0:
            out["miner_breaks"].append(roles[ev["target"]])
        if ev["type"] == "place" and ev.get("kind", "") in _DEAD_END_CODES:
            out["dead_ends"]["saboteur" if roles[ev["actor"]] else "miner"] += 1
    return out


# ---- tables ----------------------------------------------------------------------------------------------------
def table_balance(rounds: list[dict], boot: int = BOOT) -> list[dict]:
    """T1: per cell, the miners' round win rate, the share of rounds where the gold was reached and the decisions
    per round, each a ratio of per-game sums with a game-level bootstrap interval."""
    rows = []
    for key, games in sorted(by_game(rounds).items()):
        gs = list(games.values())
        rows.append({
            "players": key[0], "miners": key[1], "saboteurs": key[2], "games": len(gs),
            "rounds": sum(len(g) for g in gs),
            **_ci("miner_win", _ratio(gs, miner_won, lambda r: 1, boot)),
            **_ci("gold_reached", _ratio(gs, lambda r: r["end"]["reason"] == "gold_reached", lambda r: 1, boot)),
            **_ci("decisions_per_round", _ratio(gs, lambda r: r["end"]["decisions"], lambda r: 1, boot), 2),
        })  # fmt: skip
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
                row[s] = f"{c['miner_win']:.3f} [{c['miner_win_lo']:.3f}, {c['miner_win_hi']:.3f}]" if c else ""
            rows.append(row)
    return rows


# (name, statement, cell A, cell B, threshold): the claim is mean(A - B) > threshold over the common seeds.
CLAIMS = (
    ("C1", "greedy/random - random/random >= 0.20", ("greedy", "random"), ("random", "random"), 0.20),
    ("C2", "honest/random - honest/overt >= 0.10", ("honest", "random"), ("honest", "overt"), 0.10),
    ("C3", "suspicious/overt - honest/overt > 0", ("suspicious", "overt"), ("honest", "overt"), 0.0),
    ("C4", "suspicious/overt - suspicious/covert > 0", ("suspicious", "overt"), ("suspicious", "covert"), 0.0),
    # The stronger scripted agents (issue 15): route planning, and the saboteur's cut against planned routes.
    ("C6", "planner/covert - suspicious/covert > 0", ("planner", "covert"), ("suspicious", "covert"), 0.0),
    ("C7", "planner/covert - planner/blocker > 0", ("planner", "covert"), ("planner", "blocker"), 0.0),
)
C5_CELL = ("suspicious", "covert")  # the one cell the observer claims are made on (not pooled over the folder)


def _claim_row(name: str, n: int, statement: str, a: dict, b: dict, threshold: float, boot: int) -> dict:
    """A paired claim mean(a[seed] - b[seed]) > threshold: bootstrap interval over seeds, one-sided p-value."""
    mean, lo, hi, pairs = paired_difference(a, b, boot)
    d = [a[k] - b[k] for k in sorted(set(a) & set(b))]
    return {"claim": name, "players": n, "statement": statement, "threshold": threshold,
            "difference": _round(mean, 4), "ci_low": _round(lo, 4), "ci_high": _round(hi, 4), "paired_games": pairs,
            "p_one_sided": _round(one_sided_p(d, threshold), 6)}  # fmt: skip


def _game_mean(games: dict[int, list[dict]], value) -> dict[int, float]:
    """seed -> the mean of ``value(round)`` over the game's rounds where it is defined."""
    out = {}
    for seed, rs in games.items():
        vals = [v for r in rs if (v := value(r)) is not None]
        if vals:
            out[seed] = float(np.mean(vals))
    return out


def _sab_mean(field: str):
    def value(r: dict) -> float | None:
        vals = [s[field] for s in r["saboteurs"]]
        return float(np.mean(vals)) if vals else None

    return value


def _round_scores(r: dict, observer: str, fraction: float) -> tuple[float, float, float] | None:
    """(Brier, log-loss, mean P(true role)) of an observer at a fraction of one round."""
    snap = _snapshot(r, fraction)
    if snap is None or observer not in snap:
        return None
    y = np.array(r["header"]["roles"], dtype=float)
    p = np.array(snap[observer], dtype=float) / 1000
    return brier(p, y), log_loss(p, y), float(np.mean(np.where(y == 1, p, 1 - p)))


def _score(observer: str, fraction: float, i: int):
    def value(r: dict) -> float | None:
        s = _round_scores(r, observer, fraction)
        return None if s is None else s[i]

    return value


def table_claims(rounds: list[dict], boot: int = BOOT) -> list[dict]:
    """The claims family: C1-C4 (miner win share per game), C4b (deception, per game) and C5 (the observers, per
    game, in the cell ``C5_CELL``), each a paired difference over the seeds the two cells share, with a bootstrap
    interval over seeds, a one-sided p-value and Holm's adjustment over the rows printed; ``holds`` = adjusted p
    < 0.05. A claim whose cells are not in the log is listed as missing (and not counted in the family)."""
    games = by_game(rounds)
    wins = {k: {s: float(np.mean([miner_won(r) for r in rs])) for s, rs in g.items()} for k, g in games.items()}
    rows: list[dict] = []
    for n in sorted({k[0] for k in games}):
        for name, text, a, b, threshold in CLAIMS:
            ka, kb = (n, *a), (n, *b)
            if ka in wins and kb in wins:
                rows.append(_claim_row(name, n, text, wins[ka], wins[kb], threshold, boot))
            else:
                rows.append(_missing(name, n, text, threshold))
        covert, overt = games.get((n, "suspicious", "covert")), games.get((n, "suspicious", "overt"))
        c4b = (("C4b", "mass", "reference P(saboteur) on saboteurs: overt - covert > 0 (vs suspicious miners)", True),
               ("C4b-topk", "unsuspected_topk", "unsuspected share (top-k, split ties): covert - overt > 0", False))
        for name, field, text, flip in c4b:
            if covert and overt:
                c, o = _game_mean(covert, _sab_mean(field)), _game_mean(overt, _sab_mean(field))
                rows.append(_claim_row(name, n, text, *((o, c) if flip else (c, o)), 0.0, boot))
            else:
                rows.append(_missing(name, n, text, 0.0))
        cell = games.get((n, *C5_CELL))
        label = "/".join(C5_CELL)
        if not cell:
            rows.append(_missing("C5", n, f"observer claims in {label}", 0.0))
            continue
        late, early = _game_mean(cell, _score("reference", 1.0, 2)), _game_mean(cell, _score("reference", 0.25, 2))
        rows.append(_claim_row("C5a", n, f"{label}: reference P(true roles) end - quarter of the round > 0", late,
                               early, 0.0, boot))  # fmt: skip
        for i, metric in ((0, "Brier"), (1, "log-loss")):
            for f in (0.5, 1.0):
                heur, ref = _game_mean(cell, _score("heuristic", f, i)), _game_mean(cell, _score("reference", f, i))
                rows.append(_claim_row("C5b", n, f"{label}: {metric} at {f:.0%}: heuristic - reference > 0", heur, ref,
                                       0.0, boot))  # fmt: skip
    adjusted = holm([r["p_one_sided"] if r["paired_games"] else NAN for r in rows])
    family = sum(1 for p in adjusted if not math.isnan(p))
    for r, p in zip(rows, adjusted, strict=True):
        r["p_holm"] = _round(p, 6)
        r["family"] = family
        r["holds"] = bool(p < ALPHA) if not math.isnan(p) else None
    return rows


ALPHA = 0.05


def _missing(name: str, n: int, statement: str, threshold: float) -> dict:
    return {"claim": name, "players": n, "statement": statement + " (cells not in the log)", "threshold": threshold,
            "difference": NAN, "ci_low": NAN, "ci_high": NAN, "paired_games": 0, "p_one_sided": NAN}  # fmt: skip


def _auroc_levels(pos: np.ndarray, neg: np.ndarray) -> np.ndarray:
    """AUROC from per-level weights (..., L) of positives and negatives at the sorted score levels; ties half."""
    below = np.cumsum(neg, axis=-1) - neg
    num = (pos * (below + 0.5 * neg)).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / (pos.sum(axis=-1) * neg.sum(axis=-1))


def table_beliefs(rounds: list[dict], boot: int = BOOT) -> list[dict]:
    """T5 belief quality per (N, cell, observer, round fraction): Brier, log-loss, AUROC, mean P(true role)
    (posterior mass, tie-free) and the top-k hit rate (ties split, :func:`topk_weight`), each with a game-level
    bootstrap interval (AUROC from min(boot, 400) resamples)."""
    rows = []
    for key, games in sorted(by_game(rounds).items()):
        acc: dict[tuple[str, float], dict[int, dict[str, list]]] = defaultdict(
            lambda: defaultdict(lambda: defaultdict(list))
        )
        for seed, rs in games.items():
            for r in rs:
                roles = np.array(r["header"]["roles"], dtype=float)
                n, k = roles.size, int(roles.sum())
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
                        g = acc[(label, f)][seed]
                        g["p"].append(p[keep])
                        g["y"].append(roles[keep])
                        if k > 0:
                            g["hit"].append(float(topk_weight(p[None, :], np.array([k]))[0] @ roles) / k)
        for (obs, f), per_game in sorted(acc.items()):
            rows.append({"players": key[0], "miners": key[1], "saboteurs": key[2], "observer": obs,
                         "round_fraction": f, **_belief_scores(per_game, boot)})  # fmt: skip
    return rows


def _belief_scores(per_game: dict[int, dict[str, list]], boot: int) -> dict:
    seeds = sorted(per_game)
    ps = [np.concatenate(per_game[s]["p"]) for s in seeds]
    ys = [np.concatenate(per_game[s]["y"]) for s in seeds]
    count = np.array([y.size for y in ys], dtype=float)
    sq = np.array([((p - y) ** 2).sum() for p, y in zip(ps, ys, strict=True)])
    clipped = [np.clip(p, EPS, 1 - EPS) for p in ps]
    ll = np.array([-(y * np.log(c) + (1 - y) * np.log(1 - c)).sum() for c, y in zip(clipped, ys, strict=True)])
    true_p = np.array([np.where(y == 1, p, 1 - p).sum() for p, y in zip(ps, ys, strict=True)])
    hits = [per_game[s]["hit"] for s in seeds]
    hit_num = np.array([sum(h) for h in hits], dtype=float)
    hit_den = np.array([len(h) for h in hits], dtype=float)
    # AUROC: per-game weights at each score level, resampled as whole games.
    levels = np.unique(np.concatenate(ps))
    pos = np.zeros((len(seeds), levels.size))
    neg = np.zeros((len(seeds), levels.size))
    for i, (p, y) in enumerate(zip(ps, ys, strict=True)):
        idx = np.searchsorted(levels, p)
        np.add.at(pos[i], idx[y == 1], 1.0)
        np.add.at(neg[i], idx[y == 0], 1.0)
    auc = float(_auroc_levels(pos.sum(0), neg.sum(0)))
    auc_lo = auc_hi = NAN
    if len(seeds) > 1:
        est = np.concatenate([_auroc_levels(w @ pos, w @ neg) for w in resample_weights(len(seeds), min(boot, 400))])
        finite = est[np.isfinite(est)]
        if finite.size:
            auc_lo, auc_hi = (float(x) for x in np.quantile(finite, [0.025, 0.975]))
    return {
        **_ci("brier", bootstrap_ratio(sq, count, boot)),
        **_ci("log_loss", bootstrap_ratio(ll, count, boot)),
        **_ci("auroc", (auc, auc_lo, auc_hi)),
        **_ci("p_true_roles", bootstrap_ratio(true_p, count, boot)),
        **_ci("top_k_hit", bootstrap_ratio(hit_num, hit_den, boot) if hit_den.sum() else (NAN, NAN, NAN)),
        "games": len(seeds),
        "samples": int(count.sum()),
    }


SURVIVAL_TURN = 5  # T6 reports the share of saboteurs not yet under sustained suspicion after this many own turns


def _km_units(games: Iterable[list[dict]]) -> list[list[tuple[int, bool]]]:
    """Per game, (time, observed) per saboteur-round: own turns played when sustained suspicion began, or the own
    turns played without it (censored: the round ended first)."""
    return [[(s["sustained_at"], True) if s["sustained_at"] is not None else (s["own_turns"], False)
             for r in rs for s in r["saboteurs"]] for rs in games]  # fmt: skip


def _km_stat(fn):
    def stat(clusters: list) -> float:
        units = [u for c in clusters for u in c]
        if not units:
            return NAN
        t, e = zip(*units, strict=True)
        return fn(np.array(t), np.array(e))

    return stat


def table_deception(rounds: list[dict], boot: int = BOOT) -> tuple[list[dict], dict[tuple, list[tuple[int, bool]]]]:
    """T6 per cell (game-level bootstrap intervals throughout): the reference observer's mean P(saboteur) on the
    saboteurs (posterior mass, tie-free), their unsuspected share under top-k with split ties, the Kaplan-Meier
    median of own turns until sustained suspicion (P > 0.5 after two consecutive own turns; saboteurs never so
    suspected are censored at the round end, not dropped) and S(5), miners' breaks and dead ends by role."""
    rows, survival = [], {}
    km_boot = min(boot, 500)
    for key, games in sorted(by_game(rounds).items()):
        gs = list(games.values())
        units = _km_units(gs)
        survival[key] = [u for c in units for u in c]
        sabs = sum(len(r["saboteurs"]) for rs in gs for r in rs)
        breaks = sum(len(r["miner_breaks"]) for rs in gs for r in rs)
        row = {"players": key[0], "miners": key[1], "saboteurs": key[2], "games": len(gs), "saboteur_rounds": sabs}
        if sabs:
            row.update({
                **_ci("saboteur_mass", _ratio(gs, lambda r: sum(s["mass"] for s in r["saboteurs"]),
                                              lambda r: len(r["saboteurs"]), boot)),
                **_ci("unsuspected_topk", _ratio(gs, lambda r: sum(s["unsuspected_topk"] for s in r["saboteurs"]),
                                                 lambda r: len(r["saboteurs"]), boot)),
                **_ci("never_sustained", _ratio(gs, lambda r: sum(s["sustained_at"] is None for s in r["saboteurs"]),
                                                lambda r: len(r["saboteurs"]), boot)),
                **_ci("km_median_turns", cluster_bootstrap(units, _km_stat(km_median), km_boot), 1),
                **_ci(f"km_unsuspected_after_{SURVIVAL_TURN}",
                      cluster_bootstrap(units, _km_stat(lambda t, e: km_survival_at(t, e, SURVIVAL_TURN)), km_boot)),
            })  # fmt: skip
        row.update({
            **_ci("miner_breaks_per_round", _ratio(gs, lambda r: len(r["miner_breaks"]), lambda r: 1, boot), 3),
            **(_ci("miner_friendly_fire", _ratio(gs, lambda r: r["miner_breaks"].count(0),
                                                 lambda r: len(r["miner_breaks"]), boot)) if breaks else {}),
            **_ci("dead_ends_saboteurs", _ratio(gs, lambda r: r["dead_ends"]["saboteur"], lambda r: 1, boot), 3),
            **_ci("dead_ends_miners", _ratio(gs, lambda r: r["dead_ends"]["miner"], lambda r: 1, boot), 3),
        })  # fmt: skip
        rows.append(row)
    return _align(rows), survival


def _align(rows: list[dict]) -> list[dict]:
    """Every row with every column (NaN where a cell has no data), so the CSV and Markdown tables line up."""
    cols: list[str] = []
    for row in rows:
        cols += [c for c in row if c not in cols]
    return [{c: row.get(c, NAN) for c in cols} for row in rows]


_DEAD_END_CODES = frozenset(s.code for s in BASE_PATH_CARDS if s.dead_end)  # T08-T16, from the card data


def _ratings(matches: list[dict], order: np.ndarray, model) -> dict[str, object]:
    ratings: dict[str, object] = {}
    for i in order:
        r = matches[i]
        m, s = f"{r['header']['miners']}/miner", f"{r['header']['saboteurs']}/saboteur"
        for name in (m, s):
            if name not in ratings:
                ratings[name] = model.rating(name=name)
        ranks = [0, 1] if miner_won(r) else [1, 0]
        [[rm], [rs]] = model.rate([[ratings[m]], [ratings[s]]], ranks=ranks)
        ratings[m], ratings[s] = rm, rs
    return ratings


def table_ratings(rounds: list[dict], seed: int = 0, boot: int = RATING_BOOT) -> list[dict]:
    """Plackett-Luce ratings per (agent, role): each round is a match miners vs saboteurs (order shuffled); declared
    oracles are left out. Intervals: ``boot`` re-ratings of games resampled with replacement (in a fresh random
    order each), percentile 95%: they carry both the sampling and the match-order dependence of the ratings."""
    model = require("openskill.models", "eval", "experiments.tournament.report (ratings)").PlackettLuce()
    matches = [r for r in rounds if sum(r["header"]["roles"]) > 0
               and not any(oracle_name(r["header"][k]) for k in ("miners", "saboteurs"))]  # fmt: skip
    rng = np.random.default_rng(seed)
    ratings = _ratings(matches, rng.permutation(len(matches)), model)
    games: dict[tuple, list[int]] = defaultdict(list)
    for i, r in enumerate(matches):
        games[(cell_key(r), r["header"]["seed"])].append(i)
    units = list(games.values())
    draws: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for _ in range(boot if len(units) > 1 else 0):
        idx = np.concatenate([units[j] for j in rng.integers(0, len(units), len(units))])
        again = _ratings(matches, rng.permutation(idx), model)
        for name, r in again.items():
            draws[name].append((r.mu, r.ordinal()))
    rows = []
    for name, r in ratings.items():
        d = np.array(draws.get(name, []), dtype=float).reshape(-1, 2)
        lo_mu, hi_mu = np.quantile(d[:, 0], [0.025, 0.975]) if d.size else (NAN, NAN)
        lo_o, hi_o = np.quantile(d[:, 1], [0.025, 0.975]) if d.size else (NAN, NAN)
        rows.append({"agent_role": name, "mu": round(r.mu, 3), "mu_lo": _round(float(lo_mu), 3),
                     "mu_hi": _round(float(hi_mu), 3), "sigma": round(r.sigma, 3), "ordinal": round(r.ordinal(), 3),
                     "ordinal_lo": _round(float(lo_o), 3), "ordinal_hi": _round(float(hi_o), 3),
                     "resamples": len(d)})  # fmt: skip
    return sorted(rows, key=lambda x: -x["ordinal"])


# ---- calibration (re-plays games: opt-in) -----------------------------------------------------------------------
CAL_BINS = 10


def train_game(seed: int) -> bool:
    """The held-out split of the calibration: behaviour tables are fitted on even seeds and scored on odd ones."""
    return seed % 2 == 0


def replay_decisions(records: list[dict]) -> Iterator[tuple[dict, list[tuple[int, list]]]]:
    """Re-play a logged base game from its seed and actions; per round: (header, [(actor, public events of the
    decision)...]) - the events with board distances that the observers see (round ends left out)."""
    from agents.tracker import LogTracker
    from saboteur_env import EventType

    h = records[0]["header"]
    env = replay_env(h["seed"], "a base game", num_players=h["players"])
    game = env.unwrapped.game
    tracker = LogTracker(env.config)
    for rec in records:
        decisions = []
        for action in rec["actions"]:
            actor = env.possible_agents.index(env.agent_selection)
            env.step(action)
            decisions.append((actor, [ev for ev in tracker.update(game) if ev.type != EventType.ROUND_END]))
        yield rec["header"], decisions


def observer_trajectory(records: list[dict], tables=None, epsilon: float = 0.1) -> list[tuple[np.ndarray, list]]:
    """Per round: ((decisions, N) P(saboteur) of a public :class:`~agents.beliefs.BayesModel` after each decision
    with ``tables`` (the fixed baseline when ``None``), the dealt roles)."""
    from agents.beliefs import FIXED_TABLES, BayesModel
    from saboteur_env import GameConfig
    from saboteur_env.common.geometry import geometry

    n = records[0]["header"]["players"]
    model = BayesModel(n, geometry(GameConfig(num_players=n)).goal_cells, epsilon, tables or FIXED_TABLES)
    out = []
    for h, decisions in replay_decisions(records):
        model.reset_round(None, None)
        traj = []
        for _, events in decisions:
            for ev in events:
                model.observe(ev)
            traj.append(model.p_saboteur())
        out.append((np.array(traj).reshape(-1, n), h["roles"]))
    return out


def policy_trajectory(records: list[dict], samples: int = 4, epsilon: float = 0.05) -> list[tuple[np.ndarray, list]]:
    """Like :func:`observer_trajectory` for the policy-aware observer (:class:`agents.policy_observer.PolicyObserver`)
    that knows the cell's policies (miners, saboteurs): it scores each decision from the actor's public observation
    before the move, re-played from the seed. Raises ``PolicyModelError`` for policies it cannot model."""
    from agents.policy_observer import PolicyObserver, public_action, public_observation
    from agents.tracker import LogTracker
    from saboteur_env import EventType

    h = records[0]["header"]
    env = replay_env(h["seed"], "a base game", num_players=h["players"])
    cfg, game = env.config, env.unwrapped.game
    model = PolicyObserver(cfg, (h["miners"], h["saboteurs"]), samples=samples, epsilon=epsilon, seed=h["seed"])
    tracker = LogTracker(cfg)
    out = []
    for rec in records:
        model.reset_round(None, None)
        traj = []
        for action in rec["actions"]:
            agent = env.agent_selection
            obs = env.observe(agent)["observation"]
            model.observe_decision(env.possible_agents.index(agent), public_observation(obs, cfg),
                                   public_action(cfg, action))  # fmt: skip
            env.step(action)
            for ev in tracker.update(game):
                if ev.type != EventType.ROUND_END:
                    model.observe(ev)
            traj.append(model.p_saboteur())
        out.append((np.array(traj).reshape(-1, h["players"]), rec["header"]["roles"]))
    return out


def _bin_sums(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(3, CAL_BINS): count, sum of predictions, sum of outcomes per equal-width bin of the prediction."""
    b = np.minimum((p * CAL_BINS).astype(int), CAL_BINS - 1)
    return np.stack([np.bincount(b, minlength=CAL_BINS), np.bincount(b, p, CAL_BINS), np.bincount(b, y, CAL_BINS)])


def _ece(sums: np.ndarray) -> float:
    """Expected calibration error of pooled bin sums (3, bins): sum over bins of |observed - predicted| weighted by
    the bin's share of the samples."""
    count, p, y = sums
    return float(np.abs(y - p).sum() / count.sum()) if count.sum() else NAN


def table_calibration(logs: list[Path], boot: int = BOOT, policy_samples: int = 0) -> tuple[list[dict], list[dict]]:
    """T7: per cell (population), the reference Bayesian observer with the fixed behaviour tables (baseline) and
    with tables fitted on that cell's training games (even seeds), both scored on its held-out games (odd seeds):
    ECE over 10 equal-width bins and Brier, every seat after every decision, with 95% bootstrap intervals over
    held-out games. Also the reliability diagram's points (per bin: mean prediction, observed frequency, count).
    ``policy_samples`` > 0 adds the policy-aware observer (model ``policy``, that many hands per decision) in the
    cells without an inserted seat whose policies it can model (about 2-3 s per held-out 5-player game)."""
    from agents.beliefs import BehaviourCounts
    from agents.policy_observer import PolicyModelError

    counts: dict[tuple, BehaviourCounts] = defaultdict(BehaviourCounts)
    for records in LogReader(logs, quiet=True).games():
        h = records[0]["header"]
        if h.get("game", "base") != "base" or not train_game(h["seed"]):
            continue
        c = counts[cell_key(records[0])]
        c.games += 1
        for header, decisions in replay_decisions(records):
            for actor, events in decisions:
                c.decision(actor, header["roles"])
                for ev in events:
                    c.event(ev, header["roles"], header["gold_goal"])
    fitted = {key: c.fit(f"fitted:{'/'.join(map(str, key))}") for key, c in counts.items()}
    no_policy: set[tuple] = set()
    per_game: dict[tuple, dict[str, list[np.ndarray]]] = defaultdict(lambda: defaultdict(list))
    brier_sums: dict[tuple, dict[str, list[tuple[float, int]]]] = defaultdict(lambda: defaultdict(list))
    for records in LogReader(logs, quiet=True).games():
        h = records[0]["header"]
        key = cell_key(records[0])
        if h.get("game", "base") != "base" or train_game(h["seed"]) or key not in fitted:
            continue
        tables = fitted[key]
        models: list[tuple[str, Callable[[list[dict]], list]]] = [
            ("fixed", lambda r: observer_trajectory(r, None, 0.1)),
            ("fitted", lambda r, t=tables: observer_trajectory(r, t, 0.0)),
        ]
        if policy_samples and not h.get("insert") and key not in no_policy:
            models.append(("policy", lambda r: policy_trajectory(r, policy_samples)))
        for name, trajectory in models:
            ps, ys = [], []
            try:
                trajectories = trajectory(records)
            except PolicyModelError:  # e.g. a population with memory the observer cannot shadow
                no_policy.add(key)
                continue
            for traj, roles in trajectories:
                ps.append(traj.ravel())
                ys.append(np.tile(np.array(roles, dtype=float), traj.shape[0]))
            p, y = np.concatenate(ps), np.concatenate(ys)
            per_game[key][name].append(_bin_sums(p, y))
            brier_sums[key][name].append((float(((p - y) ** 2).sum()), p.size))
    rows, points = [], []
    for key in sorted(per_game):
        for name in ("fixed", "fitted", "policy"):
            if name not in per_game[key] or (name == "policy" and key in no_policy):
                continue
            games = np.array(per_game[key][name])  # (G, 3, bins)
            point = _ece(games.sum(axis=0))
            lo = hi = NAN
            if len(games) > 1:
                flat = games.reshape(len(games), -1)
                est = []
                for w in resample_weights(len(games), boot):
                    pooled = (w @ flat).reshape(-1, 3, CAL_BINS)
                    est.append(np.abs(pooled[:, 2] - pooled[:, 1]).sum(axis=1) / pooled[:, 0].sum(axis=1))
                lo, hi = (float(x) for x in np.quantile(np.concatenate(est), [0.025, 0.975]))
            sq, cnt = zip(*brier_sums[key][name], strict=True)
            rows.append({"players": key[0], "miners": key[1], "saboteurs": key[2], "model": name,
                         "train_games": counts[key].games, "test_games": len(games),
                         "samples": int(games[:, 0].sum()), **_ci("ece", (point, lo, hi)),
                         **_ci("brier", bootstrap_ratio(np.array(sq), np.array(cnt, dtype=float), boot))})  # fmt: skip
            total = games.sum(axis=0)
            for b in range(CAL_BINS):
                if total[0, b]:
                    points.append({"players": key[0], "miners": key[1], "saboteurs": key[2], "model": name,
                                   "bin": b, "mean_prediction": round(float(total[1, b] / total[0, b]), 4),
                                   "observed": round(float(total[2, b] / total[0, b]), 4),
                                   "samples": int(total[0, b])})  # fmt: skip
    return rows, points


def reliability_plot(out: Path, points: list[dict]) -> list[str]:
    matplotlib = require("matplotlib", "eval", "experiments.tournament.report (plots; --no-plots skips them)")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    written = []
    for (n, m, sab), rows in sorted(_group(points, ("players", "miners", "saboteurs")).items()):
        fig, ax = plt.subplots(figsize=(4.5, 4.5))
        ax.plot([0, 1], [0, 1], color="grey", lw=0.8)
        for name, model_rows in sorted(_group(rows, ("model",)).items()):
            model_rows.sort(key=lambda r: r["bin"])
            ax.plot([r["mean_prediction"] for r in model_rows], [r["observed"] for r in model_rows], marker="o",
                    label=name[0])  # fmt: skip
        ax.set_title(f"{m} vs {sab}, {n}p (held-out games)", fontsize=9)
        name = f"reliability_{n}p_{m}_{sab}.png".replace(" ", "").replace("+", "plus-")
        written.append(_save(fig, ax, out / name, "predicted P(saboteur)", "observed frequency", (0, 1)))
    return written


# ---- output ----------------------------------------------------------------------------------------------------
AGENT_COLUMNS = ("miners", "saboteurs", "agent", "agent_a", "agent_b")


def flag_oracles(rows: list[dict], game: str = "base") -> tuple[list[dict], bool]:
    """Rows with every declared oracle's name marked ``NAME*`` (agent columns; ``agent_role`` and ``agent:NAME``
    labels too); returns them and whether any was marked (the table then gets :data:`ORACLE_NOTE`)."""
    flagged = False

    def mark(v: object) -> object:
        nonlocal flagged
        if not isinstance(v, str):
            return v
        base, sep, rest = v.partition(" +")  # "MINERS +INSERT"
        names = [base, rest] if sep else [base]
        out = [f"{x}*" if oracle_name(x, game) else x for x in names]
        flagged |= out != names
        return " +".join(out)

    out = []
    for row in rows:
        new = dict(row)
        for col in AGENT_COLUMNS:
            if col in new:
                new[col] = mark(new[col])
        if isinstance(new.get("observer"), str) and new["observer"].startswith("agent:"):
            new["observer"] = "agent:" + str(mark(new["observer"][6:]))
        if isinstance(new.get("agent_role"), str):
            name, _, role = new["agent_role"].rpartition("/")
            new["agent_role"] = f"{mark(name)}/{role}"
        out.append(new)
    return out, flagged


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
    matplotlib = require("matplotlib", "eval", "experiments.tournament.report (plots; --no-plots skips them)")
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
        ax.fill_between(n, [x["miner_win_lo"] for x in rows], [x["miner_win_hi"] for x in rows], alpha=0.2)
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
    # Belief trajectories: mean probability of the true roles over the round, per cell.
    fig, ax = plt.subplots(figsize=(6, 4))
    for (n, m, sab, obs), rows in sorted(_group(beliefs_rows, ("players", "miners", "saboteurs", "observer")).items()):
        if obs.startswith("agent:"):
            continue  # observers only; agents' own beliefs are in the T5 table
        rows.sort(key=lambda x: x["round_fraction"])
        fractions = [x["round_fraction"] for x in rows]
        ax.plot(fractions, [x["p_true_roles"] for x in rows], marker="o", label=f"{obs}, {m}/{sab}, {n}p")
    written.append(_save(fig, ax, out / "belief_trajectories.png", "fraction of the round", "mean P(true role)"))
    # Survival of "saboteur not yet under sustained suspicion" (Kaplan-Meier; censored at the round end).
    fig, ax = plt.subplots(figsize=(6, 4))
    for key, items in sorted(survival.items()):
        if not items:
            continue
        t, e = zip(*items, strict=True)
        times, surv = kaplan_meier(np.array(t), np.array(e))
        ax.step([0, *times.tolist()], [1.0, *surv.tolist()], where="post", label=f"{key[1]} vs {key[2]}, {key[0]}p")
    written.append(_save(fig, ax, out / "survival_unsuspected.png", "saboteur's own turns",
                         "P(no sustained suspicion yet)", (0, 1)))  # fmt: skip
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


class MixedRulesError(LogVersionError):
    """The logs given to one report hold games of one game under two rules versions (never pooled)."""


def _provenance_key(h: dict) -> tuple:
    unknown = "not recorded"
    return (h.get("game", "base"), h.get("rules_version") or unknown, h.get("package_version") or unknown,
            h.get("commit") or unknown, unknown if h.get("dirty") is None else bool(h["dirty"]))  # fmt: skip


def table_provenance(seen: dict[tuple, list]) -> list[dict]:
    """P0: games per (game, rules version, package version, commit, dirty tree)."""
    return [{"game": g, "rules_version": rules, "package_version": package, "commit": commit, "dirty": dirty,
             "games": count}
            for (g, rules, package, commit, dirty), (count, _) in sorted(seen.items(), key=str)]  # fmt: skip


def check_rules_versions(seen: dict[tuple, list]) -> None:
    """Refuse to pool one game's results over rules versions (:class:`MixedRulesError` naming them and a file
    holding each)."""
    by_game: dict[str, dict[str, tuple[int, Path]]] = defaultdict(dict)
    for (game, rules, *_), (count, first) in seen.items():
        total, path = by_game[game].get(rules, (0, first))
        by_game[game][rules] = (total + count, path)
    for game, versions in sorted(by_game.items()):
        if len(versions) > 1:
            listed = "; ".join(f"rules {v} ({n} games, e.g. in {f})" for v, (n, f) in sorted(versions.items()))
            raise MixedRulesError(next(iter(versions.values()))[1], f"the logs mix {game} games of different rules "
                                  f"versions: {listed}. Tables never pool rules versions: report each version's "
                                  "logs separately")  # fmt: skip


def build_report(
    log: Path | list[Path], out: Path | None = None, with_plots: bool = True, boot: int = BOOT,
    rating_boot: int = RATING_BOOT, calibration: bool = False, policy_samples: int = 0,
) -> dict[str, list[dict]]:
    """Compute every table (and the plots) from the log(s) at ``log``; returns the tables.

    The log is streamed (:class:`experiments.tournament.logs.LogReader`: every complete game once, duplicates and a torn tail
    skipped with a warning, damage a ``LogError``). Base-game rounds are kept in compact form (header, end, four
    belief snapshots and a few per-round statistics) for T1-T6 and the ratings; duel and Saboteur 2 rounds only
    update per-game aggregates: the head-to-head table D1 and the tables S1/S2. P0 lists which code wrote the
    games; one game's games under two rules versions are refused (:class:`MixedRulesError`). ``boot``: resamples
    behind each interval (the seed is fixed: the same logs give the same report). ``calibration`` adds T7 (it
    re-plays every base game once more to fit and score the observers: :func:`table_calibration`);
    ``policy_samples`` > 0 adds the policy-aware observer to it.
    """
    logs = [Path(log)] if isinstance(log, str | Path) else [Path(p) for p in log]
    reader = LogReader(logs)
    rounds: list[dict] = []
    duels, sab2 = DuelTable(), Sab2Tables()
    counts = {"duel": 0, "sab2": 0}
    seen: dict[tuple, list] = {}
    for path, _, records in reader.numbered_games():
        slot = seen.setdefault(_provenance_key(records[0]["header"]), [0, path])
        slot[0] += 1
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
    check_rules_versions(seen)
    provenance = table_provenance(seen)
    if len({(row["package_version"], row["commit"], row["dirty"]) for row in provenance}) > 1:
        warnings.warn(f"{', '.join(map(str, logs))}: games written by different code (see P0 in the report); the "
                      "rules version is the same", LogWarning, stacklevel=2)  # fmt: skip
    log = logs[0]
    out = out or (log if log.is_dir() else log.parent) / "report"
    out.mkdir(parents=True, exist_ok=True)
    tables: dict[str, list[dict]] = {"P0_provenance": provenance}
    survival: dict = {}
    if rounds:
        balance = table_balance(rounds, boot)
        deception, survival = table_deception(rounds, boot)
        tables.update({
            "T1_balance": balance,
            "T2_matrix": table_t2(balance),
            "claims": table_claims(rounds, boot),
            "T5_beliefs": table_beliefs(rounds, boot),
            "T6_deception": deception,
            "ratings": table_ratings(rounds, boot=rating_boot),
        })  # fmt: skip
    reliability: list[dict] = []
    if calibration and rounds:
        tables["T7_calibration"], reliability = table_calibration(logs, boot, policy_samples)
        tables["T7_reliability"] = reliability
    if counts["duel"]:
        tables["D1_head_to_head"] = duels.rows(boot)
    if counts["sab2"]:
        tables["S1_sab2_roles"] = sab2.role_rows(boot)
        tables["S2_sab2_teams"] = sab2.team_rows(boot)
    flagged_any = {}
    for name, rows in list(tables.items()):
        rows, flagged = flag_oracles(rows, "sab2" if name.startswith("S") else "base")
        flagged_any[name] = flagged
        write_csv(out / f"{name}.csv", rows)
        tables[name] = rows
    st = reader.stats
    skipped = [f"{st.duplicates} duplicate records"] if st.duplicates else []
    skipped += [f"{len(st.incomplete)} incomplete games"] if st.incomplete else []
    skipped += ["a torn tail"] if st.torn else []
    source = ", ".join(f"`{p}`" for p in logs)
    dirty = any(row["dirty"] is not False for row in provenance)
    parts = [f"# Tournament report\n\nSource: {source} ({st.games} games: {len(rounds)} base-game rounds, "
             f"{counts['duel']} duel rounds, {counts['sab2']} Saboteur 2 rounds; written by "
             f"{reader.version_summary() or 'no records'}" + (f"; skipped {', '.join(skipped)}" if skipped else "")
             + ").\n"
             + ("\n**Not reproducible from a commit**: some games were written from a dirty tree or without a "
                "recorded commit (P0).\n" if dirty and provenance else "")
             + f"\nIntervals: 95% percentile bootstrap over games ({boot} resamples; paired claims over shared seeds; "
             f"ratings {rating_boot} re-ratings), seed 0.\n"]  # fmt: skip
    for name, rows in tables.items():
        note = f"\n{chr(92)}{ORACLE_NOTE}\n" if flagged_any[name] else ""
        parts.append(f"## {TITLES[name]}\n\n{markdown(rows)}{note}")
    if with_plots and rounds:
        for png in plots(out, tables["T1_balance"], tables["T5_beliefs"], rounds, survival):
            parts.append(f"![{png}]({png})\n")
        for png in reliability_plot(out, reliability):
            parts.append(f"![{png}]({png})\n")
    (out / "summary.md").write_text("\n".join(parts))
    return tables


TITLES = {
    "P0_provenance": "P0 provenance (games per game, rules version, package version, commit, dirty tree)",
    "T1_balance": "T1 balance per cell (miner round win rate, gold reached, decisions per round; game bootstrap)",
    "T2_matrix": "T2 miner policy x saboteur policy: miner win rate [95% interval]",
    "claims": "Claims (paired over shared seeds, one value per game; one-sided p, Holm over the `family` rows; "
    "`holds` = Holm-adjusted p < 0.05)",
    "T5_beliefs": "T5 belief quality per cell and observer (game bootstrap; top-k ties split equally)",
    "T6_deception": "T6 deception and behaviour per cell (reference observer; Kaplan-Meier for the censored turns to "
    "sustained suspicion)",
    "ratings": "Ratings per (agent, role), openskill Plackett-Luce (bootstrap re-ratings over games)",
    "T7_calibration": "T7 observer calibration per population (cell): fixed behaviour tables (baseline) vs tables "
    "fitted on the cell's even seeds, scored on its odd seeds; ECE over 10 bins and Brier, game bootstrap",
    "T7_reliability": "T7 reliability diagram points (held-out games; per bin: mean prediction, observed frequency)",
    "S1_sab2_roles": "S1 Saboteur 2 by role at the round end (win rate and gold per seat-round, resampled as whole "
    "games)",
    "S2_sab2_teams": "S2 Saboteur 2 outcomes per round by side (game bootstrap)",
    "D1_head_to_head": "D1 duel head-to-head (A score = wins + half the draws; nugget difference A - B per seed; "
    "bootstrap over seeds)",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path, nargs="+",
                        help="tournament log directories (or rounds.jsonl.gz files), read as one log")  # fmt: skip
    parser.add_argument("--out", type=Path, default=None, help="output directory (default: the first LOG/report)")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--calibration", action="store_true",
                        help="add T7: fit the observer's behaviour tables per cell on even seeds, score fixed and "
                        "fitted tables on odd seeds (re-plays every base game; slower)")  # fmt: skip
    parser.add_argument("--policy-observer", type=int, default=0, metavar="SAMPLES",
                        help="with --calibration: add the policy-aware observer (agents.policy_observer) drawing "
                        "SAMPLES hands per decision (4 is a good start; about 2-3 s per held-out game)")  # fmt: skip
    parser.add_argument("--boot", type=int, default=BOOT, help=f"bootstrap resamples per interval (default {BOOT})")
    parser.add_argument("--rating-boot", type=int, default=RATING_BOOT,
                        help=f"re-ratings behind the ratings' intervals (default {RATING_BOOT}; 0: none)")  # fmt: skip
    args = parser.parse_args(argv)
    if args.boot < 1 or args.rating_boot < 0:
        parser.error(f"--boot {args.boot} must be at least 1 and --rating-boot {args.rating_boot} at least 0")
    for path in args.log:
        if not path.exists():
            parser.error(f"{path} does not exist")
        if not log_path(path).is_file():
            parser.error(f"{path}: no {log_path(path).name} there (a tournament run with --out DIR writes one)")
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        parser.error(f"--out {args.out} is a file; give a directory")
    with cli_warnings():
        try:
            build_report(args.log if len(args.log) > 1 else args.log[0], args.out, not args.no_plots, args.boot,
                         args.rating_boot, args.calibration, args.policy_observer)  # fmt: skip
        except LogError as err:
            parser.exit(2, f"error: {err}\n")
    first = args.log[0]
    out = args.out or (first if first.is_dir() else first.parent) / "report"
    print((out / "summary.md").read_text())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
