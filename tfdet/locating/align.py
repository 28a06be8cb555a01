"""Compare two runs execution by execution and find where they first part. Pure.

An output that differs between the runs is a *root* when every input it read
matched: the op itself made the difference. An output that differs because an
input already differed is *spread*, the root's effect travelling downstream.
The answer is the first root in execution order (the semantics Megatron-LM's
run-comparison tool adopted too), not the first difference of any kind.

What counts as an op's inputs:
- a graph op: the outputs its inputs name, looked up through ops that were not
  fingerprinted (Identity, Const, ...), as they were last produced;
- a variable: the reads and read-backs of the same variable handle before, so a
  variable that diverged in step 1 is not blamed again in step 2;
- an eager op: the recorded eager outputs it consumed, or the fingerprints of
  inputs that came from outside TensorFlow (numpy arrays).
An input nothing was recorded for counts as matching: only evidence accuses.

Two environments (crossalign.py pairs their outputs by a stable key instead of
the exact one): an output with no counterpart is *unknown*, and an output that
differs reading an unknown input is *uncertain*, neither a root nor spread.
"""

from dataclasses import dataclass, field
from typing import List, Optional

from .trace_file import Execution

_FOLLOW_DEPTH = 32


@dataclass
class Comparison:
    """What comparing run `a` with run `b` found."""

    compared: int                               # executions compared
    roots: List[Execution] = field(default_factory=list)   # differ, inputs matched (first is the answer)
    spread: List[Execution] = field(default_factory=list)  # differ because an input differed
    fingerprints_b: dict = field(default_factory=dict)     # key -> b's fingerprint, for what differs
    unmatched: Optional[Execution] = None       # first execution of a with no counterpart in b
    uncertain: List[Execution] = field(default_factory=list)  # differ, an input had no counterpart (pairs)

    @property
    def first(self):
        return self.roots[0] if self.roots else None


def _is_variable_access(execution):
    op = execution.op
    return op.graph is not None and op.inputs and (op.op_type == "ReadVariableOp" or execution.key[3] == -1)


class _State:
    """The latest known status (differs or not) of every output, as a run is walked."""

    def __init__(self, ops):
        self.ops = ops
        self.graph_outputs = {}   # (graph, name, slot) -> differed at its latest production
        self.eager_outputs = {}   # (index, slot) -> differed

    def graph_input_differs(self, ref, depth=0):
        """True, False, or None: unknown (the output had no counterpart)."""
        if ref is None:
            return False
        graph, name, slot = ref
        key = (graph, name, slot)
        if key in self.graph_outputs:
            return self.graph_outputs[key]
        op = self.ops.get((graph, name))
        if op is None or depth > _FOLLOW_DEPTH:
            return False  # nothing recorded about it: no evidence
        # not fingerprinted (Identity, a constant, ...): it differs when what it read did
        return _any(self.graph_input_differs(tuple(r) if r else None, depth + 1) for r in op.inputs)

    def inputs_differ(self, execution, other):
        """True, False, or None: an input is unknown and none is known to differ."""
        if execution.op.graph is not None:
            return _any(self.graph_input_differs(tuple(ref) if ref else None) for ref in execution.op.inputs)
        found = False
        for position, ref in enumerate(execution.eager_inputs):
            if isinstance(ref, list):
                status = self.eager_outputs.get((ref[1], ref[2]), False)
                if status:
                    return True
                found = None if status is None else found
            elif ref is not None:
                theirs = other.eager_inputs[position] if position < len(other.eager_inputs) else None
                if ref != theirs:
                    return True
        return found

    def record(self, execution, differs):
        key = execution.key
        if key[0] == "e":
            self.eager_outputs[(key[1], key[2])] = differs
            return
        self.graph_outputs[(key[1], key[2], key[3])] = differs
        if _is_variable_access(execution):
            handle = tuple(execution.op.inputs[0])
            # a variable's state is sticky: once its value differed, later reads are explained by it
            before = self.graph_outputs.get(handle, False)
            self.graph_outputs[handle] = True if (before or differs) else (None if None in (before, differs) else False)


def _any(statuses):
    """True if any is True, else None if any is None (unknown), else False."""
    result = False
    for status in statuses:
        if status:
            return True
        if status is None:
            result = None
    return result


def compare(run_a, run_b, counterparts=None):
    """Walk run_a's executions in order against run_b's (see the module's docstring).
    counterparts: {run_a's key: run_b's Execution} pairing two environments' runs
    (crossalign.pair); an output without one is then unknown, not the end."""
    theirs = run_b.by_key() if counterparts is None else counterparts
    state = _State({**run_b.ops, **run_a.ops} if counterparts is None else run_a.ops)
    result = Comparison(compared=0)
    for execution in run_a.executions:
        other = theirs.get(execution.key)
        if other is None:
            if counterparts is None:
                result.unmatched = execution
                break
            state.record(execution, None)
            continue
        result.compared += 1
        differs = execution.fingerprint != other.fingerprint
        if differs:
            result.fingerprints_b[execution.key] = other.fingerprint
            inputs = state.inputs_differ(execution, other)
            (result.spread if inputs else result.roots if inputs is False else result.uncertain).append(execution)
        state.record(execution, differs)
    return result


def first_root(comparisons, run_a):
    """(index of the comparison, root) for the earliest root of any comparison, in run_a's order; None if none."""
    position = {execution.key: index for index, execution in enumerate(run_a.executions)}
    best = None
    for which, comparison in enumerate(comparisons):
        if comparison.first is not None:
            at = position[comparison.first.key]
            if best is None or at < best[0]:
                best = (at, which, comparison.first)
    return None if best is None else best[1:]
