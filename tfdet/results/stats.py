"""Pure statistics for ``tfdet probe``: run-to-run variance and the cost of determinism.

Everything here is a pure function of its arguments: no I/O, no clocks, no global random
state.  The module runs in the parent process and may also run inside a worker under an
old interpreter, so it uses only numpy and the standard library and stays compatible with
Python 3.7 and numpy 1.16 (no walrus, no positional-only parameters, no
``np.random.default_rng``).

Encoding of non-finite numbers
------------------------------
Every result is built from plain Python types (``int``, ``float``, ``str``, ``bool``,
``None``, ``list``, ``dict``) so it can go straight to ``json.dumps``.  Non-finite values
are plain ``float('inf')`` and ``float('nan')``, never strings: a column keeps one type,
and pandas reads it as float.  Python's ``json`` writes them as the tokens ``Infinity``
and ``NaN`` (its default, ``allow_nan=True``) and reads them back; writers must therefore
not pass ``allow_nan=False``, and a strict JSON reader (a browser's ``JSON.parse``) needs
them converted first.

A ULP distance involving exactly one NaN has no meaningful size; it is reported as the
sentinel :data:`NAN_MISMATCH` (the largest ``uint64``), which no real distance reaches
(the largest, ``-inf`` to ``+inf`` in float64, is ``0xFFE0000000000000``).
"""

import hashlib
import math

import numpy as np

__all__ = [
    "NAN_MISMATCH", "digest", "count_distinct", "ulp_distance", "max_abs_diff", "variance_summary",
    "summarise_digests", "median", "iqr", "ratio_interval", "mann_whitney_u",
    "interleaved_order", "max_rate_ruled_out", "describe_ruled_out",
]

#: ULP distance reported where one side is NaN and the other is not (2**64 - 1).
NAN_MISMATCH = int(np.iinfo(np.uint64).max)

# Prefix of the canonical form hashed by digest(); bump the number if the form changes,
# so digests from different tfdet versions can never be compared by mistake.
_DIGEST_PREFIX = b"tfdet-digest-1"

# IEEE binary formats by item size: (unsigned integer of the same width, bits of +inf).
_IEEE = {
    2: (np.uint16, 0x7C00),
    4: (np.uint32, 0x7F800000),
    8: (np.uint64, 0x7FF0000000000000),
}
# bfloat16 (ml_dtypes / TensorFlow's numpy type) is float32 with the low 16 bits cut off.
_BFLOAT16 = (np.uint16, 0x7F80)

# How many resampled values one bootstrap chunk may hold (bounds memory, not results:
# the chunking is a function of the sample size only, so results stay reproducible).
_BOOT_CHUNK_VALUES = 1000000


# --------------------------------------------------------------------------- helpers


def _native(a):
    """``a`` in native byte order (byte-swapped inputs would otherwise view as garbage)."""
    if a.dtype.kind in "biufc" and not a.dtype.isnative:
        return a.astype(a.dtype.newbyteorder("="))
    return a


def _float_format(dtype):
    """(unsigned view type, +inf bits) for a supported binary float dtype, else None."""
    if dtype.name == "bfloat16" and dtype.itemsize == 2:
        return _BFLOAT16
    if dtype.kind == "f":
        return _IEEE.get(dtype.itemsize)
    return None


def _ordered_bits(a, fmt):
    """Map IEEE floats to int64 so that adjacent floats map to adjacent integers.

    The usual sign-magnitude to two's-complement trick: non-negative floats keep their
    bit pattern, negative floats map to minus their magnitude bits.  +0.0 and -0.0 both
    map to 0, so distances across zero count the representable values in between.
    Returns (ordered int64 array, NaN mask).
    """
    utype, inf_bits = fmt
    nbits = np.dtype(utype).itemsize * 8
    bits = a.view(utype)
    sign = (bits & utype(1 << (nbits - 1))) != 0
    mag = bits & utype((1 << (nbits - 1)) - 1)
    isnan = mag > utype(inf_bits)
    mag = mag.astype(np.int64)  # at most 2**63 - 1: fits
    return np.where(sign, -mag, mag), isnan


