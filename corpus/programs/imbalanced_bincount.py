"""Follows: keras-team/keras-io examples/structured_data/imbalanced_classification.py
Keeps: an imbalanced binary task, class weights from the class counts (the example's
    np.bincount of the labels), a Dense(256)-Dense(256)-Dropout stack with a sigmoid head,
    binary cross-entropy with class_weight in model.fit, Adam(1e-2); then a second phase as in
    keras-io guides/writing_a_custom_training_loop_in_tensorflow.py: a tf.function training loop
    with GradientTape whose per-class loss tally is a weighted tf.math.bincount of the labels
    and whose weights are updated with Variable.assign_sub.
Changes: generated features (the example's 30 anonymised transaction features, here 30 gaussian
    columns, a few % positives) instead of the Kaggle credit-card CSV; 16,384 rows, batches of 512
    for fit, all rows (4.2e6 bincount elements) in a loop step; STEPS steps in each phase.
"""

import os
import sys

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data

STEPS = 4
BATCH, ROWS, FEATURES, BINS = 512, 16384, 30, 4096
# TF 2.21's tf.math.bincount makes DenseBincount (tfdet/catalog_data/sparse_scatter.yaml, entry bincount)
EXPECT = dict(varies_stock=True, varying_ops=("DenseBincount",), patch_reproduces=True)


def _data_set(batch_seed):
    np = _data.np
    rng = np.random.default_rng(0)
    x = rng.normal(size=(ROWS, FEATURES)).astype("float32")
    y = (x[:, 0] + 0.5 * x[:, 1] > 2.3).astype("int32")
    order = np.random.default_rng(batch_seed).permutation(ROWS)
    return x[order], y[order]


def _build(init_seed, batch_seed):
    import keras

    keras.utils.set_random_seed(init_seed)
    x, y = _data_set(batch_seed)
    model = keras.Sequential([
        keras.Input(shape=(FEATURES,)),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dense(256, activation="relu"),
        keras.layers.Dropout(0.3),
        keras.layers.Dense(1, activation="sigmoid"),
    ])
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="binary_crossentropy")
    return model, x, y


def _loop_step(model):
    """The custom phase's step, full batch: a weighted tf.math.bincount tallies each
    example's loss over (hidden unit, activation bucket) cells of the first layer, a
    monitoring histogram that also scales the step; the update is Variable.assign_sub."""
    import tensorflow as tf

    loss_fn = tf.keras.losses.BinaryCrossentropy(reduction="none")
    tally = tf.Variable(tf.zeros([BINS]), trainable=False)
    units = model.layers[0].units

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            per_example = loss_fn(tf.cast(y[:, None], tf.float32), model(x, training=True))
            loss = tf.reduce_mean(per_example)
        grads = list(tape.gradient(loss, model.trainable_variables))
        hidden = model.layers[0](x)
        bucket = tf.cast(tf.clip_by_value(hidden * 4.0, 0.0, BINS // units - 1.0), tf.int32)
        ids = tf.range(units)[None, :] * (BINS // units) + bucket
        weights = per_example[:, None] * hidden
        tally.assign(tf.math.bincount(tf.reshape(ids, [-1]), weights=tf.reshape(weights, [-1]),
                                      minlength=BINS, maxlength=BINS))
        # units that carry more of the loss step further: the tally's add order reaches the weights
        per_unit = tf.reduce_sum(tf.reshape(tally, [units, -1]), axis=1)
        grads[0] = grads[0] * (per_unit / (tf.reduce_mean(per_unit) + 1e-6))[None, :]
        for v, g in zip(model.trainable_variables, grads):
            v.assign_sub(1e-3 * g)
        return loss, tally

    return step


def train(steps=STEPS, seed=0):
    import numpy as np

    init_seed, batch_seed, ctx = _data.seeds(seed)
    model, x, y = _build(init_seed, batch_seed)
    counts = np.bincount(y)
    class_weight = {0: 1.0 / counts[0], 1: 1.0 / counts[1]}
    x_fit, y_fit = _data.take(steps * BATCH, x, y)
    model.fit(x_fit, y_fit, batch_size=BATCH, epochs=1, shuffle=False, class_weight=class_weight, verbose=0)
    step = _loop_step(model)
    for _ in range(steps):
        step(x, y)
    return _data.result(model.get_weights(), model.predict(x[:BATCH], verbose=0), ctx, steps)


def first_step(seed=0):
    """The first step of the custom loop: its loss, gradients and the weighted bincount's tally."""
    model, x, y = _build(seed, seed)
    before = [v.numpy() for v in model.trainable_variables]
    loss, tally = _loop_step(model)(x, y)
    out = {"loss": loss.numpy(), "tally": tally.numpy()}
    for i, (v, w) in enumerate(zip(model.trainable_variables, before)):
        out["g%03d" % i] = (w - v.numpy()).astype("float32")  # the step taken: 1e-3 * gradient, scaled per unit
    return out


def scan_target():
    """The custom loop's step (where the bincount is), with example inputs."""
    model, x, y = _build(0, 0)
    return _loop_step(model), (x, y)


def main():
    _data.main("imbalanced_bincount", train, STEPS)


if __name__ == "__main__":
    main()
