"""The in-graph fingerprints themselves: the exact integer sums ("checksum",
sums2) see one changed bit, two swapped elements and a reshape; a trace and a
fingerprints file say which fingerprint they hold, and two that hold different
ones are refused in one line rather than compared."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

tf = pytest.importorskip("tensorflow")

from tfdet.cli.exitcodes import INVALID_INPUT  # noqa: E402
from tfdet.locating import capture  # noqa: E402
from tfdet.locating.trace_file import read_trace, same_fingerprints  # noqa: E402

from cli_runner import run_cli  # noqa: E402

NUMBERS = ["float16", "bfloat16", "float32", "float64", "int8", "uint8", "int16", "uint16", "int32", "uint32",
           "int64", "uint64", "complex64", "complex128"]


def sums(array, dtype=None):
    tensor = array if isinstance(array, tf.Tensor) else tf.constant(array, dtype)
    return tuple(capture.sums_fingerprint(tensor).numpy().tolist())


def _as_tensor(words, dtype):
    """A tensor of `dtype` whose bytes are the uint8 `words` (their length a multiple of its size)."""
    return tf.bitcast(tf.constant(np.asarray(words, np.uint8).reshape(-1, dtype.size)), dtype) \
        if dtype.size > 1 else tf.bitcast(tf.constant(np.asarray(words, np.uint8)), dtype)


def _draw_elements(data, dtype, fewest, most):
    """(count, uint8 array of count elements' bytes of `dtype`), drawn by hypothesis."""
    count = data.draw(st.integers(fewest, most))
    return count, np.array(data.draw(st.lists(st.integers(0, 255), min_size=count * dtype.size,
                                              max_size=count * dtype.size)), np.uint8)


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(NUMBERS), st.data())
def test_one_changed_bit_anywhere_changes_the_sums(dtype_name, data):
    dtype = tf.as_dtype(dtype_name)
    _, raw = _draw_elements(data, dtype, 1, 12)
    bit = data.draw(st.integers(0, raw.size * 8 - 1))
    changed = raw.copy()
    changed[bit // 8] ^= 1 << (bit % 8)
    assert sums(_as_tensor(raw, dtype)) == sums(_as_tensor(raw.copy(), dtype))
    assert sums(_as_tensor(changed, dtype)) != sums(_as_tensor(raw, dtype))


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(NUMBERS), st.data())
def test_two_different_elements_swapped_change_the_sums(dtype_name, data):
    dtype = tf.as_dtype(dtype_name)
    count, raw = _draw_elements(data, dtype, 2, 40)
    raw = raw.reshape(count, dtype.size)
    i, j = data.draw(st.lists(st.integers(0, count - 1), min_size=2, max_size=2, unique=True))
    if np.array_equal(raw[i], raw[j]):
        raw[j, 0] ^= 1  # two different elements
    swapped = raw.copy()
    swapped[[i, j]] = swapped[[j, i]]
    assert sums(_as_tensor(swapped.reshape(-1), dtype)) != sums(_as_tensor(raw.reshape(-1), dtype))


@pytest.mark.parametrize("first, second, dtype", [
    ([1, 0, 0, 1], [0, 1, 1, 0], "int32"),  # the same sum of i * w_i: odd weights 2i+1 did not see it
    ([1.0, -1.0], [-1.0, 1.0], "float64"),  # words apart by the sign bit alone: 64-bit words did not see it
    ([2.5, -2.5, 7.0], [-2.5, 2.5, 7.0], "float32"),
    ([True, False, False, True], [False, True, True, False], "bool"),
    ([b"a", b"b"], [b"b", b"a"], "string"),
])
def test_permutations_the_earlier_odd_weighted_sums_missed_are_seen(first, second, dtype):
    assert sums(first, tf.as_dtype(dtype)) != sums(second, tf.as_dtype(dtype))


def test_the_shape_and_dtype_are_part_of_the_sums_and_empty_and_scalar_tensors_have_them():
    zeros = np.zeros(6, np.float32)
    assert sums(zeros.reshape(2, 3)) != sums(zeros.reshape(3, 2)) != sums(zeros)
    assert sums(np.zeros(6, np.int32)) != sums(zeros)  # the same bytes, another dtype
    assert sums(np.zeros((0,), np.float32)) != sums(np.zeros((0, 3), np.float32))
    assert sums(np.float32(1.5)) != sums(np.float32(-1.5))
    assert sums(np.float32(1.5)) != sums(np.array([1.5], np.float32))  # a scalar is not a vector of one


