"""Follows: keras-team/keras-io examples/structured_data/collaborative_filtering_movielens.py
Keeps: RecommenderNet, a subclassed keras.Model with user and movie Embeddings (he_normal,
    l2 1e-6) and one-wide bias Embeddings, a Dot of the two vectors plus the biases through a
    sigmoid, BinaryCrossentropy on ratings scaled to [0, 1], Adam(0.001), model.fit on
    (user, movie) pairs.
Changes: generated MovieLens-like ratings (_data.ratings, 300 users, 500 movies, popular
    movies recurring) instead of the ml-latest-small download; embeddings of 16, batches of
    256, STEPS batches.
"""

import os
import sys

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data

STEPS = 20
BATCH, USERS, MOVIES, EMBEDDING_SIZE = 256, 300, 500, 16
EXPECT = dict(varies_stock=False, varying_ops=(), patch_reproduces=True)


def _model_class():
    import keras

    class RecommenderNet(keras.Model):
        def __init__(self, num_users, num_movies, embedding_size, **kwargs):
            super().__init__(**kwargs)
            self.user_embedding = keras.layers.Embedding(num_users, embedding_size, embeddings_initializer="he_normal",
                                                         embeddings_regularizer=keras.regularizers.l2(1e-6))
            self.user_bias = keras.layers.Embedding(num_users, 1)
            self.movie_embedding = keras.layers.Embedding(num_movies, embedding_size,
                                                          embeddings_initializer="he_normal",
                                                          embeddings_regularizer=keras.regularizers.l2(1e-6))
            self.movie_bias = keras.layers.Embedding(num_movies, 1)
            self.dot = keras.layers.Dot(axes=1)

        def call(self, inputs):
            user_vector = self.user_embedding(inputs[:, 0])
            user_bias = self.user_bias(inputs[:, 0])
            movie_vector = self.movie_embedding(inputs[:, 1])
            movie_bias = self.movie_bias(inputs[:, 1])
            x = self.dot([user_vector, movie_vector]) + user_bias + movie_bias
            return keras.ops.sigmoid(x)

    return RecommenderNet


def _build(init_seed, batch_seed):
    import keras

    keras.utils.set_random_seed(init_seed)
    user, movie, rating = _data.ratings(BATCH * 40, USERS, MOVIES, seed=0)
    x = _data.np.stack([user, movie], axis=1)
    order = _data.np.random.default_rng(batch_seed).permutation(len(x))
    x, y = x[order], rating[order]
    model = _model_class()(USERS, MOVIES, EMBEDDING_SIZE)
    model(x[:2])
    model.compile(loss=keras.losses.BinaryCrossentropy(), optimizer=keras.optimizers.Adam(learning_rate=0.001))
    return model, x, y


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
    _data.main("recommender", train, STEPS)


if __name__ == "__main__":
    main()
