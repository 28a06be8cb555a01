"""The one graph walker: every op of a TensorFlow graph, nested functions
included (tf.function calls, tf.while_loop and tf.cond bodies, gradient
functions), with where each op sits. Used by the patch's proofs that a
replacement's graph holds no GPU-nondeterministic op, and by scan and locate.

Works on GraphDef protos, so TensorFlow is imported only by the helpers that
trace a function (graph_def_of).
"""

from .live import Frame, creation_stack, walk_graph
from .walk import OpSite, graph_def_of, loop_attrs, op_counts, op_types, walk

__all__ = ["Frame", "OpSite", "creation_stack", "graph_def_of", "loop_attrs", "op_counts", "op_types", "walk",
           "walk_graph"]
