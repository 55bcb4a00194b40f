"""The report's tables: T1/T2 balance, the claims table, T5 belief quality, T6 deception and the ratings."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

import numpy as np

from experiments._optional import require
from experiments.tournament.report.metrics import (
    EPS,
    FRACTIONS,
    OBSERVERS,
    _ci,
    _ratio,
    _round,
    _snapshot,
    brier,
    by_game,
    cell_key,
    log_loss,
    miner_won,
    topk_weight,
)
from experiments.tournament.rounds import oracle_name
from experiments.tournament.stats import (
    BOOT,
    NAN,
    bootstrap_ratio,
    cluster_bootstrap,
    holm,
    km_median,
    km_survival_at,
    one_sided_p,
    paired_difference,
    resample_weights,
)

RATING_BOOT = 50  # re-ratings behind the ratings' intervals (each re-plays every match through openskill)


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


def _ladder_ratings(matches: list[list[tuple[str, float]]], order: np.ndarray, model) -> dict[str, object]:
    ratings: dict[str, object] = {}
    for i in order:
        names = [a for a, _ in matches[i]]
        for name in names:
            if name not in ratings:
                ratings[name] = model.rating(name=name)
        gold = np.array([g for _, g in matches[i]])
        ranks = [int((gold > g).sum()) for g in gold]  # more gold ranks first; equal gold shares a rank
        rated = model.rate([[ratings[a]] for a in names], ranks=ranks)
        for a, [r] in zip(names, rated, strict=True):
            ratings[a] = r
    return ratings


def table_ladder(rounds: list[dict], seed: int = 0, boot: int = RATING_BOOT) -> list[dict]:
    """Ratings of the agents of ``--insert`` cells: each deal (player count, seed) is one Plackett-Luce match among
    the agents inserted in the same seat of it, ranked by the nuggets that seat won (ties share a rank); per role, the
    nuggets of the rounds the seat played in that role. Duplicate deals make this a ladder on equal footing: every
    agent met the same cards, roles and partners. Intervals: ``boot`` re-ratings of deals resampled with replacement
    (fresh random order each), percentile 95%. Oracles are left out."""
    model = require("openskill.models", "eval", "experiments.tournament.report (ratings)").PlackettLuce()
    # per deal and agent: nuggets in all, as miner, as saboteur; rounds as miner, as saboteur
    gold: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0] * 5))
    seen: set[tuple] = set()
    for r in rounds:
        h = r["header"]
        key = (h.get("players"), h.get("seed"), h.get("insert"), h.get("round"))
        if "insert" not in h or oracle_name(h["insert"]) or key in seen:
            continue  # a deal's round logged again (the same cell in two logs) counts once
        seen.add(key)
        seat = int(h["insert_seat"])
        won = float(r["end"]["nuggets"][seat])
        g = gold[(int(h["players"]), int(h["seed"]))][h["insert"]]
        g[0] += won
        g[1 + int(h["roles"][seat])] += won
        g[3 + int(h["roles"][seat])] += 1
    deals = [d for d in gold.values() if len(d) > 1]
    rows: dict[str, dict] = {}
    for col, label in ((0, ""), (1, "miner_"), (2, "saboteur_")):
        # a role's matches: the deals where the seat played that role at least once (the same for every agent)
        matches = [[(a, v[col]) for a, v in sorted(d.items())] for d in deals
                   if not col or next(iter(d.values()))[2 + col] > 0]  # fmt: skip
        if not matches:
            continue
        rng = np.random.default_rng(seed)
        ratings = _ladder_ratings(matches, rng.permutation(len(matches)), model)
        draws: dict[str, list[float]] = defaultdict(list)
        for _ in range(boot if len(matches) > 1 else 0):
            again = _ladder_ratings(matches, rng.integers(0, len(matches), len(matches)), model)
            for name, rr in again.items():
                draws[name].append(rr.ordinal())
        for name, rr in ratings.items():
            d = np.asarray(draws.get(name, []), dtype=float)
            lo, hi = np.quantile(d, [0.025, 0.975]) if d.size else (NAN, NAN)
            row = rows.setdefault(name, {"agent": name, "deals": sum(name in dict(m) for m in matches)})
            row.update({f"{label}ordinal": round(rr.ordinal(), 3), f"{label}ordinal_lo": _round(float(lo), 3),
                        f"{label}ordinal_hi": _round(float(hi), 3)})  # fmt: skip
            if not label:
                row["mu"], row["sigma"] = round(rr.mu, 3), round(rr.sigma, 3)
                row["nuggets_per_game"] = round(float(np.mean([dict(m)[name] for m in matches if name in dict(m)])), 3)
    return sorted(rows.values(), key=lambda x: -x["ordinal"])


C5_CELL = ("suspicious", "covert")  # the one cell the observer claims are made on (not pooled over the folder)
