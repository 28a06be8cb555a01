"""Tests for tfdet.results.stats: pure statistics of probe runs (numpy only, fast)."""

import hashlib
import json
import math
import os
import statistics
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import FLOAT_DTYPES, FLOAT_WIDTHS

from tfdet.results import stats
from tfdet.results.stats import (
    NAN_MISMATCH, count_distinct, digest, interleaved_order, iqr, mann_whitney_u, median,
    ratio_interval, summarise_digests, ulp_distance, variance_summary,
)

GOLDEN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "golden")
FLOATS = [np.float16, np.float32, np.float64]
UINT_OF = {np.float16: np.uint16, np.float32: np.uint32, np.float64: np.uint64}


def ulp(a, b, dtype):
    """ulp_distance of two scalars of one dtype, as a Python int."""
    return int(ulp_distance(np.array([a], dtype), np.array([b], dtype))[0])


# --------------------------------------------------------------------------- ulp_distance


@pytest.mark.parametrize("dtype", FLOATS)
def test_ulp_adjacent_floats_are_one_apart(dtype):
    for x in [0.0, 1.0, -1.0, 3.5, -1e-3, float(np.finfo(dtype).tiny)]:
        x = dtype(x)
        assert ulp(x, np.nextafter(x, dtype(np.inf)), dtype) == 1
        assert ulp(x, np.nextafter(x, dtype(-np.inf)), dtype) == 1


