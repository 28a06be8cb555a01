"""Follows: keras-team/keras-io examples/nlp/text_classification_with_transformer.py
Keeps: a TransformerBlock layer (MultiHeadAttention, a two-Dense feed-forward net, two
    LayerNormalization, Dropout, residuals), a TokenAndPositionEmbedding layer (token and
    position Embedding summed), GlobalAveragePooling1D, Dropout, Dense softmax over 2 classes,
    sparse categorical cross-entropy, Adam, model.fit on arrays.
Changes: generated token sequences (_data.token_sequences) instead of the IMDB download;
    a 1,000-token vocabulary, 48 tokens, 2 heads of 16, batches of 32, STEPS batches.
"""

import os
import sys

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data

STEPS = 15
BATCH, VOCAB, MAXLEN, EMBED, HEADS, FF = 32, 1000, 48, 32, 2, 32
EXPECT = dict(varies_stock=False, varying_ops=(), patch_reproduces=True)


def _layers():
    import keras

    class TransformerBlock(keras.layers.Layer):
        def __init__(self, embed_dim, num_heads, ff_dim, rate=0.1):
            super().__init__()
            self.att = keras.layers.MultiHeadAttention(num_heads=num_heads, key_dim=embed_dim // num_heads)
            self.ffn = keras.Sequential([keras.layers.Dense(ff_dim, activation="relu"), keras.layers.Dense(embed_dim)])
            self.layernorm1 = keras.layers.LayerNormalization(epsilon=1e-6)
            self.layernorm2 = keras.layers.LayerNormalization(epsilon=1e-6)
            self.dropout1 = keras.layers.Dropout(rate)
            self.dropout2 = keras.layers.Dropout(rate)

        def call(self, inputs, training=False):
            attn_output = self.dropout1(self.att(inputs, inputs), training=training)
            out1 = self.layernorm1(inputs + attn_output)
            ffn_output = self.dropout2(self.ffn(out1), training=training)
            return self.layernorm2(out1 + ffn_output)

    class TokenAndPositionEmbedding(keras.layers.Layer):
        def __init__(self, maxlen, vocab_size, embed_dim):
            super().__init__()
            self.token_emb = keras.layers.Embedding(input_dim=vocab_size, output_dim=embed_dim)
            self.pos_emb = keras.layers.Embedding(input_dim=maxlen, output_dim=embed_dim)

        def call(self, x):
            positions = keras.ops.arange(0, keras.ops.shape(x)[-1], 1)
            return self.token_emb(x) + self.pos_emb(positions)

    return TransformerBlock, TokenAndPositionEmbedding


def _build(init_seed, batch_seed):
    import keras

    keras.utils.set_random_seed(init_seed)
    TransformerBlock, TokenAndPositionEmbedding = _layers()
    x_train, y_train = _data.token_sequences(BATCH * 20, MAXLEN, VOCAB, seed=0)
    order = _data.np.random.default_rng(batch_seed).permutation(len(x_train))
    x_train, y_train = x_train[order], y_train[order]

    inputs = keras.layers.Input(shape=(MAXLEN,))
    x = TokenAndPositionEmbedding(MAXLEN, VOCAB, EMBED)(inputs)
    x = TransformerBlock(EMBED, HEADS, FF)(x)
    x = keras.layers.GlobalAveragePooling1D()(x)
    x = keras.layers.Dropout(0.1)(x)
    x = keras.layers.Dense(20, activation="relu")(x)
    x = keras.layers.Dropout(0.1)(x)
    outputs = keras.layers.Dense(2, activation="softmax")(x)
    model = keras.Model(inputs=inputs, outputs=outputs)
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    return model, x_train, y_train


def train(steps=STEPS, seed=0):
    init_seed, batch_seed, ctx = _data.seeds(seed)
    model, x, y = _build(init_seed, batch_seed)
    x_fit, y_fit = _data.take(steps * BATCH, x, y)
    model.fit(x_fit, y_fit, batch_size=BATCH, epochs=1, shuffle=False, verbose=0)
    return _data.result(model.get_weights(), model.predict(x[:BATCH], verbose=0), ctx, steps, y[:BATCH])


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
    _data.main("transformer_encoder", train, STEPS)


if __name__ == "__main__":
    main()
