"""Follows: tensorflow/docs site/en/guide/mixed_precision.ipynb
Keeps: keras.mixed_precision.set_global_policy("mixed_float16"), a functional model of Dense
    layers whose last Dense and softmax are split, the softmax Activation forced to float32,
    sparse categorical cross-entropy, RMSprop (fit wraps it in a LossScaleOptimizer),
    model.fit on flattened digit images scaled to [0, 1].
Changes: scikit-learn's bundled 8x8 digits (64 features) instead of MNIST's download;
    Dense(256) twice instead of 4096, batches of 64, STEPS batches.
"""

import os
import sys

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data

STEPS = 20
BATCH = 64
EXPECT = dict(varies_stock=False, varying_ops=(), patch_reproduces=True)


def _build(init_seed, batch_seed):
    import keras

    keras.utils.set_random_seed(init_seed)
    keras.mixed_precision.set_global_policy("mixed_float16")
    images, labels = _data.digits()
    x = images.reshape(len(images), 64)
    order = _data.np.random.default_rng(batch_seed).permutation(len(x))
    x, y = x[order], labels[order]
    inputs = keras.Input(shape=(64,), name="digits")
    h = keras.layers.Dense(256, activation="relu", name="dense_1")(inputs)
    h = keras.layers.Dense(256, activation="relu", name="dense_2")(h)
    h = keras.layers.Dense(10, name="dense_logits")(h)
    outputs = keras.layers.Activation("softmax", dtype="float32", name="predictions")(h)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.compile(loss="sparse_categorical_crossentropy", optimizer=keras.optimizers.RMSprop(),
                  metrics=["accuracy"])
    return model, x, y


def train(steps=STEPS, seed=0):
    init_seed, batch_seed, ctx = _data.seeds(seed)
    model, x, y = _build(init_seed, batch_seed)
    x_fit, y_fit = _data.take(steps * BATCH, x, y)
    model.fit(x_fit, y_fit, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    return _data.result(model.get_weights(), model.predict(x[:BATCH], verbose=0), ctx, steps, y[:BATCH])


def first_step(seed=0):
    import tensorflow as tf

    model, x, y = _build(seed, seed)
    x, y = x[:BATCH], y[:BATCH]
    with tf.GradientTape() as tape:
        loss = model.compute_loss(x, y, model(x, training=True))
    return _data.gradients(tape, loss, model.trainable_variables)


def scan_target():
    model, x, _ = _build(0, 0)
    return model, x[:BATCH]


def main():
    _data.main("mixed_precision", train, STEPS)


if __name__ == "__main__":
    main()
