"""Per-round and per-game measures behind the report's tables: wins, ratios with intervals, belief scores (Brier,
log-loss, AUROC, top-k) and the compact round record."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from experiments.tournament.stats import (
    NAN,
    bootstrap_ratio,
)
from saboteur_env.common.cards import BASE_PATH_CARDS

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


_DEAD_END_CODES = frozenset(s.code for s in BASE_PATH_CARDS if s.dead_end)  # T08-T16, from the card data


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
