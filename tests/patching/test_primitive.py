"""tfdet.patching.primitive.segment_reduce: agreement with the stock unsorted segment ops,
edge cases, execution modes (eager, tf.function, TF1 graph), repeatability, the ops
its graph is made of, and the dispatch between the stock and the order-fixed path."""


import numpy as np
import pytest

import tensorflow as tf

from tfdet.patching import primitive as P


import patch_cases as C  # noqa: E402

STOCK = {
    "sum": tf.math.unsorted_segment_sum,
    "prod": tf.math.unsorted_segment_prod,
    "max": tf.math.unsorted_segment_max,
    "min": tf.math.unsorted_segment_min,
}
REAL = C.FLOATS + C.INTS


def _inputs(rng, dtype, reduction, variant):
    inputs = C.make_segment(variant)(rng, dtype)
    if reduction == "prod" and dtype not in C.INTS:
        inputs["data"] = C.cast_np(np.asarray(inputs["data"], np.complex128 if dtype in C.COMPLEX else np.float64)
                                   * 0.3 + 1.0, dtype)
    return inputs["data"], inputs["ids"], inputs["num"]


def _check(reduction, dtype, data, ids, num, sorted_ids=False):
    ours = P.segment_reduce(data, ids, num, reduction, sorted_ids=sorted_ids, method="order_fixed").numpy()
    stock = STOCK[reduction](data, ids, num).numpy()
    if dtype in C.INTS or reduction in ("max", "min"):
        assert np.array_equal(ours, stock), (ours, stock)
        return
    scale = STOCK[reduction](C._abs64(data), ids, num).numpy()
    C.assert_close(ours, stock, scale, dtype, "%s %s" % (reduction, dtype))


PARAMS = [(r, d, v) for r in ["sum", "prod"] for d in C.FLOATS + C.COMPLEX + C.INTS
          for v in ["basic", "empty", "ids2d", "int64_ids_1d", "all_negative"]]
PARAMS += [(r, d, v) for r in ["max", "min"] for d in REAL for v in ["basic", "empty", "ids2d", "all_negative"]]


@pytest.mark.parametrize("reduction,dtype,variant", PARAMS)
def test_matches_stock_unsorted_op(reduction, dtype, variant):
    data, ids, num = _inputs(np.random.default_rng(0), dtype, reduction, variant)
    _check(reduction, dtype, data, ids, num)


@pytest.mark.parametrize("reduction", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int32"])
def test_sorted_ids_path(reduction, dtype):
    rng = np.random.default_rng(1)
    ids = np.sort(rng.integers(-2, 12, size=70)).astype(np.int32)  # negatives first, gaps
    data = C._segment_data(rng, dtype, 70, (2,))
    if reduction == "prod" and dtype != "int32":
        data = (data * 0.2 + 1).astype(dtype)
    _check(reduction, dtype, data, ids, 14, sorted_ids=True)


@pytest.mark.parametrize("reduction", ["sum", "max"])
@pytest.mark.parametrize("layout", ["one_long_plus_singletons", "all_singletons", "one_segment", "powers_of_two",
                                    "long_tail", "wide_rows"])
def test_segment_length_distributions(reduction, layout):
    """Every chunk width and level count the algorithm can choose."""
    rng = np.random.default_rng(2)
    if layout == "one_long_plus_singletons":
        ids = np.concatenate([np.full(3000, 7), np.arange(100, 400)])
    elif layout == "all_singletons":
        ids = rng.permutation(500)
    elif layout == "one_segment":
        ids = np.zeros(2500, np.int64)
    elif layout == "powers_of_two":
        ids = np.repeat(np.arange(12), [2 ** k for k in range(12)])
    elif layout == "long_tail":
        ids = np.minimum(rng.zipf(1.5, size=4000), 600) - 1
    else:
        ids = rng.integers(0, 40, size=900)
    ids = rng.permutation(ids).astype(np.int32)
    num = int(ids.max()) + 3
    width = (70,) if layout == "wide_rows" else (1,)
    data = rng.uniform(-1, 1, size=(len(ids),) + width).astype(np.float64)
    ours = P.segment_reduce(data, ids, num, reduction, method="order_fixed").numpy()
    stock = STOCK[reduction](data, ids, num).numpy()
    if reduction == "max":
        assert np.array_equal(ours, stock)
        return
    # up to 3000 terms per segment: the bound scales with the number of terms
    terms = int(np.bincount(ids).max())
    C.assert_close(ours, stock, STOCK[reduction](np.abs(data), ids, num).numpy(), "float64", layout, terms=terms)


def test_accuracy_against_exact_sum():
    """Pairwise/chunked summation: error well inside the worst-case bound."""
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 5, size=20000).astype(np.int32)
    data = rng.uniform(-1, 1, size=20000).astype(np.float32)
    ours = P.segment_reduce(data, ids, 5, method="order_fixed").numpy().astype(np.float64)
    exact = np.array([np.sum(data[ids == s].astype(np.float64)) for s in range(5)])
    bound = np.array([np.sum(np.abs(data[ids == s])) for s in range(5)]) * 2.0 ** -23 * 20
    assert np.all(np.abs(ours - exact) <= bound)


