"""The statistics of `tfdet compare`: pure, seeded, numpy and the standard library only.

Scores are one number per training (higher is better, e.g. test accuracy).
Trainings of A and B are *paired*: pair i of A and pair i of B share every
randomised seed, so the paired statistics compare like with like.

- P(A>B), the probability of improvement: the share of pairs where A scores
  higher, ties counting one half (Bouthillier et al., "Accounting for Variance
  in Machine Learning Benchmarks", MLSys 2021, arXiv 2103.03098, section 5);
  unpaired, it is the Mann-Whitney U of A over B divided by n*m, which is what
  rliable's probability_of_improvement computes.
- bootstrap intervals, percentile or BCa, from one seeded generator; the
  resampling draws the same indices as scipy.stats.bootstrap given the same
  generator, so the two agree to rounding (tests/compare/test_stats.py).
- the verdict against a threshold gamma (default 0.75, the paper's), the
  correction for repeated looks, the runs a rule still needs, and each source's
  share of the variance.
"""

import math
from statistics import NormalDist

import numpy as np

DEFAULT_GAMMA = 0.75  # Bouthillier et al. 2021: P(A>B) above gamma=0.75 is a meaningful improvement
DEFAULT_LEVEL = 0.95
DEFAULT_RESAMPLES = 5000
INTERVALS = ("percentile", "bca")

A_BETTER, B_BETTER, NO_DIFFERENCE, UNDECIDED = "A better", "B better", "no meaningful difference", "undecided"
VERDICTS = (A_BETTER, B_BETTER, NO_DIFFERENCE, UNDECIDED)
DECIDED = (A_BETTER, B_BETTER, NO_DIFFERENCE)

_NORMAL = NormalDist()


def _pair(a, b):
    a, b = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if a.size == 0 or b.size == 0:
        raise ValueError("no scores to compare")
    return a, b


def wins(a, b):
    """Per pair: 1 where a > b, 0.5 where equal, 0 where a < b."""
    a, b = _pair(a, b)
    if a.shape != b.shape:
        raise ValueError("paired scores need as many of A (%d) as of B (%d)" % (a.size, b.size))
    return (a > b) + 0.5 * (a == b)


def prob_improvement(a, b, paired=True):
    """P(A>B): paired, the mean of wins(a, b); unpaired, U/(n*m) over every (a, b)."""
    if paired:
        return float(np.mean(wins(a, b)))
    a, b = _pair(a, b)
    return float(np.mean((a[:, None] > b[None, :]) + 0.5 * (a[:, None] == b[None, :])))


def mean_difference(a, b, paired=True):
    a, b = _pair(a, b)
    return float(np.mean(a - b)) if paired else float(np.mean(a) - np.mean(b))


def _p_paired(w, axis=-1):
    return np.mean(w, axis=axis)


def _p_unpaired(a, b):
    """P(A>B) of each row of resampled a [R, n] and b [R, m]."""
    out = np.empty(a.shape[0])
    for start in range(0, a.shape[0], 256):  # bounded memory: 256 x n x m at a time
        x, y = a[start:start + 256, :, None], b[start:start + 256, None, :]
        out[start:start + 256] = np.mean((x > y) + 0.5 * (x == y), axis=(1, 2))
    return out


STATISTICS = ("p", "diff")


def _paired_values(statistic, a, b):
    """The per-pair values whose mean is the statistic (P: wins; diff: a - b)."""
    return wins(a, b) if statistic == "p" else np.subtract(*_pair(a, b))


def bootstrap_distribution(statistic, a, b, paired=True, resamples=DEFAULT_RESAMPLES, seed=0):
    """The statistic ("p" or "diff") on `resamples` bootstrap resamples: paired,
    pairs are resampled whole; unpaired, A's and B's runs are resampled apart
    (stratified). Draws rng.integers(0, n, (resamples, n)) as scipy.stats.bootstrap does."""
    rng = np.random.default_rng(seed)
    if paired:
        values = _paired_values(statistic, a, b)
        index = rng.integers(0, values.size, (resamples, values.size))
        return np.mean(values[index], axis=-1)
    a, b = _pair(a, b)
    ra = a[rng.integers(0, a.size, (resamples, a.size))]
    rb = b[rng.integers(0, b.size, (resamples, b.size))]
    if statistic == "p":
        return _p_unpaired(ra, rb)
    return np.mean(ra, axis=-1) - np.mean(rb, axis=-1)


