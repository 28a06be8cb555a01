"""tfdet.patching.kernels: the CPU bincount kernel the bincount replacement uses on
this machine's plan (the primitive's stock path, no GPU): agreement with stock and
with a float64 reference, execution modes, bitwise repeatability within and across
processes, the ops its graph is made of, and the fallback elsewhere."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorflow as tf

from tfdet.patching import kernels as K
from tfdet.patching import primitive as P
from tfdet.patching import replacements as R

import patch_cases as C  # noqa: E402

pytestmark = pytest.mark.skipif(not K.cpu_only() or not hasattr(tf.raw_ops, "RaggedBincount"),
                                reason="the CPU kernels apply only where TF sees no GPU (TF >= 2.3)")


@pytest.fixture(autouse=True)
def _stock_path():
    """What patch() sets up on this machine: TF's segment kernels deterministic, method auto."""
    previous = P.set_stock_deterministic(True)
    try:
        with P.method_scope("auto"):
            yield
    finally:
        P.set_stock_deterministic(previous)


def _inputs(seed=0, n=5003, bins=97, dtype=np.float32):
    rng = np.random.default_rng(seed)
    arr = rng.integers(0, bins, n).astype(np.int32)
    weights = (rng.standard_normal(n) * np.exp(rng.uniform(-8, 8, n))).astype(dtype)
    return arr, weights


def _graph_ops(fn, *specs):
    return C.op_types(tf.function(fn, autograph=False).get_concrete_function(*specs).graph.as_graph_def())


def _stock_chosen():
    """The primitive's dispatch, as the replacements ask it before calling a kernel."""
    return P.resolve_method(None) == "stock"


def test_the_kernel_is_what_the_replacement_runs_here():
    assert K.applies(_stock_chosen())
    spec = [tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.float32)]
    types = _graph_ops(lambda a, w: R.bincount(a, weights=w, minlength=10), *spec)
    assert "RaggedBincount" in types
    assert not types & {"Bincount", "DenseBincount", "UnsortedSegmentSum"}  # the varying kernels, the slow one
    with P.method_scope("order_fixed"):  # the GPU plan's path: no bincount op at all
        assert not _graph_ops(lambda a, w: R.bincount(a, weights=w, minlength=10), *spec) & C.FORBIDDEN_OPS
        assert not K.applies(_stock_chosen())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 3, 4, 5, 64, 5003])
def test_weighted_matches_stock_and_reference(dtype, n):
    arr, w = _inputs(n=n, dtype=dtype)
    ours = R.bincount(arr, weights=w, minlength=5).numpy()
    stock = tf.math.bincount(arr, weights=w, minlength=5).numpy()
    exact = np.bincount(arr, weights=w.astype(np.float64), minlength=5)
    assert ours.dtype == stock.dtype and ours.shape == stock.shape
    scale = np.bincount(arr, weights=np.abs(w.astype(np.float64)), minlength=5)
    C.assert_close(ours, stock, scale, np.dtype(dtype).name, "bincount n=%d" % n, terms=max(n, 1))
    ulp = np.finfo(dtype).eps
    # Four partial sums of n/4 terms: the rounding error bound of a sequential sum of n/4 + 2 terms.
    assert np.all(np.abs(ours - exact) <= (n / 4.0 + 3) * ulp * scale + 1e-300)


@pytest.mark.parametrize("kwargs", [
    {}, {"minlength": 120}, {"maxlength": 40}, {"minlength": 3, "maxlength": 3}, {"dtype": tf.int64},
    {"dtype": tf.float32}, {"binary_output": True}, {"axis": -1}, {"axis": -1, "maxlength": 50},
    {"axis": -1, "binary_output": True},
])
@pytest.mark.parametrize("arr_dtype", [np.int32, np.int64])
def test_counts_are_exactly_stock(kwargs, arr_dtype):
    arr = _inputs(1)[0].astype(arr_dtype)
    if kwargs.get("axis") == -1:
        arr = arr[:5000].reshape(50, 100)
    ours = R.bincount(arr, **kwargs).numpy()
    stock = tf.math.bincount(arr, **kwargs).numpy()
    assert ours.dtype == stock.dtype and np.array_equal(ours, stock)


