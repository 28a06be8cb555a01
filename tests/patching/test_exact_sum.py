"""tfdet.patching.exact_sum: segment sums of float16/bfloat16/float32 as integers on a grid per
segment (the order-fixed method's sums under set_order_fixed_sum("exact")). Compared with the
stock op and a float64 reference; non-finite values and ids as stock; the same bits across runs,
thread counts, processes and the two realizations of its integer sums (TF's UnsortedSegmentSum /
UnsortedSegmentMax as on a GPU, the CPU bincount kernels); the ops of its graphs."""

import hashlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tensorflow as tf

from tfdet.patching import exact_sum as E
from tfdet.patching import kernels as K
from tfdet.patching import primitive as P
from tfdet.patching import replacements as R

import patch_cases as C  # noqa: E402

# Bound on |ours - float64 reference| / (sum of |values|): the grid rounding (far below) plus one
# rounding to the output dtype (float64 first: at most twice the unit roundoff).
BOUND = {"float32": 2.0 ** -23, "float16": 2.0 ** -10, "bfloat16": 2.0 ** -7}


@pytest.fixture(autouse=True)
def _exact():
    with P.order_fixed_sum_scope("exact"):
        yield


def _sum(x, ids, num, dtype="float32", validate=True):
    """E.segment_sum of x [n] or [n, D]; the result of x's rank."""
    x = np.asarray(x)
    data = tf.constant(x.reshape(len(x), -1) if x.ndim == 1 else x, tf.as_dtype(dtype))
    out = E.segment_sum(data, tf.constant(ids), num, validate=validate)
    return out[:, 0] if x.ndim == 1 else out


def _reference(x, ids, num):
    """float64 sums and sums of magnitudes per segment (negative ids dropped)."""
    x = np.asarray(x, np.float64)
    out = np.zeros((num,) + x.shape[1:])
    mag = np.zeros_like(out)
    keep = ids >= 0
    np.add.at(out, ids[keep], x[keep])
    np.add.at(mag, ids[keep], np.abs(x[keep]))
    return out, mag


def _rounded(x, dtype):
    """x as the op sees it: rounded to dtype, back in float64."""
    return tf.cast(tf.constant(np.asarray(x, np.float64), tf.as_dtype(dtype)), tf.float64).numpy()


def _check(x, ids, num, dtype):
    xr = _rounded(x, dtype)
    ours = tf.cast(_sum(x, ids, num, dtype), tf.float64).numpy()
    ref, mag = _reference(xr, ids, num)
    assert np.all(np.abs(ours - ref) <= BOUND[dtype] * mag + 1e-300), (dtype, np.max(np.abs(ours - ref) - BOUND[dtype] * mag))
    return ours, ref, mag


def _data(seed, n, depth, num, spread=20.0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, depth)) * np.exp(rng.uniform(-spread, spread, (n, depth)))
    return x, rng.integers(-2, num, n).astype(np.int32)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("depth", [1, 3])
def test_within_bound_of_float64_reference_and_close_to_stock(dtype, depth):
    x, ids = _data(0, 4000, depth, 53, spread=20.0 if dtype == "float32" else 3.0)
    ours, ref, mag = _check(x, ids, 53, dtype)
    stock = tf.cast(tf.math.unsorted_segment_sum(tf.constant(x, tf.as_dtype(dtype)), ids, 53), tf.float64).numpy()
    np.testing.assert_allclose(ours, stock, rtol=0, atol=float(np.max(mag)) * 4 * BOUND[dtype] * 4000)
    if dtype == "float32":  # more accurate than the stock op's sequential float32 sums
        assert np.sum(np.abs(ours - ref)) <= np.sum(np.abs(stock - ref))


