"""Statistics for experiment tables: game-level (cluster) bootstrap intervals, paired differences with one-sided
p-values and Holm's adjustment, Kaplan-Meier curves for censored waiting times.

The unit of resampling is always the **game** (or, for paired comparisons, the seed shared by the compared cells):
rounds of one game and seats of one round are not independent, so rates are ratios of per-game sums resampled as
whole games, never binomial formulas over rounds or seat-rounds. Bootstrap intervals are percentile intervals
from ``boot`` resamples with a fixed ``seed`` (the same log gives the same numbers). Every function returns
``nan`` bounds where an interval is undefined (no data, or a single game).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

BOOT = 2000  # resamples behind every interval unless told otherwise
LEVEL = 0.95
CHUNK_CELLS = 4_000_000  # resample weights held at once (boot x games), to keep memory flat
NAN = float("nan")


# ---- the classic formulas (kept for callers with truly independent binomial trials) ----------------------------------
def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default); (0, 1) with no trials. Only for
    independent trials (one per game): rates over rounds or seats go through :func:`bootstrap_ratio`."""
    if trials <= 0:
        return 0.0, 1.0
    p = successes / trials
    denom = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denom
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def mean_interval(values: list[float], z: float = 1.959964) -> tuple[float, float, float]:
    """Mean with a normal-approximation 95% interval (a t interval differs by <3% from 60 samples on)."""
    n = len(values)
    if n == 0:
        return 0.0, NAN, NAN
    mean = sum(values) / n
    if n < 2:
        return mean, NAN, NAN
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = z * sd / math.sqrt(n)
    return mean, mean - half, mean + half


# ---- bootstrap -------------------------------------------------------------------------------------------------------
def _check(boot: int, level: float) -> None:
    if boot < 1:
        raise ValueError(f"boot={boot} must be at least 1")
    if not 0 < level < 1:
        raise ValueError(f"level={level} must be in (0, 1)")


