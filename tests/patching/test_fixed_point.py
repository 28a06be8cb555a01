"""tfdet.patching.fixed_point: segment sums of float16/bfloat16/float32 on one fixed-point grid per
call (the order-fixed method's sums under set_order_fixed_sum("fixed_point")). Compared with a
float64 reference within the stated bound and with the stock op; non-finite values and ids as stock;
the same bits under any order of the rows and with either realization of its exact sums (the CPU
kernels, TF's int32 UnsortedSegmentSum as on a GPU), on each of its paths (one float64 pass, limbs,
the per-segment grid for very long segments); where the primitive uses it."""

import numpy as np
import pytest

import tensorflow as tf

from tfdet.patching import fixed_point as F
from tfdet.patching import kernels as K
from tfdet.patching import primitive as P
from tfdet.patching import replacements as R

import patch_cases as C  # noqa: E402

# One rounding to the output dtype (float64 first: at most twice the unit roundoff), relative to |sum|.
ROUNDING = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


def _sum(x, ids, num, dtype="float32", validate=True):
    x = np.asarray(x)
    data = tf.constant(x.reshape(len(x), -1) if x.ndim == 1 else x, tf.as_dtype(dtype))
    out = F.segment_sum(data, tf.constant(ids), num, validate=validate)
    return out[:, 0] if x.ndim == 1 else out


def _rounded(x, dtype):
    return tf.cast(tf.constant(np.asarray(x, np.float64), tf.as_dtype(dtype)), tf.float64).numpy()


def _data(seed, n, depth, num, spread=20.0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, depth)) * np.exp(rng.uniform(-spread, spread, (n, depth)))
    return x, rng.integers(-2, num, n).astype(np.int32)


def _within_bound(x, ids, num, dtype):
    """|ours - float64 reference| <= rows * 2**-MIN_BITS * (largest |value|) + the final rounding."""
    xr = _rounded(x, dtype).reshape(len(ids), -1)
    ours = tf.cast(_sum(xr, ids, num, dtype), tf.float64).numpy().reshape(num, -1)
    keep = ids >= 0
    ref = np.zeros((num, xr.shape[1]))
    np.add.at(ref, ids[keep], xr[keep])
    rows = np.bincount(ids[keep], minlength=num)[:, None]
    bound = rows * 2.0 ** -F.MIN_BITS * np.max(np.abs(xr), initial=0.0) + ROUNDING[dtype] * np.abs(ref)
    assert np.all(np.abs(ours - ref) <= bound + 1e-300), np.max(np.abs(ours - ref) - bound)
    return ours, ref


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("depth", [1, 3])
def test_within_bound_of_float64_reference_and_close_to_stock(dtype, depth):
    x, ids = _data(0, 4000, depth, 53, spread=3.0)
    ours, ref = _within_bound(x, ids, 53, dtype)
    stock = tf.cast(tf.math.unsorted_segment_sum(tf.constant(x, tf.as_dtype(dtype)), ids, 53), tf.float64).numpy()
    np.testing.assert_allclose(ours, stock.reshape(ours.shape), rtol=0,
                               atol=4000 * ROUNDING[dtype] * float(np.max(np.abs(ref))))
    if dtype == "float32":  # values of one scale: more accurate than the stock op's sequential float32 sums
        assert np.sum(np.abs(ours - ref)) <= np.sum(np.abs(stock.reshape(ours.shape) - ref))


def test_wide_magnitudes_within_the_call_bound():
    x, ids = _data(1, 3000, 2, 31, spread=30.0)  # values over 26 decades: small segments lose what the bound says
    _within_bound(x, ids, 31, "float32")


def test_non_finite_values_as_stock():
    inf, nan = np.inf, np.nan
    x = np.array([inf, 1.0, -inf, 2.0, inf, -inf, nan, 1.0, inf, inf, 3.0, -inf, -inf], np.float32)
    ids = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 6], np.int32)
    np.testing.assert_array_equal(_sum(x, ids, 8).numpy(), tf.math.unsorted_segment_sum(x, ids, 8).numpy())


def test_ids_as_the_stock_kernels():
    x = np.arange(1, 6, dtype=np.float32)
    ids = np.array([0, -1, 2, 2, 0], np.int32)
    np.testing.assert_array_equal(_sum(x, ids, 4).numpy(), [6.0, 0.0, 7.0, 0.0])  # negative dropped, empty 0
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        _sum(x, np.array([0, 1, 9, 2, 0], np.int32), 4)
    np.testing.assert_array_equal(_sum(x, np.array([0, 1, 9, 2, 0], np.int64), 4, validate=False).numpy(),
                                  [6.0, 2.0, 4.0, 0.0])  # dropped when not validated
    assert _sum(np.zeros((0, 2)), np.zeros([0], np.int32), 3).numpy().tolist() == [[0, 0]] * 3


# (rows, segments, depth): one float64 pass on a CPU (short segments); limbs (a segment of 2**14 rows:
# 53 - c < MIN_BITS); the per-segment grid (a segment of more than 2**20 - 1 rows).
PATHS = [(20000, 301, 1), (20000, 301, 3), (40000, 2, 1),
         pytest.param((1 << 20) + 5, 1, 1, marks=pytest.mark.slow)]