def test_cancellation_and_magnitudes():
    big, tiny = 2.0 ** 40, 1.5e-38
    x = np.array([big, -big, 1.0, tiny, -tiny, 2.0 ** -20, 1e-30, -1e-30, 5.0, 0.0, -0.0, 3e38, -3e38, 1.0])
    ids = np.array([0, 0, 0, 1, 1, 1, 2, 2, 3, 4, 4, 6, 6, 6], np.int32)
    ours = _sum(x, ids, 7).numpy()
    # Segment 6: 1.0 is 127 bits below the segment's largest value, under its grid (2**(128 - 60)):
    # lost, an error far below the bound (2**-23 of the sum of magnitudes); stock's sequential sum
    # happens to cancel the two first.
    np.testing.assert_array_equal(ours, np.array([1.0, 2.0 ** -20, 0.0, 5.0, 0.0, 0.0, 0.0], np.float32))
    assert not np.signbit(ours[4]) and not np.signbit(ours[5])  # +0 as stock (0 + -0)
    _check(x, ids, 7, "float32")


def test_non_finite_values_as_stock():
    inf, nan = np.inf, np.nan
    x = np.array([inf, 1.0, -inf, 2.0, inf, -inf, nan, 1.0, inf, inf, 3.0, -inf, -inf], np.float32)
    ids = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 6], np.int32)
    ours = _sum(x, ids, 8).numpy()
    stock = tf.math.unsorted_segment_sum(x, ids, 8).numpy()
    np.testing.assert_array_equal(ours, stock)  # assert_array_equal treats NaN as equal to NaN
    assert np.isnan(ours[2]) and np.isnan(ours[3]) and ours[0] == inf and ours[6] == -inf and ours[7] == 0


def test_ids_as_the_stock_kernels():
    x = np.arange(1, 6, dtype=np.float32)
    ids = np.array([0, -1, 2, 2, 0], np.int32)
    np.testing.assert_array_equal(_sum(x, ids, 4).numpy(), [6.0, 0.0, 7.0, 0.0])  # negative dropped, empty 0
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        _sum(x, np.array([0, 1, 9, 2, 0], np.int32), 4)
    np.testing.assert_array_equal(_sum(x, np.array([0, 1, 9, 2, 0], np.int64), 4, validate=False).numpy(),
                                  [6.0, 2.0, 4.0, 0.0])  # dropped when not validated
    assert _sum(np.zeros((0, 2)), np.zeros([0], np.int32), 3).numpy().tolist() == [[0, 0]] * 3


def _bits_both_ways(x, ids, num, dtype="float32"):
    """The result with the CPU kernels and with TF's integer segment ops (as on a GPU machine)."""
    here = _sum(x, ids, num, dtype).numpy()
    before = K.assume_cpu_only(False)
    try:
        gpu_like = _sum(x, ids, num, dtype).numpy()
    finally:
        K.assume_cpu_only(before)
    return here, gpu_like


def test_same_bits_with_either_integer_kernel():
    x, ids = _data(1, 20000, 2, 301)
    here, gpu_like = _bits_both_ways(x, ids, 301)
    assert here.tobytes() == gpu_like.tobytes()


def test_the_integer_kernels_are_what_runs():
    spec = (tf.TensorSpec([None, 2], tf.float32), tf.TensorSpec([None], tf.int32))

    def ops():
        return C.op_types(tf.function(lambda x, i: E.segment_sum(x, i, 7)).get_concrete_function(*spec)
                          .graph.as_graph_def())

    if K.cpu_only():
        assert "RaggedBincount" in ops()
    before = K.assume_cpu_only(False)
    try:
        gpu_like = ops()
    finally:
        K.assume_cpu_only(before)
    assert {"UnsortedSegmentSum[int32]", "UnsortedSegmentMax[int32]"} <= gpu_like
    assert not gpu_like & C.FORBIDDEN_OPS and "RaggedBincount" not in gpu_like


def _digest(x):
    return hashlib.sha256(np.ascontiguousarray(x).tobytes()).hexdigest()


def test_bitwise_identical_across_runs():
    x, ids = _data(2, 50000, 1, 997)
    first = _digest(_sum(x, ids, 997).numpy())
    assert all(_digest(_sum(x, ids, 997).numpy()) == first for _ in range(10))