def test_int64_multiply_and_add_wrap_around_on_this_device_eagerly_and_in_a_function():
    # the sums are exact only if TF's int64 arithmetic wraps modulo 2**64, as the hardware does
    big = tf.constant(2 ** 62 + 3, tf.int64)
    assert int(big * 4) == 12 and int(tf.reduce_sum(tf.stack([big] * 4))) == 12
    wrapped = tf.function(lambda x: (tf.reduce_sum(x * tf.constant(4, tf.int64)), tf.reduce_sum(x) * 2),
                          autograph=False)
    assert [int(v) for v in wrapped(tf.stack([big, big]))] == [24, 12]


def test_the_sums_are_the_same_in_a_function_as_eagerly_and_the_weights_are_odd():
    tensor = tf.constant(np.random.RandomState(0).standard_normal((3, 5)).astype(np.float32))
    in_function = tf.function(capture.sums_fingerprint, autograph=False)
    assert tuple(in_function(tensor).numpy().tolist()) == sums(tensor)
    weights = capture._mix(tf.range(1000, dtype=tf.int64)).numpy()
    assert np.all(weights % 2 != 0) and len(set(weights.tolist())) == 1000


def _trace(tmp_path, method):
    path = str(tmp_path / ("%s.jsonl" % method))
    recorder = capture.Recorder(path, method=method)
    capture.install(recorder)
    try:
        tf.function(lambda x: tf.reduce_sum(tf.square(x)))(tf.ones([3]))
    finally:
        capture.uninstall(recorder)
        recorder.close("finished")
    return read_trace(path)


def test_a_trace_says_which_fingerprint_it_holds_and_two_that_differ_are_refused(tmp_path):
    farmhash, checksum = _trace(tmp_path, "fingerprint"), _trace(tmp_path, "checksum")
    assert (farmhash.fingerprint, checksum.fingerprint) == ("farmhash64", "sums2")
    assert len({len(e.fingerprint) for e in checksum.executions if e.key[0] == "g"}) == 1
    assert same_fingerprints(("farmhash64", "cpu"), (None, "cpu"), "a", "b") is None  # before the field: farmhash
    refused = same_fingerprints((checksum.fingerprint, "cpu"), (farmhash.fingerprint, "cpu"), "a", "b")
    assert "\n" not in refused and "sums2" in refused and "farmhash64" in refused


def _fingerprints_file(path, fingerprint, device="cpu"):
    header = {"kind": "fingerprints", "schema_version": 1, "tfdet_version": "0", "record": "header",
              "created": "2026-11-26T08:00:00Z", "argv": [], "target": "t.py", "outputs": 1,
              "machine": {"tf_version": "2.21.0", "device": device}}
    if fingerprint:
        header["fingerprint"] = fingerprint
    output = {"record": "output", "key": ["g", "f", "m/Sum", 0, 0], "fingerprint": "00ff", "again": "00ff"}
    path.write_text(json.dumps(header) + "\n" + json.dumps(output) + "\n")
    return str(path)


def test_compare_refuses_two_fingerprints_files_fingerprinted_differently_in_one_line(tmp_path):
    cpu = _fingerprints_file(tmp_path / "cpu.jsonl", "farmhash64")
    gpu = _fingerprints_file(tmp_path / "gpu.jsonl", "sums2", device="gpu")
    code, out, err = run_cli("locate", "--compare", cpu, gpu)
    assert code == INVALID_INPUT and err.count("\n") == 1 and "Traceback" not in err and out == ""
    assert "fingerprinted their outputs differently (farmhash64; sums2)" in err, err
    # an older file says nothing: a cpu one held farmhash64, a gpu one the earlier sums1
    code, out, err = run_cli("locate", "--compare", cpu, _fingerprints_file(tmp_path / "old.jsonl", None))
    assert code == 0, err
    code, out, err = run_cli("locate", "--compare", gpu, _fingerprints_file(tmp_path / "oldgpu.jsonl", None, "gpu"))
    assert code == INVALID_INPUT and "(sums2; sums1)" in err, err


def _graph_executions(run, op_type):
    return [e for e in run.executions if e.key[0] == "g" and e.op.op_type == op_type]