def resample_weights(n: int, boot: int = BOOT, seed: int = 0) -> Iterator[NDArray[np.float64]]:
    """Chunks of (rows, n) bootstrap weights: row r counts how often each of the n units is drawn in resample r
    (multinomial, n draws); ``boot`` rows in all, deterministic for ``seed``."""
    rng = np.random.default_rng(seed)
    rows = max(1, CHUNK_CELLS // max(1, n))
    done = 0
    while done < boot:
        k = min(rows, boot - done)
        yield rng.multinomial(n, np.full(n, 1.0 / n), size=k).astype(np.float64)
        done += k


def _interval(estimates: NDArray[np.float64], level: float) -> tuple[float, float]:
    finite = estimates[np.isfinite(estimates)]
    if finite.size == 0:
        return NAN, NAN
    alpha = (1 - level) / 2
    lo, hi = np.quantile(finite, [alpha, 1 - alpha])
    return float(lo), float(hi)


def bootstrap_ratio(
    num: ArrayLike, den: ArrayLike, boot: int = BOOT, seed: int = 0, level: float = LEVEL
) -> tuple[float, float, float]:
    """sum(num) / sum(den) with a percentile interval, resampling units (games): ``num[i]``, ``den[i]`` are unit
    i's totals (e.g. rounds won and rounds played). A mean over units is ``den`` = ones."""
    _check(boot, level)
    x, d = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    if x.shape != d.shape or x.ndim != 1:
        raise ValueError(f"num and den must be 1-d of one length, got shapes {x.shape} and {d.shape}")
    if x.size == 0 or d.sum() == 0:
        return NAN, NAN, NAN
    point = float(x.sum() / d.sum())
    if x.size < 2:
        return point, NAN, NAN
    parts = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for w in resample_weights(x.size, boot, seed):
            parts.append((w @ x) / (w @ d))
    return (point, *_interval(np.concatenate(parts), level))


def bootstrap_mean(
    values: ArrayLike, boot: int = BOOT, seed: int = 0, level: float = LEVEL
) -> tuple[float, float, float]:
    """Mean of one value per unit (game) with a percentile bootstrap interval."""
    x = np.asarray(values, dtype=float)
    return bootstrap_ratio(x, np.ones_like(x), boot, seed, level)


def bootstrap_counts(
    values: ArrayLike, counts: ArrayLike, boot: int = BOOT, seed: int = 0, level: float = LEVEL
) -> tuple[float, float, float]:
    """:func:`bootstrap_mean` of a sample given as a histogram (``counts[j]`` units had value ``values[j]``; e.g.
    a game's share of rounds won takes 4 values): memory stays flat in the number of games."""
    _check(boot, level)
    v, c = np.asarray(values, dtype=float), np.asarray(counts, dtype=np.int64)
    total = int(c.sum())
    if total == 0:
        return NAN, NAN, NAN
    point = float(v @ c / total)
    if total < 2:
        return point, NAN, NAN
    draws = np.random.default_rng(seed).multinomial(total, c / total, size=boot)
    return (point, *_interval(draws @ v / total, level))


def cluster_bootstrap(
    clusters: Sequence, stat: Callable[[list], float], boot: int = BOOT, seed: int = 0, level: float = LEVEL
) -> tuple[float, float, float]:
    """Any statistic of a list of units (``stat(units)``), with units resampled whole: for statistics that are no
    ratio of sums (a Kaplan-Meier median, a rating). Slower: ``stat`` runs ``boot`` times in Python."""
    _check(boot, level)
    items = list(clusters)
    if not items:
        return NAN, NAN, NAN
    point = float(stat(items))
    if len(items) < 2:
        return point, NAN, NAN
    rng = np.random.default_rng(seed)
    estimates = np.array([stat([items[i] for i in rng.integers(0, len(items), len(items))]) for _ in range(boot)])
    return (point, *_interval(estimates.astype(float), level))


# ---- paired comparisons, p-values, Holm ------------------------------------------------------------------------------
def paired_difference(
    a: dict, b: dict, boot: int = BOOT, seed: int = 0, level: float = LEVEL
) -> tuple[float, float, float, int]:
    """Mean of a[k] - b[k] over the common keys (seeds: duplicate deals make the pairs), with a percentile bootstrap
    interval over keys; returns (mean, low, high, pairs)."""
    keys = sorted(set(a) & set(b))
    d = np.array([a[k] - b[k] for k in keys], dtype=float)
    mean, lo, hi = bootstrap_mean(d, boot, seed, level)
    return (0.0 if not keys else mean), lo, hi, len(keys)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularised incomplete beta function (modified Lentz), converges for
    x < (a + 1) / (a + b + 2)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-14:
            break
    return h


def betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta function I_x(a, b)."""
    if not 0.0 <= x <= 1.0:
        raise ValueError(f"x={x} must be in [0, 1]")
    if x in (0.0, 1.0):
        return x
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom."""
    if df <= 0:
        raise ValueError(f"df={df} must be positive")
    tail = 0.5 * betainc(df / 2, 0.5, df / (df + t * t))
    return tail if t >= 0 else 1.0 - tail


def one_sided_p(differences: ArrayLike, threshold: float = 0.0) -> float:
    """p-value of H0: mean difference <= threshold against "greater": the one-sided paired t test (n - 1 degrees
    of freedom). ``nan`` with fewer than two pairs; a zero spread gives 0 or 1."""
    d = np.asarray(differences, dtype=float)
    if d.size < 2:
        return NAN
    sd = float(d.std(ddof=1))
    gap = float(d.mean()) - threshold
    if sd == 0:
        return 0.0 if gap > 0 else 1.0
    return t_sf(gap / (sd / math.sqrt(d.size)), d.size - 1)


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm's step-down adjustment (family-wise error control; ``nan`` entries are left out of the family)."""
    order = sorted((p, i) for i, p in enumerate(pvalues) if not math.isnan(p))
    m = len(order)
    out = [NAN] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p))
        out[i] = running
    return out


