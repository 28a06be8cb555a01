"""The built-in workloads: data and model of a small training that runs offline
on a CPU in seconds. Imported inside the training process; TensorFlow, Keras
and scikit-learn are imported inside the functions only.

Each workload's data is fixed (its own seed, never the run's): what varies
between runs is only what the condition says (init seed, batch-order seed)
and what the kernels do.
"""

from collections import namedtuple

Data = namedtuple("Data", "x_train y_train x_test y_test classes")

DATA_SEED = 20220101  # the workloads' data; never a run's seed


def digits_data(np):
    """scikit-learn's bundled 8x8 digits (1797 images, no download), 1400 to train, 397 to test."""
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        raise RuntimeError("the digits-cnn workload needs scikit-learn: pip install 'tfdet[diverge]'") from None
    digits = load_digits()
    order = np.random.default_rng(DATA_SEED).permutation(len(digits.target))
    x = (digits.images[order] / 16.0).astype("float32")[..., None]
    y = digits.target[order].astype("int32")
    return Data(x[:1400], y[:1400], x[1400:], y[1400:], 10)


def digits_model(keras):
    return keras.Sequential([
        keras.Input((8, 8, 1)),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dense(10),
    ])


def digits_augment_model(keras, seed=None):
    """digits-cnn with the two layers whose randomness is neither the
    initialisation nor the batch order: a random shift of up to one pixel
    (RandomTranslation) and Dropout. `seed` seeds both (tfdet compare's
    "augment" source); None: they follow keras.utils.set_random_seed (the init seed)."""
    return keras.Sequential([
        keras.Input((8, 8, 1)),
        keras.layers.RandomTranslation(0.125, 0.125, fill_mode="constant", seed=seed),
        keras.layers.Conv2D(16, 3, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.MaxPooling2D(2),
        keras.layers.Flatten(),
        keras.layers.Dropout(0.25, seed=None if seed is None else seed + 1),
        keras.layers.Dense(10),
    ])


# The embedding workload: token sequences of a vocabulary whose every token
# belongs to one of 4 hidden classes; a sequence's label is the class most of its
# tokens belong to (with a little noise). The model sums the sequence's
# embeddings (a bag of embeddings). The Embedding table's gradient is sparse
# (IndexedSlices over the batch's token ids, many of them repeated), and the
# update sums it into the table: on TF 2.21 CPU that sum is split over threads.
VOCAB, DIM, LENGTH, CLASSES, TRAIN, TEST = 2000, 32, 40, 4, 4096, 1024


def embedding_data(np):
    rng = np.random.default_rng(DATA_SEED)
    hidden = rng.integers(0, CLASSES, size=VOCAB)
    x = rng.integers(0, VOCAB, size=(TRAIN + TEST, LENGTH)).astype("int32")
    counts = np.stack([(hidden[x] == c).sum(axis=1) for c in range(CLASSES)], axis=1)
    y = np.argmax(counts + rng.normal(scale=0.3, size=counts.shape), axis=1).astype("int32")
    return Data(x[:TRAIN], y[:TRAIN], x[TRAIN:], y[TRAIN:], CLASSES)


def embedding_model(keras):
    return keras.Sequential([
        keras.Input((LENGTH,), dtype="int32"),
        keras.layers.Embedding(VOCAB, DIM),  # its gradient is sparse (IndexedSlices): a scatter update
        keras.layers.Lambda(lambda t: keras.ops.sum(t, axis=1)),
        keras.layers.Dense(CLASSES),
    ])


# cifar10-resnet18: the network of the study this command grew from, on a fixed
# subset of CIFAR-10 (the first CIFAR_TRAIN training and CIFAR_TEST test images in
# a fixed shuffle) so a CPU finishes an epoch in minutes; a GPU takes the whole set
# with TFDET_CIFAR_TRAIN=50000 TFDET_CIFAR_TEST=10000. Keras downloads CIFAR-10
# (about 170 MB) into ~/.keras/datasets the first time, and only when this workload
# is asked for: `tfdet diverge` fetches it once before the trainings start
# (cifar10_prefetch), so K runs do not race to download it. A cluster without
# network access reads an extracted copy from TFDET_CIFAR10_DIR instead.
CIFAR_TRAIN, CIFAR_TEST = 10000, 2000
CIFAR_SOURCE = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"


class DatasetUnavailable(RuntimeError):
    """A workload's data cannot be had here (offline and not cached)."""


CIFAR_FILES = tuple("data_batch_%d" % i for i in range(1, 6)) + ("test_batch",)


def cifar10_prefetch(log=None):
    """Make sure CIFAR-10 can be read here: $TFDET_CIFAR10_DIR holds its batches, or
    Keras's cache has it (downloaded now when not); a clear error otherwise."""
    import contextlib
    import os
    import sys

    local = os.environ.get("TFDET_CIFAR10_DIR")
    if local:
        missing = [name for name in CIFAR_FILES if not os.path.isfile(os.path.join(local, name))]
        if missing:
            raise DatasetUnavailable("TFDET_CIFAR10_DIR=%s: no %s there (it should hold the extracted "
                                     "cifar-10-batches-py: data_batch_1..5 and test_batch)" % (local, missing[0]))
        return
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import keras

    try:
        # Keras prints its download progress: to `log` (the command's err stream), as stdout may be --json
        with contextlib.redirect_stdout(log or sys.stderr):
            keras.datasets.cifar10.load_data()
    except Exception as exc:  # urllib, http, tarfile and Keras's own errors all mean: no data here
        raise DatasetUnavailable(
            "the cifar10-resnet18 workload needs CIFAR-10, which Keras downloads once (about 170 MB, from %s) "
            "into ~/.keras/datasets; it could not: %s: %s. Run it once with network access, point "
            "TFDET_CIFAR10_DIR at an extracted cifar-10-batches-py, or use the digits-cnn or embedding workload "
            "(no download)" % (CIFAR_SOURCE, type(exc).__name__, exc)) from None


def _read_cifar_batches(np, directory):
    """The extracted CIFAR-10 python batches (the format of the original tarball)."""
    import os
    import pickle

    def read(name):
        with open(os.path.join(directory, name), "rb") as handle:
            batch = pickle.load(handle, encoding="bytes")
        images = np.asarray(batch[b"data"], dtype="uint8").reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)
        return images, np.asarray(batch[b"labels"], dtype="int64").reshape(-1, 1)

    train = [read(name) for name in CIFAR_FILES[:-1]]
    return ((np.concatenate([x for x, _ in train]), np.concatenate([y for _, y in train])),
            read(CIFAR_FILES[-1]))


