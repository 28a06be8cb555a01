"""Follows: tensorflow/tensorflow tensorflow/compiler/xla/g3doc/tutorials/jit_compile.ipynb
         ("Use XLA with tf.function": train_mnist under @tf.function(jit_compile=True)).
Keeps: a tf.data pipeline of (images, labels) batched and repeated, a cast() that flattens
       the images to float32 and the labels to int64 inside the compiled function, a Keras
       Dense layer producing the logits, Adam, the mean of
       tf.nn.sparse_softmax_cross_entropy_with_logits, tape.gradient and apply_gradients all
       inside one @tf.function(jit_compile=True) step, the loop that stops once
       optimizer.iterations passes the step budget, accuracy on the test set afterwards.
Changes: scikit-learn's bundled 8x8 digits (uint8 0-16, scaled in cast) instead of MNIST,
       a Dense(64, relu) hidden layer before the logits, batch 100 as in the tutorial,
       STEPS steps, examples in a seeded order.

A classifier trained by a tf.function compiled with XLA (jit_compile=True).
"""

import os
import sys

import numpy as np

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data  # noqa: E402

NAME = "xla_jit_compile"
STEPS = 30
EXPECT = dict(
    varies_stock=False,
    varying_ops=(),
    patch_reproduces=True,
)

IMAGE_SIZE, NUM_CLASSES, TRAIN_BATCH_SIZE = 64, 10, 100


def data():
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = digits.images.astype("uint8")
    return (images[:1500], digits.target[:1500]), (images[1500:], digits.target[1500:])


def build(seed):
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(seed)
    hidden = keras.layers.Dense(64, activation="relu")
    layer = keras.layers.Dense(NUM_CLASSES)
    optimizer = keras.optimizers.Adam()

    def cast(images, labels):
        images = tf.cast(tf.reshape(images, [-1, IMAGE_SIZE]), tf.float32) / 16.0
        return images, tf.cast(labels, tf.int64)

    def predict(images):
        return layer(hidden(images))

    def loss_of(images, labels):
        images, labels = cast(images, labels)
        return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
            logits=predict(images), labels=labels))

    def variables():
        return hidden.trainable_variables + layer.trainable_variables

    @tf.function(jit_compile=True)
    def train_mnist(images, labels):
        with tf.GradientTape() as tape:
            loss = loss_of(images, labels)
        layer_variables = variables()
        grads = tape.gradient(loss, layer_variables)
        optimizer.apply_gradients(zip(grads, layer_variables))

    predict(tf.zeros((1, IMAGE_SIZE)))          # build the layers before the compiled step
    return cast, predict, loss_of, variables, optimizer, train_mnist


def train(steps=STEPS, seed=0, batch_seed=None):
    import tensorflow as tf

    cast, predict, _, variables, optimizer, train_mnist = build(seed)
    (x, y), test = data()
    order = np.random.default_rng(seed if batch_seed is None else batch_seed).permutation(len(y))
    train_ds = tf.data.Dataset.from_tensor_slices((x[order], y[order])).batch(TRAIN_BATCH_SIZE).repeat()
    for images, labels in train_ds:
        if optimizer.iterations >= steps:
            break
        train_mnist(images, labels)
    images, labels = cast(*test)
    out = {"w%03d" % i: v.numpy() for i, v in enumerate(variables())}
    out["pred"] = predict(images).numpy()
    return out


def first_step(seed=0):
    import tensorflow as tf

    _, _, loss_of, variables, _, _ = build(seed)
    (x, y), _ = data()
    with tf.GradientTape() as tape:
        loss = loss_of(x[:TRAIN_BATCH_SIZE], y[:TRAIN_BATCH_SIZE])
    grads = tape.gradient(loss, variables())
    out = {"loss": loss.numpy()}
    out.update({"g%03d" % i: g.numpy() for i, g in enumerate(grads)})
    return out


def scan_target():
    *_, train_mnist = build(0)
    (x, y), _ = data()
    return train_mnist, (x[:TRAIN_BATCH_SIZE], y[:TRAIN_BATCH_SIZE])


def main(argv=None):
    _data.main_with_context(NAME, train, STEPS, argv)


if __name__ == "__main__":
    main()