def test_empty_segments_get_the_stock_identity():
    data = tf.constant([[1.5, -2.0]], tf.float32)
    ids = tf.constant([1])
    out = {r: P.segment_reduce(data, ids, 3, r, method="order_fixed").numpy() for r in STOCK}
    assert np.all(out["sum"][[0, 2]] == 0) and np.all(out["prod"][[0, 2]] == 1)
    assert np.all(out["max"][[0, 2]] == np.finfo(np.float32).min)
    assert np.all(out["min"][[0, 2]] == np.finfo(np.float32).max)
    assert np.array_equal(P.segment_reduce(tf.constant([3], tf.uint8), [0], 2, "min", method="order_fixed").numpy(),
                          [3, 255])


def test_ids_out_of_range_raise_like_the_cpu_kernel():
    with pytest.raises(tf.errors.InvalidArgumentError):
        P.segment_reduce(tf.ones([3]), [0, 1, 9], 5, method="order_fixed")
    with pytest.raises(tf.errors.InvalidArgumentError):
        P.segment_reduce(tf.ones([3]), [0, 1, 9], 5, method="stock")
    f = tf.function(lambda x, i: P.segment_reduce(x, i, 5, method="order_fixed"))
    with pytest.raises(tf.errors.InvalidArgumentError):
        f(tf.ones([3]), tf.constant([0, 5, 1]))
    # validate=False: out-of-range ids are dropped (GPU-kernel behaviour), nothing raises
    out = P.segment_reduce(tf.ones([3]), [0, 1, 9], 5, method="order_fixed", validate=False).numpy()
    assert out.tolist() == [1, 1, 0, 0, 0]


def test_bad_arguments():
    with pytest.raises(ValueError):
        P.segment_reduce(tf.ones([3]), [0, 1, 1], 2, "mean")
    with pytest.raises(TypeError):
        P.segment_reduce(tf.ones([3]), tf.constant([0.0, 1.0, 1.0]), 2)
    with pytest.raises(ValueError):
        P.set_method("fast")


# --------------------------------------------------------------------------- execution modes


def test_tf_function_with_unknown_shapes_matches_eager():
    rng = np.random.default_rng(4)
    data = rng.standard_normal((300, 3, 2)).astype(np.float32)
    ids = rng.integers(-1, 20, size=300).astype(np.int32)
    eager = P.segment_reduce(data, ids, 25, method="order_fixed").numpy()
    specs = [tf.TensorSpec([None, None, None], tf.float32), tf.TensorSpec(None, tf.int32)]
    f = tf.function(lambda x, i: P.segment_reduce(x, i, 25, method="order_fixed"), input_signature=specs)
    traced = f(data, ids).numpy()
    assert traced.shape == (25, 3, 2)
    C.assert_close(traced, eager, STOCK["sum"](np.abs(data), ids, 25).numpy(), "float32", "graph vs eager")
    # static shapes are kept
    g = tf.function(lambda x, i: P.segment_reduce(x, i, 25, method="order_fixed"))
    assert g.get_concrete_function(tf.TensorSpec([300, 3, 2]), tf.TensorSpec([300], tf.int32)
                                   ).structured_outputs.shape.as_list() == [25, 3, 2]


