"""Follows: keras-team/keras-io examples/nlp/text_classification_from_scratch.py
Keeps: TextVectorization (int tokens, fixed length) adapted on the training text inside a
    tf.data map, Embedding, Dropout, two strided Conv1D, GlobalMaxPooling1D, Dense head with a
    sigmoid, binary cross-entropy, Adam, model.fit on a batched, prefetched tf.data pipeline.
Changes: generated IMDB-like reviews (_data.reviews) instead of the downloaded IMDB set; a
    2,000-token vocabulary, 64 tokens a review, 64-wide layers, batches of 32, STEPS batches.
"""

import os
import sys

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data

STEPS = 20
BATCH = 32
EXPECT = dict(varies_stock=False, varying_ops=(), patch_reproduces=True)


def _build(init_seed, batch_seed):
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(init_seed)
    texts, labels = _data.reviews(BATCH * 30, seed=0)
    vectorize = keras.layers.TextVectorization(max_tokens=2000, output_mode="int", output_sequence_length=64)
    vectorize.adapt(tf.data.Dataset.from_tensor_slices(texts).batch(BATCH))
    order = _data.np.random.default_rng(batch_seed).permutation(len(texts))
    texts = [texts[i] for i in order]
    labels = labels[order]

    inputs = keras.Input(shape=(None,), dtype="int64")
    x = keras.layers.Embedding(2000, 64)(inputs)
    x = keras.layers.Dropout(0.5)(x)
    x = keras.layers.Conv1D(64, 7, padding="valid", activation="relu", strides=3)(x)
    x = keras.layers.Conv1D(64, 7, padding="valid", activation="relu", strides=3)(x)
    x = keras.layers.GlobalMaxPooling1D()(x)
    x = keras.layers.Dense(64, activation="relu")(x)
    x = keras.layers.Dropout(0.5)(x)
    predictions = keras.layers.Dense(1, activation="sigmoid", name="predictions")(x)
    model = keras.Model(inputs, predictions)
    model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])

    def vectorize_text(text, label):
        return vectorize(text), label

    ds = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(BATCH).map(vectorize_text)
    return model, ds.prefetch(2), vectorize(texts[:BATCH]), labels[:BATCH]


def train(steps=STEPS, seed=0):
    init_seed, batch_seed, ctx = _data.seeds(seed)
    model, ds, probe_x, probe_y = _build(init_seed, batch_seed)
    model.fit(ds.repeat(), epochs=1, steps_per_epoch=steps, shuffle=False, verbose=0)
    pred = model.predict(probe_x, verbose=0)
    return _data.result(model.get_weights(), pred, ctx, steps, probe_y)


def first_step(seed=0):
    import tensorflow as tf

    model, ds, _, _ = _build(seed, seed)
    x, y = next(iter(ds))
    with tf.GradientTape() as tape:
        loss = model.compute_loss(x, y, model(x, training=True))
    return _data.gradients(tape, loss, model.trainable_variables)


def scan_target():
    model, _, probe_x, _ = _build(0, 0)
    return model, probe_x


def main():
    _data.main("text_classifier", train, STEPS)


if __name__ == "__main__":
    main()
