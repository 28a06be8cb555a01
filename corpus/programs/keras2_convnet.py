"""Follows: keras-team/keras-io examples/vision/mnist_convnet.py (the Keras 2 version, written
         against `from tensorflow import keras`).
Keeps: Keras 2 through the tf_keras package (what `tf.keras` was before Keras 3), a
       Sequential of Conv2D(32, 3x3, relu), MaxPooling2D, Conv2D(64, 3x3, relu),
       MaxPooling2D, Flatten, Dropout(0.5), Dense(num_classes, softmax), one-hot labels
       with keras.utils.to_categorical, categorical_crossentropy, Adam, accuracy,
       fit(batch_size=128, validation_split=0.1) with Keras 2's own shuffling, evaluate.
Changes: scikit-learn's bundled 8x8 digits, upsampled to 16x16, instead of the MNIST
       download; STEPS batches (one epoch over the first STEPS * 128 / 0.9 examples, in a
       seeded order), seeds set with tf_keras.utils.set_random_seed.

A Keras 2 program (tf_keras): the simple MNIST convnet, fit with validation_split.
"""

import os
import sys

import numpy as np

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data  # noqa: E402

NAME = "keras2_convnet"
STEPS = 10
EXPECT = dict(
    varies_stock=False,
    varying_ops=(),
    patch_reproduces=True,
)

NUM_CLASSES, BATCH = 10, 128


def data():
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = np.kron((digits.images / 16.0).astype("float32"), np.ones((1, 2, 2), "float32"))[..., None]
    return x[:1500], digits.target[:1500], x[1500:], digits.target[1500:]


def build(seed):
    import tf_keras as keras
    from tf_keras import layers

    keras.utils.set_random_seed(seed)
    model = keras.Sequential([
        keras.Input(shape=(16, 16, 1)),
        layers.Conv2D(32, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Conv2D(64, kernel_size=(3, 3), activation="relu"),
        layers.MaxPooling2D(pool_size=(2, 2)),
        layers.Flatten(),
        layers.Dropout(0.5),
        layers.Dense(NUM_CLASSES, activation="softmax"),
    ])
    model.compile(loss="categorical_crossentropy", optimizer="adam", metrics=["accuracy"])
    return keras, model


def train(steps=STEPS, seed=0, batch_seed=None):
    keras, model = build(seed)
    x, y, x_test, y_test = data()
    count = min(len(y), int(np.ceil(steps * BATCH / 0.9)))
    order = np.random.default_rng(seed if batch_seed is None else batch_seed).permutation(len(y))[:count]
    model.fit(x[order], keras.utils.to_categorical(y[order], NUM_CLASSES), batch_size=BATCH, epochs=1,
              validation_split=0.1, verbose=0)
    model.evaluate(x_test, keras.utils.to_categorical(y_test, NUM_CLASSES), verbose=0)
    out = {"w%03d" % i: w for i, w in enumerate(model.get_weights())}
    out["pred"] = model.predict(x_test, verbose=0)
    return out


def first_step(seed=0):
    import tensorflow as tf

    keras, model = build(seed)
    x, y, _, _ = data()
    with tf.GradientTape() as tape:
        probabilities = model(x[:BATCH], training=True)
        loss = tf.reduce_mean(keras.losses.categorical_crossentropy(
            keras.utils.to_categorical(y[:BATCH], NUM_CLASSES), probabilities))
    grads = tape.gradient(loss, model.trainable_weights)
    out = {"loss": loss.numpy()}
    out.update({"g%03d" % i: g.numpy() for i, g in enumerate(grads)})
    return out


def scan_target():
    _, model = build(0)
    return model, data()[0][:BATCH]


def main(argv=None):
    _data.main_with_context(NAME, train, STEPS, argv)


if __name__ == "__main__":
    main()