def test_tf1_graph_mode_session():
    rng = np.random.default_rng(5)
    data = rng.standard_normal((200, 4)).astype(np.float64)
    ids = rng.integers(0, 30, size=200).astype(np.int64)
    graph = tf.Graph()
    with graph.as_default():
        x = tf.compat.v1.placeholder(tf.float64, [None, 4])
        i = tf.compat.v1.placeholder(tf.int64, [None])
        out = P.segment_reduce(x, i, 30, method="order_fixed")
        with tf.compat.v1.Session(graph=graph) as sess:
            got = [sess.run(out, {x: data, i: ids}) for _ in range(3)]
    assert all(np.array_equal(got[0], g) for g in got[1:])
    C.assert_close(got[0], STOCK["sum"](data, ids, 30).numpy(), STOCK["sum"](np.abs(data), ids, 30).numpy(),
                   "float64", "tf1 graph")


def test_bitwise_repeatable_on_wide_magnitudes():
    rng = np.random.default_rng(6)
    data = C.wide(rng, (5000, 2))
    ids = rng.integers(0, 13, size=5000).astype(np.int32)
    f = tf.function(lambda x, i: P.segment_reduce(x, i, 13, method="order_fixed"))
    first = f(data, ids).numpy()
    for _ in range(19):
        assert np.array_equal(f(data, ids).numpy(), first)
    for _ in range(3):
        assert np.array_equal(P.segment_reduce(data, ids, 13, method="order_fixed").numpy(),
                              P.segment_reduce(data, ids, 13, method="order_fixed").numpy())


# --------------------------------------------------------------------------- graph content


@pytest.mark.parametrize("reduction", ["sum", "prod", "max", "min"])
@pytest.mark.parametrize("width", [1, 3])
def test_order_fixed_graph_has_no_atomic_op(reduction, width):
    specs = [tf.TensorSpec([None] + ([width] if width > 1 else []), tf.float32), tf.TensorSpec([None], tf.int32)]
    fn = tf.function(lambda x, i: P.segment_reduce(x, i, 10, reduction, method="order_fixed"))
    types = C.op_types(fn.get_concrete_function(*specs).graph.as_graph_def())
    forbidden = set(C.FORBIDDEN_OPS)
    for version in ("2.4", "%d.%d" % C.tf_version()):
        forbidden |= C.catalogue_forbidden(version)[0]
    assert not types & forbidden
    assert {"GatherV2", "DynamicPartition", "TopKV2"} <= types  # the radix sort, and top_k for ids beyond 31 bits
    # the runs: a binary search per segment id, or placed by a SparseToDense of unique ids (both in the graph)
    assert {"LowerBound", "SparseToDense", "RaggedTensorToTensor"} <= types
    stock = tf.function(lambda x, i: P.segment_reduce(x, i, 10, reduction, method="stock"))
    assert types != C.op_types(stock.get_concrete_function(*specs).graph.as_graph_def())


def test_sorted_graph_skips_the_sort():
    fn = tf.function(lambda x, i: P.segment_reduce(x, i, 10, sorted_ids=True, method="order_fixed"))
    types = C.op_types(fn.get_concrete_function(tf.TensorSpec([None]), tf.TensorSpec([None], tf.int32)
                                                ).graph.as_graph_def())
    assert "TopKV2" not in types and "DynamicPartition" not in types


# --------------------------------------------------------------------------- dispatch


def test_method_scope_and_resolution():
    assert P.get_method() == "order_fixed"  # set by the fixture in conftest.py
    with P.method_scope("stock"):
        assert P.resolve_method() == "stock"
        assert P.resolve_method("order_fixed") == "order_fixed"
    assert P.get_method() == "order_fixed"


def test_auto_is_order_fixed_unless_told_the_stock_kernel_is_deterministic():
    """The primitive knows no TF version or device: patch() tells it, from the catalogue."""
    assert P.stock_is_deterministic() is False  # nobody said so: the always-safe path
    with P.method_scope("auto"):
        assert P.resolve_method() == "order_fixed"
        previous = P.set_stock_deterministic(True)
        try:
            assert P.resolve_method() == "stock" and P.resolve_method("order_fixed") == "order_fixed"
        finally:
            assert P.set_stock_deterministic(previous) is True
        assert P.resolve_method() == "order_fixed"


def test_primitive_holds_no_tf_version_knowledge():
    import inspect

    source = inspect.getsource(P)
    assert "__version__" not in source and "2, 7" not in source and "list_gpus" not in source


