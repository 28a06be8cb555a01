"""Follows: keras-team/keras-io examples/timeseries/timeseries_weather_forecasting.py
Keeps: features normalised with the training split's mean and std, windows made by
    keras.utils.timeseries_dataset_from_array (sampling_rate 6, a target 72 records ahead),
    an LSTM(32) and a Dense(1) regression head, MSE, Adam, model.fit on the window dataset.
Changes: a generated Jena-like multivariate series (_data.weather, 7 features, daily and yearly
    cycles) instead of the climate CSV download; 120 past records, batches of 64, STEPS batches,
    plus a Conv1D in front of the LSTM (as in the keras-io timeseries classification example).
"""

import os
import sys

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data

STEPS = 15
BATCH, PAST, FUTURE, STEP = 64, 120, 72, 6
EXPECT = dict(varies_stock=False, varying_ops=(), patch_reproduces=True)


def _build(init_seed, batch_seed):
    import keras

    keras.utils.set_random_seed(init_seed)
    features = _data.weather(4000, seed=0)
    train_split = 3000
    mean, std = features[:train_split].mean(axis=0), features[:train_split].std(axis=0)
    features = (features - mean) / std
    start = PAST + FUTURE
    x_train = features[: train_split - FUTURE]
    y_train = features[start: train_split + PAST, 1:2]
    # shuffle with the batch seed: the order of windows is what varies between trainings
    dataset = keras.utils.timeseries_dataset_from_array(
        x_train, y_train[: len(x_train)], sequence_length=PAST // STEP, sampling_rate=STEP, batch_size=BATCH,
        shuffle=True, seed=batch_seed)
    probe_x = next(iter(keras.utils.timeseries_dataset_from_array(
        features[train_split:], None, sequence_length=PAST // STEP, sampling_rate=STEP, batch_size=BATCH)))

    inputs = keras.layers.Input(shape=(PAST // STEP, features.shape[1]))
    x = keras.layers.Conv1D(16, 3, padding="same", activation="relu")(inputs)
    x = keras.layers.LSTM(32)(x)
    outputs = keras.layers.Dense(1)(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate=0.001), loss="mse")
    return model, dataset, probe_x


def train(steps=STEPS, seed=0):
    init_seed, batch_seed, ctx = _data.seeds(seed)
    model, ds, probe_x = _build(init_seed, batch_seed)
    model.fit(ds.repeat(), epochs=1, steps_per_epoch=steps, verbose=0)
    return _data.result(model.get_weights(), model.predict(probe_x, verbose=0), ctx, steps)


def first_step(seed=0):
    import tensorflow as tf

    model, ds, _ = _build(seed, seed)
    x, y = next(iter(ds))
    with tf.GradientTape() as tape:
        loss = model.compute_loss(x, y, model(x, training=True))
    return _data.gradients(tape, loss, model.trainable_variables)


def scan_target():
    model, _, probe_x = _build(0, 0)
    return model, probe_x


def main():
    _data.main("timeseries_lstm", train, STEPS)


if __name__ == "__main__":
    main()