@pytest.mark.parametrize("dtype", FLOATS)
def test_ulp_signed_zero_and_across_zero(dtype):
    assert ulp(0.0, -0.0, dtype) == 0
    smallest = np.nextafter(dtype(0), dtype(1))  # smallest positive subnormal
    assert ulp(smallest, -smallest, dtype) == 2
    assert ulp(smallest, -0.0, dtype) == 1
    assert ulp(-1.0, 1.0, dtype) == 2 * ulp(0.0, 1.0, dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_ulp_infinities(dtype):
    big = np.finfo(dtype).max
    assert ulp(np.inf, big, dtype) == 1
    assert ulp(-np.inf, -big, dtype) == 1
    assert ulp(np.inf, np.inf, dtype) == 0
    # -inf to +inf: twice the magnitude bits of inf.
    inf_bits = int(np.array([np.inf], dtype).view(UINT_OF[dtype])[0])
    assert ulp(-np.inf, np.inf, dtype) == 2 * inf_bits < NAN_MISMATCH


@pytest.mark.parametrize("dtype", FLOATS)
def test_ulp_nan(dtype):
    assert ulp(np.nan, np.nan, dtype) == 0
    assert ulp(np.nan, -np.nan, dtype) == 0
    assert ulp(np.nan, 1.0, dtype) == NAN_MISMATCH
    assert ulp(np.inf, np.nan, dtype) == NAN_MISMATCH
    # a NaN with another payload is still NaN/NaN
    other_nan = np.array([np.nan], dtype).view(UINT_OF[dtype]) + UINT_OF[dtype](1)
    assert int(ulp_distance(other_nan.view(dtype), np.array([np.nan], dtype))[0]) == 0


def test_ulp_sentinel_value():
    assert NAN_MISMATCH == 2 ** 64 - 1
    assert isinstance(NAN_MISMATCH, int)


def test_ulp_returns_uint64_of_input_shape():
    a = np.zeros((2, 3), np.float32)
    d = ulp_distance(a, a)
    assert d.dtype == np.uint64 and d.shape == (2, 3)
    assert ulp_distance(np.float32(1), np.float32(1)).shape == ()


def test_ulp_shape_mismatch_names_both_shapes():
    with pytest.raises(ValueError) as err:
        ulp_distance(np.zeros((2, 3)), np.zeros((3, 2)))
    assert "(2, 3)" in str(err.value) and "(3, 2)" in str(err.value)


def test_ulp_dtype_mismatch_and_unsupported():
    with pytest.raises(TypeError):
        ulp_distance(np.zeros(2, np.float32), np.zeros(2, np.float64))
    with pytest.raises(TypeError):
        ulp_distance(np.array(["a"]), np.array(["b"]))


def test_ulp_byte_order_does_not_matter():
    a = np.array([1.0, -2.5], "<f4")
    b = np.array([np.nextafter(np.float32(1), np.float32(2)), -2.5], ">f4")
    assert ulp_distance(a, b.astype("<f4")).tolist() == [1, 0]
    assert ulp_distance(a.astype(">f4"), b).tolist() == [1, 0]


def test_ulp_integers_bool_complex():
    i64 = np.iinfo(np.int64)
    assert ulp_distance(np.array([i64.min]), np.array([i64.max])).tolist() == [2 ** 64 - 1]
    assert ulp_distance(np.int8([-128]), np.int8([127])).tolist() == [255]
    assert ulp_distance(np.uint64([0, 5]), np.uint64([2 ** 64 - 1, 3])).tolist() == [2 ** 64 - 1, 2]
    assert ulp_distance(np.array([True, False, True]), np.array([False, False, True])).tolist() == [1, 0, 0]
    one = np.float32(1)
    c1 = np.array([1 + 1j, 2 + 0j], np.complex64)
    c2 = np.array([complex(np.nextafter(one, np.float32(2)), 1), complex(2, -0.0)], np.complex64)
    assert ulp_distance(c1, c2).tolist() == [1, 0]
    c3 = np.array([complex(1, np.nan), 2 + 0j], np.complex128)
    assert ulp_distance(c1.astype(np.complex128), c3).tolist() == [NAN_MISMATCH, 0]


def test_ulp_bfloat16_if_available():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    bf = ml_dtypes.bfloat16
    a = np.array([1.0, 0.0, np.inf, np.nan], bf)
    b = np.array([1.0078125, -0.0, 3.3895313892515355e38, 1.0], bf)  # 1 + 2**-7 is one step
    assert ulp_distance(a, b).tolist() == [1, 0, 1, NAN_MISMATCH]


@settings(max_examples=200, deadline=None)
@given(FLOAT_WIDTHS, st.floats(width=64), st.floats(width=64))
def test_ulp_symmetric_and_zero_iff_equal_valued(width, x, y):
    dtype = FLOAT_DTYPES[width]
    with np.errstate(over="ignore"):
        a, b = np.array([x, y]).astype(dtype)
    d_ab, d_ba = ulp(a, b, dtype), ulp(b, a, dtype)
    assert d_ab == d_ba
    equal_valued = (a == b) or (np.isnan(a) and np.isnan(b))
    assert (d_ab == 0) == bool(equal_valued)


@settings(max_examples=200, deadline=None)
@given(FLOAT_WIDTHS, st.floats(allow_nan=False, allow_infinity=False), st.booleans())
def test_ulp_nextafter_is_one(width, x, up):
    dtype = FLOAT_DTYPES[width]
    with np.errstate(over="ignore"):
        a = dtype(x)
    if not np.isfinite(a):
        a = np.finfo(dtype).max  # rounded past the format's range
    target = dtype(np.inf) if up else dtype(-np.inf)
    with np.errstate(over="ignore"):  # nextafter(max, inf) is inf, one step away
        b = np.nextafter(a, target)
    assert ulp(a, b, dtype) == 1


# --------------------------------------------------------------------------- digest


def test_digest_equality_and_inequality():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert digest(a) == digest(a.copy())
    b = a.copy()
    b[1, 2] = np.nextafter(b[1, 2], np.float32(10))
    assert digest(a) != digest(b)
    assert len(digest(a)) == 64 and int(digest(a), 16) >= 0


def test_digest_signed_zero_and_nan_payload_differ():
    assert digest(np.array([0.0])) != digest(np.array([-0.0]))
    nan = np.array([np.nan])
    other = (nan.view(np.uint64) + np.uint64(1)).view(np.float64)
    assert np.isnan(other[0])
    assert digest(nan) != digest(other)


def test_digest_sensitive_to_dtype_and_shape():
    a = np.arange(6, dtype=np.int32)
    assert digest(a) != digest(a.reshape(2, 3))  # same bytes, different shape
    assert digest(a.reshape(2, 3)) != digest(a.reshape(3, 2))
    assert digest(a) != digest(a.view(np.float32))  # same bytes, different dtype
    assert digest(a) != digest(a.view(np.uint32))
    assert digest(np.float32(1.0)) != digest(np.array([1.0], np.float32))  # () vs (1,)


def test_digest_independent_of_layout_and_byte_order():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    assert digest(a) == digest(np.asfortranarray(a))
    assert digest(a[:, ::2]) == digest(np.ascontiguousarray(a[:, ::2]))
    assert digest(a) == digest(a.astype(">f8"))


def test_digest_canonical_form_is_pinned():
    """Digests are compared across processes and tfdet versions: pin the exact form."""
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype="<i2")
    expected = hashlib.sha256(
        b"tfdet-digest-1\0<i2\0int16\0" + b"2,3\0" + b"\x01\x00\x02\x00\x03\x00\x04\x00\x05\x00\x06\x00"
    ).hexdigest()
    assert digest(a) == expected
    assert digest(np.zeros((0,), np.float32)) == hashlib.sha256(b"tfdet-digest-1\0<f4\0float32\0" + b"0\0").hexdigest()


