"""Follows: keras-team/keras-io examples/vision/image_classification_from_scratch.py
Keeps: the small Xception-like network of make_model(): a Rescaling entry, Conv2D with
    BatchNormalization and relu, blocks of two SeparableConv2D + BatchNormalization and a
    MaxPooling2D whose residual is a strided 1x1 Conv2D added back, GlobalAveragePooling2D,
    Dropout, a Dense logit, binary cross-entropy from logits, Adam(3e-4), model.fit.
Changes: scikit-learn's bundled 8x8 digits (even vs odd) upsampled to 16x16 instead of the
    Cats vs Dogs download; widths 16/32/64, two residual blocks, batches of 32, STEPS batches.
"""

import os
import sys

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data

STEPS = 15
BATCH = 32
EXPECT = dict(varies_stock=False, varying_ops=(), patch_reproduces=True)


def make_model(input_shape):
    import keras
    from keras import layers

    inputs = keras.Input(shape=input_shape)
    x = layers.Rescaling(2.0, offset=-1.0)(inputs)
    x = layers.Conv2D(16, 3, strides=1, padding="same")(x)
    x = layers.BatchNormalization()(x)
    x = layers.Activation("relu")(x)
    previous_block_activation = x
    for size in (32, 64):
        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(size, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)
        x = layers.Activation("relu")(x)
        x = layers.SeparableConv2D(size, 3, padding="same")(x)
        x = layers.BatchNormalization()(x)
        x = layers.MaxPooling2D(3, strides=2, padding="same")(x)
        residual = layers.Conv2D(size, 1, strides=2, padding="same")(previous_block_activation)
        x = layers.add([x, residual])
        previous_block_activation = x
    x = layers.GlobalAveragePooling2D()(x)
    x = layers.Dropout(0.25)(x)
    outputs = layers.Dense(1, activation=None)(x)
    return keras.Model(inputs, outputs)


def _build(init_seed, batch_seed):
    import keras

    keras.utils.set_random_seed(init_seed)
    images, digits = _data.digits()
    images = images.repeat(2, axis=1).repeat(2, axis=2)
    labels = (digits % 2).astype("float32")
    order = _data.np.random.default_rng(batch_seed).permutation(len(images))
    images, labels = images[order], labels[order]
    model = make_model((16, 16, 1))
    model.compile(optimizer=keras.optimizers.Adam(3e-4), loss=keras.losses.BinaryCrossentropy(from_logits=True),
                  metrics=[keras.metrics.BinaryAccuracy(name="acc")])
    return model, images, labels


def train(steps=STEPS, seed=0):
    init_seed, batch_seed, ctx = _data.seeds(seed)
    model, x, y = _build(init_seed, batch_seed)
    x_fit, y_fit = _data.take(steps * BATCH, x, y)
    model.fit(x_fit, y_fit, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    return _data.result(model.get_weights(), model.predict(x[:BATCH], verbose=0), ctx, steps)


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
    _data.main("resnet_bn", train, STEPS)


if __name__ == "__main__":
    main()
