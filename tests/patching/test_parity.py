"""Regression tests for the behaviour changes the issue-14 parity audit found: each compares a
replacement with the STOCK op on the same input (same result within tolerance, or the same
exception class and the stock message's key phrase), in the mode where the change showed.

The order-fixed path is selected for every test here (tests/patching/conftest.py), the path
GPU plans install; the audit's default-CPU-plan bincount cases hold on either path.
"""

import warnings

import numpy as np
import pytest

import tensorflow as tf

from tfdet.patching import bindings, primitive
from tfdet.patching import replacements as R
from tfdet.patching.install import TfdetWarning


def outcome(fn):
    """("ok", numpy value) or ("raise", exception class, first line of its message)."""
    try:
        value = fn()
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return ("raise", type(exc), str(exc))
    if isinstance(value, (list, tuple)):
        return ("ok", [None if v is None else np.asarray(v) for v in value])
    return ("ok", np.asarray(value))


def assert_same(ours, stock, phrase=None, rtol=1e-6, atol=1e-6):
    """ours behaves as stock: equal values, or the same exception class (and `phrase` in both messages)."""
    assert ours[0] == stock[0], "ours %s, stock %s" % (ours, stock)
    if stock[0] == "raise":
        assert ours[1] is stock[1], "ours raised %s, stock %s" % (ours[1].__name__, stock[1].__name__)
        if phrase:
            assert phrase in stock[2], "the key phrase is not stock's: %r not in %r" % (phrase, stock[2])
            assert phrase in ours[2], "%r not in our message %r" % (phrase, ours[2])
        return
    a, b = ours[1], stock[1]
    if isinstance(b, list):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert (x is None) == (y is None)
            if y is not None:
                np.testing.assert_allclose(x.astype(np.float64), y.astype(np.float64), rtol=rtol, atol=atol)
        return
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=rtol, atol=atol)


def in_v1_graph(build, feeds):
    """Build in a tf.compat.v1 graph from placeholders ({name: (value, dtype, shape)}) and run once."""
    def run():
        with tf.Graph().as_default():
            holders = {k: tf.compat.v1.placeholder(dtype, shape) for k, (_, dtype, shape) in feeds.items()}
            out = build(**holders)
            with tf.compat.v1.Session() as session:
                return session.run(out, {holders[k]: v for k, (v, _, _) in feeds.items()})
    return run


# --------------------------------------------------------------------------- bincount (default CPU plan)


@pytest.mark.parametrize("method", ["order_fixed", "stock"])
@pytest.mark.parametrize("make,kwargs", [
    (lambda: tf.ragged.constant([[1, 2, 2], [3]]), {}),
    (lambda: tf.ragged.constant([[1, 2, 2], [3]]), {"axis": -1}),
    (lambda: tf.ragged.constant([[1, 2, 2], [3]]), {"minlength": 6, "binary_output": True}),
    (lambda: tf.sparse.from_dense([[1, 0, 2], [3, 0, 0]]), {}),
    (lambda: tf.sparse.from_dense([[1, 0, 2], [3, 0, 0]]), {"axis": -1}),
])
def test_bincount_ragged_and_sparse_input(method, make, kwargs):
    with primitive.method_scope(method):
        assert_same(outcome(lambda: R.bincount(make(), **kwargs)), outcome(lambda: tf.math.bincount(make(), **kwargs)))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "complex64", "float32", "float64", "int32", "int64"])
def test_bincount_weight_dtypes_as_stock(dtype):
    weights = tf.cast([1.0, 2.0, 3.0], dtype)
    assert_same(outcome(lambda: R.bincount([0, 2, 2], weights=weights)),
                outcome(lambda: tf.math.bincount([0, 2, 2], weights=weights)), phrase=None)


def test_bincount_gradient_raises_lookup_error_as_stock():
    def grad(fn):
        def run():
            w = tf.Variable([1.0, 2.0, 3.0])
            with tf.GradientTape() as tape:
                y = fn([0, 1, 1], weights=w)
            return tape.gradient(y, w)
        return run

    assert_same(outcome(grad(R.bincount)), outcome(grad(tf.math.bincount)), phrase="gradient registry has no entry")


# --------------------------------------------------------------------------- crop_and_resize


def test_crop_and_resize_nearest_gradient_is_the_stock_bilinear_boxes_gradient():
    rng = np.random.default_rng(0)
    image = tf.constant(rng.normal(size=(2, 9, 8, 3)).astype(np.float32))
    boxes = tf.Variable([[0.1, 0.2, 0.8, 0.9], [0.0, 0.0, 1.0, 0.7]])
    box_ind = tf.constant([0, 1])

    def grads():
        with tf.GradientTape() as tape:
            tape.watch(image)
            y = tf.image.crop_and_resize(image, boxes, box_ind, [5, 4], method="nearest")
            loss = tf.reduce_sum(y * tf.cast(tf.reshape(tf.range(tf.size(y)), tf.shape(y)), tf.float32))
        return tape.gradient(loss, [image, boxes])

    stock = outcome(grads)
    change = bindings.override_gradient("CropAndResize", R.crop_and_resize_gradient)
    try:
        ours = outcome(grads)
    finally:
        bindings.undo([change])
    assert_same(ours, stock, rtol=1e-4, atol=1e-3)


