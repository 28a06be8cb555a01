"""Read a capture trace (capture.py writes it) into one run's executions. Pure.

Every execution of an op's output gets a key that means the same thing in
another run of the same program:
  graph ops: ("g", graph, op name, slot, occurrence), occurrence counting the
             times that output was produced before in this run;
  eager ops: ("e", index, slot), index counting eager ops in execution order.
Run and graph ids, and the counters TF appends to names, are not part of a key.
"""

import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple


def repeat_path(trace, repeat):
    """The trace of the `repeat`-th call (0-based) of the program in the process whose
    first call's trace is `trace` (run-0.trace.jsonl -> run-0.r3.trace.jsonl)."""
    if not repeat:
        return trace
    stem = trace[:-len(".trace.jsonl")] if trace.endswith(".trace.jsonl") else trace
    return "%s.r%d.trace.jsonl" % (stem, repeat)


class TraceError(ValueError):
    """A trace file that cannot be read; the message names the file and line."""


@dataclass
class OpInfo:
    """An op as traced into a graph (or executed eagerly)."""

    op_type: str
    graph: Optional[str]  # None for an eager op
    name: str
    inputs: List[Optional[list]] = field(default_factory=list)  # graph refs [graph, name, slot], or None
    source: Optional[str] = None
    forward: Optional[str] = None  # a gradient op: "ForwardOpType file:line" of the op it differentiates
    library: Optional[str] = None  # the innermost Keras frame that made it ("keras/src/optimizers/sgd.py:71 ...")
    apis: Tuple[str, ...] = ()  # public functions tfdet.patch() rebinds that made it (tf.math.bincount)
    outputs: Optional[list] = None  # [dtype, shape] per output, as traced; None in traces before the field


@dataclass
class Execution:
    """One produced output: its key, its fingerprint and where it came from."""

    key: Tuple
    fingerprint: Optional[str]
    op: OpInfo
    step: Optional[int] = None
    eager_inputs: List = field(default_factory=list)  # eager: ["e", index, slot] refs or input fingerprints


@dataclass
class Run:
    """One run of the program, as its trace recorded it."""

    path: str
    executions: List[Execution]
    ops: Dict[Tuple[str, str], OpInfo]
    status: str = "unfinished"      # finished, raised, interrupted, or unfinished (killed, timed out)
    detail: str = ""
    stopped_by: Optional[str] = None  # steps, max-bytes: capture stopped on purpose; write-failed
    seconds: Optional[float] = None   # how long the call took, as the process measured it
    saved: Dict[Tuple, str] = field(default_factory=dict)
    tf_version: Optional[str] = None
    device: Optional[str] = None
    fingerprint: Optional[str] = None  # how graph outputs were fingerprinted (capture.FINGERPRINT_IDS); None: not said

    def by_key(self):
        return {execution.key: execution for execution in self.executions}


# What a trace or a fingerprints file that does not say how its graph outputs were
# fingerprinted used: farmhash on a CPU; on a GPU the integer sums of before sums2.
_BEFORE_THE_FIELD = {"cpu": "farmhash64", "gpu": "sums1"}


def fingerprint_used(fingerprint, device):
    """How graph outputs were fingerprinted (capture.FINGERPRINT_IDS), said or, for a file
    from before the field, implied by its device."""
    return fingerprint or _BEFORE_THE_FIELD.get(device or "cpu")


def same_fingerprints(a, b, what_a, what_b):
    """None when two runs' graph outputs were fingerprinted alike, else the one line that
    says they cannot be compared (a, b: (fingerprint, device))."""
    used_a, used_b = fingerprint_used(*a), fingerprint_used(*b)
    if used_a == used_b:
        return None
    return ("%s and %s fingerprinted their outputs differently (%s; %s): their fingerprints cannot be compared; "
            "a GPU run fingerprints with sums2, a CPU run with farmhash64 (record it with --fingerprint sums2 to "
            "compare it with a GPU's), an older tfdet's GPU run with sums1" % (what_a, what_b, used_a, used_b))


def _eager_name(op_type, index):
    return "%s (eager #%d)" % (op_type, index)


def read_trace(path):
    """The Run a trace file holds; a trace cut short (killed run) reads up to its last whole line."""
    ops, executions, pending, calls, occurrences, saved = {}, [], [], {}, {}, {}
    run = Run(path, executions, ops)
    eager_index = 0
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    for number, line in enumerate(lines, 1):
        if not line:
            continue
        try:
            record = json.loads(line)
            kind = record[0]
        except (ValueError, IndexError, TypeError):
            if number == len(lines) or number == len(lines) - 1:
                break  # the last line of a killed run, half written
            raise TraceError("%s:%d: not a trace record" % (path, number)) from None
        if kind == "op":
            _, graph, name, op_type, inputs, source, forward, library = record[:8]
            apis = tuple(record[8]) if len(record) > 8 else ()  # traces before the field existed have none
            outputs = record[9] if len(record) > 9 else None
            ops[(graph, name)] = OpInfo(op_type, graph, name, inputs, source, forward, library, apis, outputs)
        elif kind == "g":
            _, graph, name, slot, fingerprint = record
            op = ops.get((graph, name)) or OpInfo("?", graph, name)
            occurrence = occurrences.get((graph, name, slot), 0)
            occurrences[(graph, name, slot)] = occurrence + 1
            execution = Execution(("g", graph, name, slot, occurrence), fingerprint, op)
            executions.append(execution)
            pending.append(execution)
        elif kind == "e":
            _, op_type, inputs, outputs, source, after = record
            op = OpInfo(op_type, None, _eager_name(op_type, eager_index), source=source)
            slots = list(enumerate(outputs))
            if after is not None:
                slots.append((-1, after))  # the variable the op wrote, read back
            for slot, fingerprint in slots:
                executions.append(Execution(("e", eager_index, slot), fingerprint, op, eager_inputs=inputs))
            eager_index += 1
        elif kind == "call":
            calls[record[1]] = calls.get(record[1], 0) + 1
            for execution in pending:
                execution.step = calls[record[1]]
            pending = []
        elif kind == "save":
            saved[tuple(record[1])] = record[2]
        elif kind == "start":
            run.tf_version, run.device = record[1], record[2]
            run.fingerprint = record[3] if len(record) > 3 else None  # traces before the field: not said
        elif kind == "end":
            run.status, run.detail, run.stopped_by = record[1], record[2], record[3]
            run.seconds = record[4] if len(record) > 4 else None
        else:
            raise TraceError("%s:%d: unknown record kind %r" % (path, number, kind))
    run.saved = saved
    return run