def test_methods_agree_bitwise_on_integers():
    rng = np.random.default_rng(7)
    data = rng.integers(-1000, 1000, size=(500, 3)).astype(np.int64)
    ids = rng.integers(-1, 40, size=500).astype(np.int32)
    for r in STOCK:
        a = P.segment_reduce(data, ids, 40, r, method="order_fixed").numpy()
        b = P.segment_reduce(data, ids, 40, r, method="stock").numpy()
        assert np.array_equal(a, b)


@pytest.mark.parametrize("n,num,depth", [(160, 2, 1), (20011, 37, 3), (3000, 300, 2), (5000, 70000, 1)])
def test_radix_sorted_path_matches_stock(n, num, depth):
    """The sort takes one radix pass per 8 bits of the largest id + 1: 1, 2 and 3 passes here."""
    rng = np.random.default_rng(n + num)
    ids = rng.integers(-2, num, n).astype(np.int32)
    data = rng.standard_normal((n, depth))
    for reduction in STOCK:
        scaled = 1.0 + 1e-3 * data if reduction == "prod" else data
        for sorted_ids, variant in ((False, ids), (False, np.sort(ids)), (True, np.sort(ids))):
            _check(reduction, "float64", scaled, variant, num, sorted_ids=sorted_ids)
    ints = rng.integers(-50, 50, (n, depth)).astype(np.int64)
    for reduction in ("sum", "max", "min"):
        _check(reduction, "int64", ints, ids, num)
    fn = tf.function(lambda d, i: P.segment_reduce(d, i, num, "sum", method="order_fixed"),
                     input_signature=[tf.TensorSpec([None, depth], tf.float64), tf.TensorSpec([None], tf.int32)])
    assert np.array_equal(fn(data, ids).numpy(), P.segment_reduce(data, ids, num, "sum").numpy())


@pytest.mark.parametrize("dtype,num", [("int32", 5), ("int32", 1000), ("int64", 70000), ("int64", 2 ** 40)])
def test_stable_sort_is_a_stable_argsort(dtype, num):
    """Radix passes (keys below 2**31) or, for larger ids, one top_k: both a stable sort,
    ids >= num_segments collapsed to num_segments (their order does not matter)."""
    rng = np.random.default_rng(num)
    ids = rng.integers(-1, num + 3, 4000).astype(dtype)
    ids[::7] = ids[3]  # many ties
    ids[5::11] = num + 2  # out of range
    ids = tf.constant(ids)
    expected_ids = np.minimum(ids.numpy(), num)
    order = np.argsort(expected_ids, kind="stable")
    s, perm = P._stable_sort(ids, tf.constant(num, ids.dtype))
    assert s.dtype == ids.dtype and perm.dtype == ids.dtype
    assert np.array_equal(perm.numpy(), order)
    assert np.array_equal(s.numpy(), expected_ids[order])
    empty = P._stable_sort(tf.zeros([0], ids.dtype), tf.constant(num, ids.dtype))
    assert [t.shape.as_list() for t in empty] == [[0], [0]]


@pytest.mark.parametrize("num", [5, 1000, 2 ** 40])
@pytest.mark.parametrize("vdtype", ["float32", "int32"])
def test_stable_sort_carries_values_bit_for_bit(num, vdtype):
    """With values, the sort carries their bits in place of the positions: every bit pattern
    (negative, -0.0, NaN, inf, subnormal, int32 extremes) comes back where a stable argsort puts it."""
    rng = np.random.default_rng(num)
    ids = rng.integers(-1, min(num, 2 ** 35) + 2, 3000).astype(np.int64)  # 2 ** 40: the top_k path
    bits = rng.integers(-2 ** 31, 2 ** 31, 3000).astype(np.int32)
    bits[:6] = [0, -2 ** 31, 2 ** 31 - 1, -1, 1, 0x7FC00001]
    values = bits if vdtype == "int32" else bits.view(np.float32)
    order = np.argsort(np.minimum(ids, num), kind="stable")
    s, v = P._stable_sort(tf.constant(ids), tf.constant(num, tf.int64), tf.constant(values))
    assert np.array_equal(s.numpy(), np.minimum(ids, num)[order])
    assert v.dtype == tf.as_dtype(vdtype) and np.array_equal(v.numpy().view(np.int32), bits[order])


def test_radix_sorted_path_raises_for_ids_out_of_range():
    ids = np.arange(2000, dtype=np.int32) % 4
    ids[1234] = 4
    with pytest.raises(tf.errors.InvalidArgumentError, match="out of range"):
        P.segment_reduce(np.ones(2000), ids, 4, "sum")