# --------------------------------------------------------------------------- sparse_dense_matmul


@pytest.mark.parametrize("case,phrase", [
    ("negative index", "out of bounds"),
    ("row out of range", "out of bounds"),
    ("rank-1 b", "not a matrix"),
    ("int64 values", None),
])
def test_sparse_dense_matmul_rejects_as_stock(case, phrase):
    def args():
        if case == "negative index":
            return tf.SparseTensor([[0, -1], [1, 0]], [1.0, 2.0], [2, 2]), tf.ones([2, 3])
        if case == "row out of range":
            return tf.SparseTensor([[5, 1]], [1.0], [2, 2]), tf.ones([2, 3])
        if case == "rank-1 b":
            return tf.SparseTensor([[0, 1], [1, 0]], [1.0, 2.0], [2, 2]), tf.ones([2])
        return tf.SparseTensor([[0, 1]], tf.constant([1], tf.int64), [2, 2]), tf.ones([2, 3], tf.int64)

    assert_same(outcome(lambda: R.sparse_dense_matmul(*args())),
                outcome(lambda: tf.sparse.sparse_dense_matmul(*args())), phrase)


def test_sparse_dense_matmul_keeps_static_rank_and_runs_with_unknown_rank_dense_shape():
    indices = np.array([[0, 1], [1, 0], [1, 2]], np.int64)
    values = np.array([1.0, 2.0, 3.0], np.float32)
    b = np.arange(12, dtype=np.float32).reshape(3, 4)
    feeds = {"shape": (np.array([2, 3], np.int64), tf.int64, None), "b": (b, tf.float32, None)}
    ranks = []

    def build(fn):
        def graph(shape, b):
            out = fn(tf.SparseTensor(indices, values, shape), b)
            ranks.append(out.shape.rank)
            return out
        return graph

    assert_same(outcome(in_v1_graph(build(R.sparse_dense_matmul), feeds)),
                outcome(in_v1_graph(build(tf.sparse.sparse_dense_matmul), feeds)))
    assert ranks[0] == ranks[1] == 2


# --------------------------------------------------------------------------- sparse softmax xent (TF < 2.7 GPU plans)


@pytest.mark.parametrize("labels,logits_shape", [
    ([0, 1], [3, 4]),  # first dimension differs
    ([[0, 1, 2]], [3, 4]),  # rank mismatch
    (0, []),  # scalar logits
])
def test_sparse_xent_shape_mismatch_raises_as_stock(labels, logits_shape):
    logits = tf.zeros(logits_shape)
    assert_same(outcome(lambda: R.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)),
                outcome(lambda: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)))


@pytest.mark.parametrize("rank", [2, 3])
def test_sparse_xent_shape_mismatch_in_unknown_shape_graph(rank):
    labels = np.zeros([2] + [3] * (rank - 2), np.int32)
    logits = np.zeros([3] + [3] * (rank - 2) + [4], np.float32)
    feeds = {"labels": (labels, tf.int32, None), "logits": (logits, tf.float32, [None] * rank)}

    def build(fn):
        return lambda labels, logits: fn(labels=labels, logits=logits)

    stock = outcome(in_v1_graph(build(tf.nn.sparse_softmax_cross_entropy_with_logits), feeds))
    assert_same(outcome(in_v1_graph(build(R.sparse_softmax_cross_entropy_with_logits), feeds)), stock)


@pytest.mark.parametrize("labels", [[0, 5, 1], [0, -1, 1]])
def test_sparse_xent_invalid_labels_raise_on_cpu_as_stock(labels):
    logits = tf.zeros([3, 5])
    assert_same(outcome(lambda: R.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)),
                outcome(lambda: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)),
                phrase="outside the valid range of [0, ")


# --------------------------------------------------------------------------- segment reductions


@pytest.mark.parametrize("fn", ["unsorted_segment_sum", "unsorted_segment_mean", "unsorted_segment_prod",
                                "unsorted_segment_max"])
