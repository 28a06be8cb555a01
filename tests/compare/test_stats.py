"""tfdet.compare.stats: hand-computed cases, agreement with scipy (and rliable,
deepsig where they overlap), bitwise reproducibility across processes, and the
coverage of the intervals on simulated data with a known truth."""

import json
import subprocess
import sys
from statistics import NormalDist

import numpy as np
import pytest

from tfdet.compare import stats


def test_prob_improvement_by_hand():
    # pairs: 3>1 (1), 2=2 (1/2), 1<3 (0)
    assert stats.prob_improvement([3, 2, 1], [1, 2, 3]) == pytest.approx(0.5)
    assert stats.prob_improvement([2, 2, 5], [1, 3, 4]) == pytest.approx(2 / 3)
    # unpaired: of the 9 (a, b), a wins (2>1, 2>1, 5>1, 5>3, 5>4) 5, no ties
    assert stats.prob_improvement([2, 2, 5], [1, 3, 4], paired=False) == pytest.approx(5 / 9)
    assert stats.mean_difference([2, 2, 5], [1, 3, 4]) == pytest.approx(1 / 3)


def test_paired_needs_equal_sizes():
    with pytest.raises(ValueError, match="paired"):
        stats.prob_improvement([1, 2], [1, 2, 3])


def test_unpaired_is_mann_whitney_u_over_nm():
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(1)
    a, b = np.round(rng.normal(0, 1, 17), 1), np.round(rng.normal(0.3, 1, 12), 1)  # rounded: ties
    u = scipy_stats.mannwhitneyu(a, b, alternative="greater").statistic
    assert stats.prob_improvement(a, b, paired=False) == pytest.approx(u / (a.size * b.size), abs=1e-12)


def test_unpaired_agrees_with_rliable():
    metrics = pytest.importorskip("rliable.metrics")
    rng = np.random.default_rng(2)
    a, b = np.round(rng.normal(0.8, 0.02, 10), 2), np.round(rng.normal(0.79, 0.02, 14), 2)
    expected = metrics.probability_of_improvement(a[:, None], b[:, None])
    assert stats.prob_improvement(a, b, paired=False) == pytest.approx(expected, abs=1e-12)
    # rliable's intervals come from its StratifiedBootstrap (rliable.library), which ignores
    # random_state (it draws from numpy's global state), so they cannot be compared bitwise;
    # and rliable.library does not import with the arch/pandas installed here. The point
    # estimate is what overlaps.


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("paired", [True, False])
@pytest.mark.parametrize("statistic", ["p", "diff"])
def test_interval_equals_scipy_bootstrap(method, paired, statistic):
    """The same generator draws the same resamples as scipy.stats.bootstrap: same interval."""
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.8, 0.02, 15), rng.normal(0.79, 0.02, 15)
    ours = stats.interval(statistic, a, b, paired=paired, level=0.9, method=method, resamples=2000, seed=7)
    scipy_method = "BCa" if method == "bca" else "percentile"
    if paired:
        data = (stats._paired_values(statistic, a, b),)
        function = np.mean
    elif statistic == "p":
        data = (a, b)

        def function(x, y, axis=-1):
            return stats._p_unpaired(np.atleast_2d(x), np.atleast_2d(y)).reshape(np.shape(x)[:-1])
    else:
        data = (a, b)

        def function(x, y, axis=-1):
            return np.mean(x, axis=axis) - np.mean(y, axis=axis)
    theirs = scipy_stats.bootstrap(data, function, n_resamples=2000, confidence_level=0.9, method=scipy_method,
                                   rng=np.random.default_rng(7), vectorized=True).confidence_interval
    assert ours[1] == pytest.approx(theirs.low, abs=1e-12)
    assert ours[2] == pytest.approx(theirs.high, abs=1e-12)


def test_bca_falls_back_to_percentile_when_a_wins_every_pair():
    estimate, lower, upper = stats.interval("p", [2, 3, 4, 5, 6], [1, 1, 1, 1, 1], method="bca", resamples=200)
    assert (estimate, lower, upper) == (1.0, 1.0, 1.0)