def _int64_distance(x, y):
    """|x - y| for int64 arrays as uint64, exact even where the difference exceeds int64."""
    xu = np.asarray(x, dtype=np.int64).view(np.uint64)
    yu = np.asarray(y, dtype=np.int64).view(np.uint64)
    # Unsigned subtraction wraps modulo 2**64, and the true difference is below 2**64.
    return np.where(x >= y, xu - yu, yu - xu)


def _ulp_same_dtype(a, b):
    """ulp_distance for native arrays of one dtype and shape; TypeError if unsupported."""
    dtype = a.dtype
    if dtype.kind == "b":
        return (a != b).astype(np.uint64)
    if dtype.kind == "i":
        return _int64_distance(a.astype(np.int64), b.astype(np.int64))
    if dtype.kind == "u":
        x, y = a.astype(np.uint64), b.astype(np.uint64)
        return np.where(x >= y, x - y, y - x)
    if dtype.kind == "c":
        return np.maximum(_ulp_same_dtype(a.real, b.real), _ulp_same_dtype(a.imag, b.imag))
    fmt = _float_format(dtype)
    if fmt is None:
        raise TypeError("ulp_distance: unsupported dtype %s" % dtype)
    x, xnan = _ordered_bits(a, fmt)
    y, ynan = _ordered_bits(b, fmt)
    dist = _int64_distance(x, y)
    dist = np.where(xnan & ynan, np.uint64(0), dist)
    return np.where(xnan != ynan, np.uint64(NAN_MISMATCH), dist).astype(np.uint64)


def max_abs_diff(x, f):
    """max |x - f| as a float; matching NaNs ignored, any other undefined difference -> inf."""
    if x.size == 0:
        return 0.0
    if x.dtype.kind in "biu":
        # Exact integer difference: float64 subtraction of large int64 values could round.
        return float(np.max(_ulp_same_dtype(x, f)))
    if x.dtype.kind == "c":
        xv, fv = x.astype(np.complex128), f.astype(np.complex128)
    elif _float_format(x.dtype) is not None or x.dtype.kind == "f":
        xv, fv = x.astype(np.float64), f.astype(np.float64)
    else:
        return None
    with np.errstate(invalid="ignore", over="ignore"):
        xnan, fnan = np.isnan(xv), np.isnan(fv)
        # (x == f) covers inf == inf, whose difference would be NaN.
        same = (xv == fv) | (xnan & fnan)
        d = np.where(same, 0.0, np.abs(xv - fv))
    # What is still NaN is a NaN/number mismatch or inf - inf of opposite kinds: unbounded.
    d = np.where(np.isnan(d), np.inf, d)
    return float(np.max(d))


def _element_bytes(a):
    """(size, itemsize) uint8 view of a native array, for elementwise bitwise comparison."""
    flat = np.ascontiguousarray(a.reshape(-1))
    return flat.view(np.uint8).reshape(flat.size, a.dtype.itemsize)


def _frobenius(a):
    """Frobenius norm in float64 as sqrt(sum(x**2)), summed by numpy's pairwise sum.

    Unscaled on purpose: it is the textbook definition the literature compares, and it is
    exact whenever the squares and partial sums are (which the golden tests rely on).  It
    overflows to inf only for float64 inputs beyond ~1e154; float32 and narrower cannot.
    NaN anywhere gives NaN.
    """
    if a.dtype.kind == "c":
        c = a.astype(np.complex128).reshape(-1)
        sq = np.square(c.real) + np.square(c.imag)
    elif a.dtype.kind in "biuf" or _float_format(a.dtype) is not None:
        sq = np.square(a.astype(np.float64).reshape(-1))
    else:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        return float(np.sqrt(np.sum(sq, dtype=np.float64)))


def _samples(samples, name):
    """Timing samples as a 1-d float64 array; ValueError if empty or not finite."""
    a = np.asarray(samples, dtype=np.float64).reshape(-1)
    if a.size == 0:
        raise ValueError("%s: no samples" % name)
    if not np.all(np.isfinite(a)):
        raise ValueError("%s: samples must be finite" % name)
    return a


# --------------------------------------------------------------------------- variance


