"""`tfdet locate --record FILE SCRIPT`: run the program twice in this
environment (fresh processes, as locate's runs) and keep its fingerprints with
a description of the environment in a fingerprints file; and read such a file
back as a run the comparison understands.

Two runs, so the file itself says which outputs vary run to run here: an
output that differs between two environments is only the environment's doing
when it is the same in both runs of each.
"""

import json
import os
import shutil
import sys
import tempfile
import time

from .. import __version__
from ..results.between_file import read_fingerprints, write_fingerprints
from ..results.between_records import FINGERPRINTS, SCHEMA_VERSION, FingerprintsHeader, Machine, OpLine, OutputLine
from ..results.typed import RecordError
from .api import LocateError, LocateInterrupted
from .runs import describe_path, run_once, stop_all
from .sides import Side
from .trace_file import Execution, OpInfo, Run, fingerprint_used

RUNS = 2


def record_target(target, path, side=None, steps=None, max_bytes=None, timeout=None, traces=None, progress=None,
                  argv=None, method=None):
    """Run `target` twice with `side`'s variables and settings, write the fingerprints
    file `path`, and return its header. method: capture's fingerprint method (None: the
    device's default; "checksum" records a CPU with sums2, as a GPU records). LocateError when the first run left nothing
    to record; LocateInterrupted on Ctrl-C; ResultsWriteError when `path` cannot be written."""
    side = side or Side("")
    progress = progress or (lambda message: None)
    if traces:
        os.makedirs(traces, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="record-", dir=traces) if traces else tempfile.mkdtemp(prefix="tfdet-record-")
    keep = bool(traces)
    try:
        runs = []
        for index in range(RUNS):
            progress("run %d of %d%s: %s" % (index + 1, RUNS, (" (%s)" % side.text) if side.text else "",
                                             target.describe()))
            calls = run_once(target, workdir, index, steps=steps, max_bytes=max_bytes, timeout=timeout,
                             env=side.env, settings=side.settings, describe=index == 0, method=method,
                             fold=False)  # no detail pass follows a record: every link of a chain is hashed
            runs.append(calls[0] if calls else (None, None))
        (first, outcome), (second, _) = runs
        if first is None or not first.executions:
            keep = True
            raise LocateError("nothing to record: the first run %s%s (logs kept in %s)" % (
                outcome.status if outcome else "left no trace", (": %s" % outcome.detail) if outcome and
                outcome.detail else "", workdir))
        machine = _machine(describe_path(os.path.join(workdir, "run-0.trace.jsonl")), first)
        header, ops, outputs = _records(target, first, second, machine, side, [o for _, o in runs if o], argv)
        write_fingerprints(path, header, ops, outputs)
        return header
    except KeyboardInterrupt:
        stop_all()
        raise LocateInterrupted(workdir if traces else None) from None
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


def _machine(path, run):
    try:
        with open(path, encoding="utf-8") as handle:
            return Machine.from_json(json.load(handle), path)
    except (OSError, ValueError, RecordError):  # not described (see the run's log): what the trace says
        return Machine(tf_version=run.tf_version or "", device=run.device or "cpu", tfdet_version=__version__)


def _records(target, first, second, machine, side, outcomes, argv):
    again = second.by_key() if second is not None else {}
    notes = []
    if second is None or not second.executions:
        notes.append("the second run left nothing: which outputs vary run to run here is not known")
    ops = [OpLine(record="op", graph=op.graph, name=op.name, type=op.op_type, inputs=list(op.inputs),
                  source=op.source, forward=op.forward, library=op.library, apis=list(op.apis), outputs=op.outputs)
           for op in first.ops.values()]
    outputs, varying, missing = [], 0, 0
    for execution in first.executions:
        theirs = again.get(execution.key)
        missing += theirs is None
        varying += theirs is not None and theirs.fingerprint != execution.fingerprint
        eager = execution.key[0] == "e"
        outputs.append(OutputLine(
            record="output", key=list(execution.key), fingerprint=execution.fingerprint,
            again=theirs.fingerprint if theirs is not None else None, step=execution.step,
            type=execution.op.op_type if eager else None, source=execution.op.source if eager else None,
            inputs=list(execution.eager_inputs) if eager else None))
    for outcome in outcomes:
        if outcome.status != "finished":
            notes.append("run %d %s: %s (what it recorded is kept)" % (outcome.process, outcome.status,
                                                                      outcome.detail))
    if first.stopped_by:
        notes.append("capture stopped on purpose (%s): what ran after was not recorded" % first.stopped_by)
    header = FingerprintsHeader(
        kind=FINGERPRINTS, schema_version=SCHEMA_VERSION, tfdet_version=__version__, record="header",
        created=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), argv=list(argv if argv is not None else sys.argv),
        target=target.describe(), machine=machine, side=side.items(), runs=RUNS, run_outcomes=outcomes,
        outputs=len(outputs), outputs_varying=varying, again_missing=missing, notes=notes,
        fingerprint=fingerprint_used(first.fingerprint, machine.device))
    return header, ops, outputs


def load_run(path):
    """(Fingerprints, Run of its first run, {exact key: the second run's fingerprint or None})."""
    recorded = read_fingerprints(path)
    ops = {}
    for line in recorded.ops:
        ops[(line.graph, line.name)] = OpInfo(line.type, line.graph, line.name, list(line.inputs), line.source,
                                              line.forward, line.library, tuple(line.apis), line.outputs)
    executions, eager_ops, again = [], {}, {}
    for line in recorded.outputs:
        key = tuple(line.key)
        if key[0] == "g":
            op = ops.get((key[1], key[2])) or OpInfo("?", key[1], key[2])
            execution = Execution(key, line.fingerprint, op, step=line.step)
        else:
            op = eager_ops.get(key[1])
            if op is None:
                op = eager_ops[key[1]] = OpInfo(line.type or "?", None, "%s (eager #%d)" % (line.type, key[1]),
                                                source=line.source)
            execution = Execution(key, line.fingerprint, op, step=line.step, eager_inputs=list(line.inputs or []))
        executions.append(execution)
        again[key] = line.again
    header = recorded.header
    run = Run(path, executions, ops, status="finished", tf_version=header.machine.tf_version,
              device=header.machine.device, fingerprint=fingerprint_used(header.fingerprint, header.machine.device))
    return recorded, run, again