@pytest.mark.parametrize("n,num,depth", PATHS)
def test_same_bits_in_any_order_and_with_either_integer_kernel(n, num, depth):
    rng = np.random.default_rng(n)
    x = (rng.standard_normal((n, depth)) * np.exp(rng.uniform(-8, 8, (n, depth)))).astype(np.float32)
    ids = rng.integers(0, num, n).astype(np.int32)
    here = _sum(x, ids, num).numpy()
    perm = rng.permutation(n)
    assert _sum(x[perm], ids[perm], num).numpy().tobytes() == here.tobytes()
    before = K.assume_cpu_only(False)
    try:
        gpu_like = _sum(x, ids, num).numpy()
    finally:
        K.assume_cpu_only(before)
    assert gpu_like.tobytes() == here.tobytes()
    ref = np.zeros((num, depth))
    np.add.at(ref, ids, x.astype(np.float64))
    np.testing.assert_allclose(here.reshape(num, depth), ref, rtol=2.0 ** -20, atol=n * 2.0 ** -40 * np.max(np.abs(x)))


def test_the_integer_kernels_are_what_runs():
    spec = (tf.TensorSpec([None, 2], tf.float32), tf.TensorSpec([None], tf.int32))

    def ops():
        return C.op_types(tf.function(lambda x, i: F.segment_sum(x, i, 7)).get_concrete_function(*spec)
                          .graph.as_graph_def())

    before = K.assume_cpu_only(False)
    try:
        gpu_like = ops()
    finally:
        K.assume_cpu_only(before)
    assert "UnsortedSegmentSum[int32]" in gpu_like
    assert not gpu_like & C.FORBIDDEN_OPS and not {"RaggedBincount", "DenseBincount"} & gpu_like
    assert not any(t.startswith("UnsortedSegment") and not t.endswith("[int32]") for t in gpu_like)


def test_primitive_uses_it_for_unsorted_narrow_sums_only():
    x, ids = _data(4, 3000, 3, 40, spread=3.0)
    expected = _sum(x, ids, 40).numpy()
    spec = [tf.TensorSpec([None, 3], tf.float32), tf.TensorSpec([None], tf.int32)]  # rows known to be narrow
    with P.order_fixed_sum_scope("fixed_point"), P.method_scope("order_fixed"):
        eager = P.segment_reduce(tf.constant(x, tf.float32), ids, 40).numpy()
        fn = tf.function(lambda a, i: P.segment_reduce(a, i, 40), input_signature=spec)
        traced = fn(tf.constant(x, tf.float32), tf.constant(ids)).numpy()
        ops = C.op_types(fn.get_concrete_function().graph.as_graph_def())
        wide = C.op_types(tf.function(lambda a, i: P.segment_reduce(a, i, 40), input_signature=[
            tf.TensorSpec([None, 64], tf.float32), spec[1]]).get_concrete_function().graph.as_graph_def())
        presorted = C.op_types(tf.function(lambda a, i: P.segment_reduce(a, i, 40, sorted_ids=True),
                                           input_signature=spec).get_concrete_function().graph.as_graph_def())
    assert eager.tobytes() == expected.tobytes() == traced.tobytes()
    assert not ops & {"DynamicPartition", "TopKV2"}  # no sort
    assert "DynamicPartition" in wide  # wide rows: the sort, which measured faster
    assert not {"DenseBincount", "RaggedBincount"} & presorted  # sorted ids: the sort path, which sorts nothing


@pytest.mark.parametrize("gpu_machine", [False, True])
def test_bincount_matches_stock_and_holds_no_nondeterministic_op(gpu_machine):
    rng = np.random.default_rng(5)
    arr = rng.integers(0, 300, 20000).astype(np.int32)
    w = (rng.standard_normal(20000) * 100).astype(np.float32)
    before = K.assume_cpu_only(False) if gpu_machine else None
    try:
        with P.order_fixed_sum_scope("fixed_point"), P.method_scope("order_fixed"):
            ours = R.bincount(arr, weights=w, minlength=310).numpy()
            types = C.op_types(C.gradient_graph(tf, "bincount/weights"))
    finally:
        if gpu_machine:
            K.assume_cpu_only(before)
    stock = tf.math.bincount(arr, weights=w, minlength=310).numpy()
    np.testing.assert_allclose(ours, stock, rtol=1e-5, atol=1e-5 * np.max(np.abs(stock)))
    assert not types & {"DynamicPartition", "TopKV2"}
    for version in ("2.4", "2.6"):  # the GPU plans that take the order-fixed path
        forbidden, _ = C.catalogue_forbidden(version)
        bad = types & (forbidden | C.FORBIDDEN_OPS)
        if not gpu_machine:  # exact sums on a CPU: the bincount kernel's order cannot change an integer sum
            bad -= {"DenseBincount"}
        assert not bad, (version, sorted(bad))
