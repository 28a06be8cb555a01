"""tfdet.locate(): run a program several times in fresh processes and name the
first op whose output differed while its inputs matched, with the catalogue's
explanation and fix.

Two passes: every run fingerprints every op output (capture.py); when two
runs part, the programme is run twice more saving only the culprit's output in
full, to say by how much it differed.
"""

import os
import shutil
import tempfile
import threading

from .. import __version__
from ..results import stats
from ..results.arrays import load_array
from ..results.locate_records import KIND, SCHEMA_VERSION, Difference, LocateResult, Spread
from . import align, chains, measure
from .runs import Target, function_target, run_once, stop_all
from .trace_file import Execution, same_fingerprints

MAX_SPREAD = 12
MAX_OTHER_ROOTS = 5
CONFIDENCE = 0.95
# The defaults, from the statistics: each call of a second process is compared
# with the same call of the first, so 2 processes x 10 calls compare 10 runs. A
# step whose runs differ with probability p >= 0.3 then shows a difference with
# probability >= 1 - 0.7**10 = 97% (>= 95% needs 9), and 10 runs that all
# matched rule out a per-run rate above 1 - 0.05**(1/10) = 26% at 95%.
DEFAULT_RUNS = 2
DEFAULT_REPEATS = 10


class LocateError(Exception):
    """Locate could not compare anything (one line for the user)."""


class LocateWriteError(LocateError):
    """A run's trace could not be written (file too large, disk full), and what was
    written did not differ: nothing can be said."""


class LocateInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM during the runs; `traces` is the --traces directory keeping
    what they recorded, or None (a temporary one, removed)."""

    def __init__(self, traces):
        super().__init__("interrupted; " + ("the traces recorded so far are kept in %s" % traces if traces
                                           else "nothing kept"))
        self.traces = traces


def _judge(op_type, tf_version, device, apis=()):
    """(entry ids, status, fix) the catalogue gives for a raw op on this TF and device; apis:
    the public functions tfdet.patch() rebinds that made it (its advice then says the patch
    covers it, not "call the public function")."""
    from ..catalog import default_catalogue
    from ..scanning import findings
    from ..scanning.api import patch_plan

    catalogue = default_catalogue()
    try:
        plan = patch_plan(catalogue, tf_version, device)
        ruled_out = frozenset()
        if apis:  # made through a public function, not tf.raw_ops: the scan rules out raw-op-only entries alike
            from ..scanning.conditions import CatalogueChecks

            ruled_out = CatalogueChecks(catalogue).raw_ops_only
        hit = findings.hits([findings.Site(op_type, "", "", ruled_out, None, frozenset(apis))], catalogue,
                            tf_version, device, plan)
    except ValueError:  # a TF the catalogue does not cover
        return [], None, ""
    if not hit:
        return [], None, ""
    return list(hit[0].entries), hit[0].status, hit[0].fix


def _difference(execution, runs_pair, run, detail_stats=None):
    op = execution.op
    gradient_of, forward_source = None, None
    if op.forward:
        gradient_of, _, forward_source = op.forward.partition(" ")
    entries, status, fix = _judge(op.op_type, run.tf_version, run.device or "cpu", op.apis)
    stats = detail_stats or {}
    key = execution.key
    return Difference(
        op_type=op.op_type, op_name=op.name, function=op.graph, source=forward_source or op.source,
        gradient_of=gradient_of, created_at=op.source if forward_source else None, made_in=op.library,
        step=execution.step,
        occurrence=key[4] if key[0] == "g" else 0, output_slot=key[3] if key[0] == "g" else key[2],
        runs=list(runs_pair), max_abs_diff=stats.get("max_abs_diff"), max_ulps=stats.get("max_ulps"),
        values_differing=stats.get("values_differing"), values=stats.get("values"),
        catalog_entries=entries, status=status, fix=fix)


def _save_ref(execution):
    return _save_ref_of(execution.key)


def _detail(target, workdir, execution, call, options, notes, progress, links=(), attempts=4):
    """Run again saving only the culprit's output (and the folded links before it,
    chains.folded_links), until two runs differ there (at most `attempts` runs).
    Returns (stats, key): the size of the difference and the execution key it was
    measured at: the first link that differed at the culprit's occurrence (the op
    that made the difference, chains.py), else the culprit at that occurrence, else
    where it differed most. (None, None) when no two runs differed. `call`: the call
    of the program it differed in; each detail process calls the program up to there."""
    ref = _save_ref(execution)
    refs = [tuple(link) for link in links] + [ref]
    occurrence = execution.key[4] if execution.key[0] == "g" else None
    order = [("g",) + link + (occurrence,) for link in refs[:-1]] + [execution.key]
    saved = []
    for index in range(attempts):
        progress("detail run %d (at most %d): saving %s" % (index + 1, attempts, execution.op.name))
        calls = run_once(target, workdir, index, save=refs, **dict(options, repeats=call + 1))
        run = calls[call][0] if len(calls) > call else None
        saved.append(run.saved if run is not None else {})
        found = []
        for earlier in saved[:-1]:
            compared = {}

            def differs(key, earlier=earlier, compared=compared):
                if key not in earlier or key not in saved[-1]:
                    return None
                if key not in compared:
                    compared[key] = measure.difference(load_array(earlier[key]), load_array(saved[-1][key]))
                return compared[key]["values_differing"]

            first = chains.first_differing(order, differs)
            if first is not None:
                return compared[first], first
            for key in sorted(set(earlier) & set(saved[-1])):
                if _save_ref_of(key) in refs and differs(key):
                    found.append((refs.index(_save_ref_of(key)), key != execution.key,
                                  -(compared[key]["max_abs_diff"] or 0), key, compared[key]))
        if found:
            best = min(found, key=lambda item: item[:3])
            return best[4], best[3]
    notes.append("%d detail runs gave %s the same values: it varies only some of the time, so the size of "
                 "its difference was not measured" % (attempts, execution.op.name))
    return None, None


def _save_ref_of(key):
    """The save ref of an execution key (its occurrence left out)."""
    return (key[1], key[2], key[3]) if key[0] == "g" else (key[1], key[2])


def _resolved_note(op, root):
    """Why the answer is an op whose output the compared runs did not fingerprint."""
    return ("%s (%s) made the difference: its output, read only by elementwise ops, was not fingerprinted in "
            "the compared runs, where %s (%s) stood for it; the detail runs saved both, and %s differed first"
            % (op.op_type, op.name, root.op.op_type, root.op.name, op.op_type))


def _unresolved_note(run, links, root, detail):
    names = ", ".join("%s (%s)" % (run.ops[(g, n)].op_type, n) for g, n, _ in links if (g, n) in run.ops)
    why = "the detail runs were skipped" if not detail else "no two detail runs differed there"
    return ("%s (%s) reads outputs that were not fingerprinted (%s; capture folds an output read only by an "
            "elementwise op into its reader's): one of them may have made the difference, and %s"
            % (root.op.op_type, root.op.name, names, why))


def _verdict(first, compared, processes, repeats, evidence):
    runs = "%d runs" % processes if repeats == 1 else "%d runs (%d processes x %d calls)" % (
        processes * repeats, processes, repeats)
    if first is None:
        if not evidence.compared:
            return ("No difference in the %d op outputs recorded, but no two runs finished to be compared "
                    "(see the notes)." % compared)
        if evidence.differing:
            return ("No op output differed with matching inputs in the %d compared across %s, but %d of %d runs "
                    "did not match their counterpart (see the notes)." % (compared, runs, evidence.differing,
                                                                         evidence.compared))
        return "No difference: %d op outputs matched across %s; %s." % (compared, runs, evidence.describe())
    where = first.function or "eager code"
    step = (", step %d" % first.step) if first.step else ""
    return "First difference: %s (%s) in %s%s, at %s." % (first.op_type, first.op_name, where, step,
                                                           first.source or "an unknown line")


class Evidence:
    """How many runs that finished were compared with their counterpart, and how many differed."""

    def __init__(self, compared, differing):
        self.compared, self.differing = compared, differing

    @property
    def rate_ruled_out(self):
        """With no run differing: the per-run rate of differing ruled out at 95%; else None."""
        if self.differing or not self.compared:
            return None
        return round(stats.max_rate_ruled_out(self.compared, CONFIDENCE), 4)

    def describe(self):
        return stats.describe_ruled_out(self.compared, CONFIDENCE)


def _run_all(target, workdir, runs, jobs, options, progress):
    """Every process's calls [(Run, RunOutcome), ...], in process order; `jobs` processes at a time.
    Interrupted (Ctrl-C, SIGTERM): every process still running is killed, with what it started."""
    repeats = options.get("repeats", 1)
    what = target.describe() + ((", %d calls in each" % repeats) if repeats > 1 else "")
    if jobs <= 1:
        results = []
        for index in range(runs):
            progress("run %d of %d: %s" % (index + 1, runs, what))
            results.append(run_once(target, workdir, index, **options))
        return results
    from concurrent.futures import ThreadPoolExecutor

    progress("%d runs, %d at a time: %s" % (runs, jobs, what))
    stopping = threading.Event()

    def one(index):
        if stopping.is_set():
            raise KeyboardInterrupt
        return run_once(target, workdir, index, **options)

    pool = ThreadPoolExecutor(max_workers=jobs)  # threads only wait on the processes
    try:
        return list(pool.map(one, range(runs)))
    except BaseException:
        stopping.set()
        stop_all()
        raise
    finally:
        pool.shutdown(wait=True)


def _workdir(traces):
    """A directory of this invocation's own: under `traces` when given (two locates
    sharing one --traces never touch each other's files), else a temporary one."""
    if traces:
        os.makedirs(traces, exist_ok=True)
        return tempfile.mkdtemp(prefix="locate-", dir=traces)
    return tempfile.mkdtemp(prefix="tfdet-locate-")


