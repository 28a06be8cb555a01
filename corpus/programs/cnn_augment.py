"""Follows: tensorflow/docs site/en/tutorials/images/data_augmentation.ipynb
Keeps: Keras preprocessing layers to resize and rescale, and a data_augmentation Sequential of
    RandomFlip("horizontal_and_vertical"), RandomRotation(0.2) and RandomZoom applied in the
    tf.data pipeline (prepare(): shuffle, batch, map with num_parallel_calls=AUTOTUNE, prefetch),
    a Conv2D/MaxPooling2D stack, Flatten, Dense, logits with SparseCategoricalCrossentropy
    (from_logits=True), Adam, model.fit on the dataset.
Changes: generated shape images (_data.shapes, 32x32 RGB, 3 classes) instead of tf_flowers;
    resized to 24x24, narrower convolutions, batches of 16, STEPS batches.
"""

import os
import sys

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data

STEPS = 12
BATCH, SIZE, CLASSES = 16, 24, 3
# The augmentation's random layers draw their seeds from a variable each call bumps; the
# parallel map calls them in a varying order (catalogue: data-stateful-parallel-map, on the
# ParallelMapDatasetV2 op). tf.data functions are not instrumented by tfdet locate, so it
# names the op where the batches come out, IteratorGetNext (README, "Locate").
# Under op determinism TF runs such a map serially: patch() reproduces it.
EXPECT = dict(varies_stock=True, varying_ops=("IteratorGetNext", "ParallelMapDatasetV2"), patch_reproduces=True)


def _build(init_seed, batch_seed):
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(init_seed)
    images, labels = _data.shapes(BATCH * 16, size=32, classes=CLASSES, seed=0)
    resize_and_rescale = keras.Sequential([keras.layers.Resizing(SIZE, SIZE), keras.layers.Rescaling(1.0)])
    data_augmentation = keras.Sequential([
        keras.layers.RandomFlip("horizontal_and_vertical"),
        keras.layers.RandomRotation(0.2),
        keras.layers.RandomZoom(0.1),
    ])

    def prepare(ds, shuffle=False, augment=False):
        ds = ds.map(lambda x, y: (resize_and_rescale(x), y), num_parallel_calls=tf.data.AUTOTUNE)
        if shuffle:
            ds = ds.shuffle(1000, seed=batch_seed)
        ds = ds.batch(BATCH)
        if augment:
            ds = ds.map(lambda x, y: (data_augmentation(x, training=True), y), num_parallel_calls=tf.data.AUTOTUNE)
        return ds.prefetch(buffer_size=tf.data.AUTOTUNE)

    train_ds = prepare(tf.data.Dataset.from_tensor_slices((images, labels)), shuffle=True, augment=True)
    model = keras.Sequential([
        keras.Input((SIZE, SIZE, 3)),
        keras.layers.Conv2D(8, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
        keras.layers.MaxPooling2D(),
        keras.layers.Flatten(),
        keras.layers.Dense(32, activation="relu"),
        keras.layers.Dense(CLASSES),
    ])
    model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    probe = next(iter(prepare(tf.data.Dataset.from_tensor_slices((images[:BATCH], labels[:BATCH])))))[0]
    return model, train_ds, probe, labels[:BATCH]


def train(steps=STEPS, seed=0):
    init_seed, batch_seed, ctx = _data.seeds(seed)
    model, ds, probe_x, probe_y = _build(init_seed, batch_seed)
    model.fit(ds.repeat(), epochs=1, steps_per_epoch=steps, verbose=0)
    return _data.result(model.get_weights(), model.predict(probe_x, verbose=0), ctx, steps, probe_y)


def first_step(seed=0):
    """The first step on a fixed resized batch, without the augmentation: the parallel
    augmentation map varies stock, so its first batch would not be the same input."""
    import tensorflow as tf

    model, _, x, y = _build(seed, seed)
    with tf.GradientTape() as tape:
        loss = model.compute_loss(x, y, model(x, training=True))
    return _data.gradients(tape, loss, model.trainable_variables)


def scan_target():
    model, _, probe_x, _ = _build(0, 0)
    return model, probe_x


def scan_dataset():
    """The training input pipeline, for tfdet.scan(dataset=...): where this program varies."""
    return _build(0, 0)[1]


def main():
    _data.main("cnn_augment", train, STEPS)


if __name__ == "__main__":
    main()
