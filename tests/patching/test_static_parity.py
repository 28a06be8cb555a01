"""Every replacement in the registry against its stock op under every plan (static_parity.py): the
static shapes, ranks and dtypes of outputs and gradients as the graph knows them, the errors (stock
raises <=> patched raises, same class) and the values, in eager, tf.function (known, unknown-dimension
and unknown-rank input signatures) and v1 graphs (placeholders of known and of unknown rank).

Default run (kept cheap): each replacement's first static case in one graph mode, its first error case
in one mode and one drawn problem in one mode, under one plan; plans and modes rotate over the registry,
so each is run by some replacement. `--runslow` runs every case and 20 drawn problems per replacement
under every plan in every mode."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import tensorflow as tf

from tfdet.patching import registry

import static_parity as P

NAMES = sorted(registry.names())
FAST = settings(max_examples=1, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True,
                database=None)
SLOW = settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck), database=None)


GRAPH_MODES = [mode for mode in P.MODES if mode != "eager"]
ERROR_MODES = ("eager", "function", "v1_graph_unknown_rank")


def plan_of(name):
    return P.PLANS[(NAMES.index(name) + 2) % len(P.PLANS)]  # bincount: this CPU's plan


def mode_of(name, modes):
    return modes[NAMES.index(name) % len(modes)]


def draw_one(strategy):
    """One example of the strategy, the same in every run (derandomized)."""
    drawn = []

    def keep(problem):
        drawn.append(problem)

    FAST(given(strategy)(keep))()
    return drawn[0]


def differences(name, problem, plan, modes):
    """["name mode: what differs"] (plan None: inside a plan_scope already)."""
    return ["%s %s: %s" % (name, mode, what[:600]) for mode, what in P.compare(name, problem, plan, modes).items()
            if what]


def assert_as_stock(name, problem, plan, modes):
    found = differences(name, problem, plan, modes)
    assert not found, "under the %s plan, patched differs from stock:\n%s" % (plan, "\n".join(found))


def test_every_replacement_has_parity_cases_for_static_shapes_and_errors():
    """Keyed by the registry: a replacement added without static-shape and error cases fails here."""
    missing = registry.names() - set(P.CASES)
    assert not missing, "no parity cases (tests/patching/static_parity.py CASES) for %s" % sorted(missing)
    assert not set(P.CASES) - registry.names(), "parity cases for names the registry does not have"
    for name, cases in P.CASES.items():
        assert cases.statics and cases.errors, "%s needs static-shape and error cases" % name


@pytest.mark.parametrize("plan", P.PLANS)
def test_replacements_as_stock(plan):
    """The replacements this plan is rotated onto: the first static case (one graph mode), the first error
    case (one mode; stock must raise there) and one drawn problem (one mode), under one patch."""
    names = [name for name in NAMES if plan_of(name) == plan]
    found = []
    with P.plan_scope(plan, *names):
        for name in names:
            found += differences(name, P.CASES[name].statics[0], None, (mode_of(name, GRAPH_MODES),))
            problem = P.CASES[name].errors[0]
            for mode, (ours, stock) in P.records(name, problem, None, (mode_of(name, ERROR_MODES),)).items():
                assert stock[0] == "raise", "%s: the error case does not make stock raise in %s mode" % (name, mode)
                what = P.difference(ours, stock, problem)
                found += ["%s %s: %s" % (name, mode, what[:600])] if what else []
            found += differences(name, draw_one(P.CASES[name].problems), None, (mode_of(name, P.MODES[::-1]),))
    assert not found, "under the %s plan, patched differs from stock:\n%s" % (plan, "\n".join(found))


@pytest.mark.slow
@pytest.mark.parametrize("plan", P.PLANS)
@pytest.mark.parametrize("name", NAMES)
def test_every_case_as_stock_in_every_mode(name, plan):
    with P.plan_scope(plan, name):
        found = [line for problem in P.CASES[name].statics + P.CASES[name].errors
                 for line in differences(name, problem, None, P.MODES)]
    assert not found, "under the %s plan, patched differs from stock:\n%s" % (plan, "\n".join(found))


@pytest.mark.slow
@pytest.mark.parametrize("plan", P.PLANS)
@pytest.mark.parametrize("name", NAMES)
def test_drawn_problems_as_stock_in_every_mode(name, plan):
    with P.plan_scope(plan, name):
        SLOW(given(P.CASES[name].problems)(lambda problem: assert_as_stock(name, problem, None, P.MODES)))()


# --------------------------------------------------------------------------- the cases, directly


@pytest.mark.parametrize("plan", ["cpu", "order_fixed"])
def test_bincount_in_a_function_keeps_stock_static_shape_for_assign_sub(plan):
    """Issue 25: inside a tf.function the patched bincount had an unknown rank, and a Variable update
    scaled by it failed to build ("Cannot take the length of shape with unknown rank")."""
    table = tf.Variable(tf.ones([5, 2]))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.float32)])
    def step(ids, weights):
        counts = tf.math.bincount(ids, weights=weights, minlength=5, maxlength=5)
        shapes.append(counts.shape)
        table.assign_sub(0.1 * counts[:, tf.newaxis] * table)
        return counts

    with P.plan_scope(plan, "bincount"):
        shapes = []
        ours = step(tf.constant([0, 1, 1, 4]), tf.constant([1.0, 2.0, 3.0, 4.0])).numpy()
        with P.stock_scope("bincount"):
            step_stock = tf.function(step.python_function, input_signature=step.input_signature)
            stock = step_stock(tf.constant([0, 1, 1, 4]), tf.constant([1.0, 2.0, 3.0, 4.0])).numpy()
    assert shapes[0].as_list() == shapes[1].as_list() == [None]
    np.testing.assert_array_equal(ours, stock)


def test_sparse_dense_matmul_float16_meets_tfs_own_tolerance():
    """sparse_tensor_dense_matmul_op_test.py testBasic (float16): within rtol = atol = 1e-3 of NumPy's
    product, on the order-fixed path (the GPU plans'); the sums were float16 and missed it."""
    rng = np.random.RandomState(127)
    for _ in range(3):
        x = rng.rand(10, 10).astype(np.float16)
        x[np.abs(x) < 0.5] = 0
        y = rng.randn(10, 20).astype(np.float16)
        indices = np.vstack(np.where(x)).astype(np.int64).T
        with P.plan_scope("order_fixed", "sparse_dense_matmul"):
            out = tf.sparse.sparse_dense_matmul(tf.SparseTensor(indices, x[np.where(x)], x.shape), y)
        np.testing.assert_allclose(out.numpy(), x.dot(y), rtol=1e-3, atol=1e-3)


def test_sparse_dense_matmul_static_shapes_as_tfs_shape_inference_test():
    """sparse_tensor_dense_matmul_op_test.py testShapeInference: a known dense shape gives a known output
    shape, and inner dimensions known to differ raise ValueError("Dimensions must be equal") when built."""
    x = np.eye(10)
    indices = np.vstack(np.where(x)).astype(np.int64).T
    with P.plan_scope("order_fixed", "sparse_dense_matmul"), tf.Graph().as_default():
        y = np.ones([10, 20])
        assert tf.sparse.sparse_dense_matmul(tf.SparseTensor(indices, x[np.where(x)], x.shape), y).shape == (10, 20)
        with pytest.raises(ValueError, match="Dimensions must be equal"):
            tf.sparse.sparse_dense_matmul(tf.SparseTensor(indices, x[np.where(x)], [10, 15]), y)