def digest(array):
    """Hex SHA-256 of an array's canonical form: dtype, shape and C-order bytes.

    Two arrays are bitwise identical iff their digests are equal.  Bitwise means what it
    says: -0.0 and +0.0 differ, and so do NaNs with different payloads.  The form is
    independent of memory layout (Fortran order, strides) and of byte order (numeric
    data is hashed little-endian), so digests taken in different processes or machines
    compare; it does depend on the dtype and shape, so the same bytes reshaped differ.
    Object arrays are refused: their bytes are pointers.
    """
    a = np.asarray(array)
    if a.dtype.hasobject:
        raise TypeError("digest: object arrays have no canonical bytes")
    if a.dtype.kind in "biufc":
        little = a.dtype.newbyteorder("<")
        if a.dtype != little:
            a = a.astype(little)
    header = b"\0".join([
        _DIGEST_PREFIX,
        a.dtype.str.encode("ascii"),
        a.dtype.name.encode("ascii"),
        ",".join(str(int(n)) for n in a.shape).encode("ascii"),
        b"",
    ])
    h = hashlib.sha256(header)
    h.update(a.tobytes(order="C"))
    return h.hexdigest()


def count_distinct(digests):
    """Number of distinct digests (distinct bitwise results)."""
    return len(set(digests))


def ulp_distance(a, b):
    """Elementwise distance in units in the last place, as a uint64 array of the shape.

    Floats (float16, float32, float64, and bfloat16 from ml_dtypes or TensorFlow) are
    mapped to integers monotonically (see :func:`_ordered_bits`), so the distance is the
    number of representable steps between the values: adjacent floats are 1 apart, +0.0
    and -0.0 are 0 apart, the two smallest subnormals of opposite sign are 2 apart, and
    inf is 1 from the largest finite value.  Both NaN: 0.  One NaN: :data:`NAN_MISMATCH`.

    Integers: the exact absolute difference.  Bool: 0 or 1.  Complex: the larger of the
    distances of the real and imaginary parts.

    Shapes must match (ValueError) and so must dtypes (TypeError): a ULP is a property
    of one format.  Byte order does not matter.
    """
    a = _native(np.asarray(a))
    b = _native(np.asarray(b))
    if a.shape != b.shape:
        raise ValueError("ulp_distance: shapes differ: %s vs %s" % (a.shape, b.shape))
    if a.dtype != b.dtype:
        raise TypeError("ulp_distance: dtypes differ: %s vs %s" % (a.dtype, b.dtype))
    return _ulp_same_dtype(a, b)