def test_digest_refuses_object_arrays():
    with pytest.raises(TypeError):
        digest(np.array([object()]))


def test_count_distinct():
    assert count_distinct([]) == 0
    assert count_distinct(["a", "b", "a"]) == 2
    assert count_distinct(iter(["x"] * 5)) == 1


# --------------------------------------------------------------------------- variance_summary

KEYS = {"runs", "distinct", "max_abs_diff", "max_ulp_diff", "frac_elements_differ", "norm_min",
        "norm_max", "norm_spread", "size", "dtype", "shape", "shape_mismatch"}


def assert_plain(obj):
    """Only plain Python types, and JSON round-trips to an equal value."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            assert type(k) is str
            assert_plain(v)
    elif isinstance(obj, list):
        for v in obj:
            assert_plain(v)
    else:
        assert obj is None or type(obj) in (bool, int, float, str), (obj, type(obj))


def test_variance_identical_runs():
    rs = np.random.RandomState(0)
    x = rs.standard_normal((4, 5)).astype(np.float32)
    s = variance_summary([x, x.copy(), x.copy()])
    assert set(s) == KEYS
    assert_plain(s)
    assert s["runs"] == 3 and s["distinct"] == 1
    assert s["max_abs_diff"] == 0.0 and s["max_ulp_diff"] == 0
    assert s["frac_elements_differ"] == 0.0 and s["norm_spread"] == 0.0
    assert s["norm_min"] == s["norm_max"] == pytest.approx(float(np.linalg.norm(x.astype(np.float64))))
    assert s["size"] == 20 and s["dtype"] == "float32" and s["shape"] == [4, 5]
    assert s["shape_mismatch"] is False


def test_variance_identical_bits_share_a_norm_whatever_the_layout():
    x = np.random.RandomState(1).standard_normal((64, 33))
    s = variance_summary([x, np.asfortranarray(x), x[::1, :].copy()])
    assert s["distinct"] == 1 and s["norm_spread"] == 0.0


@pytest.mark.parametrize("dtype", FLOATS)
def test_variance_one_element_one_ulp(dtype):
    x = np.linspace(-2, 3, 12).astype(dtype).reshape(3, 4)
    y = x.copy()
    y[2, 1] = np.nextafter(y[2, 1], dtype(np.inf))
    s = variance_summary([x, x, y, x])
    assert s["runs"] == 4 and s["distinct"] == 2
    assert s["max_ulp_diff"] == 1
    assert s["frac_elements_differ"] == 1.0 / 12
    assert s["max_abs_diff"] == float(y[2, 1]) - float(x[2, 1]) > 0
    # float64 norms cannot resolve a one-ulp change of a float64 element; narrower can
    assert s["norm_spread"] > 0 if dtype is not np.float64 else s["norm_spread"] >= 0


def test_variance_signed_zero_is_bitwise_distinct_but_value_equal():
    s = variance_summary([np.array([0.0, 1.0]), np.array([-0.0, 1.0])])
    assert s["distinct"] == 2 and s["frac_elements_differ"] == 0.5
    assert s["max_abs_diff"] == 0.0 and s["max_ulp_diff"] == 0 and s["norm_spread"] == 0.0


def test_variance_single_run_and_no_runs():
    s = variance_summary([np.arange(3.0)])
    assert s["runs"] == 1 and s["distinct"] == 1 and s["max_abs_diff"] == 0.0
    assert s["max_ulp_diff"] == 0 and s["frac_elements_differ"] == 0.0
    with pytest.raises(ValueError):
        variance_summary([])


def test_variance_empty_arrays():
    s = variance_summary([np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float32)])
    assert s["size"] == 0 and s["distinct"] == 1 and s["shape"] == [0, 4]
    assert s["max_abs_diff"] == 0.0 and s["max_ulp_diff"] == 0 and s["frac_elements_differ"] == 0.0
    assert s["norm_min"] == s["norm_max"] == s["norm_spread"] == 0.0
    assert_plain(s)


def test_variance_nan_cases():
    same = variance_summary([np.array([np.nan, 1.0]), np.array([np.nan, 1.0])])
    assert same["distinct"] == 1 and same["max_abs_diff"] == 0.0 and same["max_ulp_diff"] == 0
    assert math.isnan(same["norm_min"]) and math.isnan(same["norm_spread"])
    mism = variance_summary([np.array([np.nan, 1.0]), np.array([2.0, 1.0])])
    assert mism["max_abs_diff"] == float("inf") and mism["max_ulp_diff"] == NAN_MISMATCH
    assert mism["frac_elements_differ"] == 0.5
    # inf against -inf: undefined difference counts as infinite; inf against inf is equal
    infs = variance_summary([np.array([np.inf, np.inf]), np.array([-np.inf, np.inf])])
    assert infs["max_abs_diff"] == float("inf") and infs["norm_spread"] == 0.0


def test_variance_result_is_json_serialisable_with_inf_and_nan():
    s = variance_summary([np.array([np.nan, 1.0]), np.array([2.0, 1.0])])
    back = json.loads(json.dumps(s))
    assert back["max_abs_diff"] == float("inf") and math.isnan(back["norm_max"])
    assert back["max_ulp_diff"] == NAN_MISMATCH


def test_variance_shape_and_dtype_mismatch_do_not_crash():
    s = variance_summary([np.zeros((2, 2), np.float32), np.zeros(4, np.float32), np.zeros((2, 2), np.float32)])
    assert s["shape_mismatch"] is True and s["distinct"] == 2
    assert s["max_abs_diff"] is None and s["max_ulp_diff"] is None and s["frac_elements_differ"] is None
    assert s["shape"] == [2, 2] and s["norm_spread"] == 0.0
    d = variance_summary([np.ones(3, np.float32), np.ones(3, np.float64)])
    assert d["shape_mismatch"] is True and d["distinct"] == 2 and d["max_ulp_diff"] is None
    assert_plain(s)


def test_variance_integers_complex_bool_and_strings():
    ints = variance_summary([np.array([-128, 0], np.int8), np.array([127, 0], np.int8)])
    assert ints["max_abs_diff"] == 255.0 and ints["max_ulp_diff"] == 255 and ints["dtype"] == "int8"
    big = variance_summary([np.array([2 ** 62 + 1]), np.array([2 ** 62])])
    assert big["max_abs_diff"] == 1.0 and big["max_ulp_diff"] == 1  # exact, not float64-rounded
    c = variance_summary([np.array([3 + 4j]), np.array([3 + 4j])])
    assert c["norm_min"] == 5.0 and c["distinct"] == 1
    b = variance_summary([np.array([True, False]), np.array([True, True])])
    assert b["max_ulp_diff"] == 1 and b["frac_elements_differ"] == 0.5
    s = variance_summary([np.array(["a", "b"]), np.array(["a", "c"])])
    assert s["distinct"] == 2 and s["frac_elements_differ"] == 0.5
    assert s["max_ulp_diff"] is None and s["max_abs_diff"] is None and s["norm_spread"] is None


def test_variance_accepts_lists_and_scalars():
    s = variance_summary([[1.0, 2.0], [1.0, 2.0]])
    assert s["distinct"] == 1 and s["dtype"] == "float64"
    t = variance_summary([np.float32(1.5), np.float32(1.5)])
    assert t["shape"] == [] and t["size"] == 1 and t["norm_min"] == 1.5


# --------------------------------------------------------------------------- summarise_digests


def test_summarise_digests():
    s = summarise_digests([["a", "a", "b"], ["c", "c"], ["a"]])
    assert s == {"processes": 3, "runs": 6, "distinct": 3, "distinct_within_process": 2,
                 "distinct_across_processes": 2}
    deterministic = summarise_digests([["x"] * 3] * 4)
    assert deterministic["distinct"] == 1 and deterministic["distinct_across_processes"] == 1
    # deterministic within each process, yet every fresh process differs
    per_process = summarise_digests([["p"] * 3, ["q"] * 3, ["r"] * 3])
    assert per_process["distinct_within_process"] == 1 and per_process["distinct_across_processes"] == 3
    assert summarise_digests([[], ["a"]])["processes"] == 2


def test_summarise_digests_errors():
    with pytest.raises(ValueError):
        summarise_digests([])
    with pytest.raises(ValueError):
        summarise_digests([[], []])
    with pytest.raises(TypeError):
        summarise_digests(["abc", "def"])


# --------------------------------------------------------------------------- median, iqr


def test_median_and_iqr_known_data():
    assert median([3, 1, 2]) == 2.0
    assert median([4.0, 1.0, 3.0, 2.0]) == 2.5
    assert type(median([1])) is float
    # 1..8: positions (n-1)*p = 1.75 and 5.25 -> 2.75 and 6.25 with linear interpolation
    assert iqr(range(1, 9)) == (2.75, 6.25)
    assert iqr([5.0]) == (5.0, 5.0)
    q1, q3 = iqr([1, 2, 3, 4, 5])
    assert (q1, q3) == (2.0, 4.0) and type(q1) is float


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf")]])
def test_median_iqr_reject_bad_samples(bad):
    with pytest.raises(ValueError):
        median(bad)
    with pytest.raises(ValueError):
        iqr(bad)


# --------------------------------------------------------------------------- ratio_interval


def ref_percentile(sorted_values, p):
    """Linear-interpolation percentile written out by hand."""
    h = (len(sorted_values) - 1) * p / 100.0
    lo = int(math.floor(h))
    if lo + 1 >= len(sorted_values):
        return sorted_values[-1]
    return sorted_values[lo] + (h - lo) * (sorted_values[lo + 1] - sorted_values[lo])


def ref_ratio_interval(baseline, other, confidence, n_boot, seed):
    """Independent pure-Python percentile bootstrap sharing only the RandomState stream."""
    rs = np.random.RandomState(seed)

    def boot(xs):
        return [statistics.median([xs[rs.randint(0, len(xs))] for _ in xs]) for _ in range(n_boot)]

    mb, mo = boot(list(baseline)), boot(list(other))
    ratios = sorted(o / b for o, b in zip(mo, mb))
    tail = (1.0 - confidence) / 2.0 * 100.0
    return ref_percentile(ratios, tail), ref_percentile(ratios, 100.0 - tail)


def test_ratio_interval_constant_samples_exact():
    r = ratio_interval([1.0] * 10, [2.0] * 10)
    assert (r["ratio"], r["low"], r["high"]) == (2.0, 2.0, 2.0)
    assert r["method"] == "bootstrap-median-ratio"
    assert_plain(r)


def test_ratio_interval_ratio_of_medians():
    r = ratio_interval([1.0, 2.0, 100.0], [3.0, 4.0, 5.0, 6.0], n_boot=50)
    assert r["ratio"] == 4.5 / 2.0


def test_ratio_interval_matches_independent_reference():
    rs = np.random.RandomState(99)
    base = rs.gamma(5.0, 1.0, 15)
    other = rs.gamma(5.0, 1.3, 12)
    r = ratio_interval(base, other, confidence=0.8, n_boot=300, seed=3)
    low, high = ref_ratio_interval(base, other, 0.8, 300, 3)
    assert r["low"] == pytest.approx(low, rel=1e-12)
    assert r["high"] == pytest.approx(high, rel=1e-12)


def test_ratio_interval_contains_true_ratio_and_is_reproducible():
    rs = np.random.RandomState(2024)
    base = 1e-3 * rs.lognormal(0.0, 0.1, 60)
    other = 1.25e-3 * rs.lognormal(0.0, 0.1, 60)  # true ratio of medians 1.25
    r = ratio_interval(base, other, seed=11)
    assert r["low"] < 1.25 < r["high"]
    assert r["low"] <= r["ratio"] <= r["high"]
    assert r["high"] - r["low"] < 0.2
    assert ratio_interval(base, other, seed=11) == r
    assert ratio_interval(base, other, seed=12) != r
    narrower = ratio_interval(base, other, confidence=0.5, seed=11)
    assert r["low"] <= narrower["low"] <= narrower["high"] <= r["high"]


def test_ratio_interval_chunking_does_not_change_results(monkeypatch):
    rs = np.random.RandomState(5)
    base, other = rs.uniform(1, 2, 30), rs.uniform(1, 3, 25)
    whole = ratio_interval(base, other, n_boot=100)
    monkeypatch.setattr(stats, "_BOOT_CHUNK_VALUES", 7 * 30)  # several chunks per sample
    assert ratio_interval(base, other, n_boot=100) == whole


@pytest.mark.parametrize("baseline, other, kwargs", [
    ([], [1.0], {}),
    ([1.0], [], {}),
    ([0.0, 0.0, 1.0], [1.0], {}),      # baseline median 0
    ([-2.0, -1.0], [1.0], {}),         # negative baseline median
    ([1.0, float("nan")], [1.0], {}),
    ([1.0], [1.0], {"confidence": 1.0}),
    ([1.0], [1.0], {"confidence": 0.0}),
    ([1.0], [1.0], {"n_boot": 0}),
    ([1.0], [1.0], {"n_boot": 2.5}),
])
def test_ratio_interval_errors(baseline, other, kwargs):
    with pytest.raises(ValueError):
        ratio_interval(baseline, other, **kwargs)


# --------------------------------------------------------------------------- mann_whitney_u


def brute_force_u(a, b):
    return sum(1.0 if x > y else 0.5 if x == y else 0.0 for x in a for y in b)


def hand_p(a, b):
    """The documented normal approximation, written out independently."""
    n1, n2 = len(a), len(b)
    n = n1 + n2
    counts = {}
    for v in list(a) + list(b):
        counts[v] = counts.get(v, 0) + 1
    t = sum(c ** 3 - c for c in counts.values())
    sigma = math.sqrt(n1 * n2 / 12.0 * ((n + 1) - t / (n * (n - 1.0))))
    if sigma == 0:
        return 1.0
    z = (abs(brute_force_u(a, b) - n1 * n2 / 2.0) - 0.5) / sigma
    return min(1.0, 2.0 * (1.0 - 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))))


@pytest.mark.parametrize("a, b", [
    ([1, 2, 3], [4, 5, 6]),
    ([1, 2, 2, 3, 5], [2, 3, 3, 4, 6, 7]),
    ([3.1, 2.0, 5.5, 4.0, 4.0, 1.0, 7.2], [6.0, 8.1, 4.0, 9.3, 7.2, 5.0]),
    ([5.0], [1.0, 2.0]),
])
def test_mann_whitney_u_against_brute_force(a, b):
    r = mann_whitney_u(a, b)
    assert r["u"] == brute_force_u(a, b)
    assert r["p_two_sided"] == pytest.approx(hand_p(a, b), rel=1e-9)
    assert mann_whitney_u(b, a)["u"] == len(a) * len(b) - r["u"]
    assert mann_whitney_u(b, a)["p_two_sided"] == pytest.approx(r["p_two_sided"], rel=1e-12)
    assert_plain(r)


def test_mann_whitney_u_known_values():
    # Cross-checked once against scipy.stats.mannwhitneyu(a, b, method="asymptotic") 1.17.1.
    assert mann_whitney_u([1, 2, 3], [4, 5, 6])["p_two_sided"] == pytest.approx(0.08085559837005224, rel=1e-9)
    r = mann_whitney_u([1, 2, 2, 3, 5], [2, 3, 3, 4, 6, 7])
    assert r["u"] == 7.0 and r["p_two_sided"] == pytest.approx(0.16304505585423734, rel=1e-9)
    r = mann_whitney_u([3.1, 2.0, 5.5, 4.0, 4.0, 1.0, 7.2], [6.0, 8.1, 4.0, 9.3, 7.2, 5.0])
    assert r["u"] == 6.5 and r["p_two_sided"] == pytest.approx(0.044022195041670056, rel=1e-9)


def test_mann_whitney_u_identical_and_separated():
    x = np.random.RandomState(0).normal(10, 1, 40)
    assert mann_whitney_u(x, x)["p_two_sided"] == pytest.approx(1.0)
    assert mann_whitney_u([7.0] * 5, [7.0] * 6)["p_two_sided"] == 1.0  # every value tied
    separated = mann_whitney_u(x, x + 10)
    assert separated["u"] == 0.0 and separated["p_two_sided"] < 1e-10


def test_mann_whitney_u_errors():
    with pytest.raises(ValueError):
        mann_whitney_u([], [1.0])
    with pytest.raises(ValueError):
        mann_whitney_u([1.0], [float("nan")])


# --------------------------------------------------------------------------- interleaved_order


def test_interleaved_order_rotates():
    assert interleaved_order(["A", "B", "C"], 3) == list("ABC" "BCA" "CAB")
    assert interleaved_order(["A", "B"], 4) == list("ABBAABBA")
    assert interleaved_order(("x",), 3) == ["x", "x", "x"]
    assert interleaved_order(["A", "B"], 0) == []
    assert interleaved_order([], 5) == []


@pytest.mark.parametrize("n_modes, rounds", [(1, 1), (2, 5), (3, 6), (4, 7)])
def test_interleaved_order_properties(n_modes, rounds):
    modes = ["m%d" % i for i in range(n_modes)]
    order = interleaved_order(modes, rounds)
    assert len(order) == n_modes * rounds
    positions = {m: [] for m in modes}
    for r in range(rounds):
        turn = order[r * n_modes:(r + 1) * n_modes]
        assert sorted(turn) == sorted(modes)  # every mode once per round
        for pos, m in enumerate(turn):
            positions[m].append(pos)
    # over each complete cycle of n_modes rounds every mode takes every position once
    full = rounds - rounds % n_modes
    for m in modes:
        assert sorted(positions[m][:full]) == sorted(list(range(n_modes)) * (full // n_modes))
    assert interleaved_order(modes, rounds) == order  # pure


def test_interleaved_order_errors():
    with pytest.raises(ValueError):
        interleaved_order(["A", "A"], 2)
    with pytest.raises(ValueError):
        interleaved_order(["A"], -1)


# --------------------------------------------------------------------------- golden files


def load_golden(name):
    with open(os.path.join(GOLDEN, name)) as f:
        return json.load(f)


def array_from_golden(run):
    dtype = np.dtype(run["dtype"])
    bits = np.array([int(b, 16) for b in run["bits"]], dtype="u%d" % dtype.itemsize)
    return bits.view(dtype).reshape(run["shape"])


def assert_same(got, want, where):
    """Exact for ints, strings, bools, None and lists; floats to 1e-12 relative; NaN == NaN."""
    assert type(got) is type(want), (where, got, want)
    if isinstance(want, float):
        if math.isnan(want):
            assert math.isnan(got), (where, got)
        else:
            assert math.isclose(got, want, rel_tol=1e-12, abs_tol=0.0), (where, got, want)
    else:
        assert got == want, (where, got, want)


def check_case(got, expected, name):
    assert set(got) == set(expected), (name, set(got) ^ set(expected))
    for key in expected:
        assert_same(got[key], expected[key], "%s.%s" % (name, key))


@pytest.mark.parametrize("name", ["variance_summary_basic.json", "variance_summary_edge.json"])
def test_golden_variance_summary(name):
    golden = load_golden(name)
    assert golden["function"] == "variance_summary" and golden["cases"]
    for case in golden["cases"]:
        runs = [array_from_golden(r) for r in case["runs"]]
        for arr, r in zip(runs, case["runs"]):  # the readable copy agrees with the bits
            np.testing.assert_array_equal(arr.reshape(-1), np.array([float(v) for v in r["values"]], arr.dtype))
        check_case(variance_summary(runs), case["expected"], case["name"])


def test_golden_ratio_interval():
    golden = load_golden("ratio_interval.json")
    assert golden["function"] == "ratio_interval" and golden["cases"]
    for case in golden["cases"]:
        check_case(ratio_interval(**case["args"]), case["expected"], case["name"])


def test_golden_comparison_detects_changes():
    """The golden check must fail on a perturbed result, an extra key or a changed type."""
    case = load_golden("variance_summary_basic.json")["cases"][0]
    got = variance_summary([array_from_golden(r) for r in case["runs"]])
    check_case(got, case["expected"], "baseline")
    for mutate in [
        lambda d: d.update(norm_spread=d["norm_spread"] * (1 + 1e-9)),
        lambda d: d.update(max_ulp_diff=2),
        lambda d: d.update(frac_elements_differ=None),
        lambda d: d.update(extra=1),
        lambda d: d.update(distinct=3.0),
    ]:
        bad = dict(got)
        mutate(bad)
        with pytest.raises(AssertionError):
            check_case(bad, case["expected"], "mutated")


# --------------------------------------------------------------------------- import hygiene


def test_import_pulls_in_no_heavy_dependencies():
    code = ("import sys; import tfdet.results.stats; "
            "bad = [m for m in ('pandas', 'yaml', 'jsonschema', 'tensorflow', 'scipy', 'jinja2') "
            "if m in sys.modules]; print(','.join(bad))")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.check_output([sys.executable, "-c", code], env=env, cwd=root)
    assert out.decode().strip() == ""


def test_public_names():
    for name in stats.__all__:
        assert hasattr(stats, name)
    assert len(set(stats.__all__)) == len(stats.__all__)


# --------------------------------------------------------------------------- what silence rules out


@pytest.mark.parametrize("runs, expected", [
    # by hand: p = 1 - 0.05 ** (1 / n); ln 0.05 = -2.995732
    (1, 0.95),
    (3, 0.631597),   # 1 - exp(-0.998577)
    (10, 0.258866),  # 1 - exp(-0.299573)
    (40, 0.072158),  # 1 - exp(-0.074893)
    (100, 0.029513),  # 1 - exp(-0.029957)
])
def test_max_rate_ruled_out_hand_values(runs, expected):
    assert stats.max_rate_ruled_out(runs) == pytest.approx(expected, abs=5e-7)
    # the defining property: a rate just above the bound misses with probability below 5%
    assert (1 - stats.max_rate_ruled_out(runs)) ** runs == pytest.approx(0.05)


def test_max_rate_ruled_out_edges():
    assert stats.max_rate_ruled_out(0) == 1.0
    assert stats.max_rate_ruled_out(40, confidence=0.99) == pytest.approx(1 - 0.01 ** (1 / 40))
    assert stats.max_rate_ruled_out(41) < stats.max_rate_ruled_out(40)
    with pytest.raises(ValueError):
        stats.max_rate_ruled_out(-1)
    with pytest.raises(ValueError):
        stats.max_rate_ruled_out(10, confidence=1.0)


def test_describe_ruled_out_reads_as_the_issue_asks():
    assert stats.describe_ruled_out(40) == "0 of 40 runs differed: a per-run rate above 7.2% is ruled out at 95%"
    assert stats.describe_ruled_out(10) == "0 of 10 runs differed: a per-run rate above 26% is ruled out at 95%"
