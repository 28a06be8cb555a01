"""`tfdet probe`: measure run-to-run variance and the cost of determinism here."""

import argparse
import datetime
import os
import shutil
import signal
import sys

from . import arguments
from .exitcodes import ENVIRONMENT, FINDING, INTERRUPTED, INVALID_INPUT, OK, USAGE, WRITE_FAILED, CommandError

HELP = "measure which ops vary from run to run on this machine, and what determinism costs"

EPILOG = """\
Each mode runs in fresh TensorFlow processes (%(processes)s per mode by default):
  baseline  no determinism switch
  env       TF_DETERMINISTIC_OPS=1 and TF_CUDNN_DETERMINISTIC=1 set before TF is imported
  api       tf.config.experimental.enable_op_determinism() (TF 2.8 and later)
  patched   tfdet.patch() (when the workers' interpreter can run it: not a bare
            --python environment with only numpy and TF)
Every catalogued op that exists on this device is run repeatedly, forward and
with a random upstream gradient; entries that cannot run here are listed as
skipped, with the reason. Where the catalogue says an op varies here (or it
varied in another mode) and it has not varied yet, it is run again, in more
processes, up to --max-repeats runs (and 15 s of extra runs per case and mode),
before it is called deterministic; every "did not vary" states the per-run rate
it rules out (0 of 100 runs differed: a rate above 3.0%% is ruled out at 95%%).
On a machine with 2 cores or more, two modes run their cases at once
(--concurrent); the timing rounds always run one process at a time.

Results are written case by case, so an interrupted run keeps what it
measured. Without --out each run writes a new file,
tfdet-probe-YYYYMMDD-HHMMSS.jsonl, so the same command can be run again;
--resume continues the newest such file here (or --out FILE); an existing
--out FILE is only replaced with --overwrite. A results file has one writer:
a second probe on the same file (new, --resume or --overwrite) stops at once
with exit 2. --resume takes the file's parameters for every flag you leave
out, and refuses (exit 2, naming each one) a file made with another TF, Python,
tfdet or catalogue, and a flag given with a different value than the file's:
%(compared)s
What an older file does not record is assumed to match, with a note.

Modes: by default every mode this TF has (api needs TF 2.8; a missing one is
noted, not an error). A mode that was asked for with --modes and does not exist
for this TF, a mode whose processes cannot start, or one where no case gave a
measurement (all crashed, hung or failed) did not run: that is said first in the
summary and the report, recorded in the results file, and the run exits 4
unless --allow-missing-modes.

examples:
  tfdet probe                                  # the whole catalogue, default modes
  tfdet probe --ops unsorted-segment-sum,bincount --repeats 10
  tfdet probe --ops tf.math.bincount,DenseBincount  # any name tfdet catalog show takes
  tfdet probe --python ~/venvs/tf1.15/bin/python --out tf115.jsonl
  tfdet probe --fail-on-nondeterminism env     # exit 1 if anything varies under env
  tfdet probe --report report.html             # and an HTML report of the results
  tfdet probe --executor dask --scheduler tcp://10.0.0.5:8786 --out fleet/
                                               # every machine of a cluster, one file each

A fleet (--executor dask): every worker of the cluster runs this probe on its
own machine (tfdet and TensorFlow installed there); each machine's results land
in --out DIR as probe-<host>-<worker name>.jsonl, its header describing that
machine (GPU, driver, CUDA, cuDNN, TF), and a table shows what each found;
`tfdet report DIR/*.jsonl` puts them side by side. Each worker keeps its
machine's file as it goes (in $TFDET_FLEET_DIR or ~/.cache/tfdet/fleet), so
an interrupted fleet run continued with --resume --out DIR finishes each
machine's probe from its last finished case. A machine that fails is
reported and the others go on (exit 4).

exit codes: 0 done; 1 --fail-on-nondeterminism found variance; 2 usage (also
--resume of a file that does not exist: nothing is started); 3 invalid input (unknown op, unreadable results file); 4 environment: no
TensorFlow in that interpreter, or a mode did not run (see above; results and
report are still written; checked before the --fail-on-nondeterminism gate);
5 the results file (or scratch space, or report) could not be written: disk
full, no permission, read-only, a directory in the way (one line names the
path and the cause; the file ends at its last complete case, so --resume
continues it once the cause is fixed); 130 interrupted by Ctrl-C or SIGTERM
(finished cases kept, scratch space removed).
"""


