"""Pair the op outputs of two environments' runs of one program. Pure.

Within one environment an output's exact key (graph, op name, slot, occurrence)
means the same in every run. Across TF versions, Keras versions or machines,
names move: a layer is `dense_1` on one side and `dense` on the other, TF
inserts or drops an op, a function gets another counter. So each output gets a
*stable key* instead, and outputs pair when their stable keys are equal:

- a graph op's output: its function, its op type, its name scope with TF's
  `_N` counters taken off every part (`model/dense_1/MatMul_2` ->
  `model/dense/MatMul`), its rank among the ops of that type and scope in the
  order they were created (creation order, unlike execution order, is the same
  in every run), its output's dtype and shape, the output slot, and the
  occurrence (how many times that output was produced before);
- an eager op's output: its op type (a function call without its counter), the
  user's line that ran it (file name and line, not the directory: machines
  differ there), its rank among the eager ops of that type and line, the slot.

Outputs whose stable key has no partner on the other side are returned, never
paired by guess: the comparison reports them (how many, the first few) and
treats what they feed as unknown.
"""

import os
import re

from .capture import function_key

_COUNTER = re.compile(r"_\d+$")


def scope(name):
    """An op name with TF's uniquifying counters taken off each part."""
    return "/".join(_COUNTER.sub("", part) for part in name.split("/"))


def _short_source(source):
    if not source:
        return None
    path, _, line = source.rpartition(":")
    return "%s:%s" % (os.path.basename(path), line) if path else source


def _graph_ranks(run):
    """{(graph, op name): rank among its graph's ops of the same type and scope, in creation order}."""
    ranks, counts = {}, {}
    for (graph, name), op in run.ops.items():  # a trace lists ops as they were traced, and dicts keep that order
        group = (graph, op.op_type, scope(name))
        ranks[(graph, name)] = counts.get(group, 0)
        counts[group] = ranks[(graph, name)] + 1
    return ranks


def _shape(op, slot):
    if op.outputs is None or slot < 0 or slot >= len(op.outputs):
        return None
    dtype, shape = op.outputs[slot]
    return (dtype, None if shape is None else tuple(shape))


def stable_keys(run):
    """[(stable key, execution)] for every output of `run`, in its order."""
    ranks = _graph_ranks(run)
    eager_counts, eager_rank = {}, {}
    keyed = []
    for execution in run.executions:
        key, op = execution.key, execution.op
        if key[0] == "g":
            _, graph, name, slot, occurrence = key
            stable = ("g", graph, op.op_type, scope(name), ranks.get((graph, name), 0), _shape(op, slot), slot,
                      occurrence)
        else:
            _, index, slot = key
            op_type = function_key(op.op_type) if op.op_type.startswith("__") else op.op_type
            if index not in eager_rank:
                group = (op_type, _short_source(op.source))
                eager_rank[index] = eager_counts.get(group, 0)
                eager_counts[group] = eager_rank[index] + 1
            stable = ("e", op_type, _short_source(op.source), eager_rank[index], slot)
        keyed.append((stable, execution))
    return keyed


def pair(run_a, run_b):
    """({run_a's exact key: run_b's Execution}, run_a's unpaired executions, run_b's unpaired executions)."""
    theirs = {}
    for stable, execution in stable_keys(run_b):
        theirs.setdefault(stable, execution)
    pairs, unpaired_a, used = {}, [], set()
    for stable, execution in stable_keys(run_a):
        other = theirs.get(stable)
        if other is None or stable in used:
            unpaired_a.append(execution)
        else:
            used.add(stable)
            pairs[execution.key] = other
    unpaired_b = [execution for stable, execution in stable_keys(run_b) if stable not in used]
    return pairs, unpaired_a, unpaired_b


def op_map(pairs):
    """{run a's graph op (graph, name): run b's} from paired outputs."""
    return {(a_key[1], a_key[2]): (other.op.graph, other.op.name) for a_key, other in pairs.items() if a_key[0] == "g"}


def inputs_correspond(execution, other, mapped, ops_a, ops_b):
    """Whether `other` (run b's) reads what `execution` (run a's) reads (mapped: op_map): each input the
    counterpart of the other's, or, for an op nothing was recorded for (a constant, an
    Identity), one of the same type and scope. An op that reads something else on one
    side (an op inserted before it) differs for that reason, not by itself."""
    a_inputs, b_inputs = execution.op.inputs or [], other.op.inputs or []
    if execution.op.graph is None or other.op.graph is None:
        return True  # eager inputs are compared by their fingerprints (align.py)
    if len(a_inputs) != len(b_inputs):
        return False
    for a_ref, b_ref in zip(a_inputs, b_inputs):
        if a_ref is None or b_ref is None:
            if a_ref != b_ref:
                return False
            continue
        a_op, b_op = (a_ref[0], a_ref[1]), (b_ref[0], b_ref[1])
        if a_ref[2] != b_ref[2]:
            return False
        if a_op in mapped:
            if mapped[a_op] != b_op:
                return False
            continue
        a_info, b_info = ops_a.get(a_op), ops_b.get(b_op)
        if a_info is None and b_info is None:  # neither traced (a function's argument): by its scope
            if scope(a_ref[1]) != scope(b_ref[1]):
                return False
        elif a_info is None or b_info is None or a_info.op_type != b_info.op_type or \
                scope(a_info.name) != scope(b_info.name):
            return False
    return True


def describe(executions, limit=5):
    """'Type name (function)' of the first few distinct ops among `executions`."""
    seen = []
    for execution in executions:
        op = execution.op
        text = "%s %s (%s)" % (op.op_type, op.name, op.graph or "eager")
        if text not in seen:
            seen.append(text)
            if len(seen) == limit:
                break
    return seen
