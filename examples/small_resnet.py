"""A small ResNet-style image classifier, saved for `tfdet scan`:

    python examples/small_resnet.py small_resnet.keras
    tfdet scan small_resnet.keras --tf-version 2.6 --device gpu

Two residual blocks (Conv2D, BatchNormalization), max pooling, bilinear
upsampling, a nearest-neighbour resize, dropout and a softmax head, compiled
with Adam, sparse categorical cross-entropy, accuracy and top-3 accuracy.
"""

import sys

import keras


def block(x, filters):
    y = keras.layers.Conv2D(filters, 3, padding="same")(x)
    y = keras.layers.ReLU()(keras.layers.BatchNormalization()(y))
    y = keras.layers.BatchNormalization()(keras.layers.Conv2D(filters, 3, padding="same")(y))
    if x.shape[-1] != filters:
        x = keras.layers.Conv2D(filters, 1)(x)
    return keras.layers.ReLU()(keras.layers.Add()([x, y]))


def build():
    inputs = keras.Input((32, 32, 3))
    x = keras.layers.MaxPooling2D()(block(inputs, 16))
    x = block(x, 32)
    x = keras.layers.UpSampling2D(2, interpolation="bilinear")(x)
    x = keras.layers.Resizing(32, 32, interpolation="nearest")(x)
    x = keras.layers.Dropout(0.2)(keras.layers.GlobalAveragePooling2D()(x))
    model = keras.Model(inputs, keras.layers.Dense(10, activation="softmax")(x), name="small_resnet")
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy",
                  metrics=["accuracy", keras.metrics.SparseTopKCategoricalAccuracy(3)])
    return model


if __name__ == "__main__":
    build().save(sys.argv[1] if len(sys.argv) > 1 else "small_resnet.keras")
