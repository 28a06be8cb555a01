#!/usr/bin/env python
"""What `tfdet locate`'s capture costs a training step, on this machine.

    python benchmarks/bench_locate.py [--rounds R] [--markdown] [--variants fingerprint,checksum,...]

For each step, tf.functions of the same Python function are traced: one
without capture, and one per variant with a recorder installed (every op output
fingerprinted). They run in interleaved rounds, and the table gives the ratio
of the medians (captured / plain) with a 95% bootstrap interval
(tfdet.results.stats.ratio_interval), in wall time and in the process's CPU
time (which other users of a loaded machine inflate less), and the 1-minute
load average before and after. No assertions: this is a measurement.

Variants: fingerprint (tf.fingerprint, the CPU default), checksum (the exact
int64 sums, the GPU default), and either with "+unfolded" (an output whose one
reader is elementwise is hashed too, as capture did before it folded them:
capture.CHAIN_READERS) or "+every" (every output hashed as it is made, as capture
did before that: the outputs of capture.IMPLIED's ops too, and outputs nothing
reads, which their hash made run). Diagnostics, to see where the cost is
(_Diagnostic): "+constants" (a constant enqueued per output instead of its hash)
and "+first" (a hash of each output's first element); extras combine
(fingerprint+unfolded+first).
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


VARIANTS = ("fingerprint",)


class _Diagnostic(capture.Recorder):
    """A recorder that hashes less than capture does, to see where its cost is:
    "constants" enqueues a constant for each output it would hash (no output is read:
    what is left is the queue, its enqueue nodes and the host side); "first" hashes
    each such output's first element (each output is read and kept for its hash, which
    stops grappler fusing it, but almost no bytes are hashed)."""

    def __init__(self, path, hashes, **options):
        super().__init__(path, **options)
        self.hashes = hashes

    def _hash_traced(self, tensor, ref):
        if self.hashes == "constants":
            return [self._emit(tf.zeros([1, 8], tf.uint8), ref)]
        return [self._emit(tf.fingerprint(tf.reshape(tensor, [-1])[:1][None]), ref)]


def _recorder(variant, path):
    method, *extras = variant.split("+")
    options = dict(method=method, every_output="every" in extras, fold="unfolded" not in extras)
    diagnostic = [extra for extra in extras if extra in ("constants", "first")]
    if diagnostic:
        return _Diagnostic(path, diagnostic[0], **options)
    return capture.Recorder(path, **options)


def measure(make, rounds, workdir, variants=VARIANTS):
    """{name: [seconds]} for "plain" and each variant (and "NAME cpu" for CPU time), and the
    trace bytes per step of the first variant."""
    python_step = make()
    plain = tf.function(python_step)
    plain()  # traced without capture
    functions, recorders = {"plain": plain}, []
    for variant in variants:
        recorder = _recorder(variant, os.path.join(workdir, "%d.trace.jsonl" % len(recorders)))
        recorders.append(recorder)
        capture.install(recorder)
        try:
            functions[variant] = tf.function(python_step)
            functions[variant]()  # traced with capture: fingerprint ops beside every op
        finally:
            capture.uninstall(recorder)
    for recorder in recorders:  # each drains its own queue at every call, whichever function ran
        capture.install(recorder)
    try:
        times = {}
        for _ in range(rounds):
            for name, function in functions.items():
                started, cpu = time.perf_counter(), time.process_time()
                function()
                times.setdefault(name, []).append(time.perf_counter() - started)
                times.setdefault(name + " cpu", []).append(time.process_time() - cpu)
    finally:
        for recorder in recorders:
            capture.uninstall(recorder)
            recorder.close("finished")
    return times, os.path.getsize(os.path.join(workdir, "0.trace.jsonl")) / (rounds + 1)


def results(rounds=30, steps=None, variants=VARIANTS):
    """One dict per step and variant: plain median (ms), wall and CPU ratio intervals, trace KB
    per step (of the first variant), the load before and after."""
    rows = []
    for name, make in STEPS.items():
        if steps is not None and name not in steps:
            continue
        load = os.getloadavg()[0]
        with tempfile.TemporaryDirectory() as workdir:
            times, bytes_per_step = measure(make, rounds, workdir, variants)
        for variant in variants:
            rows.append({"step": name, "variant": variant, "plain_ms": stats.median(times["plain"]) * 1e3,
                         "wall": stats.ratio_interval(times["plain"], times[variant]),
                         "cpu": stats.ratio_interval(times["plain cpu"], times[variant + " cpu"]),
                         "trace_kb": bytes_per_step / 1024, "load": (load, os.getloadavg()[0])})
        sys.stderr.write("done: %s\n" % name)
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--variants", default=",".join(VARIANTS),
                        help="comma-separated: fingerprint, checksum, each with optional +unfolded, +every, "
                             "+constants, +first")
    parser.add_argument("--only", help="the steps whose name contains this text")
    options = parser.parse_args()
    variants = tuple(v.strip() for v in options.variants.split(",") if v.strip())
    steps = [name for name in STEPS if options.only is None or options.only in name]
    rows = results(options.rounds, steps, variants)
    header = ("step", "variant", "plain (ms)", "captured / plain", "95% interval", "CPU time ratio", "trace per step",
              "load")
    if options.markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
    for row in rows:
        wall, cpu = row["wall"], row["cpu"]
        values = (row["step"], row["variant"], row["plain_ms"], wall["ratio"], wall["low"], wall["high"], cpu["ratio"],
                  cpu["low"], cpu["high"], row["trace_kb"]) + row["load"]
        if options.markdown:
            print("| %s | %s | %.1f | %.2fx | [%.2f, %.2f] | %.2fx [%.2f, %.2f] | %.1f KB | %.1f-%.1f |" % values)
        else:
            print("%-32s %-20s plain %7.1f ms   captured %.2fx [%.2f, %.2f]   CPU %.2fx [%.2f, %.2f]   "
                  "trace %.1f KB/step   load %.1f-%.1f" % values)


if __name__ == "__main__":
    main()