def cifar10_data(np):
    import os

    local = os.environ.get("TFDET_CIFAR10_DIR")
    if local:
        (x_train, y_train), (x_test, y_test) = _read_cifar_batches(np, local)
    else:
        import keras

        (x_train, y_train), (x_test, y_test) = keras.datasets.cifar10.load_data()
    train_size = int(os.environ.get("TFDET_CIFAR_TRAIN", CIFAR_TRAIN))
    test_size = int(os.environ.get("TFDET_CIFAR_TEST", CIFAR_TEST))
    rng = np.random.default_rng(DATA_SEED)
    train = rng.permutation(len(y_train))[:train_size]
    test = rng.permutation(len(y_test))[:test_size]
    scale = lambda x: (x.astype("float32") / 255.0 - 0.5) / 0.25  # noqa: E731
    return Data(scale(x_train[train]), y_train[train, 0].astype("int32"),
                scale(x_test[test]), y_test[test, 0].astype("int32"), 10)


def resnet18_model(keras):
    """ResNet-18 for 32x32 images (He et al. 2016; the CIFAR variant: a 3x3 stem, no
    stem pooling): four stages of two basic blocks, 64-128-256-512 filters, batch
    normalisation, global average pooling, a dense classifier. 11.2M parameters."""
    layers = keras.layers

    def block(x, filters, stride):
        shortcut = x
        y = layers.Conv2D(filters, 3, strides=stride, padding="same", use_bias=False)(x)
        y = layers.ReLU()(layers.BatchNormalization()(y))
        y = layers.Conv2D(filters, 3, padding="same", use_bias=False)(y)
        y = layers.BatchNormalization()(y)
        if stride != 1 or shortcut.shape[-1] != filters:
            shortcut = layers.Conv2D(filters, 1, strides=stride, use_bias=False)(shortcut)
            shortcut = layers.BatchNormalization()(shortcut)
        return layers.ReLU()(layers.Add()([y, shortcut]))

    inputs = keras.Input((32, 32, 3))
    x = layers.Conv2D(64, 3, padding="same", use_bias=False)(inputs)
    x = layers.ReLU()(layers.BatchNormalization()(x))
    for filters, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        x = block(x, filters, stride)
        x = block(x, filters, 1)
    x = layers.GlobalAveragePooling2D()(x)
    return keras.Model(inputs, layers.Dense(10)(x), name="resnet18")


