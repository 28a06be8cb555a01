"""Ops of a live (traced) graph, with the Python stack each was created from.

TensorFlow records a creation stack on every op of a graph it traces
(Operation.traceback); that is how an op found in a graph is traced back to the
optimizer, metric, loss or layer line that made it. Function bodies the graph
calls are walked through its GraphDef (walk.py), which keeps no stacks.
"""

import collections

from .walk import walk

Frame = collections.namedtuple("Frame", "filename lineno name")


def creation_stack(op):
    """The frames (outermost first) of the Python stack that created `op`; [] where TF kept none."""
    try:
        return [Frame(f.filename, f.lineno, f.name) for f in op.traceback]
    except (AttributeError, TypeError):
        return []


def walk_graph(graph, graph_def=None):
    """(OpSite, creation stack) for every op of a traced graph and of its function
    library; the library's ops (nested tf.functions, loop and cond bodies) come
    with an empty stack. graph_def: the graph's, where the caller has it already."""
    by_name = {op.name: op for op in graph.get_operations()}
    graph_def = graph.as_graph_def() if graph_def is None else graph_def
    for site in walk(graph_def):
        op = by_name.get(site.name) if site.function is None else None
        yield site, creation_stack(op) if op is not None else []
