"""experiments.tournament.stats: game-level bootstrap, paired differences, Holm, Kaplan-Meier - exact values on
hand-made data
and the failure of the formulas they replace."""

from __future__ import annotations

import math

import numpy as np
import pytest

from experiments.tournament import stats


def test_bootstrap__constant_and_known_width():
    assert stats.bootstrap_mean([2.0] * 50) == (2.0, 2.0, 2.0)
    rng = np.random.default_rng(1)
    x = (rng.random(2000) < 0.3).astype(float)
    mean, lo, hi = stats.bootstrap_mean(x)
    se = math.sqrt(mean * (1 - mean) / x.size)
    assert lo < mean < hi and abs((hi - lo) - 2 * 1.96 * se) < 0.1 * (hi - lo)
    assert stats.bootstrap_mean(x, seed=3) == stats.bootstrap_mean(x, seed=3)  # deterministic
    assert all(math.isnan(v) for v in stats.bootstrap_mean([]))
    assert stats.bootstrap_mean([5.0])[0] == 5.0 and math.isnan(stats.bootstrap_mean([5.0])[1])


def test_bootstrap__games_not_rounds_are_the_unit():
    # 400 games of 3 rounds whose outcomes are identical within a game: the information is 400 games, not 1200
    # rounds. A binomial interval over rounds is too narrow by sqrt(3); the game-level interval is not.
    rng = np.random.default_rng(2)
    per_game = (rng.random(400) < 0.5).astype(float)
    won, played = 3 * per_game, np.full(400, 3.0)
    rate, lo, hi = stats.bootstrap_ratio(won, played)
    wlo, whi = stats.wilson_interval(int(won.sum()), int(played.sum()))
    assert rate == pytest.approx(per_game.mean())
    assert (hi - lo) / (whi - wlo) == pytest.approx(math.sqrt(3), rel=0.12)


def test_bootstrap__histogram_matches_the_values():
    values = np.repeat([0.0, 1 / 3, 2 / 3, 1.0], [100, 250, 300, 150])
    a = stats.bootstrap_mean(values)
    b = stats.bootstrap_counts([0.0, 1 / 3, 2 / 3, 1.0], [100, 250, 300, 150])
    assert a[0] == pytest.approx(b[0]) and abs(a[1] - b[1]) < 0.01 and abs(a[2] - b[2]) < 0.01


def test_bootstrap__bad_input_is_named():
    with pytest.raises(ValueError, match="boot=0 must be at least 1"):
        stats.bootstrap_mean([1.0, 2.0], boot=0)
    with pytest.raises(ValueError, match=r"level=1\.5"):
        stats.bootstrap_mean([1.0, 2.0], level=1.5)
    with pytest.raises(ValueError, match="shapes"):
        stats.bootstrap_ratio([1.0, 2.0], [1.0])


def test_paired_difference_and_p_values():
    a = {k: 1.0 + (k % 2) for k in range(100)}
    b = {k: 1.0 for k in range(100)}
    b[1000] = 9.0  # unpaired: ignored
    mean, lo, hi, pairs = stats.paired_difference(a, b)
    assert pairs == 100 and mean == pytest.approx(0.5) and lo < 0.5 < hi
    d = np.array([a[k] - b[k] for k in range(100)])
    assert stats.one_sided_p(d, 0.5) == pytest.approx(0.5)
    assert stats.one_sided_p(d, 0.0) < 1e-12 and stats.one_sided_p(d, 1.0) > 1 - 1e-12
    assert math.isnan(stats.one_sided_p([1.0]))
    assert stats.one_sided_p([1.0, 1.0], 0.0) == 0.0


def test_t_distribution__known_quantiles():
    assert stats.t_sf(2.015048, 5) == pytest.approx(0.05, abs=1e-6)
    assert stats.t_sf(12.7062, 1) == pytest.approx(0.025, abs=1e-5)
    assert stats.t_sf(1.959964, 1e7) == pytest.approx(0.025, abs=1e-6)
    assert stats.t_sf(-2.015048, 5) == pytest.approx(0.95, abs=1e-6) and stats.t_sf(0.0, 3) == 0.5
    with pytest.raises(ValueError, match="df=0"):
        stats.t_sf(1.0, 0)


def test_holm__textbook_example():
    adjusted = stats.holm([0.01, 0.04, 0.03, 0.005, float("nan")])
    assert adjusted[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02]) and math.isnan(adjusted[4])
    assert stats.holm([0.9, 0.8]) == [1.0, 1.0] and stats.holm([0.3, 0.02]) == pytest.approx([0.3, 0.04])


def test_kaplan_meier__censored_units_stay_at_risk():
    durations, observed = [1, 2, 2, 3, 4], [True, True, False, True, False]
    times, surv = stats.kaplan_meier(durations, observed)
    assert times.tolist() == [1, 2, 3] and surv == pytest.approx([0.8, 0.6, 0.3])
    assert stats.km_median(durations, observed) == 3
    assert stats.km_survival_at(durations, observed, 0) == 1.0
    assert stats.km_survival_at(durations, observed, 2.5) == pytest.approx(0.6)
    # Dropping the censored units (the old "turns to sustained suspicion") biases the time down.
    assert np.mean([t for t, e in zip(durations, observed, strict=True) if e]) == 2
    # Mostly never suspected: no median.
    assert stats.km_median([5, 5, 5, 1], [False, False, False, True]) == math.inf
    lo_hi = stats.cluster_bootstrap([[(1, True)], [(3, True)], [(4, False)]] * 10,
                                    lambda cs: stats.km_median(*zip(*[u for c in cs for u in c], strict=True)),
                                    boot=200)  # fmt: skip
    assert lo_hi[0] == 3 and lo_hi[1] <= 3 <= lo_hi[2]
