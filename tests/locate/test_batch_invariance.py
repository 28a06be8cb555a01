"""tfdet.testing.assert_batch_invariant on real models: a Dense layer's row
changes with the batch on this CPU (a matrix product of one row takes another
kernel than one of many); elementwise work does not."""

import numpy as np
import pytest

from tfdet.testing import assert_batch_invariant

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")


pytestmark = pytest.mark.usefixtures("no_global_seed_left")  # they set keras.utils.set_random_seed


@pytest.fixture(scope="module")
def dense_model():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((784,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])


@pytest.fixture(scope="module")
def examples():
    return np.random.default_rng(0).normal(size=(40, 784)).astype("float32")


def _stock_differs(model, x):
    """The premise, checked with TF alone: the first row of a batch of 2 is not bitwise the row alone."""
    return not np.array_equal(model(x[:1]).numpy()[0], model(x[:2]).numpy()[0])


def test_a_dense_model_fails_naming_the_matmul_and_its_keras_line(dense_model, examples):
    if not _stock_differs(dense_model, examples):
        pytest.skip("this CPU's MatMul gives one row the same bits in a batch of 2")
    with pytest.raises(AssertionError) as raised:
        assert_batch_invariant(dense_model, examples)
    text = str(raised.value)
    assert "not batch-invariant" in text and "batches of 2" in text
    assert "first op whose row differs" in text and "MatMul" in text and "dense.py" in text
    assert "test_batch_invariance.py" in text  # the user's line that called it


def test_copies_of_one_example_show_it_too_and_a_tf_function_is_split_op_by_op(dense_model, examples):
    """TF #63282's form: one, two and three copies of the same input; and a tf.function, run eagerly to name the op."""
    if not _stock_differs(dense_model, np.repeat(examples[:1], 2, axis=0)):
        pytest.skip("this CPU's MatMul gives one row the same bits in a batch of 2")
    step = tf.function(lambda batch: dense_model(batch, training=False))
    with pytest.raises(AssertionError, match="MatMul"):
        assert_batch_invariant(step, examples[:1], sizes=(1, 2, 3))
    assert not tf.config.functions_run_eagerly()  # the diagnosis put the switch back


def test_elementwise_work_passes_and_says_what_it_compared(examples):
    result = assert_batch_invariant(lambda batch: tf.nn.relu(batch * 2.0 + 1.0), examples, sizes=(2, 5))
    assert result.invariant and result.checked == [(2, 0), (2, 1), (5, 0), (5, 4)]
    assert "first and last in batches of 2 and 5" in result.verdict and "not tried" in result.verdict


def test_a_batch_dependent_function_is_caught_even_without_float_noise(examples):
    """Subtracting the batch mean is not a rounding difference; the check catches it all the same, naming Sub."""
    with pytest.raises(AssertionError, match="Sub"):
        assert_batch_invariant(lambda batch: batch - tf.reduce_mean(batch, axis=0), examples, sizes=(2,))


@pytest.mark.parametrize("sizes, says", [((1,), "batch size of 2 or more"), ((0, 2), "batch size of 2 or more")])
def test_refuses_sizes_with_nothing_to_compare(examples, sizes, says):
    with pytest.raises(ValueError, match=says):
        assert_batch_invariant(lambda batch: batch, examples, sizes=sizes)


def test_refuses_an_output_without_the_batch_dimension(examples):
    with pytest.raises(ValueError, match="no batch dimension"):
        assert_batch_invariant(lambda batch: tf.reduce_sum(batch), examples, sizes=(2,))