def _pairs(processes):
    """(call, base (process, Run), [(process, Run), ...]) for each call any two processes recorded:
    a call is compared only with the same call of the other processes."""
    most = max((len(calls) for calls in processes), default=0)
    pairs = []
    for call in range(most):
        usable = [(index, calls[call][0]) for index, calls in enumerate(processes)
                  if len(calls) > call and calls[call][0] is not None and calls[call][0].executions]
        if len(usable) >= 2:
            pairs.append((call, usable[0], usable[1:]))
    return pairs


def locate_target(target, runs=2, steps=None, max_bytes=None, timeout=None, traces=None, detail=True,
                  method=None, patch=False, jobs=1, progress=None, repeats=1):
    """Run `target` (runs.Target) in `runs` processes, calling it `repeats` times in
    each, and compare every call with the same call in the first process. Returns
    a LocateResult. traces: a directory to keep the traces in (each invocation
    gets its own subdirectory there; default: a temporary directory, removed
    unless something failed). patch: apply tfdet.patch() in each run first.
    jobs: processes at a time. Raises LocateError when no run left anything to
    compare, LocateWriteError when a trace could not be written and nothing
    differed in what was, LocateInterrupted on Ctrl-C or SIGTERM (every process
    is stopped; a temporary traces directory is removed)."""
    if runs < 2:
        raise ValueError("locate needs at least 2 runs to compare, not %d" % runs)
    if repeats < 1:
        raise ValueError("locate needs at least 1 call in each run, not %d" % repeats)
    progress = progress or (lambda message: None)
    workdir = _workdir(traces)
    options = {"steps": steps, "max_bytes": max_bytes, "timeout": timeout, "method": method, "patch": patch,
               "repeats": repeats}
    try:
        return _locate(target, runs, repeats, workdir, bool(traces), detail, jobs, options, progress)
    except KeyboardInterrupt:
        stop_all()
        if not traces:
            shutil.rmtree(workdir, ignore_errors=True)
        raise LocateInterrupted(workdir if traces else None) from None
    except LocateWriteError:
        if not traces:
            shutil.rmtree(workdir, ignore_errors=True)  # what filled the disk goes
        raise


