"""tfdet scan notes a distribution strategy: a real MirroredStrategy on 3 logical CPU devices (set
before TensorFlow starts, hence a fresh process), for a Keras model built in its scope, a function
that calls strategy.run (its graph holds CollectiveReduceV2), and a function traced inside the
scope; a model without a strategy gets no such note."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("tensorflow")
pytest.importorskip("keras")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = textwrap.dedent("""
    import json, os
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    import tensorflow as tf
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 3)
    import keras
    import tfdet

    def notes(report):
        return [n for n in report.notes if n.startswith("distribution strategy")]

    def dense():
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(4), keras.layers.Dense(1)])
        model.compile("sgd", "mse")
        return model

    strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1", "/cpu:2"])
    with strategy.scope():
        in_scope = dense()
        v = tf.Variable(tf.ones([8, 1]))

    @tf.function
    def step(x):
        def replica(x):
            with tf.GradientTape() as tape:
                loss = tf.reduce_sum(tf.matmul(x, v))
            return tf.distribute.get_replica_context().all_reduce("sum", tape.gradient(loss, v))
        return strategy.run(replica, args=(x,))

    report = tfdet.scan(step, example_inputs=(tf.ones([6, 8]),), device="cpu")
    found = {
        "keras in scope": notes(tfdet.scan(in_scope, device="cpu")),
        "strategy.run": notes(report),
        "hit": [h.entries for h in report.hits if h.op_type == "CollectiveReduceV2"],
        "plain keras": notes(tfdet.scan(dense(), device="cpu")),
    }
    with strategy.scope():
        found["traced in scope"] = notes(tfdet.scan(tf.function(lambda x: x * 2), example_inputs=(tf.ones([2, 8]),),
                                                    device="cpu"))
    print("RESULT " + json.dumps(found))
""")


@pytest.fixture(scope="module")
def found():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")))
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    assert done.returncode == 0 and lines, done.stderr[-3000:]
    return json.loads(lines[-1][len("RESULT "):])


def test_a_keras_model_built_in_the_scope_is_noted_with_replicas_and_the_entry(found):
    (note,) = found["keras in scope"]
    assert "MirroredStrategy with 3 replicas" in note and "CollectiveAllReduce (ring)" in note
    assert "replica count" in note and "(catalogue: allreduce-order)" in note


def test_a_function_calling_strategy_run_names_the_all_reduce_op(found):
    (note,) = found["strategy.run"]
    assert "MirroredStrategy with 3 replicas" in note and "CollectiveReduceV2" in note
    assert "(catalogue: allreduce-order)" in note
    assert found["hit"] == [["allreduce-order"]]


def test_a_function_traced_in_the_scope_is_noted(found):
    (note,) = found["traced in scope"]
    assert "MirroredStrategy with 3 replicas" in note


def test_a_model_without_a_strategy_gets_no_note(found):
    assert found["plain keras"] == []
