"""`tfdet probe --vary SETTINGS`: which settings change which ops' bits here.

Reached from cli/probe_cmd.py when --vary is given; the flags are probe's."""

import datetime
import json
import os
import signal
import sys

from . import arguments
from .exitcodes import ENVIRONMENT, INTERRUPTED, INVALID_INPUT, OK, USAGE, WRITE_FAILED, CommandError

EPILOG = """\
--vary SETTING,... measures, per op, whether its bits change with a setting,
kept apart from run-to-run variance. Every setting runs in a fresh TensorFlow
process (TensorFlow reads these once), and each case runs --repeats times
(default 2 with --vary) in each, so "differs" is only said when each setting
gave one result over all its runs; an op that did not is "varies run to run".
The reference: TF_ENABLE_ONEDNN_OPTS=1, intra/inter-op threads = the cores,
eager execution, no XLA, one replica. The settings:
  onednn     TF_ENABLE_ONEDNN_OPTS=0
  threads    intra- and inter-op threads = 1
  execution  inside tf.function instead of eagerly
  xla        tf.function(jit_compile=True)
  batch      row 0 of a batched op on its own vs inside its batch (forward ops
             with a batch dimension; no process of its own)
  replicas   a gradient over a global batch split across K MirroredStrategy
             replicas on K logical CPU devices vs one replica, K = 2, 3, 4 (two
             cannot show order: a+b = b+a), each K in its own process; and on
             a loopback MultiWorkerMirroredStrategy cluster of K = 3, 4 worker
             processes on localhost (vs one replica, and vs K replicas in one
             process)
The cases are about 40 dense ops models are made of (MatMul, Conv2D and its
gradients, reductions, softmax, LayerNorm, attention, Embedding, LSTM, GRU,
elementwise, a 2-layer MLP's gradients); --ops picks some by case name, API or
raw op. Records are written as each (op, setting) is decided; --resume
continues a file. `tfdet report FILE` draws the op x setting grid, and
`tfdet catalog update FILE` turns it into sensitive_to facts.

exit codes (--vary): 0 done; 2 usage (unknown setting, --vary with --modes
or --python); 3 unknown op, unreadable results file; 4 a setting's process
could not run (its cells say failed), or a fleet machine did not finish; 5
the results file or report could not be written; 130 interrupted (finished
cells kept). --jobs N runs N settings' processes at once (default 2).

A fleet (--executor dask [--scheduler ADDR]): every worker of the cluster
runs the same --vary run on its own machine, into DIR/vary-<machine>.jsonl
(--out DIR; --report PAGE writes PAGE's name with -<machine> per machine);
--resume continues every machine cell by cell, and `tfdet catalog update
--from DIR/vary-*.jsonl` keeps each machine's facts.

examples:
  tfdet probe --vary onednn,threads,execution,xla,replicas
  tfdet probe --vary batch --ops matmul,conv2d,softmax --json
  tfdet probe --vary threads --ops reduce-sum --out vary.jsonl --report vary.html
  tfdet probe --vary onednn,threads,xla --executor dask --scheduler tcp://10.0.0.5:8786 --out fleet/
"""

DEFAULT_OUT = "tfdet-vary-%Y%m%d-%H%M%S.jsonl"


def check(args):
    """Usage errors of a --vary run, before anything starts."""
    from ..probe.vary_plan import parse_settings

    settings, problems = parse_settings(args.vary)
    if problems:
        raise CommandError("--vary: %s" % "; ".join(problems), USAGE)
    for flag, given in (("--modes", args.modes), ("--python", args.python),
                        ("--fail-on-nondeterminism", args.fail_on_nondeterminism)):
        if given:
            raise CommandError("--vary cannot be combined with %s" % flag, USAGE)
    arguments.check_executor(args)
    if args.executor == "dask" and args.resume and args.overwrite:
        raise CommandError("--resume and --overwrite exclude each other", USAGE)
    return settings


def resolve_cases(names):
    """(case ids, unknown names): --ops against the dense cases' ids, APIs and raw ops."""
    from ..probe.cases_dense import DENSE_CASES

    if not names:
        return list(DENSE_CASES), []
    found, unknown = [], []
    for name in names:
        hits = [c.id for c in DENSE_CASES.values() if name == c.id or name in c.names]
        if not hits:
            unknown.append(name)
        for hit in hits:
            if hit not in found:
                found.append(hit)
    return [c for c in DENSE_CASES if c in found], unknown