def _epilog():
    """EPILOG with the settings' own defaults and the flags --resume compares (results/probe_settings.py),
    then what --vary does (cli/probe_vary_cmd.py)."""
    import textwrap

    from ..results import probe_settings
    from .probe_vary_cmd import EPILOG as VARY_EPILOG

    compared = textwrap.fill(", ".join(probe_settings.compared_flags()), width=79, initial_indent="  ",
                             subsequent_indent="  ")
    return EPILOG % {"processes": probe_settings.defaults()["processes"], "compared": compared} + "\n" + VARY_EPILOG


def _csv(text):
    return [part.strip() for part in text.split(",") if part.strip()]


DEFAULT_OUT = "tfdet-probe-%Y%m%d-%H%M%S.jsonl"


def _results_path(args):
    """--out, or a fresh timestamped file per run, or (--resume) the newest one here."""
    return arguments.newest_or_new(args, ("tfdet-probe-*.jsonl", "tfdet-probe.jsonl"),
                                   datetime.datetime.now().strftime(DEFAULT_OUT),
                                   "--resume: no tfdet-probe-*.jsonl here; name the file with --out FILE")


def _setting_argument(parser, field):
    """One ProbeSettings field as its flag; the default is None so that --resume
    sees what was given (the built-in default comes after, from the field)."""
    from ..results import MODES

    meta = field.metadata
    help_text = meta["help"].format(default=field.default, modes=", ".join(MODES))
    if meta["parse"] == "switch":
        parser.add_argument(meta["flag"], action="store_true", default=None, help=help_text)
        return
    kind = None if meta["parse"] is None else _csv if meta["parse"] == "csv" else getattr(arguments, meta["parse"])
    parser.add_argument(meta["flag"], type=kind, default=None, metavar=meta["metavar"], choices=meta["choices"],
                        help=help_text)


