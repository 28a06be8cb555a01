"""The text model of the README's scan example, saved for `tfdet scan`:

    python examples/scan/make_text_model.py text_model.keras
    tfdet scan text_model.keras --tf-version 2.6 --no-assume-patched

Token ids (5 per example) through an Embedding, flattened, into a Dense
sigmoid head; compiled with Adam, binary cross-entropy and an AUC metric.
The scan finds the embedding's gather, the segment sums of Adam's sparse
update of the embedding and those of the AUC metric, not the layers'.
"""

import sys

import keras

VOCABULARY, TOKENS, WIDTH = 50, 5, 4


def build():
    tokens = keras.Input((TOKENS,), dtype="int32")
    x = keras.layers.Flatten()(keras.layers.Embedding(VOCABULARY, WIDTH)(tokens))
    model = keras.Model(tokens, keras.layers.Dense(1, activation="sigmoid")(x), name="text_model")
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC()])
    return model


if __name__ == "__main__":
    build().save(sys.argv[1] if len(sys.argv) > 1 else "text_model.keras")
