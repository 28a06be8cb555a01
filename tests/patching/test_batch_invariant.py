"""tfdet.patch(batch_invariant=True): the batch-invariant tf.linalg.matmul against the stock one (values,
static shapes, dtypes, errors, gradients) in eager, tf.function, v1 graph and XLA; a real Keras Dense
model that fails assert_batch_invariant stock and passes under the patch; undo; the GPU plan declines."""

import warnings

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

import tfdet  # noqa: E402
from tfdet.patching import batch_invariant as B  # noqa: E402
from tfdet.patching import registry  # noqa: E402
from tfdet.testing import assert_batch_invariant  # noqa: E402

pytestmark = pytest.mark.usefixtures("no_global_seed_left")  # the Dense model sets keras.utils.set_random_seed
MODES = ("eager", "function", "v1_graph", "jit_compile")
RTOL = {"float16": 2e-2, "bfloat16": 5e-2, "float32": 2e-5, "float64": 1e-12, "complex64": 2e-5}
STOCK = B.stock_matmul()


def _array(rng, shape, dtype):
    values = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        values = values + 1j * rng.standard_normal(shape)
    if dtype.startswith("int"):
        values = np.round(values * 5)
    if dtype == "bfloat16":
        return values.astype("float32"), dtype
    return values.astype(dtype), dtype


# name -> (shape of a, shape of b, dtype, kwargs); every one of them is also run through the stock function
CASES = {
    "batch_invariant_matmul": {
        "rows": ((5, 784), (784, 16), "float32", {}),
        "one-row": ((1, 600), (600, 3), "float32", {}),
        "zero-rows": ((0, 7), (7, 3), "float32", {}),
        "rank3": ((2, 9, 33), (33, 4), "float32", {}),
        "float64": ((11, 20), (20, 6), "float64", {}),
        "float16": ((9, 12), (12, 5), "float16", {}),
        "bfloat16": ((9, 12), (12, 5), "bfloat16", {}),
        "complex-adjoint-b": ((10, 6), (4, 6), "complex64", {"adjoint_b": True}),
        "complex-transpose-b": ((10, 6), (4, 6), "complex64", {"transpose_b": True}),
        "transpose-a": ((30, 13), (30, 4), "float32", {"transpose_a": True}),
        "int32-falls-back": ((4, 5), (5, 2), "int32", {}),
        "batched-b-falls-back": ((3, 4, 5), (3, 5, 2), "float32", {}),
    },
}
ERRORS = {  # stock raises on these; the replacement must raise the same type
    "inner-mismatch": ((4, 5), (6, 2), "float32", {}),
    "dtype-mismatch": ((4, 5), (5, 2), ("float32", "float64"), {}),
    "rank1": ((5,), (5, 2), "float32", {}),
}


def _inputs(case, seed=0):
    rng = np.random.default_rng(seed)
    shape_a, shape_b, dtype, kwargs = case
    dtypes = dtype if isinstance(dtype, tuple) else (dtype, dtype)
    return _array(rng, shape_a, dtypes[0]), _array(rng, shape_b, dtypes[1]), kwargs


def _run(fn, a, b, kwargs, mode, unknown_batch=True):
    """(value, static shape, dtype) of fn(a, b, **kwargs) in a mode; the operands keep their dtypes."""
    (av, adt), (bv, bdt) = a, b
    if mode == "v1_graph":
        with tf.Graph().as_default():
            shape = [None] + list(av.shape[1:]) if unknown_batch and av.ndim else list(av.shape)
            pa = tf.compat.v1.placeholder(tf.float32 if adt == "bfloat16" else adt, shape)
            pb = tf.compat.v1.placeholder(tf.float32 if bdt == "bfloat16" else bdt, bv.shape)
            ta = tf.cast(pa, adt) if adt == "bfloat16" else pa
            tb = tf.cast(pb, bdt) if bdt == "bfloat16" else pb
            out = fn(ta, tb, **kwargs)
            with tf.compat.v1.Session() as session:
                value = session.run(out, {pa: av, pb: bv})
            return np.asarray(value), out.shape.as_list(), out.dtype.name
    ta, tb = tf.cast(tf.constant(av), adt), tf.cast(tf.constant(bv), bdt)
    if mode == "eager":
        out = fn(ta, tb, **kwargs)
        return out.numpy(), out.shape.as_list(), out.dtype.name
    shapes = {}

    def traced(x, y):
        result = fn(x, y, **kwargs)
        shapes["static"] = result.shape.as_list()
        return result

    compiled = tf.function(traced, jit_compile=(mode == "jit_compile"))
    out = compiled(ta, tb)
    return out.numpy(), shapes["static"], out.dtype.name