def _locate(target, runs, repeats, workdir, keep, detail, jobs, options, progress):
    outcomes, notes = [], []
    processes = _run_all(target, workdir, runs, jobs, options, progress)
    for calls in processes:
        for _, outcome in calls:
            outcomes.append(outcome)
            if outcome.status != "finished":
                notes.append("run %d (process %d, call %d) %s: %s" % (
                    outcome.process * repeats + outcome.call, outcome.process, outcome.call, outcome.status,
                    outcome.detail))
        ended = [outcome.status for _, outcome in calls]
        if len(ended) > 1 and ended[0] == "finished" and ended[-1] == "raised":
            notes.append("process %d stopped after call %d: the program raised when called again in the same "
                         "process (with repeats=1 it runs once per process)" % (calls[0][1].process, len(ended)))
    failed = any(outcome.status != "finished" for outcome in outcomes)
    write_failures = [o for o in outcomes if o.status == "write-failed"]
    pairs = _pairs(processes)
    if not pairs:
        if write_failures:
            raise LocateWriteError("a trace could not be written: %s" % write_failures[0].detail)
        reason = ("the program ran no TensorFlow op that could be fingerprinted (locate sees eager ops and "
                  "tf.function graphs; not the ops a tf.compat.v1 Session runs)"
                  if all(o.status == "finished" for o in outcomes) else "; ".join(notes))
        raise LocateError("nothing to compare: %s (traces and logs kept in %s)" % (reason, workdir))
    found, comparisons, compared_whole, differing, unmatched_noted = None, [], 0, 0, False
    for call, (base_index, base), others in pairs:
        position = None
        for index, run in others:
            refused = same_fingerprints((base.fingerprint, base.device), (run.fingerprint, run.device), base.path,
                                        run.path)
            if refused:  # one tfdet writes every run of a locate alike: only a trace from elsewhere differs
                raise LocateError(refused)
            comparison = align.compare(base, run)
            comparisons.append(comparison)
            compared_whole += base.status == "finished" and run.status == "finished"
            # a run that took another path (or whose capture stopped elsewhere) differed too
            differing += bool(comparison.roots or comparison.spread or comparison.unmatched is not None)
            if comparison.unmatched is not None and not unmatched_noted:
                unmatched_noted = True
                notes.append("run %d has no counterpart for %s (%s): the runs took different paths, or capture "
                             "stopped earlier in one; compared up to there" % (
                                 index * repeats + call, comparison.unmatched.op.name,
                                 comparison.unmatched.op.op_type))
            if comparison.first is not None:
                if position is None:
                    position = {execution.key: at for at, execution in enumerate(base.executions)}
                rank = (call, position[comparison.first.key])
                if found is None or rank < found[0]:
                    found = (rank, call, (base_index * repeats + call, index * repeats + call), base,
                             comparison)
    compared = min(c.compared for c in comparisons)
    evidence = Evidence(compared_whole, differing)
    first, other_roots, spread, spread_total = None, [], [], 0
    if found is not None:
        _, call, pair, base, comparison = found
        execution = comparison.first
        links = chains.folded_links(base, execution)
        stats_, key = _detail(target, workdir, execution, call, options, notes, progress,
                              links) if detail else (None, None)
        if key is not None and key != execution.key and (key[1], key[2]) in base.ops:
            notes.append(_resolved_note(base.ops[(key[1], key[2])], execution))
            execution = Execution(key, None, base.ops[(key[1], key[2])], step=execution.step)
        elif links and key is None:
            notes.append(_unresolved_note(base, links, execution, detail))
        first = _difference(execution, pair, base, stats_)
        other_roots = [_difference(root, pair, base) for root in comparison.roots[1:1 + MAX_OTHER_ROOTS]]
        spread_total = len(comparison.spread)
        spread = [Spread(op_type=s.op.op_type, op_name=s.op.name, function=s.op.graph, step=s.step)
                  for s in comparison.spread[:MAX_SPREAD]]
        if write_failures:
            notes.append("a trace could not be written (%s): the difference was found in what was"
                         % write_failures[0].detail)
    elif write_failures:
        raise LocateWriteError("a trace could not be written, so the runs were not compared whole: %s"
                               % write_failures[0].detail)
    base = pairs[0][1][1]
    if base.stopped_by and base.stopped_by != "write-failed":
        notes.append("capture stopped on purpose (%s): what ran after was not compared" % base.stopped_by)
    kept = workdir if (keep or failed) else None
    if kept is None:
        shutil.rmtree(workdir, ignore_errors=True)
    return LocateResult(
        kind=KIND, schema_version=SCHEMA_VERSION, tfdet_version=__version__, tf_version=base.tf_version or "",
        device=base.device or "cpu", target=target.describe(), runs=runs, ops_compared=compared,
        verdict=_verdict(first, compared, runs, repeats, evidence), first_difference=first,
        other_roots=other_roots, spread=spread, spread_total=spread_total, run_outcomes=outcomes, traces=kept,
        notes=notes, calls=repeats, runs_compared=evidence.compared, runs_differing=evidence.differing,
        rate_ruled_out=evidence.rate_ruled_out)


def locate_script(script, args=(), **options):
    """Locate the first difference between runs of a Python script (see locate_target)."""
    if not os.path.isfile(script):
        raise LocateError("%s: no such file" % script)
    return locate_target(Target(script=script, args=tuple(args)), **options)


def locate(fn, *args, runs=DEFAULT_RUNS, repeats=DEFAULT_REPEATS, steps=None, max_bytes=None, timeout=None,
           traces=None, detail=True, patch=False, **kwargs):
    """Call fn(*args, **kwargs) `repeats` times in each of `runs` fresh processes with
    capture on and return where their op outputs first differed (a LocateResult;
    .first_difference is None when nothing did, and .rate_ruled_out says what
    that rules out). fn must be a top-level function of an importable module
    (each process imports it again). Defaults: see DEFAULT_REPEATS."""
    return locate_target(function_target(fn, args, kwargs), runs=runs, repeats=repeats, steps=steps,
                         max_bytes=max_bytes, timeout=timeout, traces=traces, detail=detail, patch=patch)