def test_a_gradient_no_op_reads_is_not_hashed_so_it_is_not_made_to_run(tmp_path):
    filters = tf.Variable(tf.ones([3, 3, 1, 2]))

    @tf.function
    def step(images):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.nn.conv2d(images, filters, 1, "VALID"))
        # the tape's conv gradient makes the images' gradient too; nothing reads it (grappler prunes it)
        filters.assign_sub(0.1 * tape.gradient(loss, filters))

    path = str(tmp_path / "trace.jsonl")
    recorder = capture.Recorder(path, fold=False)  # folded, the filters' gradient is hashed at the Mul reading it
    capture.install(recorder)
    try:
        step(tf.ones([1, 5, 5, 1]))
    finally:
        capture.uninstall(recorder)
        recorder.close("finished")
    run = read_trace(path)
    hashed = {e.op.op_type for e in run.executions if e.key[0] == "g"}
    assert "Conv2DBackpropFilter" in hashed and "Conv2DBackpropInput" not in hashed
    assert "Conv2DBackpropInput" in {op.op_type for op in run.ops.values()}  # traced, recorded, not hashed


def test_a_reshaped_output_is_followed_to_the_op_that_made_it_not_blamed_after_it(tmp_path):
    from tfdet.locating import align

    def program():
        @tf.function
        def step():
            noise = tf.random.uniform([6])  # no seed: differs run to run, its inputs do not
            return tf.reduce_sum(tf.reshape(noise, [2, 3]) * 2.0, axis=1)
        step()

    runs = []
    for index in range(2):
        path = str(tmp_path / ("run-%d.jsonl" % index))
        recorder = capture.Recorder(path)
        capture.install(recorder)
        try:
            program()
        finally:
            capture.uninstall(recorder)
            recorder.close("finished")
        runs.append(read_trace(path))
    assert _graph_executions(runs[0], "Reshape") == [] and any(
        op.op_type == "Reshape" for op in runs[0].ops.values())
    comparison = align.compare(*runs)
    assert comparison.first.op.op_type == "RandomUniform"
    # inside the function the Mul and the Sum only spread it (the call's own eager record differs too)
    assert [e.op.op_type for e in comparison.roots if e.key[0] == "g"] == ["RandomUniform"]
    assert {e.op.op_type for e in comparison.spread} >= {"Mul", "Sum"}


@pytest.mark.parametrize("returns", [True, False])
def test_a_gradient_read_only_by_a_nested_function_call_is_hashed_even_as_the_last_op(tmp_path, returns):
    # a nested tf.function's call op is made without an op callback: its inputs are hashed when
    # TF adds the function's automatic control dependencies, after its last op
    variable = tf.Variable([1.0, 2.0, 3.0])

    @tf.function
    def apply(gradient):
        variable.assign_sub(0.1 * gradient)

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.sin(variable) * x)
        apply(tape.gradient(loss, variable))  # the gradient: read by nothing else
        if returns:
            return loss

    path = str(tmp_path / "trace.jsonl")
    recorder = capture.Recorder(path)
    capture.install(recorder)
    try:
        step(tf.ones([3]))
    finally:
        capture.uninstall(recorder)
        recorder.close("finished")
    run = read_trace(path)
    gradient = [op for op in run.ops.values() if op.forward and op.forward.startswith("Sin ") and op.op_type == "Mul"]
    hashed = {e.op.name for e in run.executions if e.key[0] == "g"}
    assert gradient and all(op.name in hashed for op in gradient)


def test_a_cpu_recorded_with_sums2_compares_with_a_gpu_file(tmp_path):
    script = tmp_path / "step.py"
    script.write_text("import tensorflow as tf\n"
                      "tf.function(lambda x: tf.reduce_sum(tf.square(x), name='m'))(tf.ones([3]))\n")
    path = str(tmp_path / "cpu.jsonl")
    code, out, err = run_cli("locate", "--record", path, "--fingerprint", "sums2", str(script))
    assert code == 0, err
    assert json.loads(open(path).readline())["fingerprint"] == "sums2"
    gpu = _fingerprints_file(tmp_path / "gpu.jsonl", "sums2", device="gpu")
    code, out, err = run_cli("locate", "--compare", path, gpu)
    assert code != INVALID_INPUT and "fingerprinted their outputs differently" not in err, err
    code, out, err = run_cli("locate", "--fingerprint", "sums2", str(script))
    assert code == 2 and "--fingerprint applies to --record" in err