def _close(ours, stock, dtype):
    ours, stock = np.asarray(ours, "complex128" if dtype.startswith("complex") else "float64"), np.asarray(
        stock, "complex128" if dtype.startswith("complex") else "float64")
    scale = max(1.0, float(np.max(np.abs(stock)))) if stock.size else 1.0
    np.testing.assert_allclose(ours, stock, rtol=RTOL.get(dtype, 0), atol=RTOL.get(dtype, 0) * scale)


# The default suite runs every case eagerly and in a v1 graph, and these in tf.function and XLA too
# (each compile costs ~0.5 s here); --runslow runs every case in every mode.
COMPILED_BY_DEFAULT = ("rows", "transpose-a", "complex-adjoint-b", "rank3")


def _case_modes():
    for label in sorted(CASES["batch_invariant_matmul"]):
        for mode in MODES:
            slow = mode in ("function", "jit_compile") and label not in COMPILED_BY_DEFAULT
            yield pytest.param(label, mode, marks=[pytest.mark.slow] if slow else [], id="%s-%s" % (label, mode))


@pytest.mark.parametrize("label, mode", list(_case_modes()))
def test_replacement_matches_stock_values_shapes_and_dtypes(label, mode):
    a, b, kwargs = _inputs(CASES["batch_invariant_matmul"][label])
    if mode == "jit_compile" and a[1] == "int32":
        pytest.skip("XLA on CPU has no int32 dot")
    ours = _run(B.matmul, a, b, kwargs, mode)
    stock = _run(STOCK, a, b, kwargs, mode)
    assert ours[1] == stock[1] and ours[2] == stock[2], (ours[1:], stock[1:])
    _close(ours[0], stock[0], a[1])
    assert ours[0].shape == stock[0].shape


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("label", sorted(ERRORS))
def test_replacement_raises_what_stock_raises(label, mode):
    a, b, kwargs = _inputs(ERRORS[label])
    raised = []
    for fn in (STOCK, B.matmul):
        with pytest.raises(Exception) as info:
            _run(fn, a, b, kwargs, mode, unknown_batch=False)
        raised.append(type(info.value))
    assert raised[0] is raised[1], raised


def test_the_known_shape_of_a_graph_operand_is_kept_where_stock_keeps_it():
    with tf.Graph().as_default():
        a = tf.compat.v1.placeholder(tf.float32, [None, None])
        b = tf.compat.v1.placeholder(tf.float32, [7, 3])
        assert B.matmul(a, b).shape.as_list() == STOCK(a, b).shape.as_list() == [None, 3]
        c = tf.compat.v1.placeholder(tf.float32, None)  # unknown rank: stock, with a warning
        with pytest.warns(tfdet.TfdetWarning, match="unknown rank"):
            B._warned.discard("rank")
            assert str(B.matmul(c, b).shape) == str(STOCK(c, b).shape)


@pytest.mark.parametrize("mode, label", [("eager", "rows"), ("function", "rows"), ("jit_compile", "rows"),
                                         ("eager", "transpose-a"), ("eager", "rank3"), ("eager", "complex-adjoint-b"),
                                         ("v1_graph", "rows")])
def test_gradients_match_stock(mode, label):
    (av, dtype), (bv, _), kwargs = _inputs(CASES["batch_invariant_matmul"][label], seed=1)
    if mode == "v1_graph":
        with tf.Graph().as_default():
            a, b = tf.constant(av), tf.constant(bv)
            found = []
            for fn in (B.matmul, STOCK):
                loss = tf.reduce_sum(tf.sin(tf.math.real(fn(a, b, **kwargs))))
                with tf.compat.v1.Session() as session:
                    found.append(session.run(tf.gradients(loss, [a, b])))
        for ours, stock in zip(*found):
            _close(ours, stock, dtype)
        return
    a, b = tf.constant(av), tf.constant(bv)

    def grads(fn):
        def step(x, y):
            with tf.GradientTape() as tape:
                tape.watch([x, y])
                loss = tf.reduce_sum(tf.sin(tf.math.real(fn(x, y, **kwargs))))
            return tape.gradient(loss, [x, y])
        if mode != "eager":
            step = tf.function(step, jit_compile=(mode == "jit_compile"))
        return [g.numpy() for g in step(a, b)]

    for ours, stock in zip(grads(B.matmul), grads(STOCK)):
        _close(ours, stock, dtype)


@pytest.mark.parametrize("mode", ("eager", "function", "jit_compile"))
def test_a_row_alone_and_in_any_batch_gives_the_same_bits(mode):
    rng = np.random.default_rng(2)
    w = tf.constant(rng.standard_normal((784, 64)).astype("float32"))
    x = rng.standard_normal((40, 784)).astype("float32")
    fn = B.matmul if mode == "eager" else tf.function(B.matmul, jit_compile=(mode == "jit_compile"))
    alone = fn(tf.constant(x[:1]), w).numpy()[0]
    for n in (2, 9, 40) if mode == "eager" else (2, 9):  # every size is a compile in the other modes
        assert np.array_equal(fn(tf.constant(x[:n]), w).numpy()[0], alone), n
        last = np.concatenate([x[1:n], x[:1]])
        assert np.array_equal(fn(tf.constant(last), w).numpy()[-1], alone), n


