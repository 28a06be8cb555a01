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

Graph outputs (and tf.function calls) left without a partner get a second
chance under a looser key,
for what a Keras or TF upgrade renames wholesale (the predict step is
`predict_function` in Keras 2 and `one_step_on_data_distributed` in Keras 3;
the model's scope `model` or `functional_1`): the function's name and the
scope's first part are left out, the rest of the key is kept; a function call
is keyed by the user's line and its rank there.

Outputs whose key has no partner on the other side under either are returned,
never paired by guess: the comparison reports them (how many, the first few)
and treats what they feed as unknown.
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


def tail(name):
    """A name's scope without its first part (the model's or the function's own name)."""
    return scope(name).split("/", 1)[-1]


def _loose_keys(keyed, ops):
    """[(looser key, execution)] for graph outputs: no function name, no first scope part; ranked again
    among the ops left, in creation order."""
    left = {(e.key[1], e.key[2]) for _, e in keyed if e.key[0] == "g"}
    ranks, counts = {}, {}
    for (graph, name), op in ops.items():
        if (graph, name) in left:
            group = (op.op_type, tail(name))
            ranks[(graph, name)] = counts.get(group, 0)
            counts[group] = ranks[(graph, name)] + 1
    loose, calls, call_rank = [], {}, {}
    for _, execution in keyed:
        key, op = execution.key, execution.op
        if key[0] == "g":
            loose.append(((op.op_type, tail(op.name), ranks.get((key[1], key[2]), 0), _shape(op, key[3]), key[3],
                           key[4]), execution))
        elif op.op_type.startswith("__"):  # a tf.function call, whatever the function is called
            if key[1] not in call_rank:
                where = _short_source(op.source)
                call_rank[key[1]] = (where, calls.get(where, 0))
                calls[where] = call_rank[key[1]][1] + 1
            loose.append((("call",) + call_rank[key[1]] + (key[2],), execution))
    return loose


def _match(keyed_a, keyed_b):
    """(pairs {a's exact key: b's Execution}, a's unpaired [(key, execution)], b's unpaired) by equal keys."""
    theirs = {}
    for key, execution in keyed_b:
        theirs.setdefault(key, execution)
    pairs, left_a, used = {}, [], set()
    for key, execution in keyed_a:
        other = theirs.get(key)
        if other is None or key in used:
            left_a.append((key, execution))
        else:
            used.add(key)
            pairs[execution.key] = other
    return pairs, left_a, [(key, execution) for key, execution in keyed_b if key not in used]


def pair(run_a, run_b):
    """({run_a's exact key: run_b's Execution}, run_a's unpaired executions, run_b's unpaired executions)."""
    pairs, left_a, left_b = _match(stable_keys(run_a), stable_keys(run_b))
    if left_a and left_b:  # a second chance for renamed functions and model scopes
        more, _, _ = _match(_loose_keys(left_a, run_a.ops), _loose_keys(left_b, run_b.ops))
        pairs.update(more)
        taken = {id(execution) for execution in more.values()}
        left_a = [(k, e) for k, e in left_a if e.key not in more]
        left_b = [(k, e) for k, e in left_b if id(e) not in taken]
    order = {execution.key: index for index, execution in enumerate(run_a.executions)}
    unpaired_a = sorted((e for _, e in left_a), key=lambda e: order[e.key])
    return pairs, unpaired_a, [e for _, e in left_b]


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
            if tail(a_ref[1]) != tail(b_ref[1]):
                return False
        elif a_info is None or b_info is None or a_info.op_type != b_info.op_type or \
                tail(a_info.name) != tail(b_info.name):
            return False
    return True


def describe(executions, limit=5):
    """'Type name (function)', or 'Type (eager #N)', of the first few distinct ops among `executions`."""
    seen = []
    for execution in executions:
        op = execution.op
        text = op.name if op.graph is None else "%s %s (%s)" % (op.op_type, op.name, op.graph)
        if text not in seen:
            seen.append(text)
            if len(seen) == limit:
                break
    return seen
