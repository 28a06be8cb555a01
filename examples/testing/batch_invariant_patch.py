"""My prediction changes with batch size: name the op, then make it batch-invariant.

    python examples/testing/batch_invariant_patch.py

1. assert_batch_invariant on a small Keras classifier, stock TensorFlow: it fails and names the op.
2. tfdet.patch(batch_invariant=True), then the same check: it passes; what the patch could not make
   batch-invariant is listed by status().
3. What it costs here: the classifier's predict step on 32 and 256 rows, stock vs patched (medians of
   the CPU time of interleaved rounds; a tf.function traced before the patch keeps the stock product).
"""

import os
import time
import warnings

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

import keras  # noqa: E402
import tfdet  # noqa: E402
from tfdet.testing import assert_batch_invariant  # noqa: E402

SIZES = (1, 2, 8, 32)


def make_classifier():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((784,)), keras.layers.Dense(128, activation="relu"),
                             keras.layers.Dense(10, activation="softmax")])


def requests(n=256):
    return np.random.default_rng(0).normal(size=(n, 784)).astype("float32")


def median_ms(calls, rounds=40):
    times = {name: [] for name in calls}
    for _ in range(rounds):
        for name, call in calls.items():
            started = time.process_time()  # CPU time: on a shared machine wall time measures the others
            call()
            times[name].append(time.process_time() - started)
    return {name: 1e3 * float(np.median(t)) for name, t in times.items()}


def main():
    model, x = make_classifier(), requests()
    print("1. stock TensorFlow")
    try:
        assert_batch_invariant(model, x, sizes=SIZES)
        print("   batch-invariant already on this CPU")
    except AssertionError as failed:
        print("   " + str(failed).replace("\n", "\n   "))
    stock = tf.function(lambda batch: model(batch, training=False))
    for n in (32, 256):
        stock(x[:n])  # traced now, unpatched: keeps the stock product

    print("\n2. tfdet.patch(batch_invariant=True)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "called after TensorFlow ran its first op": step 1 did
        status = tfdet.patch(batch_invariant=True, quiet=True)
    print("   " + status.summary_line())
    print("   " + assert_batch_invariant(model, x, sizes=SIZES).verdict)
    print("   not made batch-invariant:")
    for op, why in status.not_batch_invariant:
        print("     %s: %s" % (op, why))
    patched = tf.function(lambda batch: model(batch, training=False))

    print("\n3. cost of the predict step here (CPU time, median of 40 interleaved rounds)")
    for n in (32, 256):
        batch = tf.constant(x[:n])
        patched(batch)
        ms = median_ms({"stock": lambda b=batch: stock(b).numpy(), "patched": lambda b=batch: patched(b).numpy()})
        print("   %3d rows: stock %.2f ms, batch_invariant=True %.2f ms (%.2fx)" % (
            n, ms["stock"], ms["patched"], ms["patched"] / ms["stock"]))
    tfdet.unpatch()


if __name__ == "__main__":
    main()
