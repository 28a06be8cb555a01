"""A small training run that uses ops tfdet replaces on this machine (weighted
bincount) and gather backprop; prints a digest of the trained weights.

    python train_script.py patched|stock

The weighted bincount sums 8e6 elements in one call: long enough that TF's CPU
kernel shards it over both pool threads, whose partial sums then meet in a
varying order (the probe measured about half of such calls differing on two
busy cores); 30 steps make an unpatched run's digest vary almost always.
"""

import hashlib
import sys
import warnings

import numpy as np
import tensorflow as tf

if sys.argv[1:] == ["patched"]:
    import tfdet

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tfdet.patch(seed=0)
else:
    tf.random.set_seed(0)

rng = np.random.RandomState(0)
n, vocab = 8000000, 1000
ids = tf.constant(rng.randint(0, vocab, n).astype(np.int32))
strengths = tf.constant((rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 3, n)).astype(np.float32))
targets = tf.constant(rng.standard_normal((vocab, 1)).astype(np.float32))
embedding = tf.Variable(tf.random.normal((vocab, 8), seed=1))
kernel = tf.Variable(tf.random.normal((9, 1), seed=2))


@tf.function
def step():
    with tf.GradientTape() as tape:
        counts = tf.math.bincount(ids, weights=strengths, minlength=vocab)  # a sum over shared bins
        rows = tf.gather(embedding, ids[:5000] % vocab)  # gather backprop densifies repeated ids
        pooled = tf.math.unsorted_segment_mean(rows, ids[:5000] % vocab, vocab)
        # scaled into [-1, 1] and kept linear, so a last-bit change in a bin reaches the weights
        features = tf.concat([pooled, (counts / (tf.reduce_max(tf.abs(counts)) + 1.0))[:, None]], axis=1)
        loss = tf.reduce_mean((tf.matmul(features, kernel) - targets) ** 2)
    grads = tape.gradient(loss, [embedding, kernel])
    for variable, grad in zip([embedding, kernel], grads):
        variable.assign_sub(0.05 * tf.convert_to_tensor(grad))
    return loss


for _ in range(30):
    step()
weights = [embedding.numpy(), kernel.numpy()]
assert all(np.isfinite(w).all() for w in weights), "the training diverged: a digest of NaNs proves nothing"
digest = hashlib.sha256(embedding.numpy().tobytes() + kernel.numpy().tobytes()).hexdigest()
print("WEIGHTS " + digest)
