"""tfdet.results.stats checked live against scipy where scipy is installed
(asv's pattern: an independent implementation as the oracle; skipped without it).

tfdet does not depend on scipy: stats.py implements each test itself so it can
run in a worker under an old interpreter. These tests say its claims hold:
mann_whitney_u is scipy's asymptotic Mann-Whitney U (tie-corrected, continuity
corrected); median and iqr are numpy's linear-interpolation percentiles, which
scipy's scoreatpercentile and iqr also compute; max_rate_ruled_out is the exact
one-sided binomial (Clopper-Pearson) upper bound for 0 events; ratio_interval
is a percentile bootstrap of the ratio of medians, as scipy.stats.bootstrap
computes with its own random stream.
"""

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import digest_runs, float_arrays, samples, timing_samples

from tfdet.results import stats

scipy_stats = pytest.importorskip("scipy.stats")

PROPERTY = settings(max_examples=150, deadline=None)


# --------------------------------------------------------------------------- mann_whitney_u


def _scipy_mwu(a, b):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return scipy_stats.mannwhitneyu(a, b, alternative="two-sided", method="asymptotic", use_continuity=True)


@PROPERTY
@given(samples(max_size=30), samples(max_size=30))
def test_mann_whitney_u_is_scipys_asymptotic_test(a, b):
    assume(len(set(a + b)) > 1)  # all tied: sigma is 0; tfdet says p = 1 (below), scipy divides by zero
    ours = stats.mann_whitney_u(a, b)
    theirs = _scipy_mwu(a, b)
    assert ours["u"] == float(theirs.statistic)  # the statistic of `a`, as scipy returns it
    assert ours["p_two_sided"] == pytest.approx(float(theirs.pvalue), rel=1e-9, abs=1e-300)


@PROPERTY
@given(samples(min_size=2, max_size=30))
def test_mann_whitney_u_shifted_sample(a):
    # A large shift: tiny p-values, where an erfc written differently would first drift.
    b = [x + 3e6 for x in a]
    ours, theirs = stats.mann_whitney_u(a, b), _scipy_mwu(a, b)
    assert ours["u"] == float(theirs.statistic) == 0.0
    assert ours["p_two_sided"] == pytest.approx(float(theirs.pvalue), rel=1e-9, abs=1e-300)


def test_mann_whitney_u_all_tied_is_p_one():
    assert stats.mann_whitney_u([2.0, 2.0], [2.0, 2.0, 2.0])["p_two_sided"] == 1.0


# --------------------------------------------------------------------------- median, iqr


@PROPERTY
@given(samples())
def test_median_is_scipys_50th_percentile(xs):
    scale = max(1.0, max(abs(x) for x in xs))
    assert stats.median(xs) == pytest.approx(float(scipy_stats.scoreatpercentile(xs, 50)), rel=1e-12, abs=1e-12 * scale)
    assert stats.median(xs) == pytest.approx(float(np.percentile(xs, 50)), rel=1e-12, abs=1e-12 * scale)


@PROPERTY
@given(samples())
def test_iqr_is_scipys_linear_interpolation_quartiles(xs):
    scale = max(1.0, max(abs(x) for x in xs))
    q1, q3 = stats.iqr(xs)
    # scipy's default interpolation for both is numpy's "linear", the one the docstring names
    assert q1 == pytest.approx(float(scipy_stats.scoreatpercentile(xs, 25)), rel=1e-12, abs=1e-12 * scale)
    assert q3 == pytest.approx(float(scipy_stats.scoreatpercentile(xs, 75)), rel=1e-12, abs=1e-12 * scale)
    assert q3 - q1 == pytest.approx(float(scipy_stats.iqr(xs)), rel=1e-9, abs=1e-9 * scale)
    assert q1 <= stats.median(xs) <= q3


@PROPERTY
@given(float_arrays())
def test_median_and_iqr_refuse_what_is_not_a_finite_sample(array):
    finite = array.size > 0 and bool(np.all(np.isfinite(array)))
    for function in (stats.median, stats.iqr):
        if finite:
            function(array)
        else:
            with pytest.raises(ValueError):
                function(array)


# --------------------------------------------------------------------------- max_rate_ruled_out


@PROPERTY
@given(st.integers(min_value=1, max_value=100000), st.floats(min_value=0.5, max_value=0.999))
def test_max_rate_ruled_out_is_the_clopper_pearson_bound(runs, confidence):
    bound = stats.max_rate_ruled_out(runs, confidence)
    # Clopper-Pearson one-sided upper limit for 0 events in `runs` trials: Beta(1, runs)'s quantile
    assert bound == pytest.approx(float(scipy_stats.beta.ppf(confidence, 1, runs)), rel=1e-9)
    # and what it means: at that rate, 0 events in `runs` has probability 1 - confidence
    assert float(scipy_stats.binom.pmf(0, runs, bound)) == pytest.approx(1 - confidence, rel=1e-7)


