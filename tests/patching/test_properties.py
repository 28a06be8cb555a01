"""Property tests: the segment-reduction and bincount replacements against the stock ops on random
valid and invalid input (parity_strategies.py), in eager, tf.function, v1 graphs with inputs of
unknown shape and rank, and jit_compile. Valid input: equal within the dtype's tolerance; invalid
input: the same exception class as stock. The order-fixed path (conftest.py) is the one under test;
under jit_compile it must fall back to stock (never fail where stock works).

Default run: a dozen examples each; `--runslow` runs the same properties with many more."""

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import tensorflow as tf

from tfdet.patching import replacements as R

import parity_strategies as S  # noqa: E402

FAST = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
SLOW = settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
RTOL = {"float16": 1e-2, "bfloat16": 6e-2, "float32": 1e-5, "float64": 1e-12, "complex64": 1e-5}


def run(fn, inputs, mode, constants=()):
    """("ok", value) or ("raise", class): fn(*inputs) in the mode. `constants` (indices into inputs) stay
    Python/NumPy values under jit_compile (stock XLA kernels need them at compile time)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("ok", _run(fn, inputs, mode, constants))
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return ("raise", type(exc))


def _run(fn, inputs, mode, constants):
    if mode == "eager":
        return np.asarray(fn(*[tf.constant(x) for x in inputs]))
    if mode == "function":
        return np.asarray(tf.function(fn)(*[tf.constant(x) for x in inputs]))
    if mode == "jit_compile":
        fixed = {i: inputs[i] for i in constants}
        args = [tf.constant(x) for i, x in enumerate(inputs) if i not in fixed]

        def call(*dynamic):
            it = iter(dynamic)
            return fn(*[fixed[i] if i in fixed else next(it) for i in range(len(inputs))])

        return np.asarray(tf.function(call, jit_compile=True)(*args))
    with tf.Graph().as_default():
        holders = [tf.compat.v1.placeholder(tf.as_dtype(np.asarray(x).dtype), shape=None) for x in inputs]
        out = fn(*holders)
        with tf.compat.v1.Session() as session:
            return session.run(out, dict(zip(holders, inputs)))


def assert_same(ours, stock, dtype, scale):
    assert ours[0] == stock[0], "ours %s, stock %s" % (ours, stock)
    if stock[0] == "raise":
        assert ours[1] is stock[1], "ours raised %s, stock %s" % (ours[1].__name__, stock[1].__name__)
        return
    a, b = ours[1], stock[1]
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    if dtype in RTOL:
        a64, b64 = a.astype(np.complex128 if dtype == "complex64" else np.float64), b.astype(
            np.complex128 if dtype == "complex64" else np.float64)
        same = np.isclose(a64, b64, rtol=RTOL[dtype], atol=RTOL[dtype] * scale) | (np.isnan(a64) & np.isnan(b64))
        assert same.all(), (a, b)
    else:
        np.testing.assert_array_equal(a, b)


def _cast(data, dtype):
    return tf.cast(data, dtype) if dtype == "bfloat16" else data


def _unsorted(problem):
    reduction, data, ids, num, dtype, mode = problem
    name = "unsorted_segment_" + reduction
    ours, stock = getattr(R, name), getattr(tf.math, name)

    def wrap(f):
        return lambda d, i, n: f(_cast(d, dtype), i, n)

    inputs = [data, ids, np.array(num, ids.dtype)]
    scale = float(np.sum(np.abs(data.astype(np.complex128)))) + 1.0 if data.size else 1.0
    if reduction == "prod":
        scale = float(np.prod(np.maximum(np.abs(data.astype(np.float64)), 1.0))) if data.size else 1.0
    assert_same(run(wrap(ours), inputs, mode, constants=(2,)), run(wrap(stock), inputs, mode, constants=(2,)),
                dtype, scale)


def _sorted(problem):
    data, ids, dtype, mode = problem

    def wrap(f):
        return lambda d, i: f(_cast(d, dtype), i)

    scale = float(np.sum(np.abs(data.astype(np.complex128)))) + 1.0 if data.size else 1.0
    assert_same(run(wrap(R.segment_sum), [data, ids], mode), run(wrap(tf.math.segment_sum), [data, ids], mode),
                dtype, scale)


def _bincount(problem):
    arr, kwargs, mode = problem
    weights = kwargs.pop("weights", None)
    dtype = str(weights.dtype) if weights is not None else kwargs.get("dtype", "int32")

    def wrap(f):
        if weights is None:
            return lambda a: f(a, **kwargs)
        return lambda a, w: f(a, weights=w, **kwargs)

    inputs = [arr] if weights is None else [arr, weights]
    scale = float(np.sum(np.abs(weights))) + 1.0 if weights is not None else 1.0
    assert_same(run(wrap(R.bincount), inputs, mode), run(wrap(tf.math.bincount), inputs, mode),
                dtype if dtype in RTOL else "exact", scale)


@FAST
@given(S.unsorted_segment_problems())
def test_unsorted_segment_reductions_match_stock(problem):
    _unsorted(problem)


@FAST
@given(S.sorted_segment_problems())
def test_segment_sum_matches_stock(problem):
    _sorted(problem)


@FAST
@given(S.bincount_problems())
def test_bincount_matches_stock(problem):
    _bincount(problem)


@pytest.mark.slow
@SLOW
@given(S.unsorted_segment_problems())
def test_unsorted_segment_reductions_match_stock_many(problem):
    _unsorted(problem)


@pytest.mark.slow
@SLOW
@given(S.sorted_segment_problems())
def test_segment_sum_matches_stock_many(problem):
    _sorted(problem)


@pytest.mark.slow
@SLOW
@given(S.bincount_problems())
def test_bincount_matches_stock_many(problem):
    _bincount(problem)


@FAST
@given(S.unsorted_segment_problems())
def test_unsorted_segment_gradients_match_stock(problem):
    reduction, data, ids, num, dtype, mode = problem
    if dtype not in ("float32", "float64") or mode != "eager":
        return
    name = "unsorted_segment_" + reduction

    def grad(f):
        def g():
            x = tf.constant(data)
            with tf.GradientTape() as tape:
                tape.watch(x)
                y = f(x, ids, num)
                loss = tf.reduce_sum(y * tf.cast(tf.reshape(tf.range(tf.size(y)), tf.shape(y)), y.dtype))
            return tape.gradient(loss, x)
        return g

    scale = float(np.sum(np.abs(data))) * max(num, 1) * 8 + 1.0
    assert_same(run(lambda: grad(getattr(R, name))(), [], "eager"), run(lambda: grad(getattr(tf.math, name))(),
                                                                        [], "eager"), dtype, scale)
