"""Follows: keras-team/keras-io examples/generative/dcgan_overriding_train_step.py (and the GAN
         at the end of guides/custom_train_step_in_tensorflow.py, its Keras 3 form).
Keeps: a strided Conv2D + LeakyReLU discriminator ending in GlobalMaxPooling2D and Dense(1),
       a Dense -> Reshape -> Conv2DTranspose x2 -> Conv2D(sigmoid) generator, a GAN Model whose
       compile() takes d_optimizer, g_optimizer and loss_fn, a train_step that samples latent
       vectors with keras.random.normal from a SeedGenerator, trains the discriminator on
       generated + real images with noisy labels, then the generator through the frozen
       discriminator with misleading labels, Mean trackers for d_loss and g_loss, Adam(3e-4)
       for both, BinaryCrossentropy(from_logits=True), fit on a tf.data pipeline.
Changes: scikit-learn's bundled 8x8 digits, upsampled to 16x16, instead of the MNIST
       download (so the generator upsamples 4x4 -> 16x16), 64 filters at most, latent_dim 32,
       a tf.data pipeline whose order comes from a seeded numpy permutation instead of
       Dataset.shuffle, STEPS batches, no image-saving callback.

DCGAN trained with fit() by overriding Model.train_step: two optimizers, two tapes per step.
"""

import os
import sys

import numpy as np

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data  # noqa: E402

NAME = "dcgan_train_step"
STEPS = 15
EXPECT = dict(
    varies_stock=False,
    varying_ops=(),
    patch_reproduces=True,
)

LATENT, BATCH = 32, 64


def digits():
    from sklearn.datasets import load_digits

    images = load_digits().images.astype("float32") / 16.0           # [1797, 8, 8] in [0, 1]
    return np.kron(images, np.ones((1, 2, 2), "float32"))[..., None]  # [1797, 16, 16, 1]


def build(seed):
    import keras
    import tensorflow as tf
    from keras import layers

    keras.utils.set_random_seed(seed)
    discriminator = keras.Sequential([
        keras.Input((16, 16, 1)),
        layers.Conv2D(32, 3, strides=2, padding="same"), layers.LeakyReLU(negative_slope=0.2),
        layers.Conv2D(64, 3, strides=2, padding="same"), layers.LeakyReLU(negative_slope=0.2),
        layers.GlobalMaxPooling2D(), layers.Dense(1),
    ], name="discriminator")
    generator = keras.Sequential([
        keras.Input((LATENT,)),
        layers.Dense(4 * 4 * 64), layers.LeakyReLU(negative_slope=0.2), layers.Reshape((4, 4, 64)),
        layers.Conv2DTranspose(64, 4, strides=2, padding="same"), layers.LeakyReLU(negative_slope=0.2),
        layers.Conv2DTranspose(64, 4, strides=2, padding="same"), layers.LeakyReLU(negative_slope=0.2),
        layers.Conv2D(1, 5, padding="same", activation="sigmoid"),
    ], name="generator")

    class GAN(keras.Model):
        def __init__(self, discriminator, generator, latent_dim):
            super().__init__()
            self.discriminator = discriminator
            self.generator = generator
            self.latent_dim = latent_dim
            self.d_loss_tracker = keras.metrics.Mean(name="d_loss")
            self.g_loss_tracker = keras.metrics.Mean(name="g_loss")
            self.seed_generator = keras.random.SeedGenerator(seed)

        @property
        def metrics(self):
            return [self.d_loss_tracker, self.g_loss_tracker]

        def compile(self, d_optimizer, g_optimizer, loss_fn):
            super().compile()
            self.d_optimizer = d_optimizer
            self.g_optimizer = g_optimizer
            self.loss_fn = loss_fn

        def losses_of(self, real_images):
            """(d_loss, d_grads, g_loss, g_grads) of one step, before any update."""
            batch_size = tf.shape(real_images)[0]
            latent = keras.random.normal((batch_size, self.latent_dim), seed=self.seed_generator)
            combined = tf.concat([self.generator(latent), real_images], axis=0)
            labels = tf.concat([tf.ones((batch_size, 1)), tf.zeros((batch_size, 1))], axis=0)
            labels += 0.05 * keras.random.uniform(tf.shape(labels), seed=self.seed_generator)
            with tf.GradientTape() as tape:
                d_loss = self.loss_fn(labels, self.discriminator(combined))
            d_grads = tape.gradient(d_loss, self.discriminator.trainable_weights)
            return latent, d_loss, d_grads

        def generator_step(self, batch_size):
            latent = keras.random.normal((batch_size, self.latent_dim), seed=self.seed_generator)
            with tf.GradientTape() as tape:
                predictions = self.discriminator(self.generator(latent))
                g_loss = self.loss_fn(tf.zeros((batch_size, 1)), predictions)
            return g_loss, tape.gradient(g_loss, self.generator.trainable_weights)

        def train_step(self, real_images):
            _, d_loss, d_grads = self.losses_of(real_images)
            self.d_optimizer.apply(d_grads, self.discriminator.trainable_weights)
            g_loss, g_grads = self.generator_step(tf.shape(real_images)[0])
            self.g_optimizer.apply(g_grads, self.generator.trainable_weights)
            self.d_loss_tracker.update_state(d_loss)
            self.g_loss_tracker.update_state(g_loss)
            return {"d_loss": self.d_loss_tracker.result(), "g_loss": self.g_loss_tracker.result()}

    gan = GAN(discriminator, generator, LATENT)
    gan.compile(d_optimizer=keras.optimizers.Adam(3e-4), g_optimizer=keras.optimizers.Adam(3e-4),
                loss_fn=keras.losses.BinaryCrossentropy(from_logits=True))
    return gan


def dataset(seed, steps):
    import tensorflow as tf

    images = digits()
    order = np.concatenate([np.random.default_rng(seed).permutation(len(images))
                            for _ in range(steps * BATCH // len(images) + 1)])
    return tf.data.Dataset.from_tensor_slices(images[order[:steps * BATCH]]).batch(BATCH).prefetch(2)


def train(steps=STEPS, seed=0, batch_seed=None):
    gan = build(seed)
    gan.fit(dataset(seed if batch_seed is None else batch_seed, steps), epochs=1, verbose=0)
    latent = np.random.default_rng(1234).normal(size=(16, LATENT)).astype("float32")
    out = {"w%03d" % i: w for i, w in enumerate(gan.discriminator.get_weights() + gan.generator.get_weights())}
    out["pred"] = gan.generator.predict(latent, verbose=0).reshape(16, -1)
    return out


def first_step(seed=0):
    gan = build(seed)
    real = digits()[np.random.default_rng(seed).permutation(1797)[:BATCH]]
    _, d_loss, d_grads = gan.losses_of(real)
    g_loss, g_grads = gan.generator_step(BATCH)
    out = {"loss": np.array([float(d_loss), float(g_loss)], "float32")}
    out.update({"g%03d" % i: g.numpy() for i, g in enumerate(list(d_grads) + list(g_grads))})
    return out


def scan_target():
    import tensorflow as tf

    gan = build(0)
    return tf.function(gan.train_step), (digits()[:BATCH],)


def main(argv=None):
    _data.main_with_context(NAME, train, STEPS, argv)


if __name__ == "__main__":
    main()