# lrs: the default sweep, where the default 5 epochs of plain SGD train the model well
# above chance (a model that learned nothing "disagrees" about nearly everything).
# augmented: model(keras, seed) takes the seed of its augmentation and dropout layers.
Workload = namedtuple("Workload", "name data model description lrs batch_size augmented", defaults=(False,))

WORKLOADS = {
    "digits-cnn": Workload("digits-cnn", digits_data, digits_model,
                           "a small CNN on scikit-learn's bundled 8x8 digits (10 classes)", (0.05, 0.1), 32),
    "digits-augment": Workload("digits-augment", digits_data, digits_augment_model,
                               "digits-cnn with a random one-pixel shift and Dropout(0.25) (their seed: "
                               "tfdet compare's augment source)", (0.05, 0.1), 32, augmented=True),
    "embedding": Workload("embedding", embedding_data, embedding_model,
                          "Embedding(2000x32), summed, + dense on synthetic token sequences (4 classes)",
                          (0.1, 1.0), 128),
    "cifar10-resnet18": Workload("cifar10-resnet18", cifar10_data, resnet18_model,
                                 "ResNet-18 on a fixed 10000/2000-image subset of CIFAR-10 (downloads 170 MB "
                                 "once; minutes per epoch on a CPU)", (0.01, 0.05), 128),
}
WORKLOAD_NAMES = tuple(WORKLOADS)


def train(tf, np, keras, workload, init_seed, batch_seed, lr, momentum, epochs, batch_size, data_seed=None,
          augment_seed=None):
    """Train once; the result dict: logits on the test set, test labels, final
    weights, and timing (seconds of the whole loop, median seconds per step
    after the first, which includes tracing). data_seed (tfdet compare's "data"
    source): train on a bootstrap resample of the training set, drawn with that
    seed; the test set stays the same. augment_seed (its "augment" source):
    the seed of an augmented workload's augmentation and dropout layers."""
    import time

    data = workload.data(np)
    if data_seed is not None:
        resample = np.random.default_rng(data_seed).integers(0, len(data.y_train), len(data.y_train))
        data = data._replace(x_train=data.x_train[resample], y_train=data.y_train[resample])
    keras.utils.set_random_seed(init_seed)  # the initialisation (and any other Python/numpy/TF randomness)
    model = workload.model(keras, augment_seed) if workload.augmented else workload.model(keras)
    optimizer = keras.optimizers.SGD(learning_rate=lr, momentum=momentum)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        gradients = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(gradients, model.trainable_variables))
        return loss

    order_rng = np.random.default_rng(batch_seed)
    n = len(data.y_train)
    step_seconds, losses = [], []
    started = time.perf_counter()
    for _ in range(epochs):
        order = order_rng.permutation(n)
        for begin in range(0, n - batch_size + 1, batch_size):  # full batches only: one traced shape
            index = order[begin:begin + batch_size]
            t0 = time.perf_counter()
            losses.append(float(step(tf.constant(data.x_train[index]), tf.constant(data.y_train[index]))))
            step_seconds.append(time.perf_counter() - t0)
    total = time.perf_counter() - started
    logits = np.asarray(model(tf.constant(data.x_test), training=False))
    return {
        "logits": logits,
        "labels": data.y_test,
        "weights": [np.asarray(w) for w in model.get_weights()],
        "seconds_total": total,
        "seconds_per_step": float(np.median(step_seconds[1:] or step_seconds)) if step_seconds else 0.0,
        "steps": len(step_seconds),
        "final_loss": losses[-1] if losses else None,
        "classes": data.classes,
    }