def tf_version():
    """The installed TensorFlow's version, from its distribution (no TensorFlow import)."""
    from importlib import metadata

    for name in ("tensorflow", "tensorflow-cpu", "tensorflow-intel", "tf-nightly"):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def _results_path(args):
    return arguments.newest_or_new(args, ("tfdet-vary-*.jsonl",), datetime.datetime.now().strftime(DEFAULT_OUT),
                                   "--resume: no tfdet-vary-*.jsonl here; name the file with --out FILE")


def run(args, out):
    from ..probe.vary_run import VaryConfig, VaryMismatch, run_vary
    from ..results import ResultsError, ResultsInUse, ResultsWriteError
    from ..results.jsonl import JsonLinesWriter
    from ..results.vary_file import read_vary
    from .progress import Display

    settings = check(args)
    if args.resume and args.out and not os.path.exists(args.out):
        raise CommandError("--resume: %s does not exist; run without --resume to start it" % args.out, USAGE)
    cases, unknown = resolve_cases(args.ops)
    if unknown:
        raise CommandError("--ops: no --vary case, API or raw op named %s" % ", ".join(unknown), INVALID_INPUT)
    if args.executor == "dask":  # each machine has its own TensorFlow
        from . import probe_vary_fleet

        return probe_vary_fleet.run(args, out, settings, cases)
    version = tf_version()
    if version is None:
        raise CommandError("no TensorFlow in this interpreter (pip install tensorflow-cpu)", ENVIRONMENT)
    args.out = _results_path(args)
    try:
        writer = JsonLinesWriter(args.out, resume=args.resume, overwrite=args.overwrite)
    except ResultsInUse as exc:
        raise CommandError(str(exc), USAGE) from None
    except ResultsWriteError as exc:
        raise CommandError(str(exc), WRITE_FAILED) from None
    previous = _sigterm_as_interrupt()
    progress = Display(args.err, "probe --vary", quiet=args.quiet or args.json)
    config = VaryConfig(writer, settings, cases, repeats=args.repeats or 2, seed=args.seed or 0, jobs=args.jobs or 2,
                        timeout=max(600.0, args.timeout or 0), argv=sys.argv[1:], tf_version=version)
    interrupted = False
    try:
        run_vary(config, progress)
    except KeyboardInterrupt:
        interrupted = True
    except VaryMismatch as exc:
        raise CommandError(str(exc), USAGE) from None
    except ResultsWriteError as exc:
        raise CommandError("%s (finished cells are kept; continue with --resume once the cause is fixed)" % exc,
                           WRITE_FAILED) from None
    except ResultsError as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    finally:
        progress.close()
        writer.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if not os.path.exists(args.out):
        return INTERRUPTED if interrupted else ENVIRONMENT
    try:
        results = read_vary(args.out)
    except ResultsError as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    from ..report.vary_grid import build_grid, grid_json, grid_text

    grid = build_grid(results)
    if args.json:
        out.write(json.dumps(dict(grid_json(grid), results=args.out), indent=1) + "\n")
    elif not args.quiet:
        out.write(grid_text(grid) + "\n")
        out.write("results: %s%s\n" % (args.out, "; %.0f s" % results.end.seconds if results.end else ""))
    if args.report:
        from . import report_cmd

        report_cmd.render([args.out], args.report, None, out)
        if not args.quiet and not args.json:
            out.write(report_cmd.describe(grid, args.report) + "\n")
    if interrupted:
        args.err.write("tfdet probe: interrupted; finished cells are in %s (continue with --resume)\n" % args.out)
        return INTERRUPTED
    if grid.counts.get("failed"):
        args.err.write("tfdet probe: error: %d cells failed (a setting's process did not run them; exit %d)\n" % (
            grid.counts["failed"], ENVIRONMENT))
        return ENVIRONMENT
    return OK


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _sigterm_as_interrupt():
    try:
        return signal.signal(signal.SIGTERM, _interrupt)
    except ValueError:
        return None
