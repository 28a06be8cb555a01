"""A probe case traced without autograph (cases.prepare, for speed) has the same
graph as the same body traced with it: the kernels the probe measures do not
change. Every case is checked under --runslow; a few kinds by default."""

import collections

import numpy as np
import pytest

from tfdet.probe import cases

tf = pytest.importorskip("tensorflow")


def _op_types(graph):
    """Op types of a traced graph and of the functions it calls (loop bodies, gradients)."""
    types = collections.Counter(op.type for op in graph.get_operations())
    for function in graph._functions.values():  # while_loop bodies, py_function, gradient functions
        types.update("in function: " + node.op for node in function.definition.node_def)
    return types


def _both_graphs(case_id, pass_name, size):
    prepared = cases.prepare(tf, np, case_id, pass_name, size, 0, "function")
    without = prepared.body.get_concrete_function(*prepared.tensors).graph
    with_autograph = tf.function(prepared.body.python_function, autograph=True)
    return _op_types(without), _op_types(with_autograph.get_concrete_function(*prepared.tensors).graph)


def _catalogue_cases():
    return [(case_id, pass_name) for case_id, spec in sorted(cases.describe_cases().items())
            if not spec["fixture"] for pass_name in spec["passes"]]


def _same(case_id, pass_name, size=1.0):
    try:
        without, with_autograph = _both_graphs(case_id, pass_name, size)
    except (ValueError, TypeError, NotImplementedError, tf.errors.OpError) as exc:  # a case this TF lacks
        if "min_tf" in str(exc) or isinstance(exc, tf.errors.OpError):
            pytest.skip(str(exc)[:200])
        raise
    assert without == with_autograph, (without - with_autograph, with_autograph - without)
    assert sum(without.values()) > 0


@pytest.mark.parametrize("case_id, pass_name", [
    ("bincount", "forward"),  # the case every default run must catch
    ("while-loop-parallel-iterations", "gradient"),  # tf.while_loop and its gradient
    ("data-stateful-parallel-map", "forward"),  # tf.data inside py_function
])
def test_a_case_traced_without_autograph_has_the_same_graph(case_id, pass_name):
    _same(case_id, pass_name, size=0.1)  # small inputs, the same ops


def test_prepare_traces_without_autograph():
    """What makes tracing cheap: autograph's conversion is skipped, so a body with a
    Python branch on a tensor fails to trace, where autograph would convert it."""
    def branching(x):
        if tf.reduce_sum(x) > 0:
            return x
        return -x
    with pytest.raises((TypeError, tf.errors.OperatorNotAllowedInGraphError)):
        _prepare_body(branching)


def _prepare_body(fn):
    """cases.prepare's tracing path for a fixed body (a registered case of its own is not wanted here)."""
    from tfdet.probe import case_registry

    case_registry.CASES["_autograph_probe"] = case_registry.CaseSpec(
        "_autograph_probe", lambda tf, np, rng, size: case_registry.Built([np.ones((3,), np.float32)], fn),
        ("forward",), None, True)
    try:
        prepared = cases.prepare(tf, np, "_autograph_probe", "forward", 1.0, 0, "function")
        return prepared.run()
    finally:
        del case_registry.CASES["_autograph_probe"]


@pytest.mark.slow
@pytest.mark.parametrize("case_id, pass_name", _catalogue_cases())
def test_every_case_traced_without_autograph_has_the_same_graph(case_id, pass_name):
    _same(case_id, pass_name)