# -- through tfdet.patch() -----------------------------------------------------------------------

@pytest.fixture
def dense_model():
    keras = pytest.importorskip("keras")
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
    return model


@pytest.fixture
def examples():
    return np.random.default_rng(0).normal(size=(40, 784)).astype("float32")


@pytest.fixture
def unpatched():
    tfdet.unpatch()
    yield
    tfdet.unpatch()


def _patch(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tfdet.patch(quiet=True, **kwargs)


def test_a_dense_model_fails_stock_and_passes_patched_in_eager_and_predict(unpatched, dense_model, examples):
    if np.array_equal(dense_model(examples[:1]).numpy()[0], dense_model(examples[:2]).numpy()[0]):
        pytest.skip("this CPU's MatMul gives one row the same bits in a batch of 2")
    with pytest.raises(AssertionError, match="MatMul"):
        assert_batch_invariant(dense_model, examples)
    stock_all = dense_model(examples).numpy()
    status = _patch(batch_invariant=True)
    assert status.batch_invariant_apis.get("tf.linalg.matmul", 0) >= 2, status.batch_invariant_apis
    assert tf.matmul is B.matmul and tf.linalg.matmul is B.matmul
    assert assert_batch_invariant(dense_model, examples).invariant
    predict = tf.function(lambda batch: dense_model(batch, training=False))  # traced while patched
    assert assert_batch_invariant(predict, examples, sizes=(2, 9, 40)).invariant
    _close(dense_model(examples).numpy(), stock_all, "float32")


def test_unpatch_restores_the_stock_function_and_the_variance(unpatched, dense_model, examples):
    _patch(batch_invariant=True)
    assert tf.matmul is B.matmul
    status = tfdet.unpatch()
    assert not status.patched
    assert tf.matmul is STOCK and tf.linalg.matmul is STOCK and tf.compat.v1.matmul is STOCK
    from tensorflow.python.ops import math_ops

    assert math_ops.matmul is STOCK
    stock_varies = not np.array_equal(STOCK(examples[:1], dense_model.layers[0].kernel).numpy()[0],
                                      STOCK(examples[:2], dense_model.layers[0].kernel).numpy()[0])
    if stock_varies:
        with pytest.raises(AssertionError, match="MatMul"):
            assert_batch_invariant(dense_model, examples, sizes=(2,))


def test_default_patch_leaves_matmul_alone_and_says_nothing_of_batch_invariance(unpatched):
    status = _patch()
    assert tf.matmul is STOCK and not status.batch_invariant_apis
    assert "batch-invariant" not in status.summary_line() and "batch-invariant" not in str(status)


def test_patch_says_what_it_made_batch_invariant_and_what_it_cannot(unpatched):
    status = _patch(batch_invariant=True)
    line = status.summary_line()
    assert "batch-invariant: tf.linalg.matmul (" in line and "cannot be made so" in line
    text = str(status)
    assert "NOT batch-invariant:" in text and "BatchNormalization (training)" in text
    assert [op for op, _ in status.not_batch_invariant] == [op for op, _ in registry.NOT_MADE_BATCH_INVARIANT]


def test_a_second_patch_asking_for_batch_invariance_warns(unpatched):
    _patch()
    with pytest.warns(tfdet.TfdetWarning, match="batch_invariant=True.*already patched"):
        tfdet.patch(batch_invariant=True, quiet=True)
    assert tf.matmul is STOCK


def test_the_gpu_plan_declines_with_a_warning(unpatched):
    with pytest.warns(tfdet.TfdetWarning, match="batch_invariant=True on a gpu plan: nothing replaced"):
        status = tfdet.patch(batch_invariant=True, device="gpu", quiet=True)
    assert tf.matmul is STOCK and not status.batch_invariant_apis


def test_every_batch_invariant_replacement_has_cases_an_installer_and_a_benchmark():
    from tfdet.patching import bindings

    assert set(CASES) == registry.batch_invariant_names() == set(bindings.BATCH_INVARIANT_INSTALLERS)
    assert not registry.batch_invariant_names() & registry.names()  # never planned from the catalogue
    for r in registry.BATCH_INVARIANT:
        assert callable(getattr(B, r.implementation)) and r.install == registry.REBIND
    import os

    bench = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "bench_batch_invariant_matmul.py")
    text = open(bench, encoding="utf-8").read()
    for r in registry.BATCH_INVARIANT:
        assert "batch_invariant=True" in text and r.stock.split(".")[-1] in text