SCRIPT = textwrap.dedent("""
    import hashlib, sys
    import numpy as np
    import tensorflow as tf
    tf.config.threading.set_intra_op_parallelism_threads(int(sys.argv[1]))
    from tfdet.patching import exact_sum as E
    rng = np.random.default_rng(3)
    x = rng.standard_normal((200000, 1)) * np.exp(rng.uniform(-20, 20, (200000, 1)))
    ids = rng.integers(-1, 5000, 200000).astype(np.int32)
    out = E.segment_sum(tf.constant(x, tf.float32), tf.constant(ids), 5000).numpy()
    print("DIGEST", hashlib.sha256(out.tobytes()).hexdigest())
""")


def _digest_in_process(threads):
    out = subprocess.run([sys.executable, "-c", SCRIPT, str(threads)], capture_output=True, text=True, check=True,
                         timeout=300).stdout
    return [ln for ln in out.splitlines() if ln.startswith("DIGEST ")][-1]


@pytest.mark.slow
def test_bitwise_identical_across_processes_and_thread_counts():
    assert _digest_in_process(1) == _digest_in_process(2)


VERSIONS_SCRIPT = textwrap.dedent("""
    import hashlib, sys
    sys.path.insert(0, sys.argv[1])
    import numpy as np
    import tensorflow.compat.v2 as tf
    if not tf.executing_eagerly():
        tf.compat.v1.enable_eager_execution()
    from tfdet.patching import exact_sum as E
    r = np.random.RandomState(0)
    x = (r.standard_normal((5000, 2)) * np.exp(r.uniform(-20, 20, (5000, 2)))).astype(np.float32)
    ids = r.randint(-1, 97, 5000).astype(np.int32)
    x[7, 0], x[9, 1] = np.inf, np.nan
    out = E.segment_sum(tf.constant(x), tf.constant(ids), 97).numpy()
    print("DIGEST " + hashlib.sha256(out.tobytes()).hexdigest())
""")


@pytest.mark.multiversion
def test_same_bits_on_every_tf_version():
    """The sums are exact integers until one final rounding: the same bits on TF 1.15 ... 2.21."""
    import os

    from test_replacements import VENV_NAMES, _venv_python

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    pythons = [p for p in (_venv_python(name) for name in VENV_NAMES) if p]
    if not pythons:
        pytest.skip("no TF virtual environments (tests/multiversion/make_venvs.py)")
    digests = set()
    for python in [sys.executable] + pythons:
        out = subprocess.run([python, "-c", VERSIONS_SCRIPT, root], capture_output=True, text=True, check=True,
                             timeout=600).stdout
        digests.add([ln for ln in out.splitlines() if ln.startswith("DIGEST ")][-1])
    assert len(digests) == 1, digests


def test_primitive_uses_it_when_selected_in_graph_modes():
    x, ids = _data(4, 3000, 3, 40)
    expected = _sum(x, ids, 40).numpy()
    with P.method_scope("order_fixed"):
        eager = P.segment_reduce(tf.constant(x, tf.float32), ids, 40).numpy()
        fn = tf.function(lambda a, i: P.segment_reduce(a, i, 40),
                         input_signature=[tf.TensorSpec(None, tf.float32), tf.TensorSpec(None, tf.int32)])
        traced = fn(tf.constant(x, tf.float32), tf.constant(ids)).numpy()
        ops = C.op_types(fn.get_concrete_function().graph.as_graph_def())
    assert eager.tobytes() == expected.tobytes() == traced.tobytes()
    assert not ops & {"DynamicPartition", "TopKV2"}  # no sort
    with P.order_fixed_sum_scope("sort"), P.method_scope("order_fixed"):
        sorted_path = P.segment_reduce(tf.constant(x, tf.float32), ids, 40).numpy()
    np.testing.assert_allclose(eager, sorted_path, rtol=1e-5, atol=1e-5 * np.max(np.abs(x)))


@pytest.mark.parametrize("name", ["bincount/weights", "crop_and_resize/bilinear-4x5", "unsorted_segment_sum/basic",
                                  "resize_nearest_neighbor/11x13-ac1-hp0"])