def variance_summary(outputs):
    """Summarise the outputs of repeated runs of one case (from one or more processes).

    ``outputs`` is a sequence of at least one array.  Every run is compared with the
    first.  Returns a dict of plain Python values:

    - ``runs``: number of outputs; ``distinct``: number of distinct bitwise results.
    - ``max_abs_diff`` (float): max over runs of max |x - first|.  NaNs in the same
      position are ignored; NaN against a number (or inf against -inf) gives inf.
    - ``max_ulp_diff`` (int): max over runs of :func:`ulp_distance` to the first run;
      :data:`NAN_MISMATCH` for a NaN/number mismatch; None for dtypes without ULPs.
    - ``frac_elements_differ``: fraction of element positions whose bits differ from the
      first run in at least one run, in [0, 1].  Bitwise, like ``distinct``: a -0.0 that
      was +0.0 counts, so ``distinct > 1`` iff this is > 0.
    - ``norm_min``, ``norm_max``, ``norm_spread``: Frobenius norms of the runs in float64
      and max - min (the literature's "compare the norm of the gradients across runs").
      Bitwise-identical runs share one norm by construction, so the spread is exactly 0
      when ``distinct == 1``.  A NaN norm in any run makes all three NaN.
    - ``size``, ``dtype`` (numpy name), ``shape`` (list): of the first run.
    - ``shape_mismatch``: True if some run differs from the first in shape or dtype; such
      runs count as distinct, and ``max_abs_diff``, ``max_ulp_diff`` and
      ``frac_elements_differ`` are None since there is nothing to compare elementwise.

    Empty arrays are fine: every difference is 0.  inf/nan are Python floats (see the
    module docstring).
    """
    arrays = [_native(np.asarray(o)) for o in outputs]
    if not arrays:
        raise ValueError("variance_summary: need at least one output")
    first = arrays[0]
    digests = [digest(a) for a in arrays]
    mismatch = any(a.shape != first.shape or a.dtype != first.dtype for a in arrays[1:])

    # One norm per distinct digest: identical bits must give an identical norm, whatever
    # the memory layout numpy's summation happens to see.
    norm_by_digest = {}
    for d, a in zip(digests, arrays):
        if d not in norm_by_digest:
            norm_by_digest[d] = _frobenius(a)
    norms = [norm_by_digest[d] for d in digests]
    if any(n is None for n in norms):
        norm_min = norm_max = norm_spread = None
    elif any(math.isnan(n) for n in norms):
        norm_min = norm_max = norm_spread = float("nan")
    else:
        norm_min, norm_max = min(norms), max(norms)
        # inf - inf would be NaN; equal norms spread by 0 whatever they are.
        norm_spread = 0.0 if norm_max == norm_min else norm_max - norm_min

    max_abs = max_ulp = frac = None
    if not mismatch:
        others = arrays[1:]
        max_abs = 0.0
        for x in others:
            d = max_abs_diff(x, first)
            max_abs = None if (d is None or max_abs is None) else max(max_abs, d)
        try:
            max_ulp = 0
            for x in others:
                if x.size:
                    max_ulp = max(max_ulp, int(np.max(_ulp_same_dtype(x, first))))
        except TypeError:
            max_ulp = None
        differ = np.zeros(first.size, dtype=bool)
        first_bytes = _element_bytes(first)
        for x in others:
            differ |= np.any(_element_bytes(x) != first_bytes, axis=1)
        frac = float(np.count_nonzero(differ)) / first.size if first.size else 0.0

    return {
        "runs": len(arrays),
        "distinct": count_distinct(digests),
        "max_abs_diff": max_abs,
        "max_ulp_diff": max_ulp,
        "frac_elements_differ": frac,
        "norm_min": norm_min,
        "norm_max": norm_max,
        "norm_spread": norm_spread,
        "size": int(first.size),
        "dtype": first.dtype.name,
        "shape": [int(n) for n in first.shape],
        "shape_mismatch": bool(mismatch),
    }


def summarise_digests(digests_per_process):
    """Variance figures when only digests are available, e.g. from worker processes.

    ``digests_per_process`` holds, per process, the digests of its runs in order.
    Returns ``processes``, ``runs`` (all runs), ``distinct`` (over all runs),
    ``distinct_within_process`` (the most any one process saw: nondeterminism inside a
    process), and ``distinct_across_processes`` (distinct first-run digests: whether a
    fresh process reproduces a fresh process).  Processes with no runs are counted in
    ``processes`` only.
    """
    procs = []
    for p in digests_per_process:
        if isinstance(p, (str, bytes)):
            raise TypeError("summarise_digests: expected a sequence of digests per process")
        procs.append(list(p))
    every = [d for p in procs for d in p]
    if not every:
        raise ValueError("summarise_digests: no digests")
    return {
        "processes": len(procs),
        "runs": len(every),
        "distinct": count_distinct(every),
        "distinct_within_process": max(count_distinct(p) for p in procs if p),
        "distinct_across_processes": count_distinct(p[0] for p in procs if p),
    }


# --------------------------------------------------------------------------- cost


def median(samples):
    """Median of timing samples as a float (ValueError if empty or not finite)."""
    return float(np.median(_samples(samples, "median")))


def iqr(samples):
    """(q1, q3): 25th and 75th percentiles, numpy's default linear interpolation."""
    q1, q3 = np.percentile(_samples(samples, "iqr"), [25.0, 75.0])
    return float(q1), float(q3)


# A ratio's 95% interval that holds both of these says nothing about the cost:
# it admits a 20% gain and a 25% loss alike (x0.8 and x1.25 are each other's
# inverse). Such a cost is "not measured precisely enough", never "no cost".
IMPRECISE_BELOW, IMPRECISE_ABOVE = 0.8, 1.25


