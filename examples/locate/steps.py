"""Training steps with one order-dependent op each on a CPU, as importable
functions (tfdet.locate and assert_reproducible run them in fresh processes;
tests/locate and test_steps_reproduce.py use them). crop_step.py and
scatter_step.py beside this file are the same steps as programs."""

import numpy as np


def crop_and_resize_step(steps=3):
    """The only order-dependent op: CropAndResizeGradImage (many boxes add into the same pixels)."""
    import tensorflow as tf

    rng = np.random.RandomState(0)
    corners = rng.uniform(0, 1, (8000, 2, 2))
    boxes = tf.constant(np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1), tf.float32)
    box_indices = tf.constant(rng.randint(0, 4, 8000), tf.int32)
    images = tf.Variable(rng.standard_normal((4, 64, 64, 4)).astype(np.float32))

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            crops = tf.image.crop_and_resize(images, boxes, box_indices, [8, 8])  # CROP LINE
            loss = tf.reduce_sum(crops ** 2)
        images.assign_sub(1e-6 * tape.gradient(loss, images))
        return loss

    for _ in range(steps):
        train_step()
    return float(tf.reduce_sum(images))


def scatter_add_step(steps=3):
    """The only order-dependent op: ResourceScatterAdd with repeated indices."""
    import tensorflow as tf

    rng = np.random.RandomState(0)
    rows, n = 4000, 200000
    indices = tf.constant(rng.randint(0, rows, n), tf.int32)
    updates = tf.constant(rng.standard_normal((n, 8)).astype(np.float32))
    table = tf.Variable(rng.standard_normal((rows, 8)).astype(np.float32))

    @tf.function
    def train_step():
        table.scatter_add(tf.IndexedSlices(updates * 0.01, indices))  # SCATTER LINE
        return tf.reduce_sum(table)

    for _ in range(steps):
        train_step()
    return float(tf.reduce_sum(table))


def deterministic_step(steps=3):
    """Nothing order-dependent: a dense layer's gradient step."""
    import tensorflow as tf

    rng = np.random.RandomState(0)
    x = tf.constant(rng.standard_normal((64, 16)).astype(np.float32))
    w = tf.Variable(rng.standard_normal((16, 4)).astype(np.float32))

    @tf.function
    def train_step():
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
        w.assign_sub(0.01 * tape.gradient(loss, w))
        return loss

    for _ in range(steps):
        train_step()
    return float(tf.reduce_sum(w))


def scatter_sub_step():
    """One stock Variable.scatter_sub with repeated indices, eagerly: its result
    differs in most runs on a multi-core CPU (ResourceScatterSub adds rows in
    the order its threads reach them)."""
    import tensorflow as tf

    rng = np.random.RandomState(0)
    indices = tf.constant(rng.randint(0, 1000, 200000), tf.int32)
    updates = tf.constant(rng.standard_normal((200000, 4)).astype(np.float32))
    table = tf.Variable(tf.zeros([1000, 4]))
    table.scatter_sub(tf.IndexedSlices(updates, indices))  # SCATTER SUB LINE
    return float(tf.reduce_sum(table))


def weighted_bincount_step():
    """One weighted tf.math.bincount, eagerly: it differs in a part of its runs
    only (about a third on a 2-core CPU), the case a few runs miss."""
    import tensorflow as tf

    rng = np.random.RandomState(0)
    values = tf.constant(rng.randint(0, 100, 100000), tf.int32)
    weights = tf.constant(rng.standard_normal(100000).astype(np.float32))
    return float(tf.reduce_sum(tf.math.bincount(values, weights=weights, minlength=100)))  # BINCOUNT LINE


def two_tables_step():
    """Two eager scatter_subs into two tables: two roots, both eager ops (the second
    is one of the result's other_roots)."""
    return scatter_sub_step() + scatter_sub_step()