@settings(deadline=None)  # scipy's exact interval is slow on a loaded machine
@given(st.integers(min_value=1, max_value=1000))
def test_max_rate_ruled_out_is_the_upper_end_of_scipys_exact_interval(runs):
    # binomtest's one-sided ("less") exact interval for 0 successes is [0, this bound]
    interval = scipy_stats.binomtest(0, runs, alternative="less").proportion_ci(confidence_level=0.95)
    assert interval.low == 0.0
    assert stats.max_rate_ruled_out(runs) == pytest.approx(float(interval.high), rel=1e-9)


# --------------------------------------------------------------------------- ratio_interval


def _scipy_interval(baseline, other, confidence, n_resamples, seed):
    """scipy.stats.bootstrap's percentile interval of median(other) / median(baseline)."""
    def ratio(b, o, axis=-1):
        return np.median(o, axis=axis) / np.median(b, axis=axis)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # DegenerateDataWarning for constant samples
        result = scipy_stats.bootstrap(
            (np.asarray(baseline), np.asarray(other)), ratio, n_resamples=n_resamples, confidence_level=confidence,
            method="percentile", vectorized=True, random_state=np.random.RandomState(seed))
    return float(result.confidence_interval.low), float(result.confidence_interval.high)


@settings(max_examples=40, deadline=None)
@given(timing_samples(min_size=5, max_size=30), timing_samples(min_size=5, max_size=30), st.integers(0, 2 ** 16))
def test_ratio_interval_sits_inside_scipys_wider_bootstrap(baseline, other, seed):
    """Both resample each sample independently and take percentiles of the ratios of
    medians. Given one RandomState, scipy 1.17 happens to draw the very resamples
    ratio_interval draws; it gets another seed here, so the two are independent
    estimates that differ by Monte Carlo error. That error is far smaller than the distance from a 95% endpoint to a
    99.5% one: ours at 95% lies inside scipy's at 99.5%, and scipy's at 95% inside
    ours at 99.5%."""
    ours = stats.ratio_interval(baseline, other, confidence=0.95, n_boot=2000, seed=seed)
    ours_wide = stats.ratio_interval(baseline, other, confidence=0.995, n_boot=2000, seed=seed)
    theirs = _scipy_interval(baseline, other, 0.95, 2000, seed + 1)
    theirs_wide = _scipy_interval(baseline, other, 0.995, 2000, seed + 1)
    slack = 1e-12 * ours["ratio"]
    assert theirs_wide[0] - slack <= ours["low"] <= ours["high"] <= theirs_wide[1] + slack
    assert ours_wide["low"] - slack <= theirs[0] <= theirs[1] <= ours_wide["high"] + slack
    assert ours["ratio"] == pytest.approx(float(np.median(other)) / float(np.median(baseline)), rel=1e-15)


def test_ratio_interval_agrees_with_scipy_on_large_samples():
    """With many resamples the Monte Carlo error is a few hundredths of the interval's
    width: the endpoints agree to 5% of it (a 90% interval passed off as 95% would
    not: its endpoints sit 8% of the width inside)."""
    rs = np.random.RandomState(7)
    baseline = 1e-3 * rs.lognormal(0.0, 0.1, 400)
    other = 1.25e-3 * rs.lognormal(0.0, 0.1, 400)
    ours = stats.ratio_interval(baseline, other, n_boot=20000, seed=1)
    low, high = _scipy_interval(baseline, other, 0.95, 20000, 2)
    width = high - low
    assert ours["low"] == pytest.approx(low, abs=0.05 * width)
    assert ours["high"] == pytest.approx(high, abs=0.05 * width)
    assert low < 1.25 < high and ours["low"] < 1.25 < ours["high"]


# --------------------------------------------------------------------------- the shared strategies


@PROPERTY
@given(float_arrays())
def test_float_arrays_digest_bitwise(array):
    # what the strategy is for: -0.0 and NaN make value equality and bitwise equality differ
    assert stats.digest(array) == stats.digest(array.copy())
    flipped = array.copy()
    if flipped.size:
        bits = flipped.reshape(-1).view({2: np.uint16, 4: np.uint32, 8: np.uint64}[array.itemsize])
        bits[0] ^= 1 << (8 * array.itemsize - 1)  # the sign bit: -0.0 <-> 0.0, NaN stays NaN
        assert stats.digest(flipped) != stats.digest(array)


@PROPERTY
@given(digest_runs())
def test_digest_runs_count_distinct(digests):
    assert all(len(d) == 64 and set(d) <= set("0123456789abcdef") for d in digests)
    assert stats.count_distinct(digests) == len(set(digests)) <= 3
