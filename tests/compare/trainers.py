"""Two tiny trainings for tfdet compare's end-to-end test (top-level functions:
each training imports this file in a fresh process). A bag-of-tokens classifier
whose table is updated with Variable.scatter_sub over repeated token ids (a
real varying op on CPU); the two setups differ by learning rate."""

import numpy as np

VOCAB, LENGTH, CLASSES, TRAIN, TEST = 300, 12, 3, 600, 200


def data():
    rng = np.random.default_rng(7)
    hidden = rng.integers(0, CLASSES, VOCAB)
    x = rng.integers(0, VOCAB, (TRAIN + TEST, LENGTH))
    y = np.argmax(np.stack([(hidden[x] == c).sum(1) for c in range(CLASSES)], 1) + rng.normal(0, .3, (len(x), 3)), 1)
    return x[:TRAIN], y[:TRAIN], x[TRAIN:], y[TRAIN:]


def labels():
    return data()[3]


def _train(lr, init_seed, batch_seed, steps=60, batch=50):
    import tensorflow as tf

    x_train, y_train, x_test, _ = data()
    table = tf.Variable(np.random.default_rng(init_seed).normal(0, 0.1, (VOCAB, CLASSES)).astype("float32"))
    order = np.random.default_rng(batch_seed)
    for _ in range(steps):
        index = order.integers(0, TRAIN, batch)
        tokens, y = tf.constant(x_train[index]), tf.constant(y_train[index])
        with tf.GradientTape() as tape:
            logits = tf.reduce_sum(tf.gather(table, tokens), axis=1)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits))
        grad = tape.gradient(loss, table)  # IndexedSlices over repeated token ids
        table.scatter_sub(tf.IndexedSlices(lr * grad.values, grad.indices))
    logits = tf.reduce_sum(tf.gather(table, tf.constant(x_test)), axis=1).numpy()
    return logits, [table.numpy()]


def train_fast(init_seed, batch_seed):
    return _train(0.5, init_seed, batch_seed)


def train_slow(init_seed, batch_seed):
    return _train(0.002, init_seed, batch_seed)


def train_drawn(init_seed, batch_seed):
    """The learning rate tfdet compare drew for this pair (the hparams source)."""
    import tfdet.diverge

    return _train(tfdet.diverge.context().hparams["lr"], init_seed, batch_seed)
