"""A replacement called eagerly runs as one cached tf.function per signature (issue 30: eager
weighted bincount issued 47 eager ops per call and cost 3x the stock op)."""

import numpy as np
import pytest

import tensorflow as tf
from tensorflow.python.framework import op_callbacks

from tfdet.patching import primitive
from tfdet.patching import replacements as R


class _Ops(object):
    """The op types executed eagerly and the op types traced into graphs while active."""

    def __init__(self):
        self.eager, self.traced = [], []

    def __call__(self, op_type, inputs, attrs, outputs, op_name=None, graph=None):
        op_type = op_type.decode() if isinstance(op_type, bytes) else op_type
        (self.traced if graph is not None else self.eager).append(op_type)
        return outputs

    def __enter__(self):
        op_callbacks.add_op_callback(self)
        return self

    def __exit__(self, *exc):
        op_callbacks.remove_op_callback(self)


@pytest.mark.parametrize("method", ["stock", "order_fixed"])
def test_an_eager_call_is_one_function_call_and_its_result_is_the_eager_body_s(method):
    rng = np.random.default_rng(0)
    with primitive.method_scope(method):
        for n in (1000, 1500):  # a new length is the same signature (every dimension left unknown)
            ids = tf.constant(rng.integers(0, 50, n).astype(np.int32))
            weights = tf.constant(rng.standard_normal(n).astype(np.float32))
            with _Ops() as ops:
                out = R.bincount(ids, weights=weights, minlength=64)
            assert [t for t in ops.eager if not t.startswith("__inference_")] == []
            assert len(ops.eager) == 1
            expected = R._bincount(ids, weights=weights, minlength=64)  # the replacement, op by op
            assert out.shape == expected.shape == (64,) and out.dtype == expected.dtype
            np.testing.assert_array_equal(out.numpy(), expected.numpy())
            np.testing.assert_allclose(out.numpy(), np.bincount(ids.numpy(), weights.numpy(), 64), rtol=1e-5,
                                       atol=1e-5)


def test_the_path_chosen_is_the_one_the_settings_give_when_called():
    """The primitive's path is part of the signature: a function traced on one path is not
    reused after the setting changes."""
    ids, weights = tf.constant([0, 3, 3, 7]), tf.constant([0.5, 1.0, 2.0, 4.0])
    traced = {}
    for method in ("stock", "order_fixed", "stock"):
        with primitive.method_scope(method), _Ops() as ops:
            R.bincount(ids, weights=weights, minlength=9)
        traced.setdefault(method, []).append(set(ops.traced))
    assert "RaggedBincount" in set().union(*traced["stock"])  # this CPU's kernel (tfdet.patching.kernels)
    assert "RaggedBincount" not in traced["order_fixed"][0]
    assert not traced["stock"][1]  # the stock-path function of the first call, reused: nothing traced


def test_errors_are_the_eager_body_s():
    with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
        R.bincount(tf.constant([1, -1, 2]))
    with pytest.raises(ValueError, match="mutually exclusive"):
        R.bincount(tf.constant([1, 2]), weights=tf.constant([1.0, 2.0]), binary_output=True)
    # a valid call after the invalid ones with the same signature still takes the one-call path
    with _Ops() as ops:
        R.bincount(tf.constant([1, 0, 2]))
    assert len(ops.eager) == 1


def test_under_a_gradient_tape_the_eager_body_runs_and_raises_as_stock():
    weights = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(weights)
        out = R.bincount(tf.constant([0, 1]), weights=weights)
    with pytest.raises(LookupError):
        tape.gradient(out, weights)