def imprecise_cost(low, high):
    """Whether a ratio's interval [low, high] is too wide to say anything (see IMPRECISE_BELOW)."""
    return low is not None and high is not None and low <= IMPRECISE_BELOW and high >= IMPRECISE_ABOVE


def no_measurable_cost(low, high):
    """Whether a ratio's interval [low, high] includes 1 and is narrow enough to
    mean it: no cost (or gain) is shown. False where the interval is unknown."""
    return low is not None and high is not None and low <= 1.0 <= high and not imprecise_cost(low, high)


def _bootstrap_medians(a, n_boot, rs):
    """Medians of ``n_boot`` resamples (with replacement) of ``a``, drawn from ``rs``."""
    chunk = max(1, min(n_boot, _BOOT_CHUNK_VALUES // a.size))
    out = []
    done = 0
    while done < n_boot:
        k = min(chunk, n_boot - done)
        idx = rs.randint(0, a.size, size=(k, a.size))
        out.append(np.median(a[idx], axis=1))
        done += k
    return np.concatenate(out)


def ratio_interval(baseline, other, confidence=0.95, n_boot=2000, seed=0):
    """Ratio of medians ``median(other) / median(baseline)`` with a bootstrap interval.

    Percentile bootstrap: each sample is resampled independently with replacement,
    ``n_boot`` times, and the interval is the central ``confidence`` part of the
    resampled ratios.  The resampling uses ``np.random.RandomState(seed)`` (first all
    baseline resamples, then all of ``other``): numpy keeps the legacy RandomState
    stream stable across versions, so a report is reproducible from its inputs.

    Samples are latencies: finite numbers (ValueError if empty or not).  The baseline
    median must be positive (ValueError).  Returns ``ratio``, ``low``, ``high``,
    ``method`` ("bootstrap-median-ratio"), ``confidence``, ``n_boot`` and ``seed``.
    """
    b = _samples(baseline, "ratio_interval baseline")
    o = _samples(other, "ratio_interval other")
    if not 0.0 < confidence < 1.0:
        raise ValueError("ratio_interval: confidence must be in (0, 1), got %r" % (confidence,))
    if int(n_boot) != n_boot or n_boot < 1:
        raise ValueError("ratio_interval: n_boot must be a positive integer, got %r" % (n_boot,))
    n_boot = int(n_boot)
    base_median = float(np.median(b))
    if not base_median > 0.0:
        raise ValueError("ratio_interval: baseline median must be positive, got %r" % base_median)
    ratio = float(np.median(o)) / base_median

    rs = np.random.RandomState(seed)
    boot_b = _bootstrap_medians(b, n_boot, rs)
    boot_o = _bootstrap_medians(o, n_boot, rs)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = boot_o / boot_b  # a resampled baseline median of 0 gives inf, not an error
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(ratios, [tail, 100.0 - tail])
    return {
        "ratio": ratio,
        "low": float(low),
        "high": float(high),
        "method": "bootstrap-median-ratio",
        "confidence": float(confidence),
        "n_boot": n_boot,
        "seed": seed,
    }


def _average_ranks(x):
    """1-based ranks of ``x``, ties sharing the mean of the ranks they span; and tie sizes."""
    values, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)  # rank of the last member of each tie group
    group_rank = ends - (counts - 1) / 2.0
    return group_rank[inverse.reshape(-1)], counts


def mann_whitney_u(a, b):
    """Mann-Whitney U test of ``a`` against ``b``, normal approximation, two-sided.

    ``u`` is the statistic of ``a``: the number of pairs (a_i, b_j) with a_i > b_j plus
    half the number of ties, so ``u = len(a) * len(b) / 2`` means no shift and
    ``u = 0`` means every a is below every b.  The p-value uses the normal approximation
    with the tie-corrected variance and a 0.5 continuity correction (as
    ``scipy.stats.mannwhitneyu(a, b, method="asymptotic")`` does):

        sigma**2 = n1 * n2 / 12 * ((n + 1) - sum(t**3 - t) / (n * (n - 1)))
        z = (|u - n1 * n2 / 2| - 0.5) / sigma,   p = erfc(z / sqrt(2)), clipped to [0, 1]

    The approximation is rough for very small samples (below ~8 per side the exact
    distribution would be better); with the tens of timing samples a probe takes it is
    adequate to say whether a cost difference is significant.  If every value is tied,
    sigma is 0 and p is 1.  Returns ``u``, ``p_two_sided``, ``z`` and ``method``.
    """
    x = _samples(a, "mann_whitney_u a")
    y = _samples(b, "mann_whitney_u b")
    n1, n2 = x.size, y.size
    n = n1 + n2
    ranks, ties = _average_ranks(np.concatenate([x, y]))
    u = float(np.sum(ranks[:n1])) - n1 * (n1 + 1) / 2.0
    mu = n1 * n2 / 2.0
    tie_term = float(np.sum(ties.astype(np.float64) ** 3 - ties)) / (n * (n - 1)) if n > 1 else 0.0
    var = n1 * n2 / 12.0 * ((n + 1) - tie_term)
    if var <= 0.0:
        z, p = 0.0, 1.0
    else:
        z = (abs(u - mu) - 0.5) / math.sqrt(var)
        p = min(1.0, max(0.0, math.erfc(z / math.sqrt(2.0))))
    return {
        "u": u,
        "p_two_sided": p,
        "z": z,
        "method": "normal-approximation-tie-corrected-continuity",
    }


# --------------------------------------------------------------------------- what silence rules out


def max_rate_ruled_out(runs, confidence=0.95):
    """The per-run rate of differing results that ``runs`` identical runs rule out.

    If each run independently differed with probability ``p``, all ``runs`` runs would
    agree with probability ``(1 - p) ** runs``.  The returned ``p`` solves
    ``(1 - p) ** runs = 1 - confidence`` (the exact one-sided binomial bound, the "rule
    of three" for large ``runs``): any rate above it would have shown a difference with
    probability ``confidence`` or more.  40 runs give 0.0722 at 95%; 10 runs 0.259.
    Returns 1.0 for no runs (nothing is ruled out).
    """
    runs = int(runs)
    if runs < 0:
        raise ValueError("max_rate_ruled_out: runs must be >= 0, got %r" % (runs,))
    if not 0.0 < confidence < 1.0:
        raise ValueError("max_rate_ruled_out: confidence must be in (0, 1), got %r" % (confidence,))
    if runs == 0:
        return 1.0
    return float(1.0 - (1.0 - confidence) ** (1.0 / runs))


def describe_ruled_out(runs, confidence=0.95):
    """'0 of 40 runs differed: a per-run rate above 7.2% is ruled out at 95%'."""
    rate = max_rate_ruled_out(runs, confidence)
    if runs == 0:
        return "no runs: nothing is ruled out"
    percent = rate * 100.0
    figure = ("%.0f%%" % percent) if percent >= 10 else ("%.1f%%" % percent) if percent >= 1 else ("%.2f%%" % percent)
    return "0 of %d runs differed: a per-run rate above %s is ruled out at %.0f%%" % (runs, figure, confidence * 100)


# --------------------------------------------------------------------------- scheduling


def interleaved_order(modes, rounds):
    """The order in which mode processes take timing turns: ``rounds`` rotated rounds.

    Round r runs every mode once, starting from ``modes[r % len(modes)]``: for A, B, C
    that is A B C, B C A, C A B, A B C, ...  Every mode goes once per round and, over
    ``len(modes)`` rounds, once in every position, so slow drift of the machine
    (thermal throttling, a background job) is spread evenly instead of landing on one
    mode.  With two modes this is the classic A B B A A B ... pattern.  Returns a flat
    list of length ``rounds * len(modes)``.  Modes must be distinct.
    """
    modes = list(modes)
    if len(set(modes)) != len(modes):
        raise ValueError("interleaved_order: modes must be distinct: %r" % (modes,))
    if int(rounds) != rounds or rounds < 0:
        raise ValueError("interleaved_order: rounds must be a non-negative integer, got %r"
                         % (rounds,))
    order = []
    if not modes:
        return order
    for r in range(int(rounds)):
        k = r % len(modes)
        order.extend(modes[k:] + modes[:k])
    return order