def _estimate(statistic, a, b, paired):
    return prob_improvement(a, b, paired) if statistic == "p" else mean_difference(a, b, paired)


def _jackknife(statistic, a, b, paired):
    """Leave-one-out estimates: one list for paired data, one per sample otherwise (as scipy)."""
    if paired:
        values = _paired_values(statistic, a, b)
        n = values.size
        return [(np.sum(values) - values) / (n - 1)] if n > 1 else [np.zeros(1)]
    a, b = _pair(a, b)
    out = []
    for which, sample in ((0, a), (1, b)):
        loo = []
        for i in range(sample.size):
            rest = np.delete(sample, i) if sample.size > 1 else sample
            loo.append(_estimate(statistic, rest, b, False) if which == 0 else _estimate(statistic, a, rest, False))
        out.append(np.asarray(loo))
    return out


def _acceleration(jackknife):
    """BCa's acceleration from jackknife values, summed over samples as scipy does."""
    nums, dens = 0.0, 0.0
    for theta in jackknife:
        n = theta.size
        u = (n - 1) * (np.mean(theta) - theta)
        nums += np.sum(u ** 3) / n ** 3
        dens += np.sum(u ** 2) / n ** 2
    return 0.0 if dens == 0 else float(nums / (6.0 * dens ** 1.5))


