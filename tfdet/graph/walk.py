"""Walk a GraphDef and every function in its library. Pure over protos."""

import collections

OpSite = collections.namedtuple("OpSite", "op_type name function scope node")
OpSite.__doc__ = """One op in a graph.

op_type: the raw op (e.g. "UnsortedSegmentSum"); name: the node's name;
function: the library function holding it (None at the top level);
scope: the name scope it was created in ("model/dense_1", "" at the root);
node: the NodeDef, for attributes.
"""

# Ops whose attributes say how a loop runs (parallel_iterations > 1 lets
# iterations of a TF1-style loop overlap).
LOOP_OPS = ("While", "StatelessWhile", "Enter")


def _scope(name):
    return name.rsplit("/", 1)[0] if "/" in name else ""


def walk(graph_def):
    """Every op in the graph and in every function of its library, top level first.

    Functions a graph calls (tf.function, tf.while_loop / tf.cond bodies, gradient
    functions) are in the library; the library holds each once however often it is
    called, so an op is listed once per definition, not per call.
    """
    for node in graph_def.node:
        yield OpSite(node.op, node.name, None, _scope(node.name), node)
    for function in graph_def.library.function:
        name = function.signature.name
        for node in function.node_def:
            yield OpSite(node.op, node.name, name, _scope(node.name), node)


def op_types(graph_def):
    """The set of op types in the graph and its library."""
    return {site.op_type for site in walk(graph_def)}


def op_counts(graph_def):
    """{op type: how many nodes of it} over the graph and its library."""
    return collections.Counter(site.op_type for site in walk(graph_def))


def loop_attrs(graph_def, attr="parallel_iterations"):
    """The values of `attr` on every loop op in the graph and its library."""
    return [site.node.attr[attr].i for site in walk(graph_def)
            if site.op_type in LOOP_OPS and attr in site.node.attr]


def graph_def_of(function, *input_signature):
    """The GraphDef (with its library) of a Python or tf.function traced for these
    TensorSpecs (or example tensors)."""
    import tensorflow as tf

    if not hasattr(function, "get_concrete_function"):
        function = tf.function(function)
    return function.get_concrete_function(*input_signature).graph.as_graph_def()