@pytest.mark.parametrize("gpu_machine", [False, True])
def test_replacement_graphs_hold_no_nondeterministic_op(name, gpu_machine):
    """As test_replacements' graph walk, with exact sums: only the int32 segment ops are new."""
    before = K.assume_cpu_only(False) if gpu_machine else None
    try:
        with P.method_scope("order_fixed"):
            types = C.op_types(C.gradient_graph(tf, name))
    finally:
        if gpu_machine:
            K.assume_cpu_only(before)
    for version in ("2.4", "2.6"):
        forbidden, _ = C.catalogue_forbidden(version)
        assert not types & (forbidden | C.FORBIDDEN_OPS), (name, version, sorted(types & (forbidden | C.FORBIDDEN_OPS)))
    if gpu_machine:
        assert "UnsortedSegmentSum[int32]" in types  # the exact sums ran


def test_replacement_matches_stock_with_exact_sums():
    rng = np.random.default_rng(5)
    arr = rng.integers(0, 300, 20000).astype(np.int32)
    w = (rng.standard_normal(20000) * 100).astype(np.float32)
    with P.method_scope("order_fixed"):
        ours = R.bincount(arr, weights=w, minlength=310).numpy()
    ref = np.bincount(arr, weights=w.astype(np.float64), minlength=310)
    mag = np.bincount(arr, weights=np.abs(w.astype(np.float64)), minlength=310)
    assert np.all(np.abs(ours - ref) <= BOUND["float32"] * mag)


# Rounded to the dtype under test by _rounded (float32 subnormals: TF flushes them to zero on a CPU).
VALUES = st.one_of(
    st.floats(-1e4, 1e4, allow_subnormal=False),
    st.floats(-3e38, 3e38, allow_subnormal=False),
    st.floats(-1e-36, 1e-36, allow_subnormal=False),
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.0 ** -24, 3e38, -3e38]),
)


CASE = dict(data=st.data(), dtype=st.sampled_from(["float32", "float16", "bfloat16"]), depth=st.integers(1, 3),
            num=st.integers(1, 12), n=st.integers(0, 40), cancel=st.booleans(), special=st.booleans())


def _property(data, dtype, depth, num, n, cancel, special):
    """Both realizations give the same bits; non-finite results as stock; finite ones within BOUND of
    the float64 reference."""
    finfo = {"float32": 3e38, "float16": 6e4, "bfloat16": 3e38}[dtype]
    x = np.array(data.draw(st.lists(VALUES, min_size=n * depth, max_size=n * depth)), np.float64).reshape(n, depth)
    x = np.clip(x, -finfo / (n + 1), finfo / (n + 1))  # finite sums: overflow order is the stock op's own
    ids = np.array(data.draw(st.lists(st.integers(-1, num - 1), min_size=n, max_size=n)), np.int32).reshape(n)
    if cancel and n:
        x, ids = np.concatenate([x, -x]), np.concatenate([ids, ids[::-1]])  # exact cancellation in some segments
    if special and len(x):
        x = x.copy()
        x[data.draw(st.integers(0, len(x) - 1))] = data.draw(st.sampled_from([np.inf, -np.inf, np.nan]))
    xr = _rounded(x, dtype)
    here, gpu_like = _bits_both_ways(x, ids, num, dtype)
    assert here.tobytes() == gpu_like.tobytes()
    ours = tf.cast(tf.constant(here), tf.float64).numpy()
    stock = tf.cast(tf.math.unsorted_segment_sum(tf.constant(xr, tf.float32), ids, num), tf.float64).numpy()
    finite = np.isfinite(stock)
    np.testing.assert_array_equal(np.isnan(ours), np.isnan(stock))
    np.testing.assert_array_equal(ours[~finite], stock[~finite])
    ref, mag = _reference(np.where(np.isfinite(xr), xr, 0), ids, num)
    assert np.all(np.abs(ours - ref)[finite] <= (BOUND[dtype] * mag + 1e-300)[finite])


test_property_against_reference_and_stock = settings(max_examples=40, deadline=None)(given(**CASE)(_property))
test_property_against_reference_and_stock_many = pytest.mark.slow(
    settings(max_examples=500, deadline=None)(given(**CASE)(_property)))