def _cdf(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def bca_quantiles(boot, estimate, acceleration, level):
    """The (lower, upper) quantile levels BCa reads off the bootstrap distribution;
    None when the bias correction is infinite (every resample on one side)."""
    share = (np.count_nonzero(boot < estimate) + np.count_nonzero(boot <= estimate)) / (2.0 * boot.size)
    if share <= 0.0 or share >= 1.0:
        return None
    z0 = _NORMAL.inv_cdf(share)
    alpha = (1.0 - level) / 2.0
    bounds = []
    for z in (_NORMAL.inv_cdf(alpha), _NORMAL.inv_cdf(1.0 - alpha)):
        shifted = z0 + z
        bounds.append(_cdf(z0 + shifted / (1.0 - acceleration * shifted)))
    return tuple(bounds)


def interval(statistic, a, b, paired=True, level=DEFAULT_LEVEL, method="percentile", resamples=DEFAULT_RESAMPLES,
             seed=0):
    """(estimate, lower, upper) of "p" (P(A>B)) or "diff" (mean of A - B) at `level`.
    BCa falls back to the percentile interval where its correction is undefined
    (a bootstrap distribution entirely on one side of the estimate, e.g. all wins)."""
    if method not in INTERVALS:
        raise ValueError("unknown interval %r (choose from %s)" % (method, ", ".join(INTERVALS)))
    if not 0.0 < level < 1.0:
        raise ValueError("level %r is not between 0 and 1" % (level,))
    estimate = _estimate(statistic, a, b, paired)
    boot = bootstrap_distribution(statistic, a, b, paired, resamples, seed)
    alpha = (1.0 - level) / 2.0
    quantiles = (alpha, 1.0 - alpha)
    if method == "bca":
        quantiles = bca_quantiles(boot, estimate, _acceleration(_jackknife(statistic, a, b, paired)), level) or quantiles
    lower, upper = np.percentile(boot, [100.0 * quantiles[0], 100.0 * quantiles[1]])
    return estimate, float(lower), float(upper)


def verdict(p, lower, upper, gamma=DEFAULT_GAMMA):
    """A better: the interval of P(A>B) lies above 0.5 (significant) and P(A>B) > gamma
    (meaningful); B better: the mirror image; no meaningful difference: the whole
    interval lies between 1-gamma and gamma; otherwise undecided."""
    if not 0.5 < gamma < 1.0:
        raise ValueError("gamma %r is not between 0.5 and 1" % (gamma,))
    if lower > 0.5 and p > gamma:
        return A_BETTER
    if upper < 0.5 and p < 1.0 - gamma:
        return B_BETTER
    if lower > 1.0 - gamma and upper < gamma:
        return NO_DIFFERENCE
    return UNDECIDED


def fewest_decisive_pairs(level):
    """The fewest pairs at which a look may decide: the fewest n at which A winning
    every pair would be significant by the exact two-sided sign test at `level`
    (2 * 0.5**n < 1 - level). Below it, the bootstrap interval of P(A>B) collapses
    onto the few values there are (two pairs, both won: [1, 1]) and means nothing."""
    return int(math.floor(math.log2(2.0 / (1.0 - level)))) + 1


def verdict_at(p, lower, upper, pairs, level, gamma=DEFAULT_GAMMA):
    """verdict(), but undecided below fewest_decisive_pairs(level)."""
    return verdict(p, lower, upper, gamma) if pairs >= fewest_decisive_pairs(level) else UNDECIDED


def significant(lower, upper):
    """The interval of P(A>B) excludes 0.5."""
    return lower > 0.5 or upper < 0.5


def look_level(level, looks):
    """The interval level of each of `looks` planned looks so that, together, they err
    at most 1-level (Bonferroni over the looks: each look at alpha/looks)."""
    return 1.0 - (1.0 - level) / max(1, int(looks))


def planned_looks(min_runs, max_runs, step):
    """How many times a sequential rule looks: at min_runs, then every `step` runs up to max_runs."""
    if max_runs <= min_runs:
        return 1
    return 1 + int(math.ceil((max_runs - min_runs) / float(step)))


def look_sizes(min_runs, max_runs, step):
    """The numbers of pairs at which the rule looks."""
    sizes = list(range(min_runs, max_runs, step)) if max_runs > min_runs else []
    return sizes + [max_runs]


def runs_to_decide(p, lower, upper, runs, gamma=DEFAULT_GAMMA):
    """Pairs in all that would likely decide, if P(A>B) stayed where it is and the
    interval narrowed as 1/sqrt(runs); None when it sits on a boundary (no finite number).

    The interval must clear 0.5 when P is beyond a threshold, or fit inside
    (1-gamma, gamma) when P is between them."""
    half = (upper - lower) / 2.0
    if p > gamma:
        room = p - 0.5
    elif p < 1.0 - gamma:
        room = 0.5 - p
    else:
        room = min(gamma - p, p - (1.0 - gamma))
    if room <= 0 or half <= 0:
        return None if room <= 0 else int(runs)
    return int(math.ceil(runs * (half / room) ** 2))


def variance_shares(scores_by_source):
    """{source: (variance, share)}: each source's variance (sample, ddof=1) over runs
    that vary that source alone, and its share of their sum (one source at a time, as
    Bouthillier et al. 2021 measure each source; the sources taken as independent)."""
    variances = {}
    for source, scores in scores_by_source.items():
        scores = np.asarray(scores, dtype=np.float64)
        variances[source] = float(np.var(scores, ddof=1)) if scores.size > 1 else None
    total = sum(v for v in variances.values() if v is not None)
    return {s: (v, (v / total if total > 0 else None) if v is not None else None) for s, v in variances.items()}


def additivity(alone_variances, joint_scores):
    """(joint variance, ratio): the variance of runs that vary every source together
    (a crossed sample: each run a fresh draw of all of them) and the sum of the
    one-source-at-a-time variances as a share of it. Independent, additive sources
    give a ratio near 1; well above 1 or below it means the sources interact (or
    too few runs to tell: each variance from K runs has a relative standard error
    of about sqrt(2/(K-1)))."""
    joint = np.asarray(joint_scores, dtype=np.float64)
    if joint.size < 2:
        return None, None
    variance = float(np.var(joint, ddof=1))
    measured = [v for v in alone_variances if v is not None]
    if not measured or variance <= 0:
        return variance, None
    return variance, float(sum(measured) / variance)
