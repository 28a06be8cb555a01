"""The capture inside one process: what the op callback records for eager ops,
traced ops, variable writes and gradients, and the fingerprints themselves."""

import inspect
import os
import sys

import numpy as np
import pytest

tf = pytest.importorskip("tensorflow")

from tfdet.locating import capture  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from traced import captured  # noqa: E402

HERE = __file__


def line_containing(text, function):
    source, start = inspect.getsourcelines(function)
    for offset, line in enumerate(source):
        if text in line:
            return "%s:%d" % (HERE, start + offset)
    raise AssertionError(text)


def program(steps=2):
    table = tf.Variable(tf.zeros([4, 2]))
    weights = tf.Variable(tf.ones([2, 2]))
    table.scatter_add(tf.IndexedSlices(tf.ones([3, 2]), [0, 1, 1]))  # EAGER SCATTER

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            y = tf.reduce_sum(tf.gather(tf.matmul(x, weights), [0, 0, 1]))  # FORWARD GATHER
        weights.assign_sub(0.1 * tape.gradient(y, weights))
        return y

    for _ in range(steps):
        step(tf.ones([2, 2]))
    return table


def test_eager_ops_traced_ops_variable_writes_and_steps_are_recorded(tmp_path):
    run = captured(tmp_path, program)
    assert run.status == "finished" and run.tf_version == tf.__version__ and run.device == "cpu"
    eager = [e for e in run.executions if e.key[0] == "e"]
    scatter = [e for e in eager if e.op.op_type == "ResourceScatterAdd"]
    assert [e.key[2] for e in scatter] == [-1]  # the table, read back after the write
    assert scatter[0].op.source == line_containing("EAGER SCATTER", program)
    graph = [e for e in run.executions if e.key[0] == "g"]
    assert {e.step for e in graph} == {1, 2}
    names = {e.op.name for e in graph}
    assert "MatMul" in names and "AssignSubVariableOp" in names  # the write, as its read-back
    assert len(graph) == 2 * len({e.key[1:4] for e in graph})  # each output once per step
    # the gradient of the gather points at the line that made the gather
    gradient = [e.op for e in graph if e.op.forward and e.op.forward.startswith("GatherV2 ")]
    assert gradient and gradient[0].forward.split(" ", 1)[1] == line_containing("FORWARD GATHER", program)


def test_capture_stops_after_the_steps_asked_for(tmp_path):
    run = captured(tmp_path, lambda: program(steps=4), steps=2)
    assert run.stopped_by == "steps"
    assert max(e.step for e in run.executions if e.key[0] == "g") == 2


def test_jit_compiled_functions_run_uninstrumented_and_give_the_same_result(tmp_path):
    @tf.function(jit_compile=True)
    def compiled(x):
        return tf.reduce_sum(tf.sin(x) * 2.0)

    expected = float(compiled(tf.range(5.0)))
    results = []
    run = captured(tmp_path, lambda: results.append(float(tf.function(jit_compile=True)(
        lambda x: tf.reduce_sum(tf.sin(x) * 2.0))(tf.range(5.0)))))
    assert results == [expected]
    assert not [e for e in run.executions if e.key[0] == "g"]  # nothing inside the compiled graph
    assert any(e.op.op_type.startswith("__inference_") for e in run.executions)  # its result is still compared


def test_another_callback_after_the_recorder_still_sees_the_outputs(tmp_path):
    from tensorflow.python.framework import op_callbacks

    seen = []

    def after(op_type, inputs, attrs, outputs, op_name=None, graph=None):
        seen.append(outputs is not None)
        return outputs

    def both():
        op_callbacks.add_op_callback(after)
        try:
            tf.square(tf.constant([1.0, 2.0]))
            tf.function(lambda x: x * 3.0)(tf.ones([2]))
        finally:
            op_callbacks.remove_op_callback(after)

    captured(tmp_path, both)
    assert seen and all(seen)