@pytest.mark.parametrize("wdtype", [np.int32, np.int64])
def test_integer_weights_are_exactly_stock(wdtype):
    arr = _inputs(2)[0]
    w = np.random.default_rng(2).integers(-50, 50, arr.size).astype(wdtype)
    for kwargs in ({}, {"maxlength": 30}):
        assert np.array_equal(R.bincount(arr, weights=w, **kwargs).numpy(),
                              tf.math.bincount(arr, weights=w, **kwargs).numpy())
    arr2, w2 = arr[:5000].reshape(50, 100), w[:5000].reshape(50, 100)
    assert np.array_equal(R.bincount(arr2, weights=w2, axis=-1).numpy(),
                          tf.math.bincount(arr2, weights=w2, axis=-1).numpy())


def test_negative_values_raise_like_stock():
    with pytest.raises(tf.errors.InvalidArgumentError, match="must be non-negative"):
        R.bincount(np.array([1, -1, 2], np.int32), weights=np.ones(3, np.float32))


def test_the_only_pass_before_the_kernel_is_stock_s_max():
    """The kernel tests values for < 0 itself (RaggedBincount, every value): no separate pass of
    tf.reduce_min over the input (it was one more pass than stock's, run before the kernel could start)."""
    spec = [tf.TensorSpec([100000], tf.int32), tf.TensorSpec([100000], tf.float32)]
    types = _graph_ops(lambda a, w: R.bincount(a, weights=w, minlength=10), *spec)
    assert "RaggedBincount" in types and "Max" in types
    assert "Min" not in types


@pytest.mark.parametrize("arr, kwargs", [
    (np.array([3, -1, 2], np.int32), {"weights": np.ones(3, np.float32)}),
    (np.array([3, -1, 2], np.int64), {"maxlength": 1}),  # beyond the output too
    (np.array([[1, 2], [-1, 0]], np.int32), {"axis": -1}),
])
@pytest.mark.parametrize("method", ["auto", "order_fixed"])
def test_negative_values_raise_in_every_path_and_mode(method, arr, kwargs):
    with P.method_scope(method):
        fn = tf.function(lambda a: R.bincount(a, **kwargs), autograph=False)
        with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
            R.bincount(arr, **kwargs).numpy()
        with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
            fn(tf.constant(arr)).numpy()


def test_modes_agree_bitwise():
    arr, w = _inputs(3, n=20011)
    eager = R.bincount(arr, weights=w, minlength=7).numpy()
    spec = [tf.TensorSpec(None, tf.int32), tf.TensorSpec(None, tf.float32)]  # unknown rank
    fn = tf.function(lambda a, x: R.bincount(a, weights=x, minlength=7), input_signature=spec)
    assert np.array_equal(fn(arr, w).numpy(), eager)
    graph = tf.Graph()
    with graph.as_default():
        pa = tf.compat.v1.placeholder(tf.int32, [None])
        pw = tf.compat.v1.placeholder(tf.float32, [None])
        out = R.bincount(pa, weights=pw, minlength=7)
        with tf.compat.v1.Session(graph=graph) as sess:
            v1 = sess.run(out, {pa: arr, pw: w})
    assert np.array_equal(v1, eager)


def test_bitwise_identical_across_runs():
    arr, w = _inputs(4, n=300007, bins=1000)
    fn = tf.function(lambda a, x: R.bincount(a, weights=x, minlength=1000))
    digests = {C.digest([fn(arr, w).numpy()]) for _ in range(15)}
    digests |= {C.digest([R.bincount(arr, weights=w, minlength=1000).numpy()]) for _ in range(5)}
    assert len(digests) == 1


_CHILD = textwrap.dedent("""
    import hashlib, numpy as np, tensorflow as tf
    from tfdet.patching import primitive as P, replacements as R
    P.set_stock_deterministic(True)
    rng = np.random.default_rng(4)
    arr = rng.integers(0, 1000, 300007).astype(np.int32)
    w = (rng.standard_normal(300007) * np.exp(rng.uniform(-8, 8, 300007))).astype(np.float32)
    print(hashlib.sha256(R.bincount(arr, weights=w, minlength=1000).numpy().tobytes()).hexdigest())
""")


@pytest.mark.slow
def test_bitwise_identical_across_processes():
    rng = np.random.default_rng(4)
    arr = rng.integers(0, 1000, 300007).astype(np.int32)
    w = (rng.standard_normal(300007) * np.exp(rng.uniform(-8, 8, 300007))).astype(np.float32)
    import hashlib

    here = hashlib.sha256(R.bincount(arr, weights=w, minlength=1000).numpy().tobytes()).hexdigest()
    import os

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""), TF_CPP_MIN_LOG_LEVEL="3")
    procs = [subprocess.Popen([sys.executable, "-c", _CHILD], stdout=subprocess.PIPE, env=env, cwd=root)
             for _ in range(2)]
    outs = [p.communicate(timeout=300)[0].decode().split()[-1] for p in procs]
    assert outs == [here, here]


