"""Follows: tensorflow/tensorflow tensorflow/examples/tutorials/word2vec/word2vec_basic.py
         (Step 3 generate_batch, Step 4 the graph, Step 5 the Session training loop).
Keeps: a graph built under tf.Graph().as_default() with int32 placeholders for the batch
       and its labels, reference (non-resource) variables as TF1 made them, the embedding
       looked up with tf.nn.embedding_lookup, tf.compat.v1.nn.nce_loss with 64 sampled
       negatives, tf.compat.v1.train.GradientDescentOptimizer(1.0).minimize (whose update of
       the embedding and NCE tables is sparse: ScatterSub on the reference variables, one
       row per looked-up id), the cosine-similarity op on normalised embeddings, the graph
       seed, and session.run([optimizer, loss], feed_dict) per step.
Changes: a synthetic Markov-chain corpus over a 2,000-word Zipf vocabulary instead of the
       text8 download, generate_batch reads it with a fixed skip window and num_skips from
       a seeded numpy generator, 128-wide embeddings, no summaries, saver or t-SNE plot.

TF1-style skip-gram word2vec: a tf.compat.v1 graph of placeholders, NCE loss, Session.run.
"""

import math
import os
import sys

import numpy as np

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data  # noqa: E402

NAME = "tf1_word2vec_session"
STEPS = 20
# Measured with the harness (python -m corpus.harness --programs tf1_word2vec_session
# --promises a,b): two stock processes ended in different weights. The optimizer's sparse
# update into the reference variables is ScatterSub, whose CPU kernel adds repeated rows in
# parallel (catalogue: ref-variable-scatter); under op determinism (tfdet.patch()) it runs
# serially, and 3 patched processes end in the same bits.
# tfdet locate (and assert_reproducible, built on it) fingerprint eager ops and tf.function
# graphs, not the ops a Session runs (docs/topics/locate.md, "Not instrumented: ... TF1
# sessions"): d and e end in its documented "nothing to compare" error (exit 3, LocateError).
EXPECT = dict(
    varies_stock=True,
    varying_ops=("ScatterSub",),
    patch_reproduces=True,
    reason="tfdet locate does not instrument TF1 sessions",
    outcomes={"d": "nothing to compare:", "e": "nothing to compare:"},
)

VOCAB, EMBED, BATCH, SKIP_WINDOW, NUM_SKIPS, NUM_SAMPLED = 2000, 128, 1024, 1, 2, 64
VALID = np.arange(0, 100, 7)        # words whose neighbours are the "prediction"


def make_text(tokens=50000):
    """A fixed synthetic corpus: Zipf-distributed words, each preferring a few followers."""
    rng = np.random.default_rng(99)
    ranks = np.arange(1, VOCAB + 1)
    zipf = (1.0 / ranks) / np.sum(1.0 / ranks)
    followers = rng.integers(0, VOCAB, size=(VOCAB, 4))
    fresh = rng.choice(VOCAB, size=tokens, p=zipf)
    follow = rng.random(tokens) < 0.5
    picks = rng.integers(0, 4, size=tokens)
    text = np.empty(tokens, "int32")
    text[0] = 0
    for i in range(1, tokens):
        text[i] = followers[text[i - 1], picks[i]] if follow[i] else fresh[i]
    return text


def batch_generator(text, seed):
    """generate_batch: each centre word paired with num_skips of its window's words."""
    rng = np.random.default_rng(seed)
    span = 2 * SKIP_WINDOW + 1
    position = int(rng.integers(0, len(text) - span))
    while True:
        batch = np.empty(BATCH, "int32")
        labels = np.empty((BATCH, 1), "int32")
        for i in range(BATCH // NUM_SKIPS):
            if position + span > len(text):
                position = 0
            window = text[position:position + span]
            context = [w for w in range(span) if w != SKIP_WINDOW]
            for j, c in enumerate(rng.choice(context, NUM_SKIPS, replace=False)):
                batch[i * NUM_SKIPS + j] = window[SKIP_WINDOW]
                labels[i * NUM_SKIPS + j, 0] = window[c]
            position += 1
        yield batch, labels


def build_graph(seed):
    """The word2vec_basic graph; returns (graph, dict of its tensors and ops)."""
    import tensorflow as tf

    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        v1.set_random_seed(seed)
        train_inputs = v1.placeholder(tf.int32, shape=[BATCH])
        train_labels = v1.placeholder(tf.int32, shape=[BATCH, 1])
        embeddings = v1.Variable(v1.random_uniform([VOCAB, EMBED], -1.0, 1.0), use_resource=False,
                                 name="embeddings")
        embed = tf.nn.embedding_lookup(embeddings, train_inputs)
        nce_weights = v1.Variable(v1.truncated_normal([VOCAB, EMBED], stddev=1.0 / math.sqrt(EMBED)),
                                  use_resource=False, name="nce_weights")
        nce_biases = v1.Variable(tf.zeros([VOCAB]), use_resource=False, name="nce_biases")
        loss = tf.reduce_mean(v1.nn.nce_loss(weights=nce_weights, biases=nce_biases, labels=train_labels,
                                             inputs=embed, num_sampled=NUM_SAMPLED, num_classes=VOCAB))
        variables = [embeddings, nce_weights, nce_biases]
        grads = v1.gradients(loss, variables)
        optimizer = v1.train.GradientDescentOptimizer(1.0).minimize(loss)
        norm = tf.sqrt(tf.reduce_sum(tf.square(embeddings), 1, keepdims=True))
        normalized = embeddings / norm
        similarity = tf.matmul(tf.nn.embedding_lookup(normalized, tf.constant(VALID)), normalized,
                               transpose_b=True)
        init = v1.global_variables_initializer()
    return graph, dict(inputs=train_inputs, labels=train_labels, loss=loss, optimizer=optimizer, init=init,
                       variables=variables, similarity=similarity,
                       grads=grads)


def train(steps=STEPS, seed=0, batch_seed=None):
    import tensorflow as tf

    graph, t = build_graph(seed)
    stream = batch_generator(make_text(), seed if batch_seed is None else batch_seed)
    with tf.compat.v1.Session(graph=graph) as session:
        t["init"].run()
        for _ in range(steps):
            batch, labels = next(stream)
            session.run([t["optimizer"], t["loss"]], feed_dict={t["inputs"]: batch, t["labels"]: labels})
        weights, similarity = session.run([t["variables"], t["similarity"]])
    out = {"w%03d" % i: w for i, w in enumerate(weights)}
    out["pred"] = similarity
    return out


def first_step(seed=0):
    import tensorflow as tf

    graph, t = build_graph(seed)
    with graph.as_default():
        dense = [tf.convert_to_tensor(g) for g in t["grads"]]
    batch, labels = next(batch_generator(make_text(), seed))
    with tf.compat.v1.Session(graph=graph) as session:
        t["init"].run()
        loss, grads = session.run([t["loss"], dense], feed_dict={t["inputs"]: batch, t["labels"]: labels})
    out = {"loss": np.asarray(loss)}
    out.update({"g%03d" % i: g for i, g in enumerate(grads)})
    return out


def scan_target():
    """The session's own graph, as train() builds it (tfdet.scan takes a tf.Graph)."""
    graph, _ = build_graph(0)
    return graph, None


def main(argv=None):
    _data.main_with_context(NAME, train, STEPS, argv)


if __name__ == "__main__":
    main()