DTYPES = [tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.complex64, tf.complex128, tf.int8, tf.int32,
          tf.int64, tf.uint8, tf.bool, tf.string]


def _one_changed(tensor):
    if tensor.dtype == tf.string:
        return tf.constant([b"a", b"b", b"d"])
    if tensor.dtype == tf.bool:
        return tf.logical_not(tensor)
    if tensor.dtype.is_floating or tensor.dtype.is_complex:
        bits = {2: tf.int16, 4: tf.int32, 8: tf.int64, 16: tf.int64}[tensor.dtype.size]
        as_int = tf.bitcast(tensor, bits).numpy().copy()
        as_int.reshape(-1)[-1] ^= 1  # the last bit of the last element
        return tf.bitcast(tf.constant(as_int), tensor.dtype)
    return tensor + tf.constant(1, tensor.dtype)


@pytest.mark.parametrize("method", ["fingerprint", "checksum"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_fingerprints_are_equal_for_equal_tensors_and_see_one_changed_bit(method, dtype):
    if dtype == tf.string:
        tensor = tf.constant([b"a", b"b", b"c"])
    elif dtype == tf.bool:
        tensor = tf.constant([True, False, False])
    else:
        tensor = tf.cast(tf.constant([1.5, -2.25, 3.0]), dtype)
    # autograph=False: AutoGraph has nothing to convert here (and its code-object cache once ran
    # host_fingerprint for this lambda in a full run)
    fingerprint = tf.function(lambda t: capture.graph_fingerprint(t, method), autograph=False)
    same = fingerprint(tf.identity(tensor)).numpy()
    assert np.array_equal(fingerprint(tensor).numpy(), same)
    assert not np.array_equal(fingerprint(_one_changed(tensor)).numpy(), same)
    # the order of the elements counts too (a permutation is a difference)
    reversed_tensor = tf.reverse(tensor, [0])
    assert not np.array_equal(fingerprint(reversed_tensor).numpy(), same)


def test_host_fingerprints_see_dtype_shape_and_bytes():
    base = np.arange(6, dtype=np.float32)
    assert capture.host_fingerprint(base) == capture.host_fingerprint(base.copy())
    assert capture.host_fingerprint(base) != capture.host_fingerprint(base.reshape(2, 3))
    assert capture.host_fingerprint(base) != capture.host_fingerprint(base.astype(np.float64))
    changed = base.copy()
    changed.view(np.int32)[0] ^= 1
    assert capture.host_fingerprint(base) != capture.host_fingerprint(changed)


def test_capture_stops_when_the_trace_reaches_max_bytes(tmp_path):
    run = captured(tmp_path, lambda: program(steps=6), max_bytes=4000)
    assert run.stopped_by == "max-bytes"
    full = captured(tmp_path, lambda: program(steps=6))
    assert 0 < len(run.executions) < len(full.executions)


def test_a_tf_function_s_fingerprints_go_to_the_host_once_per_call_not_once_per_op(tmp_path):
    """Issue 30: a numpy_function per op output cost a small Keras step 2-2.6x; the
    fingerprints now wait on a queue in the graph and come to the host when the call returns."""
    holder = {}

    def traced_program():
        holder["table"] = program(steps=3)

    run = captured(tmp_path, traced_program)
    graph = [e for e in run.executions if e.key[0] == "g"]
    assert {e.step for e in graph} == {1, 2, 3} and len(graph) == 3 * len({e.key[1:4] for e in graph})
    recorder = capture.Recorder(str(tmp_path / "again.jsonl"))
    capture.install(recorder)
    try:
        weights = tf.Variable(tf.ones([2, 2]))
        step = tf.function(lambda x: weights.assign_sub(tf.matmul(x, weights)))
        concrete = step.get_concrete_function(tf.TensorSpec([2, 2]))
    finally:
        capture.uninstall(recorder)
        recorder.close("finished")
    op_types = [op.type for op in concrete.graph.get_operations()]
    assert "EagerPyFunc" not in op_types and "PyFunc" not in op_types
    assert "QueueEnqueueV2" in op_types



def test_an_op_made_by_a_function_the_patch_rebinds_is_advised_as_the_patch_s(tmp_path):
    """The corpus's imbalanced_bincount: locate found its DenseBincount and advised "call
    tf.math.bincount rather than the raw op", which the program did. The trace now keeps the
    public function that made an op, and the advice follows the scan's."""
    from tfdet.locating.api import _judge

    ids, weights = tf.constant([0, 1, 1, 3]), tf.constant([0.5, 1.0, 2.0, 4.0])

    def both():
        tf.function(lambda: tf.math.bincount(ids, weights=weights, minlength=4))()
        tf.function(lambda: tf.raw_ops.DenseBincount(input=ids, size=4, weights=weights))()

    run = captured(tmp_path, both)
    made = {tuple(e.op.apis) for e in run.executions if e.key[0] == "g" and e.op.op_type == "DenseBincount"}
    assert made == {("tf.math.bincount",), ()}
    public, raw = ("tf.math.bincount",), ()
    _, _, fix_public = _judge("DenseBincount", tf.__version__, "cpu", public)
    _, _, fix_raw = _judge("DenseBincount", tf.__version__, "cpu", raw)
    assert "rather than the raw op" in fix_raw and "rather than the raw op" not in fix_public
    assert "tf.math.bincount" in fix_public


def test_a_function_call_s_inputs_are_fingerprinted_by_value_though_kept_between_calls(tmp_path):
    """A function call's input fingerprint is kept while the tensor lives (issue 30: the
    Keras step's batch, hashed at every call, cost a tenth of the step); a new tensor, even
    one at a freed tensor's address, is hashed again. Before, a new tensor at the address of
    a freed eager output was recorded as that output (["e", 1, 0]), not by its value."""
    double = tf.function(lambda x: x * 2.0)
    values = np.arange(64, dtype=np.float32)
    changed = values.copy()
    changed.view(np.int32)[-1] ^= 1  # one bit of the last element

    def calls():
        kept = tf.constant(values)
        double(kept)
        double(kept)
        for array in (values, changed, values):  # each made, passed and freed: ids get reused
            double(tf.constant(array))

    run = captured(tmp_path, calls)
    inputs = [e.eager_inputs[0] for e in run.executions
              if e.key[0] == "e" and e.op.op_type.startswith("__inference_")]
    assert len(inputs) == 5 and all(isinstance(value, str) for value in inputs)
    assert inputs[0] == inputs[1] == inputs[2] == inputs[4] != inputs[3]


def test_a_keras_lstm_trained_under_a_tape_runs_captured_and_gives_the_stock_loss(tmp_path, no_global_seed_left):
    # The corpus's timeseries_lstm: an op added in a while loop's gradient body or a loop's
    # cond failed the whole gradient (a captured queue handle: "in list of internal_captures
    # but not in internal_capture_to_output"; a numpy_function: "cond_graph takes 29 inputs").
    import keras

    def train():
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((3, 2)), keras.layers.LSTM(4), keras.layers.Dense(1)])
        optimizer = keras.optimizers.SGD(0.1)
        x, y = tf.ones([2, 3, 2]), tf.ones([2, 1])

        @tf.function
        def step():
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
            optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
            return loss

        return [float(step()) for _ in range(2)]

    stock = train()
    losses = []
    run = captured(tmp_path, lambda: losses.extend(train()))
    assert run.status == "finished" and losses == stock
    graph = {e.op.op_type for e in run.executions if e.key[0] == "g"}
    # the loop body's ops are compared each iteration, and the weights its gradient updated after it;
    # the gates' Sigmoid and Tanh are recorded, folded into the Mul that reads each (capture.CHAIN_READERS)
    assert {"Mul", "MatMul", "AssignSubVariableOp"} <= graph
    assert {"Sigmoid", "Tanh"} <= {op.op_type for op in run.ops.values()}
