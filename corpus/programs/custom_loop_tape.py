"""Follows: keras-team/keras-io guides/writing_a_custom_training_loop_in_tensorflow.py
Keeps: a functional MLP (Dense 64 relu, Dense 64 relu, Dense 10), an
       ActivityRegularizationLayer that adds a loss through self.add_loss (the guide's
       "low-level handling of losses tracked by the model", summed into the loss as
       sum(model.losses)), Adam(1e-3), SparseCategoricalCrossentropy(from_logits=True),
       SparseCategoricalAccuracy for training and validation, a @tf.function train_step(x, y)
       that computes the loss under tf.GradientTape and calls optimizer.apply, a
       @tf.function test_step, a tf.data pipeline batched by 64 and prefetched.
Changes: scikit-learn's bundled digits (64 features) instead of MNIST; the pipeline adds
       Gaussian input noise in a Dataset.map with num_parallel_calls=AUTOTUNE (a stateful
       random op: which element draws which noise depends on the order the parallel calls
       run); the order of the examples comes from a seeded numpy permutation; STEPS
       batches, validation on a held-out set at the end.

A training loop written from scratch: GradientTape inside a tf.function, tf.data input with noise.
"""

import os
import sys

import numpy as np

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data  # noqa: E402

NAME = "custom_loop_tape"
STEPS = 25
# The noise map is a stateful function run in parallel (catalogue: data-stateful-parallel-map,
# on the ParallelMapDatasetV2 op); op determinism (which tfdet.patch() switches on) makes
# tf.data run such a map sequentially (TF 2.7 release notes). tf.data functions are not
# instrumented by tfdet locate: it names the op where the batches come out, IteratorGetNext.
EXPECT = dict(
    varies_stock=True,
    varying_ops=("IteratorGetNext", "ParallelMapDatasetV2"),
    patch_reproduces=True,
)

BATCH = 64


def data():
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.data / 16.0).astype("float32")
    return x[:1500], digits.target[:1500].astype("int64"), x[1500:], digits.target[1500:].astype("int64")


def build(seed):
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(seed)

    class ActivityRegularizationLayer(keras.layers.Layer):
        def call(self, inputs):
            self.add_loss(1e-2 * tf.reduce_sum(inputs))
            return inputs

    inputs = keras.Input((64,), name="digits")
    x = keras.layers.Dense(64, activation="relu")(inputs)
    x = ActivityRegularizationLayer()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    model = keras.Model(inputs, keras.layers.Dense(10, name="predictions")(x))
    optimizer = keras.optimizers.Adam(learning_rate=1e-3)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    train_acc_metric = keras.metrics.SparseCategoricalAccuracy()
    val_acc_metric = keras.metrics.SparseCategoricalAccuracy()

    def loss_of(x, y):
        logits = model(x, training=True)
        return loss_fn(y, logits) + sum(model.losses), logits

    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            loss_value, logits = loss_of(x, y)
        grads = tape.gradient(loss_value, model.trainable_weights)
        optimizer.apply(grads, model.trainable_weights)
        train_acc_metric.update_state(y, logits)
        return loss_value

    @tf.function
    def test_step(x, y):
        val_logits = model(x, training=False)
        val_acc_metric.update_state(y, val_logits)
        return val_logits

    return model, loss_of, train_step, test_step


def dataset(seed, steps):
    import tensorflow as tf

    x, y, _, _ = data()
    order = np.concatenate([np.random.default_rng(seed).permutation(len(y))
                            for _ in range(steps * BATCH // len(y) + 1)])[:steps * BATCH]

    def add_noise(image, label):
        return image + tf.random.normal(tf.shape(image), stddev=0.05), label

    return (tf.data.Dataset.from_tensor_slices((x[order], y[order]))
            .map(add_noise, num_parallel_calls=tf.data.AUTOTUNE)
            .batch(BATCH).prefetch(tf.data.AUTOTUNE))


def train(steps=STEPS, seed=0, batch_seed=None):
    model, _, train_step, test_step = build(seed)
    for x_batch, y_batch in dataset(seed if batch_seed is None else batch_seed, steps):
        train_step(x_batch, y_batch)
    _, _, x_val, y_val = data()
    out = {"w%03d" % i: w for i, w in enumerate(model.get_weights())}
    out["pred"] = test_step(x_val, y_val).numpy()
    return out


def first_step(seed=0):
    import tensorflow as tf

    model, loss_of, _, _ = build(seed)
    x, y, _, _ = data()
    with tf.GradientTape() as tape:
        loss = loss_of(x[:BATCH], y[:BATCH])[0]
    grads = tape.gradient(loss, model.trainable_weights)
    out = {"loss": loss.numpy()}
    out.update({"g%03d" % i: g.numpy() for i, g in enumerate(grads)})
    return out


def scan_target():
    _, _, train_step, _ = build(0)
    x, y, _, _ = data()
    return train_step, (x[:BATCH], y[:BATCH])


def scan_dataset():
    """The input pipeline, where this program's variation is (no model holds it)."""
    return dataset(0, STEPS)


def main(argv=None):
    _data.main_with_context(NAME, train, STEPS, argv)


if __name__ == "__main__":
    main()