def test_fallback_for_dtypes_without_a_kernel_here():
    arr = np.array([0, 2, 2, 5], np.int32)
    w = np.array([1.0, 2.0, 3.0, 4.0], np.float64)
    called = []
    out = K.bincount(tf.constant(arr), tf.constant(w.astype(np.complex64)), 6, 0, None,
                     lambda: called.append(1) or tf.zeros([6], tf.complex64), _stock_chosen())
    assert called and out.dtype == tf.complex64
    assert np.array_equal(K.bincount(tf.constant(arr), tf.constant(w), 6, 0, None, None, _stock_chosen()).numpy(),
                          np.bincount(arr, weights=w, minlength=6))


@pytest.mark.parametrize("ids_shape,data_shape,num", [
    ((0,), (0,), 3), ((10,), (10,), 3), ((300,), (300, 1), 5), ((4, 5), (4, 5), 7), ((4, 5), (4, 5, 1, 1), 2),
    ((300,), (300, 4, 2), 5), ((6,), (6, 0), 2), ((20000,), (20000,), 97), ((20000,), (20000,), 20000)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_segment_sum_matches_stock(ids_shape, data_shape, num, dtype):
    """The primitive's stock path for sums on this CPU: forward and gradient as tf.math.unsorted_segment_sum."""
    rng = np.random.default_rng(sum(data_shape) + num)
    ids = rng.integers(-1, num, ids_shape).astype(np.int32)
    data = (rng.standard_normal(data_shape) * 100).astype(dtype)
    ours = P.segment_reduce(data, ids, num, "sum").numpy()
    stock = tf.math.unsorted_segment_sum(data, ids, num).numpy()
    assert ours.dtype == stock.dtype and ours.shape == stock.shape
    if np.issubdtype(dtype, np.integer):
        assert np.array_equal(ours, stock)
        return
    scale = tf.math.unsorted_segment_sum(np.abs(data), ids, num).numpy()
    C.assert_close(ours, stock, scale, np.dtype(dtype).name, "segment_sum", terms=max(ids.size, 1))
    x = tf.constant(data)
    dy = tf.constant(rng.standard_normal(stock.shape).astype(dtype))
    grads = []
    for fn in (lambda t: P.segment_reduce(t, ids, num, "sum"), lambda t: tf.math.unsorted_segment_sum(t, ids, num)):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = fn(x)
        grads.append(tape.gradient(y, x, output_gradients=dy).numpy())
    assert np.array_equal(grads[0], grads[1])


def test_segment_sum_graph_and_errors():
    spec = [tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.int32)]
    types = _graph_ops(lambda d, i: P.segment_reduce(d, i, 5, "sum"), *spec)
    assert "RaggedBincount" in types and "UnsortedSegmentSum" not in types
    wide = [tf.TensorSpec([None, 8], tf.float32), tf.TensorSpec([None], tf.int32)]  # wider rows: the stock kernel
    assert "UnsortedSegmentSum" in _graph_ops(lambda d, i: P.segment_reduce(d, i, 5, "sum"), *wide)
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        P.segment_reduce(np.ones(3, np.float32), np.array([0, 5, 1], np.int32), 3, "sum")
    data = (np.random.default_rng(9).standard_normal((30011, 3)) * 1e4).astype(np.float32)
    ids = np.random.default_rng(9).integers(-1, 50, 30011).astype(np.int32)
    fn = tf.function(lambda d, i: P.segment_reduce(d, i, 50, "sum"))
    assert len({C.digest([fn(data, ids).numpy()]) for _ in range(10)}) == 1


def test_xla_takes_the_stock_kernels():
    """RaggedBincount has no XLA kernel: under jit_compile=True the stock path runs, as before."""
    arr, w = _inputs(5, n=1000, bins=13)
    ours = tf.function(lambda a, x: R.bincount(a, weights=x, minlength=13), jit_compile=True)(arr, w).numpy()
    C.assert_close(ours, np.bincount(arr, weights=w, minlength=13), np.bincount(arr, weights=np.abs(w), minlength=13),
                   "float32", "bincount under XLA", terms=1000)
    sums = tf.function(lambda x, i: P.segment_reduce(x, i, 13, "sum"), jit_compile=True)(w, arr).numpy()
    assert np.allclose(sums, ours, rtol=1e-5, atol=1e-3)
