"""Follows: keras-team/keras-io examples/generative/vae.py
Keeps: a Sampling layer (z = mean + exp(log_var / 2) * epsilon, epsilon from
       keras.random.normal with a SeedGenerator), a strided Conv2D encoder with Dense z_mean
       and z_log_var heads and a 2-dimensional latent space, a Dense -> Reshape ->
       Conv2DTranspose decoder ending in a sigmoid, a VAE Model whose train_step computes
       the reconstruction loss (binary cross-entropy summed over pixels) plus the KL term
       under one GradientTape, Mean trackers for the three losses, Adam, fit on arrays.
Changes: scikit-learn's bundled 8x8 digits, upsampled to 16x16, instead of the MNIST
       download (the decoder starts from 4x4), batch 64, STEPS batches in a seeded order,
       no latent-space plots.

Convolutional variational autoencoder with a sampling layer and a custom train_step.
"""

import os
import sys

import numpy as np

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data  # noqa: E402

NAME = "vae_train_step"
STEPS = 20
EXPECT = dict(
    varies_stock=False,
    varying_ops=(),
    patch_reproduces=True,
)

LATENT, BATCH = 2, 64


def digits():
    from sklearn.datasets import load_digits

    images = load_digits().images.astype("float32") / 16.0
    return np.kron(images, np.ones((1, 2, 2), "float32"))[..., None]   # [1797, 16, 16, 1]


def build(seed):
    import keras
    import tensorflow as tf
    from keras import layers

    keras.utils.set_random_seed(seed)

    class Sampling(layers.Layer):
        """Uses (z_mean, z_log_var) to sample z, the vector encoding a digit."""

        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.seed_generator = keras.random.SeedGenerator(seed)

        def call(self, inputs):
            z_mean, z_log_var = inputs
            epsilon = keras.random.normal(tf.shape(z_mean), seed=self.seed_generator)
            return z_mean + tf.exp(0.5 * z_log_var) * epsilon

    encoder_inputs = keras.Input((16, 16, 1))
    x = layers.Conv2D(32, 3, activation="relu", strides=2, padding="same")(encoder_inputs)
    x = layers.Conv2D(64, 3, activation="relu", strides=2, padding="same")(x)
    x = layers.Dense(16, activation="relu")(layers.Flatten()(x))
    z_mean = layers.Dense(LATENT, name="z_mean")(x)
    z_log_var = layers.Dense(LATENT, name="z_log_var")(x)
    encoder = keras.Model(encoder_inputs, [z_mean, z_log_var, Sampling()([z_mean, z_log_var])], name="encoder")

    latent_inputs = keras.Input((LATENT,))
    x = layers.Reshape((4, 4, 64))(layers.Dense(4 * 4 * 64, activation="relu")(latent_inputs))
    x = layers.Conv2DTranspose(64, 3, activation="relu", strides=2, padding="same")(x)
    x = layers.Conv2DTranspose(32, 3, activation="relu", strides=2, padding="same")(x)
    decoder = keras.Model(latent_inputs, layers.Conv2DTranspose(1, 3, activation="sigmoid", padding="same")(x),
                          name="decoder")

    class VAE(keras.Model):
        def __init__(self, encoder, decoder, **kwargs):
            super().__init__(**kwargs)
            self.encoder = encoder
            self.decoder = decoder
            self.total_loss_tracker = keras.metrics.Mean(name="total_loss")
            self.reconstruction_loss_tracker = keras.metrics.Mean(name="reconstruction_loss")
            self.kl_loss_tracker = keras.metrics.Mean(name="kl_loss")

        @property
        def metrics(self):
            return [self.total_loss_tracker, self.reconstruction_loss_tracker, self.kl_loss_tracker]

        def losses_of(self, data):
            z_mean, z_log_var, z = self.encoder(data)
            reconstruction = self.decoder(z)
            reconstruction_loss = tf.reduce_mean(tf.reduce_sum(
                keras.losses.binary_crossentropy(data, reconstruction), axis=(1, 2)))
            kl_loss = -0.5 * (1 + z_log_var - tf.square(z_mean) - tf.exp(z_log_var))
            kl_loss = tf.reduce_mean(tf.reduce_sum(kl_loss, axis=1))
            return reconstruction_loss + kl_loss, reconstruction_loss, kl_loss

        def train_step(self, data):
            if isinstance(data, tuple):
                data = data[0]
            with tf.GradientTape() as tape:
                total_loss, reconstruction_loss, kl_loss = self.losses_of(data)
            grads = tape.gradient(total_loss, self.trainable_weights)
            self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
            self.total_loss_tracker.update_state(total_loss)
            self.reconstruction_loss_tracker.update_state(reconstruction_loss)
            self.kl_loss_tracker.update_state(kl_loss)
            return {m.name: m.result() for m in self.metrics}

        def call(self, x):
            return self.decoder(self.encoder(x)[2])

    vae = VAE(encoder, decoder)
    vae.compile(optimizer=keras.optimizers.Adam())
    return vae


def ordered(seed, steps):
    images = digits()
    order = np.concatenate([np.random.default_rng(seed).permutation(len(images))
                            for _ in range(steps * BATCH // len(images) + 1)])
    return images[order[:steps * BATCH]]


def train(steps=STEPS, seed=0, batch_seed=None):
    vae = build(seed)
    vae.fit(ordered(seed if batch_seed is None else batch_seed, steps), batch_size=BATCH, epochs=1,
            shuffle=False, verbose=0)
    out = {"w%03d" % i: w for i, w in enumerate(vae.get_weights())}
    out["pred"] = vae.encoder.predict(digits()[:200], verbose=0)[0]       # z_mean of fixed digits
    return out


def first_step(seed=0):
    import tensorflow as tf

    vae = build(seed)
    batch = ordered(seed, 1)
    with tf.GradientTape() as tape:
        loss = vae.losses_of(batch)[0]
    grads = tape.gradient(loss, vae.trainable_weights)
    out = {"loss": loss.numpy()}
    out.update({"g%03d" % i: g.numpy() for i, g in enumerate(grads)})
    return out


def scan_target():
    import tensorflow as tf

    vae = build(0)
    return tf.function(vae.train_step), (digits()[:BATCH],)


def main(argv=None):
    _data.main_with_context(NAME, train, STEPS, argv)


if __name__ == "__main__":
    main()
