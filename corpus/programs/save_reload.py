"""Follows: keras-team/keras-io guides/serialization_and_saving.py
Keeps: a compiled functional model trained with fit, saved whole with model.save("....keras")
    (architecture, weights and optimizer state) and restored with keras.models.load_model,
    then trained on from where it stopped, as when a job resumes from a checkpoint.
Changes: a small Dense classifier on scikit-learn's bundled digits (the guide's get_model()
    is a Dense toy too); the file goes to a temporary directory; STEPS batches of 64 in all,
    half before the save and half after.
"""

import os
import sys

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data

STEPS = 20
BATCH = 64
EXPECT = dict(varies_stock=False, varying_ops=(), patch_reproduces=True)


def get_model():
    import keras

    inputs = keras.Input(shape=(64,))
    h = keras.layers.Dense(64, activation="relu")(inputs)
    outputs = keras.layers.Dense(10)(h)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    return model


def _data_set(batch_seed):
    images, labels = _data.digits()
    x = images.reshape(len(images), 64)
    order = _data.np.random.default_rng(batch_seed).permutation(len(x))
    return x[order], labels[order]


def train(steps=STEPS, seed=0):
    import tempfile

    import keras

    init_seed, batch_seed, ctx = _data.seeds(seed)
    keras.utils.set_random_seed(init_seed)
    x, y = _data_set(batch_seed)
    x_fit, y_fit = _data.take(steps * BATCH, x, y)
    half = (steps // 2) * BATCH
    model = get_model()
    model.fit(x_fit[:half], y_fit[:half], batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    with tempfile.TemporaryDirectory(prefix="corpus-save-reload-") as tmp:
        path = os.path.join(tmp, "my_model.keras")
        model.save(path)
        model = keras.models.load_model(path)
    model.fit(x_fit[half:], y_fit[half:], batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    return _data.result(model.get_weights(), model.predict(x[:BATCH], verbose=0), ctx, steps, y[:BATCH])


def first_step(seed=0):
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(seed)
    x, y = _data_set(seed)
    model = get_model()
    x, y = x[:BATCH], y[:BATCH]
    with tf.GradientTape() as tape:
        loss = model.compute_loss(x, y, model(x, training=True))
    return _data.gradients(tape, loss, model.trainable_variables)


def scan_target():
    import keras

    keras.utils.set_random_seed(0)
    return get_model(), _data_set(0)[0][:BATCH]


def main():
    _data.main("save_reload", train, STEPS)


if __name__ == "__main__":
    main()
