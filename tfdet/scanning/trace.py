"""Trace what a model's training runs into graphs: the inference call and the
whole training step (forward, loss, gradient, optimizer update, metric updates).
Needs TensorFlow; everything downstream works on the traced graphs."""

import re

from .. import graph
from ..graph import frames
from . import passes, replaced_apis

class Traced(object):
    """One traced graph: its label, the graph (a live FuncGraph, or a GraphDef for a
    dataset's pipeline) and whether the traced function itself is compiled with XLA.
    The GraphDef is serialized once, on first use, however many readers need it."""

    def __init__(self, label, graph, jit=False):
        self.label, self.graph, self.jit = label, graph, jit
        self._graph_def = None

    @property
    def live(self):
        return hasattr(self.graph, "as_graph_def")

    @property
    def graph_def(self):
        if self._graph_def is None:
            self._graph_def = self.graph.as_graph_def() if self.live else self.graph
        return self._graph_def


class ScanError(Exception):
    """The model cannot be scanned (its inputs are unknown, tracing failed, ...): one line for the user."""


def _tf():
    import tensorflow as tf

    return tf


def is_keras_model(obj):
    return hasattr(obj, "trainable_variables") and hasattr(obj, "compile") and callable(obj)


def input_specs(model, example_inputs=None):
    """TensorSpecs for the model's inputs: from examples, else from its declared inputs."""
    tf = _tf()
    if example_inputs is not None:
        def spec(example):
            tensor = tf.convert_to_tensor(example)
            return tf.TensorSpec([None] + list(tensor.shape[1:]), tensor.dtype)

        return tf.nest.map_structure(spec, example_inputs)
    inputs = getattr(model, "inputs", None)
    if not inputs:
        raise ScanError("the model declares no inputs (a Sequential model without keras.Input?): "
                        "pass example_inputs=(x, y) to tfdet.scan()")
    specs = [tf.TensorSpec(list(t.shape), tf.as_dtype(t.dtype)) for t in inputs]  # Keras 3 dtypes are strings
    return specs[0] if len(specs) == 1 else specs


def _output_spec(model, x_spec):
    tf = _tf()
    out = tf.function(lambda x: model(x, training=False)).get_concrete_function(x_spec).structured_outputs
    return tf.nest.map_structure(lambda t: tf.TensorSpec(t.shape, t.dtype), out)


def trace_keras(model, example_inputs=None, example_targets=None):
    """[Traced] for a Keras model: inference, and the compiled training step
    (Keras's own train_step: forward, loss, gradient, optimizer, metrics), or for a
    model not compiled, the gradient of its outputs with respect to its weights."""
    tf = _tf()
    x_spec = input_specs(model, example_inputs)
    traced = [Traced("inference", tf.function(lambda x: model(x, training=False)).get_concrete_function(x_spec).graph)]
    notes = []
    optimizer = getattr(model, "optimizer", None)
    if optimizer is not None and hasattr(model, "train_step"):
        _build_for(optimizer, model.trainable_variables)
        errors = []
        for y_spec in _target_specs(model, x_spec, example_targets):
            try:
                step = tf.function(model.train_step).get_concrete_function((x_spec, y_spec))
            except Exception as exc:  # targets of another shape than guessed, or a custom train_step
                errors.append(exc)
                continue
            traced.append(Traced("training step", step.graph))
            return traced, notes
        notes.append("could not trace the compiled training step (%s); scanned the gradient of the outputs "
                     "instead, without the loss, optimizer and metrics: pass example_targets to tfdet.scan()"
                     % _last_line(errors[0]))
    traced.append(Traced("gradient of the outputs", _gradient_graph(model, x_spec)))
    if optimizer is None:
        notes.append("the model is not compiled: the optimizer, loss and metrics were not scanned")
    return traced, notes


def _build_for(optimizer, variables):
    """Build the optimizer for the model's variables, as fit() would before its first
    step. Keras 3 loading an .h5 file builds it for no variables at all: built anew."""
    if not hasattr(optimizer, "build"):
        return
    if getattr(optimizer, "built", True):
        known = getattr(optimizer, "_trainable_variables", None)
        if known is None or known or not variables:
            return
        optimizer.built = False
    optimizer.build(variables)


def _target_specs(model, x_spec, example_targets):
    """Target specs to try: the given examples; else the outputs' own shape (regression,
    one-hot), then integer class labels (sparse losses) of shape [batch] and [batch, 1]."""
    tf = _tf()
    if example_targets is not None:
        return [input_specs(None, example_targets)]
    out = _output_spec(model, x_spec)
    specs = [out]
    if isinstance(out, tf.TensorSpec) and out.shape.rank and out.shape.rank >= 2:
        specs += [tf.TensorSpec(out.shape[:-1], tf.int32), tf.TensorSpec(out.shape[:-1].concatenate([1]), tf.int32)]
    return specs


def cause(exc):
    """'ValueError: ...', one line, for an error raised while tracing. TF wraps the
    error of the model's code in 'in user code:' and a stack, and Keras wraps it in
    'Exception encountered when calling X.call()' and the call's arguments."""
    lines = [line.strip() for line in re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).splitlines() if line.strip()]
    lines = lines[:next((i for i, line in enumerate(lines) if line.startswith("Arguments received by")), len(lines))]
    raised = [(i, match) for i, match in enumerate(re.match(r"([A-Z]\w*(?:Error|Exception)): (.*)", line)
                                                   for line in lines) if match]
    if not raised:
        return "%s: %s" % (type(exc).__name__, (lines[0] if lines else "")[:300])
    i, match = raised[-1]
    message = match.group(2)
    if message.startswith("Exception encountered when calling") and i + 1 < len(lines):
        message = lines[i + 1]
    return "%s: %s" % (match.group(1), message[:300])


