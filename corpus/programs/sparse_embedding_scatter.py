"""Follows: tensorflow/docs site/en/tutorials/text/word2vec.ipynb (skip-gram pairs with a
         window, num_ns negative contexts per pair, target and context embedding tables,
         dot products of the target with its 1 + num_ns contexts, softmax cross-entropy
         with the true context first).
Keeps: the two embedding tables, the einsum of target and contexts, the categorical
       cross-entropy over 1 + num_ns logits, skip-gram pairs from a window of 2 and 4
       negatives drawn from a Zipf-like (log-uniform) distribution, mini-batches of pairs.
Changes: the optimizer step is written out as the sparse SGD update embedding code does
       by hand: the gradient of a lookup is an IndexedSlices with one row per looked-up
       id (repeated ids repeat), applied with tf.Variable.scatter_sub to the target table
       and tf.compat.v1.scatter_sub to the context table (both ResourceScatterSub); a
       synthetic Markov-chain corpus over a 1,000-word Zipf vocabulary instead of
       Shakespeare; a tf.function step instead of Model.fit.

Skip-gram word2vec with negative sampling, its embedding tables updated sparsely by scatter.
"""

import os
import sys

import numpy as np

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data  # noqa: E402

NAME = "sparse_embedding_scatter"
STEPS = 20
# locate's calls train every step, not 3: at 3 steps (6 scatters a call) `tox -e corpus` once saw
# no difference in 20 calls at load 12, where the scatter's threads race less often
LOCATE_STEPS = STEPS
EXPECT = dict(
    varies_stock=True,
    varying_ops=("ResourceScatterSub",),
    patch_reproduces=True,
)

VOCAB, DIM, NUM_NS, WINDOW, BATCH = 1000, 64, 4, 2, 1024


def corpus_pairs(rng, tokens=40000):
    """(target, context) skip-gram pairs of a synthetic corpus: a Zipf vocabulary where
    each word prefers a few followers, so the embeddings have something to learn."""
    ranks = np.arange(1, VOCAB + 1)
    zipf = (1.0 / ranks) / np.sum(1.0 / ranks)
    followers = rng.integers(0, VOCAB, size=(VOCAB, 3))
    text = np.empty(tokens, "int64")
    text[0] = 0
    choices = rng.random(tokens)
    fresh = rng.choice(VOCAB, size=tokens, p=zipf)
    picks = rng.integers(0, 3, size=tokens)
    for i in range(1, tokens):
        text[i] = followers[text[i - 1], picks[i]] if choices[i] < 0.6 else fresh[i]
    targets, contexts = [], []
    for offset in range(-WINDOW, WINDOW + 1):
        if offset:
            lo, hi = max(0, -offset), tokens - max(0, offset)
            targets.append(text[lo:hi])
            contexts.append(text[lo + offset:hi + offset])
    return np.concatenate(targets), np.concatenate(contexts)


def log_uniform(rng, shape):
    """Negatives as tf.random.log_uniform_candidate_sampler draws them (P(k) ~ log((k+2)/(k+1)))."""
    draws = np.exp(rng.random(shape) * np.log(VOCAB + 1)) - 1
    return np.clip(draws.astype("int64"), 0, VOCAB - 1)


def batches(seed):
    """Shuffled mini-batches of (target [B], contexts [B, 1 + num_ns]); context 0 is the true one."""
    targets, contexts = corpus_pairs(np.random.default_rng(2024))   # fixed data
    rng = np.random.default_rng(seed)
    while True:
        order = rng.permutation(len(targets))
        for start in range(0, len(order) - BATCH + 1, BATCH):
            pick = order[start:start + BATCH]
            negatives = log_uniform(rng, (BATCH, NUM_NS))
            yield targets[pick], np.concatenate([contexts[pick, None], negatives], axis=1)


def build(seed):
    import tensorflow as tf

    tf.random.set_seed(seed)
    rng = np.random.default_rng(seed)
    target_embedding = tf.Variable(rng.uniform(-0.05, 0.05, (VOCAB, DIM)).astype("float32"),
                                   name="w2v_embedding")
    context_embedding = tf.Variable(rng.uniform(-0.05, 0.05, (VOCAB, DIM)).astype("float32"),
                                    name="context_embedding")
    learning_rate = 0.5

    def loss_of(target, context):
        word_emb = tf.gather(target_embedding, target)            # [B, DIM]
        context_emb = tf.gather(context_embedding, context)       # [B, 1 + NS, DIM]
        dots = tf.einsum("be,bce->bc", word_emb, context_emb)
        labels = tf.one_hot(tf.zeros_like(target), 1 + NUM_NS)
        return tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels, dots))

    @tf.function
    def train_step(target, context):
        with tf.GradientTape() as tape:
            loss = loss_of(target, context)
        grad_target, grad_context = tape.gradient(loss, [target_embedding, context_embedding])
        # Both gradients are IndexedSlices: one row per looked-up id, repeated ids repeated.
        target_embedding.scatter_sub(
            tf.IndexedSlices(learning_rate * grad_target.values, grad_target.indices))
        tf.compat.v1.scatter_sub(context_embedding, grad_context.indices,
                                 learning_rate * grad_context.values)
        return loss

    return [target_embedding, context_embedding], loss_of, train_step


def train(steps=STEPS, seed=0, batch_seed=None):
    variables, loss_of, train_step = build(seed)
    stream = batches(seed if batch_seed is None else batch_seed)
    for _ in range(steps):
        train_step(*next(stream))
    import tensorflow as tf

    probe = np.arange(0, VOCAB, 50)
    scores = tf.matmul(tf.gather(variables[0], probe), variables[1], transpose_b=True)
    out = {"w%03d" % i: v.numpy() for i, v in enumerate(variables)}
    out["pred"] = scores.numpy()
    return out


def first_step(seed=0):
    import tensorflow as tf

    variables, loss_of, _ = build(seed)
    target, context = next(batches(seed))
    with tf.GradientTape() as tape:
        loss = loss_of(target, context)
    grads = tape.gradient(loss, variables)
    out = {"loss": loss.numpy()}
    out.update({"g%03d" % i: tf.convert_to_tensor(g).numpy() for i, g in enumerate(grads)})
    return out


def scan_target():
    _, _, train_step = build(0)
    return train_step, next(batches(0))


def main(argv=None):
    _data.main_with_context(NAME, train, STEPS, argv)


if __name__ == "__main__":
    main()
