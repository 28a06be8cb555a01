#!/usr/bin/env python
"""Can a matrix product be made batch-invariant on this CPU, and what does tfdet.patch(batch_invariant=True) cost?

    python benchmarks/bench_batch_invariant_matmul.py [--rounds R] [--skip-candidates]

A row's product x @ w depends on the batch around it in stock TF (one row takes
a matrix-vector kernel, many rows a matrix-matrix one). Candidates:
  rows       every row on its own (tf.map_fn of 1-row products): the kernel of a batch of one;
  bmm-blocks rows padded to a multiple of 8, one BatchMatMulV3 of [n/8, 8, K] x [K, N];
  matmul     what patch(batch_invariant=True) installs (tfdet.patching.batch_invariant.matmul):
             rows padded to a multiple of 8, one stock MatMul of [8, K] x [K, N] per block (tf.map_fn).
For each, at K = 784 and K = 64: the batch sizes at which the example first and last differs from the
example alone, in tf.function and under XLA, and the cost against stock (ratio of medians of
interleaved rounds of the process's CPU time, in tf.function).

Then the cost on a Keras model (Dense 784->256 relu, Dense 256->10): predict_on_batch and one
training step (train_on_batch, SGD) of 32 and 256 rows, stock vs a twin model whose predict/train
functions were traced under tfdet.patch(batch_invariant=True) (a traced function keeps its ops after
unpatch(), so the two run interleaved). No assertions: this is a measurement.
"""

import argparse
import os
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # this checkout's tfdet
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import tensorflow as tf  # noqa: E402

SIZES = (2, 3, 7, 8, 9, 16, 31, 32, 64, 128, 256)


def candidates(w):
    from tfdet.patching import batch_invariant

    k, n = w.shape

    def stock(a):
        return tf.matmul(a, w)

    def rows(a):
        return tf.map_fn(lambda r: tf.matmul(r[None], w)[0], a, parallel_iterations=1, fn_output_signature=tf.float32)

    def bmm_blocks(a):
        m = tf.shape(a)[0]
        padded = tf.pad(a, [[0, (-m) % 8], [0, 0]])
        return tf.reshape(tf.matmul(tf.reshape(padded, [-1, 8, k]), w), [-1, n])[:m]

    def matmul(a):
        return batch_invariant.matmul(a, w)

    return {"stock": stock, "rows": rows, "bmm-blocks": bmm_blocks, "matmul": matmul}


def differing_sizes(fn, x):
    alone = fn(tf.constant(x[:1])).numpy()[0]
    first = [n for n in SIZES if not np.array_equal(fn(tf.constant(x[:n])).numpy()[0], alone)]
    last = [n for n in SIZES if not np.array_equal(fn(tf.constant(np.concatenate([x[1:n], x[:1]]))).numpy()[-1],
                                                   alone)]
    return first, last


def interleaved(calls, rounds):
    """{name: median CPU seconds} of calls run in turn, `rounds` times (after one warm-up each). CPU time
    of the process (all its threads), not wall time: on a machine shared with others' jobs the wall
    time of a 1-ms call mostly measures the scheduler."""
    for call in calls.values():
        call()
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            started = time.process_time()
            call()
            times[name].append(time.process_time() - started)
    return {name: float(np.median(t)) for name, t in times.items()}


def bench_candidates(rounds):
    rng = np.random.default_rng(0)
    for k, n in ((784, 128), (64, 10)):
        w = tf.constant(rng.standard_normal((k, n)).astype("float32"))
        x = rng.standard_normal((256, k)).astype("float32")
        for jit in (False, True):
            for name, fn in candidates(w).items():
                first, last = differing_sizes(tf.function(fn, jit_compile=jit, reduce_retracing=True), x)
                print("K=%-4d %-10s %-11s differs from the example alone at sizes %s (first), %s (last)" % (
                    k, name, "XLA" if jit else "tf.function", first or "none", last or "none"), flush=True)
        fns = {name: tf.function(fn, reduce_retracing=True) for name, fn in candidates(w).items()}
        for size in (32, 256):
            batch = tf.constant(x[:size])
            medians = interleaved({name: (lambda f=fn, b=batch: f(b).numpy()) for name, fn in fns.items()}, rounds)
            print("K=%d batch %d: %s" % (k, size, ", ".join("%s %.2fx" % (name, t / medians["stock"])
                                                              for name, t in medians.items())), flush=True)


def keras_twins():
    import keras

    def build():
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(256, activation="relu"),
                                  keras.layers.Dense(10)])
        model.compile(optimizer=keras.optimizers.SGD(0.01),
                      loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        return model

    return build(), build()


def bench_keras(rounds):
    import tfdet

    rng = np.random.default_rng(1)
    x = rng.standard_normal((256, 784)).astype("float32")
    y = rng.integers(0, 10, size=256)
    stock, patched = keras_twins()
    stock_invariant = predict_invariant(stock, x)
    for size in (32, 256):
        stock.predict_on_batch(x[:size])
        stock.train_on_batch(x[:size], y[:size])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        status = tfdet.patch(batch_invariant=True, quiet=True)
    print("patched: %s" % status.summary_line(), flush=True)
    try:
        # traced now: the twin's functions keep the batch-invariant product; the stock model's, traced
        # before, keep the stock one. Both run under the patch's determinism switch.
        for size in (32, 256):
            patched.predict_on_batch(x[:size])
            patched.train_on_batch(x[:size], y[:size])
        print("predict: row 0 the same alone and in batches of 2, 9, 256: stock %s, patched %s" % (
            stock_invariant, predict_invariant(patched, x)), flush=True)
        time_keras(stock, patched, x, y, rounds)
    finally:
        tfdet.unpatch()


def predict_invariant(model, x):
    alone = model(x[:1], training=False).numpy()[0]
    return all(np.array_equal(model(x[:n], training=False).numpy()[0], alone) for n in (2, 9, 256))


def time_keras(stock, patched, x, y, rounds):
    rows = []
    for size in (32, 256):
        medians = interleaved({"stock": lambda s=size: stock.predict_on_batch(x[:s]),
                               "patched": lambda s=size: patched.predict_on_batch(x[:s])}, rounds)
        rows.append(("predict_on_batch, %d rows" % size, medians))
    for size in (32, 256):
        medians = interleaved({"stock": lambda s=size: stock.train_on_batch(x[:s], y[:s]),
                               "patched": lambda s=size: patched.train_on_batch(x[:s], y[:s])}, rounds)
        rows.append(("training step, %d rows" % size, medians))
    for label, medians in rows:
        print("%-26s CPU time: stock %.2f ms, batch_invariant=True %.2f ms: %.2fx" % (
            label, medians["stock"] * 1e3, medians["patched"] * 1e3, medians["patched"] / medians["stock"]),
            flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--block", type=int, default=None, help="rows per product (default: tfdet's BLOCK)")
    parser.add_argument("--skip-candidates", action="store_true", help="only the Keras model's predict and step")
    options = parser.parse_args()
    if options.block:
        from tfdet.patching import batch_invariant

        batch_invariant.BLOCK = options.block
    if not options.skip_candidates:
        bench_candidates(options.rounds)
    bench_keras(options.rounds)


if __name__ == "__main__":
    main()