def _last_line(exc):
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    return "%s: %s" % (type(exc).__name__, (lines[-1] if lines else "")[:200])


def _gradient_graph(model, x_spec):
    tf = _tf()

    def step(x):
        with tf.GradientTape() as tape:
            outputs = model(x, training=True)
            total = tf.add_n([tf.reduce_sum(tf.cast(o, tf.float32)) for o in tf.nest.flatten(outputs)])
        return tape.gradient(total, model.trainable_variables)

    return tf.function(step).get_concrete_function(x_spec).graph


def trace_function(function, example_inputs):
    """[Traced] for a tf.function or Python function called with example_inputs (a tuple of arguments)."""
    tf = _tf()
    if example_inputs is None:
        if hasattr(function, "input_signature") and function.input_signature is not None:
            return [Traced("function", function.get_concrete_function().graph)], []
        raise ScanError("a function is scanned with example_inputs: tfdet.scan(fn, example_inputs=(x,))")
    if not hasattr(function, "get_concrete_function"):
        function = tf.function(function)
    args = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    jit = bool(getattr(function, "_jit_compile", False))
    return [Traced("function", function.get_concrete_function(*args).graph, jit)], []


def sites(traced, catalogue):
    """Every op of the traced graphs as findings.Site, with its pass and where it came from."""
    from .conditions import CatalogueChecks, through_public_api
    from .findings import Site

    checks = CatalogueChecks(catalogue)
    stock = replaced_apis.stock_functions(_tf())

    found = []
    jit = jit_compiled(traced)
    for item in traced:
        default = passes.FORWARD
        graph_def = item.graph_def
        if not item.live:  # a dataset's pipeline
            default = passes.INPUT
        index = {node.name: node for node in graph_def.node}
        library = {f.signature.name: f for f in graph_def.library.function}
        function_index = {name: {n.name: n for n in f.node_def} for name, f in library.items()}
        walked = graph.walk_graph(item.graph, graph_def) if item.live else ((site, []) for site in graph.walk(graph_def))
        for site, stack in walked:
            stack = _below_the_scan(stack)
            pass_name = passes.pass_of(stack, default) if stack else (
                passes.GRADIENT if "gradient" in site.name.lower() or (site.function or "").startswith("__inference_")
                and "grad" in (site.function or "") else default)
            where = frames.user_frame(stack) or frames.library_frame(stack) or site.scope or site.function or ""
            if site.function and not stack:
                where = "function %s" % site.function
            nodes = index if site.function is None else function_index[site.function]
            out = checks.ruled_out(site, nodes, library, jit)
            public = through_public_api(stack)
            if public:  # made by tf.nn.X (which tfdet.patch() rebinds), not tf.raw_ops.X
                out = out | checks.raw_ops_only
            apis = replaced_apis.through(stack, stock) if public is not False else frozenset()
            found.append(Site(site.op_type, pass_name, where, out, None, apis))
    return found


def _below_the_scan(stack):
    """The frames under tfdet's own tracing call: what the model's code did, not
    the line that called tfdet.scan()."""
    last = max((i for i, frame in enumerate(stack) if "/tfdet/scanning/" in frames.path_of(frame.filename)),
               default=-1)
    return stack[last + 1:]


def trace_dataset(dataset):
    """[Traced] for a tf.data.Dataset: the graph of its whole pipeline (map and
    filter functions included), as tf.data serializes it."""
    from tensorflow.core.framework import graph_pb2

    try:
        serialized = dataset._as_serialized_graph()  # the pipeline as tf.data would checkpoint it
    except Exception as exc:
        raise ScanError("cannot read the dataset's pipeline: %s: %s" % (type(exc).__name__, exc)) from None
    graph_def = graph_pb2.GraphDef()
    graph_def.ParseFromString(serialized.numpy())
    return [Traced("input pipeline", graph_def)]


def jit_compiled(traced):
    """True if a traced graph calls a function compiled with XLA (jit_compile=True)."""
    for item in traced:
        if item.jit:
            return True
        for site in graph.walk(item.graph_def):
            if "_XlaMustCompile" in site.node.attr and site.node.attr["_XlaMustCompile"].b:
                return True
    return False


def trace_saved_model(loaded):
    """[Traced] for a tf.saved_model.load()ed object: each serving signature, and the
    gradient of its outputs with respect to the model's variables."""
    tf = _tf()
    signatures = dict(getattr(loaded, "signatures", {}) or {})
    if not signatures:
        raise ScanError("the SavedModel has no signatures to trace")
    traced, notes = [], ["a SavedModel has no training step: scanned its serving signatures and the gradient of "
                         "their outputs with respect to its variables"]
    for name, concrete in sorted(signatures.items()):
        traced.append(Traced("signature %s" % name, concrete.graph))
        variables = list(concrete.trainable_variables or concrete.variables)  # what the signature reads
        if not variables:
            continue
        specs = concrete.structured_input_signature[1]

        def gradient(kwargs, concrete=concrete):
            with tf.GradientTape() as tape:
                outputs = concrete(**kwargs)
                total = tf.add_n([tf.reduce_sum(tf.cast(o, tf.float32)) for o in tf.nest.flatten(outputs)])
            return tape.gradient(total, variables)  # noqa: B023 - traced at once, in this iteration

        traced.append(Traced("gradient of signature %s" % name,
                             tf.function(gradient).get_concrete_function(specs).graph))
    return traced, notes
