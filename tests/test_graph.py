"""The one graph walker, on real traced graphs: nested functions, loop bodies,
gradients, and the scope each op was created in."""

import pytest

from tfdet import graph

tf = pytest.importorskip("tensorflow")


def test_ops_in_nested_functions_loops_and_gradients_are_found():
    @tf.function
    def inner(x):
        return tf.math.unsorted_segment_sum(x, tf.constant([0, 1, 0]), 2)

    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            total = tf.while_loop(lambda i, t: i < 3, lambda i, t: (i + 1, t + tf.reduce_sum(inner(x))),
                                  (tf.constant(0), tf.constant(0.0)))[1]
        return tape.gradient(total, x)

    graph_def = graph.graph_def_of(step, tf.TensorSpec([3], tf.float32))
    sites = list(graph.walk(graph_def))
    segment = [s for s in sites if s.op_type == "UnsortedSegmentSum"]
    assert segment and all(s.function for s in segment)  # only inside library functions
    assert "While" in graph.op_types(graph_def) or "StatelessWhile" in graph.op_types(graph_def)
    assert graph.op_counts(graph_def)["UnsortedSegmentSum"] == len(segment)
    # what the walker reports equals what TF's own graph holds, function bodies included
    expected = {node.op for node in graph_def.node}
    for function in graph_def.library.function:
        expected.update(node.op for node in function.node_def)
    assert graph.op_types(graph_def) == expected


def test_scopes_name_keras_layers():
    keras = pytest.importorskip("keras")
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, name="head")])
    graph_def = graph.graph_def_of(lambda x: model(x), tf.TensorSpec([None, 4]))
    assert any(site.op_type == "MatMul" and "head" in site.scope for site in graph.walk(graph_def))


def test_loop_attrs_read_parallel_iterations():
    def loop(x):
        return tf.compat.v1.while_loop(lambda i: i < 5, lambda i: i + 1, [x], parallel_iterations=7)

    graph_def = graph.graph_def_of(loop, tf.TensorSpec([], tf.int32))
    assert 7 in graph.loop_attrs(graph_def)
