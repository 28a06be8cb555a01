"""Follows: keras-team/keras-io examples/graph/gnn_citations.py (GraphConvLayer and
         GNNNodeClassifier on the Cora citation graph).
Keeps: the graph held by the model as (node_features, edges, edge_weights) with edge weights
       scaled to sum to 1, FFN blocks of BatchNormalization, Dropout and Dense(gelu), the
       GraphConvLayer's prepare (FFN of the gathered neighbour representations times the edge
       weight), aggregate (tf.math.unsorted_segment_sum over the target node of each edge),
       update (concat with the node's own representation, FFN, l2-normalise), two graph
       convolutions with skip connections, a postprocess FFN and a logits layer, a batch of
       node indices as the model input, Adam, sparse categorical cross-entropy from logits,
       sparse categorical accuracy, Model.fit.
Changes: a synthetic citation graph instead of the Cora download: 700 papers of 7 subjects,
       300 binary word features drawn with subject-dependent probabilities, about 3,500
       citations that mostly stay within a subject; hidden units [32, 32]; fit for STEPS
       batches of 64 nodes.

Graph neural network node classifier: gather neighbours, aggregate messages with segment sums.
"""

import os
import sys

import numpy as np

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data  # noqa: E402

NAME = "gnn_node_classifier"
STEPS = 12
EXPECT = dict(
    varies_stock=False,
    varying_ops=(),
    patch_reproduces=True,
)

NODES, SUBJECTS, WORDS, CITATIONS, BATCH = 700, 7, 300, 3500, 64


def make_graph():
    """Fixed data: node features [N, WORDS] (0/1 float32), edges [2, E] int, subjects [N]."""
    rng = np.random.default_rng(11)
    subjects = rng.integers(0, SUBJECTS, size=NODES)
    word_prob = rng.uniform(0.01, 0.08, size=(SUBJECTS, WORDS))
    word_prob[:, :WORDS // 2] *= rng.uniform(0.2, 3.0, size=(SUBJECTS, WORDS // 2))
    features = (rng.random((NODES, WORDS)) < word_prob[subjects]).astype("float32")
    source = rng.integers(0, NODES, size=CITATIONS)
    same = rng.random(CITATIONS) < 0.8
    by_subject = [np.flatnonzero(subjects == s) for s in range(SUBJECTS)]
    target = np.where(same, [rng.choice(by_subject[subjects[s]]) for s in source],
                      rng.integers(0, NODES, size=CITATIONS))
    return features, np.stack([source, target]).astype("int64"), subjects.astype("int64")


def create_ffn(keras, hidden_units, dropout_rate, name=None):
    layers = []
    for units in hidden_units:
        layers += [keras.layers.BatchNormalization(), keras.layers.Dropout(dropout_rate),
                   keras.layers.Dense(units, activation="gelu")]
    return keras.Sequential(layers, name=name)


def build(seed):
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(seed)
    hidden_units, dropout_rate = [32, 32], 0.2

    class GraphConvLayer(keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.ffn_prepare = create_ffn(keras, hidden_units, dropout_rate)
            self.update_fn = create_ffn(keras, hidden_units, dropout_rate)

        def call(self, inputs, training=None):
            node_representations, edges, edge_weights = inputs
            node_indices, neighbour_indices = edges[0], edges[1]
            neighbour_representations = tf.gather(node_representations, neighbour_indices)
            messages = self.ffn_prepare(neighbour_representations, training=training)
            messages = messages * tf.expand_dims(edge_weights, -1)
            aggregated = tf.math.unsorted_segment_sum(messages, node_indices,
                                                      num_segments=tf.shape(node_representations)[0])
            h = tf.concat([node_representations, aggregated], axis=1)
            return tf.nn.l2_normalize(self.update_fn(h, training=training), axis=-1)

    class GNNNodeClassifier(keras.Model):
        def __init__(self, graph_info, **kwargs):
            super().__init__(**kwargs)
            node_features, edges, edge_weights = graph_info
            self.node_features = tf.constant(node_features)
            self.edges = tf.constant(edges)
            self.edge_weights = tf.constant(edge_weights / np.sum(edge_weights), tf.float32)
            self.preprocess = create_ffn(keras, hidden_units, dropout_rate, name="preprocess")
            self.conv1 = GraphConvLayer(name="graph_conv1")
            self.conv2 = GraphConvLayer(name="graph_conv2")
            self.postprocess = create_ffn(keras, hidden_units, dropout_rate, name="postprocess")
            self.compute_logits = keras.layers.Dense(SUBJECTS, name="logits")

        def call(self, input_node_indices, training=None):
            x = self.preprocess(self.node_features, training=training)
            x = self.conv1((x, self.edges, self.edge_weights), training=training) + x
            x = self.conv2((x, self.edges, self.edge_weights), training=training) + x
            x = self.postprocess(x, training=training)
            node_embeddings = tf.gather(x, tf.reshape(input_node_indices, [-1]))
            return self.compute_logits(node_embeddings)

    features, edges, subjects = make_graph()
    model = GNNNodeClassifier((features, edges, np.ones(edges.shape[1], "float32")), name="gnn_model")
    model.compile(optimizer=keras.optimizers.Adam(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=[keras.metrics.SparseCategoricalAccuracy(name="acc")])
    model(np.arange(BATCH))
    return model, subjects


def batches(subjects, seed, steps):
    train_nodes = np.arange(0, NODES, 2)                      # half of the papers train
    rng = np.random.default_rng(seed)
    order = np.concatenate([rng.permutation(train_nodes) for _ in range(steps * BATCH // len(train_nodes) + 1)])
    nodes = order[:steps * BATCH].reshape(steps, BATCH)
    return nodes, subjects[nodes]


def train(steps=STEPS, seed=0, batch_seed=None):
    import tensorflow as tf

    model, subjects = build(seed)
    nodes, labels = batches(subjects, seed if batch_seed is None else batch_seed, steps)
    dataset = tf.data.Dataset.from_tensor_slices((nodes, labels))
    model.fit(dataset, epochs=1, verbose=0)
    out = {"w%03d" % i: w for i, w in enumerate(model.get_weights())}
    out["pred"] = model.predict(np.arange(1, NODES, 2), batch_size=350, verbose=0)   # the test papers
    return out


def first_step(seed=0):
    import tensorflow as tf

    model, subjects = build(seed)
    nodes, labels = batches(subjects, seed, 1)
    with tf.GradientTape() as tape:
        logits = model(nodes[0], training=True)
        loss = model.compute_loss(x=nodes[0], y=labels[0], y_pred=logits)
    grads = tape.gradient(loss, model.trainable_weights)
    out = {"loss": loss.numpy()}
    out.update({"g%03d" % i: tf.convert_to_tensor(g).numpy() for i, g in enumerate(grads)})
    return out


def scan_target():
    model, _ = build(0)
    return model, np.arange(BATCH)


def main(argv=None):
    _data.main_with_context(NAME, train, STEPS, argv, labels=lambda: make_graph()[2][1::2])


if __name__ == "__main__":
    main()
