"""Small statistics helpers for experiment tables."""

from __future__ import annotations

import math


def wilson_interval(successes: int, trials: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default); (0, 1) with no trials."""
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
        return 0.0, float("nan"), float("nan")
    mean = sum(values) / n
    if n < 2:
        return mean, float("nan"), float("nan")
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = z * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def paired_difference(a: dict, b: dict) -> tuple[float, float, float, int]:
    """Mean of a - b over common keys (seeds) with a normal 95% interval (duplicate deals make the pairs)."""
    keys = sorted(set(a) & set(b))
    d = [a[k] - b[k] for k in keys]
    if len(d) < 2:
        return (sum(d) / len(d) if d else 0.0), -1.0, 1.0, len(d)
    mean, lo, hi = mean_interval(d)
    return mean, lo, hi, len(d)


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
            return 0.0, float("nan"), float("nan")
        if self.n < 2:
            return self.mean, float("nan"), float("nan")
        half = z * math.sqrt(self._m2 / (self.n - 1)) / math.sqrt(self.n)
        return self.mean, self.mean - half, self.mean + half
