"""Follows: keras-team/keras-io guides/custom_train_step_in_tensorflow.py (sections "A first
         simple example" and "Supporting sample_weight & class_weight", and the custom
         test_step).
Keeps: a CustomModel(keras.Model) built from functional inputs and outputs, a train_step
       that unpacks (x, y, sample_weight), runs the forward pass under a GradientTape, gets
       the loss from self.compute_loss (the loss given to compile), applies the gradients
       with self.optimizer.apply and updates every metric (the loss tracker with the loss,
       the others with y, y_pred and the weights), a matching test_step, compile with
       "adam", a loss and metrics, fit with sample_weight.
Changes: scikit-learn's bundled digits (64 features, 10 classes) with a Dense(64)-Dense(10)
       classifier and sparse categorical cross-entropy instead of the guide's random
       regression data, sample weights that favour the hard classes 3, 5, 8 and 9, batch 64,
       STEPS batches in a seeded order, evaluate on a held-out set.

A functional Keras model whose Model.train_step is overridden, fit with sample weights.
"""

import os
import sys

import numpy as np

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data  # noqa: E402

NAME = "custom_train_step"
STEPS = 20
EXPECT = dict(
    varies_stock=False,
    varying_ops=(),
    patch_reproduces=True,
)

BATCH = 64


def data():
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.data / 16.0).astype("float32")
    y = digits.target.astype("int64")
    weights = np.where(np.isin(y, [3, 5, 8, 9]), 2.0, 1.0).astype("float32")
    return x[:1500], y[:1500], weights[:1500], x[1500:], y[1500:]


def build(seed):
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(seed)

    class CustomModel(keras.Model):
        def train_step(self, data):
            if len(data) == 3:
                x, y, sample_weight = data
            else:
                (x, y), sample_weight = data, None
            with tf.GradientTape() as tape:
                y_pred = self(x, training=True)
                loss = self.compute_loss(y=y, y_pred=y_pred, sample_weight=sample_weight)
            trainable_vars = self.trainable_variables
            gradients = tape.gradient(loss, trainable_vars)
            self.optimizer.apply(gradients, trainable_vars)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred, sample_weight=sample_weight)
            return {m.name: m.result() for m in self.metrics}

        def test_step(self, data):
            x, y = data
            y_pred = self(x, training=False)
            loss = self.compute_loss(y=y, y_pred=y_pred)
            for metric in self.metrics:
                if metric.name == "loss":
                    metric.update_state(loss)
                else:
                    metric.update_state(y, y_pred)
            return {m.name: m.result() for m in self.metrics}

    inputs = keras.Input((64,))
    hidden = keras.layers.Dense(64, activation="relu")(inputs)
    outputs = keras.layers.Dense(10)(hidden)
    model = CustomModel(inputs, outputs)
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=[keras.metrics.SparseCategoricalAccuracy(name="accuracy")])
    return model


def ordered(seed, steps):
    x, y, w, _, _ = data()
    order = np.concatenate([np.random.default_rng(seed).permutation(len(y))
                            for _ in range(steps * BATCH // len(y) + 1)])[:steps * BATCH]
    return x[order], y[order], w[order]


def train(steps=STEPS, seed=0, batch_seed=None):
    model = build(seed)
    x, y, w = ordered(seed if batch_seed is None else batch_seed, steps)
    model.fit(x, y, sample_weight=w, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    _, _, _, x_test, y_test = data()
    model.evaluate(x_test, y_test, verbose=0)
    out = {"w%03d" % i: v for i, v in enumerate(model.get_weights())}
    out["pred"] = model.predict(x_test, verbose=0)
    return out


def first_step(seed=0):
    import tensorflow as tf

    model = build(seed)
    x, y, w = (a[:BATCH] for a in ordered(seed, 1))
    with tf.GradientTape() as tape:
        loss = model.compute_loss(y=y, y_pred=model(x, training=True), sample_weight=w)
    grads = tape.gradient(loss, model.trainable_variables)
    out = {"loss": loss.numpy()}
    out.update({"g%03d" % i: g.numpy() for i, g in enumerate(grads)})
    return out


def scan_target():
    return build(0), data()[0][:BATCH]


def main(argv=None):
    _data.main_with_context(NAME, train, STEPS, argv)


if __name__ == "__main__":
    main()