SCRIPT = """
import json, sys
sys.path.insert(0, %r)
from tfdet.compare import stats
a = [0.81, 0.83, 0.8, 0.85, 0.82, 0.84, 0.79, 0.86]
b = [0.8, 0.82, 0.81, 0.83, 0.8, 0.81, 0.8, 0.84]
print(json.dumps([stats.interval(s, a, b, method=m, resamples=3000, seed=11)
                  for s in ("p", "diff") for m in ("percentile", "bca")]))
"""


def test_same_inputs_and_seed_give_the_same_interval_in_two_processes():
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    outputs = [subprocess.run([sys.executable, "-c", SCRIPT % root], capture_output=True, text=True, check=True).stdout
               for _ in range(2)]
    assert outputs[0] == outputs[1]
    assert json.loads(outputs[0])[0][1] < json.loads(outputs[0])[0][2]  # a real interval, not a point


def test_another_seed_gives_another_interval():
    a, b = np.arange(12.0), np.arange(12.0)[::-1]
    assert stats.interval("diff", a, b, seed=1, resamples=500) != stats.interval("diff", a, b, seed=2, resamples=500)


@pytest.mark.parametrize("method", ["percentile", "bca"])
def test_coverage_on_simulated_data_is_near_nominal(method):
    """Scores a_i = 0.5 + e_i, b_i = 0.5 - delta + f_i (e, f standard normal): the true
    P(A>B) of a pair is Phi(delta / sqrt(2)) and the true mean difference is delta. Over
    240 simulated comparisons of 30 pairs, the 90% intervals must cover the truth about
    90% of the time (a binomial 240 x 0.9 has sd 4.6 covered; the bounds are +-3 sd)."""
    delta, n, sims, level = 0.5, 30, 240, 0.9
    truth = {"p": NormalDist().cdf(delta / np.sqrt(2.0)), "diff": delta}
    rng = np.random.default_rng(2021)
    covered = {"p": 0, "diff": 0}
    for sim in range(sims):
        a, b = 0.5 + rng.normal(size=n), 0.5 - delta + rng.normal(size=n)
        for statistic in covered:
            _, lower, upper = stats.interval(statistic, a, b, level=level, method=method, resamples=1000, seed=sim)
            covered[statistic] += lower <= truth[statistic] <= upper
    for statistic, count in covered.items():
        assert 0.9 * sims - 14 <= count <= 0.9 * sims + 14, (statistic, count / sims)


def test_verdicts():
    assert stats.verdict(0.9, 0.7, 1.0) == stats.A_BETTER
    assert stats.verdict(0.7, 0.55, 0.85) == stats.UNDECIDED  # significant, not meaningful, could be
    assert stats.verdict(0.1, 0.0, 0.3) == stats.B_BETTER
    assert stats.verdict(0.5, 0.3, 0.7) == stats.NO_DIFFERENCE
    assert stats.verdict(0.5, 0.2, 0.8) == stats.UNDECIDED
    assert stats.verdict(0.9, 0.7, 1.0, gamma=0.95) == stats.UNDECIDED
    with pytest.raises(ValueError):
        stats.verdict(0.5, 0.4, 0.6, gamma=0.4)


def test_two_pairs_both_won_do_not_decide():
    """Regression: two pairs both won by A gave the interval [1, 1] and "A better"."""
    p, lower, upper = stats.interval("p", [0.41, 0.25], [0.15, 0.10])
    assert (lower, upper) == (1.0, 1.0)
    assert stats.verdict_at(p, lower, upper, 2, 0.975) == stats.UNDECIDED
    assert stats.verdict_at(p, lower, upper, 8, 0.975) == stats.A_BETTER


def test_fewest_decisive_pairs_is_the_exact_sign_test():
    # two-sided sign test of n wins out of n: p = 2 * 0.5**n; 0.05 needs n = 6 (0.031), 5 gives 0.0625
    assert stats.fewest_decisive_pairs(0.95) == 6
    assert stats.fewest_decisive_pairs(0.99) == 8  # 2 * 0.5**8 = 0.0078 < 0.01 < 2 * 0.5**7
    scipy_stats = pytest.importorskip("scipy.stats")
    for level in (0.9, 0.95, 0.99, 0.999):
        n = stats.fewest_decisive_pairs(level)
        assert scipy_stats.binomtest(n, n, 0.5).pvalue < 1 - level <= scipy_stats.binomtest(n - 1, n - 1, 0.5).pvalue