def test_num_segments_of_unknown_rank_in_v1_graph(fn):
    data = np.arange(6, dtype=np.float32).reshape(3, 2)
    feeds = {"data": (data, tf.float32, None), "ids": (np.array([1, 0, 1], np.int32), tf.int32, None),
             "num": (np.array(3, np.int32), tf.int32, None)}

    def build(f):
        return lambda data, ids, num: f(data, ids, num)

    assert_same(outcome(in_v1_graph(build(getattr(R, fn)), feeds)),
                outcome(in_v1_graph(build(getattr(tf.math, fn)), feeds)))
    bad = dict(feeds, num=(np.array([3], np.int32), tf.int32, None))  # not a scalar: both raise when run
    assert_same(outcome(in_v1_graph(build(getattr(R, fn)), bad)), outcome(in_v1_graph(build(getattr(tf.math, fn)),
                                                                                        bad)))


@pytest.mark.parametrize("mode", ["eager", "function"])
def test_segment_sum_rejects_2d_ids_as_stock(mode):
    def call(fn):
        def f():
            return fn(tf.ones([2, 2]), tf.constant([[0, 0], [1, 1]]))
        return tf.function(f) if mode == "function" else f

    assert_same(outcome(call(R.segment_sum)), outcome(call(tf.math.segment_sum)))


def test_segment_sum_2d_ids_of_unknown_rank_raise_when_run():
    feeds = {"ids": (np.array([[0, 0], [1, 1]], np.int32), tf.int32, None)}
    assert_same(outcome(in_v1_graph(lambda ids: R.segment_sum(tf.ones([2, 2]), ids), feeds)),
                outcome(in_v1_graph(lambda ids: tf.math.segment_sum(tf.ones([2, 2]), ids), feeds)),
                phrase="segment_ids should be a vector")


@pytest.mark.parametrize("mode", ["eager", "function"])
@pytest.mark.parametrize("fn", ["unsorted_segment_sum", "unsorted_segment_max"])
def test_float_segment_ids_raise_as_stock(mode, fn):
    def call(f):
        def g():
            return f(tf.constant([1.0, 2.0]), tf.constant([0.0, 1.0]), 2)
        return tf.function(g) if mode == "function" else g

    assert_same(outcome(call(getattr(R, fn))), outcome(call(getattr(tf.math, fn))),
                phrase="is not in the list of allowed values" if mode == "eager" else None)


@pytest.mark.parametrize("fn,args", [
    ("unsorted_segment_sum", lambda: (tf.constant([1.0, 2.0, 3.0]), tf.constant([0, 2, 0]), 3)),
    ("unsorted_segment_prod", lambda: (tf.constant([1.0, 2.0, 3.0]), tf.constant([0, 2, 0]), 3)),
    ("segment_sum", lambda: (tf.constant([1.0, 2.0, 3.0]), tf.constant([0, 0, 2]))),
    ("bincount", lambda: (tf.constant([0, 2, 2]),)),
    ("scatter_nd", lambda: (tf.constant([[1], [1]]), tf.constant([1.0, 2.0]), tf.constant([3]))),
])
def test_under_xla_falls_back_to_stock_with_a_warning(fn, args):
    stock_fn = {"bincount": tf.math.bincount, "scatter_nd": tf.scatter_nd}.get(fn) or getattr(tf.math, fn)

    def xla(f):
        return lambda: tf.function(lambda: f(*args()), jit_compile=True)()

    stock = outcome(xla(stock_fn))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = outcome(xla(getattr(R, fn)))
    assert_same(ours, stock)
    named = [w for w in caught if issubclass(w.category, TfdetWarning) and "XLA" in str(w.message)]
    assert named and ("tf.math.%s" % fn in str(named[0].message) or "tf.%s" % fn in str(named[0].message))


# --------------------------------------------------------------------------- bias_add


def _bias_grads(fn, v, b, data_format=None, jit=False):
    def run():
        value, bias = tf.Variable(v), tf.Variable(b)

        def step():
            with tf.GradientTape() as tape:
                y = fn(value, bias, data_format=data_format)
                loss = tf.reduce_sum(y * tf.cast(tf.reshape(tf.range(tf.size(y)), tf.shape(y)), y.dtype))
            return [y] + tape.gradient(loss, [value, bias])

        return tf.function(step, jit_compile=True)() if jit else step()
    return run


@pytest.mark.parametrize("data_format,shape", [(None, (2, 3, 4)), ("NCHW", (2, 3, 4, 5)), ("NCHW", (2, 3)),
                                               ("NHWC", (0, 3)), ("NCHW", (0, 3, 2))])
