#!/usr/bin/env python
"""What `tfdet locate`'s capture costs a training step, on this machine.

    python benchmarks/bench_locate.py [--rounds R] [--markdown]

For each step, two tf.functions of the same Python function are traced: one
without capture, one with the recorder installed (every op output
fingerprinted). They run in interleaved rounds, and the table gives the ratio
of the medians (captured / plain) with a 95% bootstrap interval
(tfdet.results.stats.ratio_interval), in wall time and in the process's CPU
time (which other users of a loaded machine inflate less). No assertions:
this is a measurement.
"""

import argparse
import os
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

from tfdet.locating import capture  # noqa: E402
from tfdet.results import stats  # noqa: E402


def crop_and_resize_step():
    rng = np.random.RandomState(0)
    corners = rng.uniform(0, 1, (8000, 2, 2))
    boxes = tf.constant(np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1), tf.float32)
    box_indices = tf.constant(rng.randint(0, 4, 8000), tf.int32)
    images = tf.Variable(rng.standard_normal((4, 64, 64, 4)).astype(np.float32))

    def step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.image.crop_and_resize(images, boxes, box_indices, [8, 8]) ** 2)
        images.assign_sub(1e-6 * tape.gradient(loss, images))
        return loss
    return step


def small_cnn_step():
    import keras

    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input((28, 28, 1)), keras.layers.Conv2D(16, 3, activation="relu"),
                              keras.layers.MaxPooling2D(), keras.layers.Conv2D(32, 3, activation="relu"),
                              keras.layers.GlobalAveragePooling2D(), keras.layers.Dense(10)])
    optimizer = keras.optimizers.SGD(0.1)
    rng = np.random.RandomState(0)
    images = tf.constant(rng.standard_normal((64, 28, 28, 1)).astype("float32"))
    labels = tf.constant(rng.randint(0, 10, 64))
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    model(images)
    optimizer.build(model.trainable_variables)

    def step():
        with tf.GradientTape() as tape:
            loss = loss_fn(labels, model(images, training=True))
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
        return loss
    return step


STEPS = {"crop_and_resize gradient step": crop_and_resize_step, "small Keras CNN, batch 64": small_cnn_step}


def measure(make, rounds, workdir):
    python_step = make()
    plain = tf.function(python_step)
    plain()  # traced without capture
    recorder = capture.Recorder(os.path.join(workdir, "trace.jsonl"))
    capture.install(recorder)
    try:
        captured = tf.function(python_step)
        captured()  # traced with capture: fingerprint ops beside every op
        times = {"plain": [], "captured": [], "plain cpu": [], "captured cpu": []}
        for _ in range(rounds):
            for name, function in (("plain", plain), ("captured", captured)):
                started, cpu = time.perf_counter(), time.process_time()
                function()
                times[name].append(time.perf_counter() - started)
                times[name + " cpu"].append(time.process_time() - cpu)
    finally:
        capture.uninstall(recorder)
        recorder.close("finished")
    return times, os.path.getsize(os.path.join(workdir, "trace.jsonl")) / (rounds + 1)


def results(rounds=30, steps=None):
    """One dict per step: plain median (ms), wall and CPU ratio intervals, trace KB per step."""
    rows = []
    for name, make in STEPS.items():
        if steps is not None and name not in steps:
            continue
        with tempfile.TemporaryDirectory() as workdir:
            times, bytes_per_step = measure(make, rounds, workdir)
        rows.append({"step": name, "plain_ms": stats.median(times["plain"]) * 1e3,
                     "wall": stats.ratio_interval(times["plain"], times["captured"]),
                     "cpu": stats.ratio_interval(times["plain cpu"], times["captured cpu"]),
                     "trace_kb": bytes_per_step / 1024})
        sys.stderr.write("done: %s\n" % name)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--markdown", action="store_true")
    options = parser.parse_args()
    rows = results(options.rounds)
    header = ("step", "plain (ms)", "captured / plain", "95% interval", "CPU time ratio", "trace per step")
    if options.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            wall, cpu = row["wall"], row["cpu"]
            print("| %s | %.1f | %.2fx | [%.2f, %.2f] | %.2fx [%.2f, %.2f] | %.1f KB |" % (
                row["step"], row["plain_ms"], wall["ratio"], wall["low"], wall["high"], cpu["ratio"], cpu["low"],
                cpu["high"], row["trace_kb"]))
    else:
        for row in rows:
            wall, cpu = row["wall"], row["cpu"]
            print("%-32s plain %7.1f ms   captured %.2fx [%.2f, %.2f]   CPU %.2fx [%.2f, %.2f]   trace %.1f KB/step" % (
                row["step"], row["plain_ms"], wall["ratio"], wall["low"], wall["high"], cpu["ratio"], cpu["low"],
                cpu["high"], row["trace_kb"]))


if __name__ == "__main__":
    main()
