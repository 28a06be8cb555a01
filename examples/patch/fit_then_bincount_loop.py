"""Train a Keras Embedding model with model.fit, then adjust its table in a tf.function loop: each
row's update is rescaled by a weighted tf.math.bincount of the ids that hit it and applied with
Variable.assign_sub.

    python examples/patch/fit_then_bincount_loop.py [--stock]

Runs under tfdet.patch(seed=0) (--stock: without it) and prints WEIGHTS <sha256 of the trained
weights>. Issue 25: under the patch this script died in the loop ("ValueError: Cannot take the length
of shape with unknown rank") because the patched bincount had no static rank inside a tf.function,
where stock's is (None,); tests/patching/test_fit_then_bincount_loop.py runs it in fresh processes.
"""

import argparse
import hashlib
import sys
import warnings

import numpy as np

VOCAB, DIM, LENGTH = 64, 8, 6


def data():
    """Fixed data: sequences of ids and a target that depends on them."""
    rng = np.random.default_rng(0)
    ids = rng.integers(0, VOCAB, size=(512, LENGTH)).astype("int32")
    targets = (np.sin(ids).sum(axis=1, keepdims=True) / LENGTH).astype("float32")
    strengths = rng.uniform(0.5, 1.5, size=ids.shape).astype("float32")
    return ids, targets, strengths


def fit(ids, targets):
    import keras

    model = keras.Sequential([keras.Input((LENGTH,), dtype="int32"), keras.layers.Embedding(VOCAB, DIM),
                              keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    model.fit(ids, targets, batch_size=64, epochs=2, shuffle=False, verbose=0)
    return model


def adjust(table, ids, strengths, steps=5, rate=0.01):
    """Shrink each row of `table` by `rate` times its share of the weighted hits, `steps` times, in a
    tf.function: the bincount's static shape reaches the Variable update's shape check."""
    import tensorflow as tf

    @tf.function
    def step(batch_ids, batch_strengths):
        hits = tf.math.bincount(batch_ids, weights=batch_strengths, minlength=VOCAB, maxlength=VOCAB)
        share = hits / (tf.reduce_sum(hits) + 1.0)
        table.assign_sub(rate * share[:, tf.newaxis] * table)
        return hits

    flat_ids, flat_strengths = tf.reshape(ids, [-1]), tf.reshape(strengths, [-1])
    for _ in range(steps):
        hits = step(flat_ids, flat_strengths)
    return hits


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stock", action="store_true", help="run without tfdet.patch()")
    args = parser.parse_args(argv)
    import keras

    if args.stock:
        keras.utils.set_random_seed(0)
    else:
        import tfdet

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tfdet.patch(seed=0, quiet=True)
    ids, targets, strengths = data()
    model = fit(ids, targets)
    adjust(model.layers[0].embeddings, ids, strengths)
    weights = [np.asarray(w) for w in model.get_weights()]
    assert all(np.isfinite(w).all() for w in weights), "the training diverged"
    print("WEIGHTS " + hashlib.sha256(b"".join(w.tobytes() for w in weights)).hexdigest())
    return 0


if __name__ == "__main__":
    sys.exit(main())