def test_looks():
    assert stats.look_sizes(10, 30, 5) == [10, 15, 20, 25, 30]
    assert stats.planned_looks(10, 30, 5) == 5
    assert stats.look_sizes(8, 20, 5) == [8, 13, 18, 20]
    assert stats.planned_looks(8, 20, 5) == 4
    assert stats.look_sizes(30, 30, 5) == [30] and stats.planned_looks(30, 30, 5) == 1
    assert stats.look_level(0.95, 5) == pytest.approx(0.99)


@pytest.mark.slow  # deepsig imports TensorFlow
def test_look_correction_is_deepsigs_bonferroni_of_the_first_rejection():
    """The rule stops at the first look whose interval decides: the null it rejects is
    "no look would", the first partial conjunction, whose Bonferroni p is L * min(p).
    deepsig's bonferroni_correction gives the smallest p-value exactly that (its other
    entries are higher partial conjunctions, which the rule does not use)."""
    deepsig = pytest.importorskip("deepsig")
    rng = np.random.default_rng(5)
    for looks in (2, 4, 5, 7):
        level = stats.look_level(0.95, looks)
        for _ in range(20):
            # Sorted: deepsig 1.2.8 puts its corrected values back in order by indexing with the
            # sort permutation instead of its inverse, which scrambles unsorted input.
            p_values = np.sort(rng.uniform(0, 0.05, looks))
            corrected = np.asarray(deepsig.bonferroni_correction(p_values))
            assert corrected[0] == pytest.approx(min(1.0, looks * p_values[0]))
            assert (p_values[0] < 1 - level) == (corrected[0] < 0.05)


def test_runs_to_decide_by_hand():
    # P = 0.7 between the thresholds: the interval must fit inside (0.25, 0.75): room 0.05;
    # half-width 0.2 at 10 pairs -> 10 * (0.2 / 0.05)**2 = 160
    assert stats.runs_to_decide(0.7, 0.5, 0.9, 10) == 160
    # P = 0.8 > gamma: the interval must clear 0.5: room 0.3, half-width 0.4 -> 10 * (4/3)**2 = 17.8
    assert stats.runs_to_decide(0.8, 0.4, 1.2, 10) == 18
    assert stats.runs_to_decide(0.75, 0.5, 1.0, 10) is None  # on gamma: no number of runs


def test_variance_shares_by_hand():
    shares = stats.variance_shares({"init": [1.0, 3.0], "order": [0.0, 0.0, 3.0], "data": [2.0]})
    assert shares["init"] == (2.0, pytest.approx(2.0 / 5.0))
    assert shares["order"] == (3.0, pytest.approx(3.0 / 5.0))
    assert shares["data"] == (None, None)


def test_additivity_by_hand():
    assert stats.additivity([2.0, 3.0, None], [0.0, 1.0, 2.0, 3.0, 4.0]) == (2.5, pytest.approx(2.0))
    assert stats.additivity([2.0], [1.0]) == (None, None)  # one run: no variance
    assert stats.additivity([None], [0.0, 2.0]) == (2.0, None)


def test_additive_sources_add_up_and_interacting_ones_do_not():
    """Simulated truth: score = init effect + order effect (additive) gives a ratio near 1;
    score = init effect x order effect, each held at 0.1 when fixed, gives one far below 1."""
    rng = np.random.default_rng(5)
    n = 20000
    x, y = rng.normal(0, 1, n), rng.normal(0, 2, n)
    _, additive = stats.additivity([np.var(x, ddof=1), np.var(y, ddof=1)], rng.normal(0, 1, n) + rng.normal(0, 2, n))
    assert additive == pytest.approx(1.0, abs=0.05)
    _, interacting = stats.additivity([np.var(0.1 * x, ddof=1), np.var(0.1 * y / 2, ddof=1)],
                                      rng.normal(0, 1, n) * rng.normal(0, 1, n))
    assert interacting < 0.1
