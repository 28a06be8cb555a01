"""What tfdet.patch()'s op callback costs: a tf.function training step, its
tracing, and eager ops, patched with the callback against patched without it.

Fresh processes in interleaved rounds (with, without, with, ...), so machine
drift cancels; each process patches, then (in the "without" arm) removes the
callback, and times the workloads itself. Prints medians over rounds and ratios.

    python benchmarks/bench_op_callback.py [--rounds 5] [--steps 300] [--eager-ops 20000]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

WORKER = r"""
import json, sys, time
import numpy as np
import tensorflow as tf
import tfdet
from tfdet.patching import install, watch

tfdet.patch(seed=0, quiet=True)
if sys.argv[1] == "without":
    watch.remove(install._state["applied"].watcher)
steps, eager_ops = int(sys.argv[2]), int(sys.argv[3])

rng = np.random.RandomState(0)
x = tf.constant(rng.standard_normal((256, 64)).astype(np.float32))
y = tf.constant(rng.randint(0, 10, 256))
layers = [tf.Variable(tf.random.normal((64, 128)) * 0.1), tf.Variable(tf.zeros(128)),
          tf.Variable(tf.random.normal((128, 10)) * 0.1), tf.Variable(tf.zeros(10))]
optimizer_lr = 0.01

@tf.function
def step():
    with tf.GradientTape() as tape:
        hidden = tf.nn.relu(tf.matmul(x, layers[0]) + layers[1])
        logits = tf.matmul(hidden, layers[2]) + layers[3]
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
    for variable, grad in zip(layers, tape.gradient(loss, layers)):
        variable.assign_sub(optimizer_lr * grad)
    return loss

started = time.perf_counter()
step()  # traces: the only time the callback sees the step's ops
trace = time.perf_counter() - started
for _ in range(20):
    step()
started = time.perf_counter()
for _ in range(steps):
    step()
step_time = (time.perf_counter() - started) / steps

a, b = tf.constant(1.0), tf.constant(2.0)
for _ in range(1000):
    tf.add(a, b)
started = time.perf_counter()
for _ in range(eager_ops):
    tf.add(a, b)
eager = (time.perf_counter() - started) / eager_ops
print("RESULT " + json.dumps({"trace": trace, "step": step_time, "eager_op": eager}))
"""


def run(arm, args):
    return run_arm(arm, args.steps, args.eager_ops)


def run_arm(arm, steps, eager_ops):
    done = subprocess.run([sys.executable, "-c", WORKER, arm, str(steps), str(eager_ops)],
                          capture_output=True, text=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), check=True)
    line = [text for text in done.stdout.splitlines() if text.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def measure(rounds=5, steps=300, eager_ops=20000):
    """{"with": [result, ...], "without": [...]}: one result per fresh process, interleaved;
    a result holds "step", "trace" and "eager_op" in seconds."""
    results = {"with": [], "without": []}
    for _ in range(rounds):
        for arm in ("with", "without"):
            results[arm].append(run_arm(arm, steps, eager_ops))
    return results


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--eager-ops", type=int, default=20000)
    args = parser.parse_args(argv)
    results = measure(args.rounds, args.steps, args.eager_ops)
    print("rounds: %d (interleaved fresh processes), %d steps, %d eager ops each" % (
        args.rounds, args.steps, args.eager_ops))
    print("%-28s %14s %14s %8s" % ("", "with callback", "without", "ratio"))
    for key, label, scale, unit in (("step", "tf.function training step", 1e3, "ms"),
                                    ("trace", "first call (tracing)", 1e3, "ms"),
                                    ("eager_op", "eager op (tf.add)", 1e6, "us")):
        with_cb = statistics.median(r[key] for r in results["with"])
        without = statistics.median(r[key] for r in results["without"])
        print("%-28s %11.3f %s %11.3f %s %8.3f" % (label, with_cb * scale, unit, without * scale, unit,
                                                    with_cb / without))
    spread = [r["step"] for r in results["without"]]
    print("step time spread without the callback (noise): %.3f-%.3f ms" % (min(spread) * 1e3, max(spread) * 1e3))


if __name__ == "__main__":
    main()