def add_parser(commands):
    from ..results import probe_settings

    parser = commands.add_parser("probe", help=HELP, description=HELP.capitalize() + ".", epilog=_epilog(),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    for field in probe_settings.fields():
        _setting_argument(parser, field)
    arguments.add_output_file(parser, "results file, JSON Lines (default: a new tfdet-probe-YYYYMMDD-HHMMSS.jsonl "
                                      "per run; with --resume, the newest one here)")
    parser.add_argument("--report", metavar="FILE",
                        help="after probing, also write an HTML report of the results to FILE (as tfdet report does)")
    parser.add_argument("--resume", action="store_true", help="continue a partial results file, skipping finished cases (--out FILE, or the newest "
                             "tfdet-probe-*.jsonl here)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing results file")
    parser.add_argument("--json", action="store_true",
                        help="with --vary: print the op x setting grid as JSON instead of a table")
    parser.add_argument("--fail-on-nondeterminism", metavar="MODE",
                        help="exit 1 if any case varies under MODE (for CI gates)")
    parser.add_argument("--allow-missing-modes", action="store_true",
                        help="a mode that did not run is reported but does not make the exit code 4")
    arguments.add_executor(
        parser, jobs_default=None,
        jobs_help="workers of the LocalCluster --executor dask starts without --scheduler (default 2)",
        executor_help="local (default): probe this machine; dask: probe every worker of a Dask cluster, one "
                      "results file per machine in the --out directory",
        scheduler_help="the Dask scheduler (tcp://host:8786); without it --executor dask starts a LocalCluster")
    arguments.add_quiet(parser, "no progress and no summary")
    parser.set_defaults(run=run)




def _claim(args):
    """Claim the results file before anything slow starts, so a second writer fails at once."""
    from ..results import ProbeResultsWriter, ResultsInUse, ResultsWriteError

    try:
        return ProbeResultsWriter(args.out, resume=args.resume, overwrite=args.overwrite)
    except ResultsInUse as exc:
        raise CommandError(str(exc), USAGE) from None
    except ResultsWriteError as exc:
        raise CommandError(str(exc), WRITE_FAILED) from None


def _given(args, digest):
    """What this run's flags say, in the results file's terms; None where a flag was left out."""
    from .. import __version__
    from ..results import probe_settings

    given = {"tfdet_version": __version__, "catalogue": digest}
    for field in probe_settings.fields():
        if field.metadata["resume"] == probe_settings.COMPARE:
            for name in field.metadata["header"] or (field.name,):
                given[name] = getattr(args, field.name)
    given.update(modes=sorted(args.modes) if args.modes else None, ops=sorted(args.ops) if args.ops else None)
    return given


def _resume_defaults(args, digest, writer):
    """--resume: refuse a flag given with another value than the file's; take
    the file's value for every flag left out. Returns notes for the user."""
    from ..results import ResultsError, probe_settings
    from ..results.probe_file import mismatch_message, recorded_settings, resume_parameters, unrecorded_parameters

    try:
        existing = writer.existing()
    except ResultsError as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    if existing is None:
        return []  # stopped before its header was written: nothing to compare with
    header = existing.header
    recorded = resume_parameters(header)
    given = _given(args, digest)
    if args.max_repeats is not None:  # the file records the effective value: at least processes x repeats
        builtin = probe_settings.defaults()
        processes = args.processes or recorded["processes"] or builtin["processes"]
        repeats = args.repeats or recorded["repeats"] or builtin["repeats"]
        given["max_repeats"] = max(args.max_repeats, processes * repeats)
    mismatches = [(name, recorded[name], value) for name, value in given.items()
                  if value is not None and recorded.get(name) is not None and recorded[name] != value]
    if mismatches:
        raise CommandError(mismatch_message(args.out, mismatches), USAGE)
    for name in probe_settings.resumed():
        value = probe_settings.recorded_value(name, recorded, recorded_settings(header))
        if getattr(args, name) is None and value is not None:
            setattr(args, name, value)
            if name == "threads":  # the file's inter-op threads too (the flag sets both)
                args.inter_threads = recorded["inter_op_threads"]
    if args.modes is None:
        args.modes = list(header.modes_asked)
        args.modes_requested = header.modes_requested if header.modes_requested is not None \
            else "--modes" in header.argv
    if args.ops is None:
        args.ops = header.case_ids
    unknown = [name for name in unrecorded_parameters(header) if name in given]
    if unknown:
        return ["%s does not record %s (an older tfdet wrote it); resuming as if they match" % (
            args.out, ", ".join(unknown))]
    return []


def run(args, out):
    from ..results import MODES

    if args.vary:
        from . import probe_vary_cmd

        return probe_vary_cmd.run(args, out)

    if args.resume and args.out and not os.path.exists(args.out):  # checked first: nothing loads, nothing starts
        raise arguments.nothing_to_resume("results file" if args.executor == "local" else "directory", args.out,
                                          "run without --resume to start it")
    if args.modes:
        bad = [m for m in args.modes if m not in MODES]
        if bad:
            raise CommandError("unknown mode %s; choose from %s" % (", ".join(bad), ", ".join(MODES)), USAGE)
    catalogue = arguments.load_catalogue_or_exit()
    if args.ops:
        from ..probe import fixture_ids, resolve_ops

        args.ops, unknown = resolve_ops(catalogue, args.ops, fixture_ids())
        if unknown:
            hints = [hint for _, suggestions in unknown for hint in suggestions[:1]]
            raise CommandError("--ops: no catalogue entry, API or raw op named %s%s (see tfdet catalog list "
                               "--status all)" % (", ".join(name for name, _ in unknown),
                                                  "; did you mean %s?" % ", ".join(hints) if hints else ""),
                               INVALID_INPUT)
    from . import probe_fleet_cmd

    probe_fleet_cmd.check(args)
    if args.python and args.executor == "local" and not (
            os.path.isfile(args.python) and os.access(args.python, os.X_OK)):
        raise CommandError("--python %s: no such executable" % args.python, USAGE)
    if args.fail_on_nondeterminism and args.modes and args.fail_on_nondeterminism not in args.modes:
        raise CommandError("--fail-on-nondeterminism %s: that mode is not being run (modes: %s)" % (
            args.fail_on_nondeterminism, ", ".join(args.modes)), USAGE)
    if args.executor == "dask":
        return probe_fleet_cmd.run(args, out)
    args.out = _results_path(args)
    writer = _claim(args)
    terminate = _end_like_ctrl_c_on_sigterm()
    try:
        return _run_claimed(args, out, catalogue, writer)
    finally:
        writer.close()
        if terminate is not None:
            signal.signal(signal.SIGTERM, terminate)


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _end_like_ctrl_c_on_sigterm():
    """SIGTERM (kill, timeout, a CI runner) ends the run as Ctrl-C does: finished
    cases kept, workers stopped, scratch removed, exit 130. Returns the handler
    it replaced (None where signals cannot be set: not the main thread)."""
    try:
        return signal.signal(signal.SIGTERM, _interrupt)
    except ValueError:
        return None


def _run_claimed(args, out, catalogue, writer):
    from ..probe import ProbeConfig, ProbeError, catalogue_digest, patch_available, run_probe
    from ..results import (MODES, ResultsError, ResultsInUse, ResultsMismatch, ResultsWriteError, describe_os_error,
                           interpret, read_probe)
    from ..results import probe_settings
    from .probe_summary import summarise
    from .progress import Display

    args.inter_threads = args.threads
    args.modes_requested = bool(args.modes)
    notes = _resume_defaults(args, catalogue_digest(), writer) if args.resume else []
    for name, value in probe_settings.defaults().items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    modes = args.modes or [m for m in MODES if m != "patched" or patch_available(args.python)]
    if args.fail_on_nondeterminism and args.fail_on_nondeterminism not in modes:
        raise CommandError("--fail-on-nondeterminism %s: that mode is not being run (modes: %s)" % (
            args.fail_on_nondeterminism, ", ".join(modes)), USAGE)
    for note in notes:
        args.err.write("tfdet probe: note: %s\n" % note)

    config = ProbeConfig(
        catalogue, args.out, python=args.python, modes=modes, processes=args.processes,
        repeats=args.repeats, size=args.size, rounds=args.rounds, seed=args.seed, execution=args.execution,
        intra_threads=args.threads, inter_threads=args.inter_threads,
        onednn=None if args.onednn == "default" else args.onednn == "on",
        timeout=args.timeout, ops=args.ops, resume=args.resume, argv=sys.argv[1:], max_repeats=args.max_repeats,
        modes_requested=args.modes_requested, results=writer, settle=bool(args.settle), startup=args.startup,
        settings={f.name: getattr(args, f.name) for f in probe_settings.fields()})
    progress = Display(args.err, "probe", quiet=args.quiet)
    interrupted = False
    try:
        run_probe(config, progress)
    except KeyboardInterrupt:
        interrupted = True
    except ProbeError as exc:
        raise CommandError(str(exc), ENVIRONMENT) from None
    except (ResultsInUse, ResultsMismatch) as exc:
        raise CommandError(str(exc), USAGE) from None
    except ResultsWriteError as exc:
        raise CommandError("%s (%s)" % (exc, "the file keeps every case finished before; continue with --resume "
                                             "once the cause is fixed" if writer.header is not None else
                                        "nothing was written; run again once the cause is fixed"),
                           WRITE_FAILED) from None
    except ResultsError as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    except OSError as exc:  # scratch space: the workers' arrays
        raise CommandError("%s (scratch space for the workers' output arrays; finished cases are kept in %s: "
                           "point TMPDIR at a disk with room and continue with --resume)" % (
                               describe_os_error(exc, "scratch space"), args.out), WRITE_FAILED) from None
    except ValueError as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    finally:
        progress.close()
    writer.close()
    if not os.path.exists(args.out):
        return INTERRUPTED if interrupted else ENVIRONMENT
    try:
        results = read_probe(args.out)
    except ResultsError as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    missing_modes = [p for p in interpret.mode_problems(results) if p.failure]
    if not args.quiet:
        out.write(summarise(results, width=shutil.get_terminal_size((120, 24)).columns) + "\n")
    if args.report:
        from . import report_cmd

        try:
            report = report_cmd.render([args.out], args.report, catalogue, out)
        except OSError as exc:
            raise CommandError(describe_os_error(exc, args.report), WRITE_FAILED) from None
        if not args.quiet:
            out.write(report_cmd.describe(report, args.report) + "\n")
    if interrupted:
        args.err.write("tfdet probe: interrupted; finished cases are in %s (continue with --resume)\n" % args.out)
        return INTERRUPTED
    if missing_modes and not args.allow_missing_modes:
        args.err.write("tfdet probe: error: %s did not run (exit %d; --allow-missing-modes accepts that)\n" % (
            ", ".join("mode " + p.mode for p in missing_modes), ENVIRONMENT))
        return ENVIRONMENT
    if args.fail_on_nondeterminism and interpret.varied_under(results, args.fail_on_nondeterminism):
        return FINDING
    return OK