# ---- censored waiting times ------------------------------------------------------------------------------------------
def kaplan_meier(durations: ArrayLike, observed: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Kaplan-Meier estimate: (event times, survival just after each). ``durations[i]`` is the time of unit i's
    event when ``observed[i]``, else the last time it was seen without one (right-censored; still at risk then)."""
    t = np.asarray(durations, dtype=float)
    e = np.asarray(observed, dtype=bool)
    if t.shape != e.shape:
        raise ValueError(f"durations and observed differ in shape: {t.shape} vs {e.shape}")
    times = np.unique(t[e])
    surv = np.empty(times.size)
    s = 1.0
    for j, tj in enumerate(times):
        at_risk = int((t >= tj).sum())
        events = int(((t == tj) & e).sum())
        s *= 1 - events / at_risk
        surv[j] = s
    return times, surv


def km_survival_at(durations: ArrayLike, observed: ArrayLike, when: float) -> float:
    """S(when): the estimated share of units without an event up to and including time ``when``."""
    times, surv = kaplan_meier(durations, observed)
    k = int(np.searchsorted(times, when, side="right"))
    return 1.0 if k == 0 else float(surv[k - 1])


def km_median(durations: ArrayLike, observed: ArrayLike) -> float:
    """The first time at which the Kaplan-Meier survival drops to 0.5 or below (``inf`` when it never does: more
    than half the units are censored before their event)."""
    times, surv = kaplan_meier(durations, observed)
    below = np.flatnonzero(surv <= 0.5)
    return float(times[below[0]]) if below.size else math.inf


class RunningMean:
    """:func:`mean_interval` without keeping the values (Welford's update): for tables over millions of rows."""

    __slots__ = ("_m2", "mean", "n")

    def __init__(self) -> None:
        self.n, self.mean, self._m2 = 0, 0.0, 0.0

    def add(self, x: float) -> None:
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self._m2 += delta * (x - self.mean)

    def interval(self, z: float = 1.959964) -> tuple[float, float, float]:
        if self.n == 0:
            return 0.0, NAN, NAN
        if self.n < 2:
            return self.mean, NAN, NAN
        half = z * math.sqrt(self._m2 / (self.n - 1)) / math.sqrt(self.n)
        return self.mean, self.mean - half, self.mean + half


# ---- ranking and calibration of probabilities (claims observers, the bluffing benchmark) ----
def _auc(pos: list[tuple[int, float]], neg: list[tuple[int, float]], weights: NDArray[np.float64]) -> float:
    """Weighted Mann-Whitney AUC (ties count one half); items are (deal index, score)."""
    if not pos or not neg:
        return float("nan")
    pg, ps = np.array([g for g, _ in pos]), np.array([s for _, s in pos])
    ng, ns = np.array([g for g, _ in neg]), np.array([s for _, s in neg])
    wp, wn = weights[pg], weights[ng]
    cmp = (ps[:, None] > ns[None, :]) + 0.5 * (ps[:, None] == ns[None, :])
    den = wp.sum() * wn.sum()
    return float(wp @ cmp @ wn / den) if den > 0 else float("nan")


def auc_interval(pos: list[tuple[int, float]], neg: list[tuple[int, float]], deals: int, boot: int = 1000
                 ) -> tuple[float, float, float]:
    """AUC with a percentile bootstrap interval over deals."""
    point = _auc(pos, neg, np.ones(deals))
    est = np.array([_auc(pos, neg, w) for chunk in resample_weights(deals, boot, seed=1) for w in chunk])
    est = est[np.isfinite(est)]
    if est.size == 0:
        return point, float("nan"), float("nan")
    lo, hi = np.quantile(est, [0.025, 0.975])
    return point, float(lo), float(hi)


def ece(items: Sequence[tuple[int, float, int]], units: int, bins: int = 10, boot: int = 1000
        ) -> tuple[float, float, float]:  # fmt: skip
    """Expected calibration error of probabilities, ``items`` = (unit index, p, outcome 0/1): equal-width bins, each
    weighted by its share of the items; with a percentile bootstrap interval over units (deals)."""
    if not items:
        return NAN, NAN, NAN
    d = np.array([i[0] for i in items])
    p = np.array([i[1] for i in items], float)
    y = np.array([i[2] for i in items], float)
    b = np.minimum((p * bins).astype(int), bins - 1)

    def one(w: NDArray[np.float64]) -> float:
        wi = w[d]
        tot = wi.sum()
        if tot == 0:
            return NAN
        gap = np.abs(np.bincount(b, wi * p, bins) - np.bincount(b, wi * y, bins))
        return float(gap.sum() / tot)

    point = one(np.ones(units))
    est = np.array([one(w) for chunk in resample_weights(units, boot, seed=1) for w in chunk])
    return (point, *_interval(est, LEVEL))
