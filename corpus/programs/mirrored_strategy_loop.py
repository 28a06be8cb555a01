"""Follows: tensorflow/docs site/en/tutorials/distribute/custom_training.ipynb
Keeps: MirroredStrategy over the machine's devices, GLOBAL_BATCH_SIZE = per-replica batch x
       replicas, strategy.experimental_distribute_dataset, the model, optimizer and metrics
       created under strategy.scope(), a Conv2D/MaxPooling2D x2, Flatten, Dense(64), Dense(10)
       classifier with an L2 kernel regulariser, the per-example loss (reduction NONE)
       averaged with tf.nn.compute_average_loss over the global batch plus
       tf.nn.scale_regularization_loss of model.losses, Adam, train accuracy and test loss
       and accuracy metrics, train_step run on each replica by strategy.run inside a
       tf.function and the replicas' losses summed with strategy.reduce(SUM).
Changes: the CPU is split into 3 logical devices with tf.config.set_logical_device_configuration
       (before any op runs) so the strategy has replicas without GPUs; scikit-learn's bundled
       8x8 digits instead of Fashion-MNIST; 16 examples per replica; the order of the
       examples comes from a seeded numpy permutation; STEPS global batches.

Custom training loop under tf.distribute.MirroredStrategy on three logical CPU devices.
"""

import os
import sys

import numpy as np

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data  # noqa: E402

NAME = "mirrored_strategy_loop"
STEPS = 15
EXPECT = dict(
    varies_stock=False,
    varying_ops=(),
    patch_reproduces=True,
)

REPLICAS, PER_REPLICA = 3, 16
GLOBAL_BATCH = REPLICAS * PER_REPLICA


def logical_cpus():
    """Split the CPU into REPLICAS logical devices; it must happen before TF initialises its
    devices, so a process that already ran an op keeps the devices it has."""
    import tensorflow as tf

    cpu = tf.config.list_physical_devices("CPU")[0]
    try:
        tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * REPLICAS)
    except RuntimeError:
        pass
    devices = [d.name for d in tf.config.list_logical_devices("CPU")][:REPLICAS]
    if len(devices) < REPLICAS:   # said, not hidden: the run then has fewer replicas
        print("%s: TensorFlow's devices were set up before this program could split the CPU: "
              "%d replica(s), not %d" % (NAME, len(devices), REPLICAS), file=sys.stderr)
    return devices


def data():
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images / 16.0).astype("float32")[..., None]
    return x[:1500], digits.target[:1500].astype("int64"), x[1500:], digits.target[1500:].astype("int64")


def build(seed):
    devices = logical_cpus()
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(seed)
    strategy = tf.distribute.MirroredStrategy(devices)
    with strategy.scope():
        model = keras.Sequential([
            keras.Input((8, 8, 1)),
            keras.layers.Conv2D(32, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(64, 3, padding="same", activation="relu"),
            keras.layers.MaxPooling2D(),
            keras.layers.Flatten(),
            keras.layers.Dense(64, activation="relu", kernel_regularizer=keras.regularizers.L2(1e-4)),
            keras.layers.Dense(10),
        ])
        loss_object = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction=None)
        optimizer = keras.optimizers.Adam(1e-3)
        # its slots made here, under the scope: made by the first call of the tf.function
        # instead, TF 2.21 lifts them out through a cond that fails under the strategy
        optimizer.build(model.trainable_variables)
        train_accuracy = keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
        test_loss = keras.metrics.Mean(name="test_loss")
        test_accuracy = keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")

    def compute_loss(labels, predictions, model_losses):
        per_example_loss = loss_object(labels, predictions)
        loss = tf.nn.compute_average_loss(per_example_loss, global_batch_size=GLOBAL_BATCH)
        if model_losses:
            loss += tf.nn.scale_regularization_loss(tf.add_n(model_losses))
        return loss

    def train_step(inputs):
        images, labels = inputs
        with tf.GradientTape() as tape:
            predictions = model(images, training=True)
            loss = compute_loss(labels, predictions, model.losses)
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        train_accuracy.update_state(labels, predictions)
        return loss

    def test_step(inputs):
        images, labels = inputs
        predictions = model(images, training=False)
        test_loss.update_state(loss_object(labels, predictions))
        test_accuracy.update_state(labels, predictions)
        return predictions

    @tf.function
    def distributed_train_step(dataset_inputs):
        per_replica_losses = strategy.run(train_step, args=(dataset_inputs,))
        return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica_losses, axis=None)

    return strategy, model, compute_loss, distributed_train_step, test_step


def train(steps=STEPS, seed=0, batch_seed=None):
    import tensorflow as tf

    strategy, model, _, distributed_train_step, test_step = build(seed)
    x, y, x_test, y_test = data()
    order = np.concatenate([np.random.default_rng(seed if batch_seed is None else batch_seed).permutation(len(y))
                            for _ in range(steps * GLOBAL_BATCH // len(y) + 1)])[:steps * GLOBAL_BATCH]
    train_dataset = tf.data.Dataset.from_tensor_slices((x[order], y[order])).batch(GLOBAL_BATCH)
    for batch in strategy.experimental_distribute_dataset(train_dataset):
        distributed_train_step(batch)
    out = {"w%03d" % i: w for i, w in enumerate(model.get_weights())}
    out["pred"] = test_step((x_test, y_test)).numpy()
    return out


def first_step(seed=0):
    import tensorflow as tf

    _, model, compute_loss, _, _ = build(seed)
    x, y, _, _ = data()
    with tf.GradientTape() as tape:
        loss = compute_loss(y[:GLOBAL_BATCH], model(x[:GLOBAL_BATCH], training=True), model.losses)
    grads = tape.gradient(loss, model.trainable_variables)
    out = {"loss": loss.numpy()}
    out.update({"g%03d" % i: g.numpy() for i, g in enumerate(grads)})
    return out


def scan_target():
    strategy, _, _, distributed_train_step, _ = build(0)
    x, y, _, _ = data()
    import tensorflow as tf

    batch = next(iter(strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices((x[:GLOBAL_BATCH], y[:GLOBAL_BATCH])).batch(GLOBAL_BATCH))))
    return distributed_train_step, (batch,)


def main(argv=None):
    _data.main_with_context(NAME, train, STEPS, argv)


if __name__ == "__main__":
    main()
