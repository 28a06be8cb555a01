"""Follows: keras-team/keras-io examples/structured_data/structured_data_classification_from_scratch.py
Keeps: a dataframe-like table of the Cleveland heart-disease columns turned into a tf.data
    dataset of feature dicts, one keras.Input per column, preprocessing layers adapted on the
    training data (Normalization for numeric columns, IntegerLookup and StringLookup with
    one-hot output for categorical ones), concatenated, Dense(32) relu, Dropout(0.5), a sigmoid
    head, binary cross-entropy, Adam, model.fit on the batched dataset.
Changes: a generated table with the same columns and dtypes (_data.heart_table) instead of the
    CSV download; 512 rows, batches of 32, STEPS batches.
"""

import os
import sys

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data

STEPS = 15
BATCH = 32
NUMERIC = ("age", "trestbps", "chol", "thalach", "oldpeak", "slope")
INT_CATEGORICAL = ("sex", "cp", "fbs", "restecg", "exang", "ca")
STR_CATEGORICAL = ("thal",)
EXPECT = dict(varies_stock=False, varying_ops=(), patch_reproduces=True)


def _build(init_seed, batch_seed):
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(init_seed)
    columns, target = _data.heart_table(512, seed=0)
    order = _data.np.random.default_rng(batch_seed).permutation(len(target))
    columns = {k: v[order] for k, v in columns.items()}
    target = target[order]
    train_ds = tf.data.Dataset.from_tensor_slices((columns, target)).batch(BATCH)

    inputs, encoded = [], []
    for name in NUMERIC:
        x = keras.Input(shape=(1,), name=name, dtype="float32")
        norm = keras.layers.Normalization()
        norm.adapt(columns[name].astype("float32").reshape(-1, 1))
        inputs.append(x)
        encoded.append(norm(x))
    for name in INT_CATEGORICAL + STR_CATEGORICAL:
        is_string = name in STR_CATEGORICAL
        x = keras.Input(shape=(1,), name=name, dtype="string" if is_string else "int64")
        lookup = (keras.layers.StringLookup if is_string else keras.layers.IntegerLookup)(output_mode="one_hot")
        lookup.adapt(columns[name])
        inputs.append(x)
        encoded.append(lookup(x))
    all_features = keras.layers.concatenate(encoded)
    x = keras.layers.Dense(32, activation="relu")(all_features)
    x = keras.layers.Dropout(0.5)(x)
    output = keras.layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, output)
    model.compile("adam", "binary_crossentropy", metrics=["accuracy"])

    def reshape(features, label):  # one (batch, 1) tensor per input, as the example's dict_to_dataset gives
        return {k: tf.reshape(v, (-1, 1)) for k, v in features.items()}, label

    train_ds = train_ds.map(reshape)
    probe = next(iter(train_ds))[0]
    return model, train_ds, probe


def train(steps=STEPS, seed=0):
    init_seed, batch_seed, ctx = _data.seeds(seed)
    model, ds, probe = _build(init_seed, batch_seed)
    model.fit(ds.repeat(), epochs=1, steps_per_epoch=steps, verbose=0)
    return _data.result(model.get_weights(), model.predict(probe, verbose=0), ctx, steps)


def first_step(seed=0):
    import tensorflow as tf

    model, ds, _ = _build(seed, seed)
    x, y = next(iter(ds))
    with tf.GradientTape() as tape:
        loss = model.compute_loss(x, y, model(x, training=True))
    return _data.gradients(tape, loss, model.trainable_variables)


def scan_target():
    model, _, probe = _build(0, 0)
    return model, probe


def main():
    _data.main("structured_data", train, STEPS)


if __name__ == "__main__":
    main()