@pytest.mark.parametrize("jit", [False, True])
def test_bias_add_forward_and_gradient_as_stock(data_format, shape, jit):
    rng = np.random.default_rng(1)
    v = rng.normal(size=shape).astype(np.float32)
    b = rng.normal(size=shape[1] if data_format == "NCHW" else shape[-1]).astype(np.float32)
    assert_same(outcome(_bias_grads(R.bias_add, v, b, data_format, jit)),
                outcome(_bias_grads(tf.nn.bias_add, v, b, data_format, jit)), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("value,bias,phrase", [
    ([1, 2], [1], "must be at least 2D"),
    ([[1, 2]], [[1, 2]], "Biases must be 1D"),
    ([[1, 2]], [1], "Must provide as many biases"),
])
@pytest.mark.parametrize("mode", ["eager", "function"])
def test_bias_add_invalid_input_raises_as_stock(value, bias, phrase, mode):
    def call(fn):
        def f():
            return fn(tf.constant(value), tf.constant(bias))
        return tf.function(f) if mode == "function" else f

    assert_same(outcome(call(R.bias_add)), outcome(call(tf.nn.bias_add)), phrase=phrase if mode == "eager" else None)


def test_bias_add_rank2_bias_in_unknown_rank_graph_raises_as_stock():
    feeds = {"v": (np.ones([2, 2], np.float32), tf.float32, None), "b": (np.ones([1, 2], np.float32), tf.float32,
                                                                          None)}
    assert_same(outcome(in_v1_graph(lambda v, b: R.bias_add(v, b), feeds)),
                outcome(in_v1_graph(lambda v, b: tf.nn.bias_add(v, b), feeds)))


# --------------------------------------------------------------------------- scatter_nd


@pytest.mark.parametrize("method", ["order_fixed", "stock"])
@pytest.mark.parametrize("indices,updates,shape", [
    (np.zeros([0, 1], np.int32), np.zeros([0, 3], np.float32), [0, 3]),
    (np.zeros([0, 1], np.int32), np.zeros([0, 0], np.float32), [4, 0]),
    (np.array([[1]], np.int32), np.array([1.0], np.float32), tf.constant([3], tf.int64)),  # index type from shape
    (tf.constant([[1]], tf.int32), np.array([1.0], np.float32), tf.constant([3], tf.int64)),  # mixed: stock raises
])
def test_scatter_nd_edge_shapes_and_dtypes_as_stock(method, indices, updates, shape):
    with primitive.method_scope(method):
        assert_same(outcome(lambda: R.scatter_nd(indices, updates, shape)),
                    outcome(lambda: tf.scatter_nd(indices, updates, shape)))


# --------------------------------------------------------------------------- found by TF's own kernel tests


def test_sparse_xent_labels_of_wrong_rank_raise_when_run_as_stock():
    """sparse_xent_op_test_base: testLabelsPlaceholderScalar and testScalarHandling."""
    scalar = {"labels": (np.array(0, np.int32), tf.int32, None)}
    assert_same(outcome(in_v1_graph(lambda labels: R.sparse_softmax_cross_entropy_with_logits(
        labels=labels, logits=[[7.0]]), scalar)), outcome(in_v1_graph(
            lambda labels: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=[[7.0]]), scalar)))
    squeezed = {"labels": (np.zeros((1, 1), np.int32), tf.int32, [None, 1]),
                "logits": (np.ones((1, 3), np.float32), tf.float32, [None, 3])}

    def build(fn):
        return lambda labels, logits: fn(labels=tf.squeeze(labels), logits=logits)

    stock = outcome(in_v1_graph(build(tf.nn.sparse_softmax_cross_entropy_with_logits), squeezed))
    assert_same(outcome(in_v1_graph(build(R.sparse_softmax_cross_entropy_with_logits), squeezed)), stock)
    assert "labels must be 1-D" in stock[2] and "labels must be 1-D" in outcome(
        in_v1_graph(build(R.sparse_softmax_cross_entropy_with_logits), squeezed))[2]


def test_sparse_xent_invalid_label_message_names_the_label():
    """sparse_xent_op_test_base: testInvalidLabelCPU matches 'Received a label value of'."""
    logits = tf.ones([4, 4])
    assert_same(outcome(lambda: R.sparse_softmax_cross_entropy_with_logits(labels=[4, 3, 0, -1], logits=logits)),
                outcome(lambda: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[4, 3, 0, -1], logits=logits)),
                phrase="Received a label value of")


@pytest.mark.parametrize("mode", ["eager", "function"])
@pytest.mark.parametrize("shape,ids,num", [((1, 0), [0], 0), ((2, 0), [0, 5], 3), ((0, 0), [], 0)])
def test_segment_reductions_of_data_without_elements_as_stock(mode, shape, ids, num):
    """Found by the property tests: the stock kernels return early for data without elements (no id
    check), and the order-fixed loop could not keep a static 0-wide row."""
    for fn in ("unsorted_segment_sum", "unsorted_segment_max", "unsorted_segment_prod"):
        def call(f):
            def g():
                return f(tf.zeros(shape), tf.constant(ids, tf.int32), num)
            return tf.function(g) if mode == "function" else g

        assert_same(outcome(call(getattr(R, fn))), outcome(call(getattr(tf.math, fn))))
