"""Folding: an output whose one reader is elementwise is not hashed (capture.CHAIN_READERS),
and when the first root reads such outputs, the detail runs name the link that differed
(chains.py)."""

import os
import sys

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import programs  # noqa: E402 - the programs run in fresh processes
from traced import captured  # noqa: E402


def _line_of_example(marker):
    """'steps.py:N' of the line of examples/locate/steps.py holding `marker`."""
    with open(os.path.join(programs.EXAMPLES, "steps.py")) as handle:
        for number, line in enumerate(handle, 1):
            if marker in line:
                return "steps.py:%d" % number
    raise AssertionError(marker)


def conv_step():
    rng = np.random.RandomState(0)
    images = tf.constant(rng.standard_normal((2, 8, 8, 3)).astype(np.float32))
    kernel = tf.Variable(rng.standard_normal((3, 3, 3, 4)).astype(np.float32))
    bias = tf.Variable(rng.standard_normal(4).astype(np.float32))

    @tf.function
    def step():
        return tf.reduce_sum(tf.nn.relu(tf.nn.bias_add(tf.nn.conv2d(images, kernel, 1, "VALID"), bias)))

    return [float(step()) for _ in range(2)]


def hashed_types(run):
    return [e.op.op_type for e in run.executions if e.key[0] == "g"]


def test_a_conv_bias_relu_chain_is_hashed_at_its_end_and_gives_the_stock_result(tmp_path):
    stock = conv_step()
    results = []
    run = captured(tmp_path, lambda: results.extend(conv_step()))
    assert results == stock
    hashed = hashed_types(run)
    assert hashed.count("Relu") == 2 and "Conv2D" not in hashed and "BiasAdd" not in hashed
    assert {"Conv2D", "BiasAdd"} <= {op.op_type for op in run.ops.values()}  # recorded, the alignment follows them
    # unfolded (as a --record file is made), every link is hashed
    whole = hashed_types(captured(tmp_path, conv_step, fold=False))
    assert whole.count("Conv2D") == whole.count("BiasAdd") == whole.count("Relu") == 2


def test_the_links_before_a_chain_s_end_are_found_in_the_order_they_were_made(tmp_path):
    from tfdet.locating import chains

    run = captured(tmp_path, conv_step)
    relu = next(e for e in run.executions if e.op.op_type == "Relu")
    links = chains.folded_links(run, relu)
    assert [run.ops[(g, n)].op_type for g, n, _ in links] == ["Conv2D", "BiasAdd"]
    whole = captured(tmp_path, conv_step, fold=False)
    assert chains.folded_links(whole, next(e for e in whole.executions if e.op.op_type == "Relu")) == []


def test_a_second_reader_a_varying_op_and_a_stateful_op_keep_their_outputs_hashed(tmp_path):
    def program():
        ids = tf.constant([0, 1, 1, 3])
        weights = tf.constant([0.5, 1.0, 2.0, 4.0])

        @tf.function
        def step():
            shared = tf.sin(weights)  # read by two elementwise ops: hashed
            counts = tf.math.bincount(ids, weights=weights, minlength=4)  # may vary on this CPU: hashed
            noise = tf.random.stateless_uniform([4], [1, 2]) + tf.random.uniform([4], seed=1)  # a stateful op
            return tf.reduce_sum(tf.exp(shared) + tf.cos(shared) + counts * 2.0 + noise)

        return float(step())

    hashed = set(hashed_types(captured(tmp_path, program)))
    assert {"Sin", "DenseBincount", "RandomUniform"} <= hashed
    assert "StatelessRandomUniformV2" not in hashed  # stateless, read only by the AddV2: folded


@pytest.mark.slow
def test_a_varying_op_folded_into_its_reader_is_named_by_the_detail_runs():
    # The catalogue knows crop_and_resize's image gradient varies, so capture never folds it;
    # the program makes the recorder forget that (an op the catalogue does not know yet), so
    # its output is folded into the Mul that reads it and the comparison runs see the Mul differ.
    from tfdet.locating import locate

    result = locate(programs.unknown_varying_op_in_a_chain, runs=2, repeats=1)
    first = result.first_difference
    assert first is not None, result.verdict
    assert first.op_type == "CropAndResizeGradImage", (first.op_type, result.notes)
    assert first.source.endswith(_line_of_example("CROP LINE"))
    assert any("made the difference" in note and "Mul" in note for note in result.notes), result.notes


def test_a_folded_output_a_later_op_reads_too_is_still_a_link_of_its_first_reader(tmp_path):
    # sin's first reader is the Mul (so it waits, folded), and a Sum made after the Mul's own
    # reader reads it too: its hash is made then, after the Mul's, so in the trace the Mul
    # comes first and only the detail runs can say whether sin or the Mul differed
    from tfdet.locating import chains

    def program():
        x = tf.constant([0.5, 1.0, 2.0])

        @tf.function
        def step():
            h = tf.sin(x)
            y = h * 2.0
            return tf.reduce_sum(y) + tf.reduce_sum(h)

        return float(step())

    run = captured(tmp_path, program)
    order = [e.op.op_type for e in run.executions if e.key[0] == "g"]
    assert order.index("Mul") < order.index("Sin")
    mul = next(e for e in run.executions if e.op.op_type == "Mul")
    assert [run.ops[(g, n)].op_type for g, n, _ in chains.folded_links(run, mul)] == ["Sin"]
