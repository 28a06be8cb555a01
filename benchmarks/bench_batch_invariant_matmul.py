#!/usr/bin/env python
"""Can a matrix product be made batch-invariant on this CPU, and at what cost?

    python benchmarks/bench_batch_invariant_matmul.py [--rounds R]

A row's product x @ w depends on the batch around it in stock TF (one row takes
a matrix-vector kernel, many rows a blocked matrix-matrix one). Two candidates
for `tfdet.patch(batch_invariant=True)` (issue 28; not built yet):
  rows    every row on its own (tf.map_fn of 1-row products): the kernel of a batch of one;
  blocks  rows padded to a multiple of 8 and multiplied as [n/8, 8, K] x [K, N]: every
          row goes through the same 8-row product, whatever the batch.
For each: the batch sizes at which row 0 (first) and the example placed last differ
from the example alone, and the cost against stock (ratio of medians of interleaved
rounds, in tf.function). No assertions: this is a measurement.
"""

import argparse
import os
import time

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

K, N, BLOCK = 784, 128, 8
SIZES = (2, 3, 7, 8, 9, 16, 31, 32, 64, 128, 256)


def candidates(w):
    def stock(a):
        return tf.matmul(a, w)

    def rows(a):
        return tf.map_fn(lambda r: tf.matmul(r[None], w)[0], a, parallel_iterations=1, fn_output_signature=tf.float32)

    def blocks(a):
        m = tf.shape(a)[0]
        padded = tf.pad(a, [[0, (-m) % BLOCK], [0, 0]])
        return tf.reshape(tf.matmul(tf.reshape(padded, [-1, BLOCK, K]), w), [-1, N])[:m]

    return {"stock": stock, "rows": rows, "blocks": blocks}


def differing_sizes(fn, x):
    alone = fn(tf.constant(x[:1])).numpy()[0]
    first = [n for n in SIZES if not np.array_equal(fn(tf.constant(x[:n])).numpy()[0], alone)]
    last = [n for n in SIZES if not np.array_equal(fn(tf.constant(np.concatenate([x[1:n], x[:1]]))).numpy()[-1],
                                                   alone)]
    return first, last


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    options = parser.parse_args()
    rng = np.random.default_rng(0)
    w = tf.constant(rng.standard_normal((K, N)).astype("float32"))
    x = rng.standard_normal((256, K)).astype("float32")
    fns = {name: tf.function(fn, reduce_retracing=True) for name, fn in candidates(w).items()}
    for name, fn in fns.items():
        first, last = differing_sizes(fn, x)
        print("%-7s differs from the example alone at sizes %s (first), %s (last)" % (name, first or "none",
                                                                                     last or "none"))
    for n in (32, 256):
        batch = tf.constant(x[:n])
        for fn in fns.values():
            fn(batch)
        times = {name: [] for name in fns}
        for _ in range(options.rounds):
            for name, fn in fns.items():
                started = time.perf_counter()
                fn(batch).numpy()
                times[name].append(time.perf_counter() - started)
        base = float(np.median(times["stock"]))
        print("batch %d: %s" % (n, ", ".join("%s %.2fx" % (name, float(np.median(t)) / base)
                                            for name, t in times.items())))


if __name__ == "__main__":
    main()
