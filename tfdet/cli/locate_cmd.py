"""`tfdet locate SCRIPT [-- ARGS]`: which op made two runs of the same script differ."""

import argparse
import importlib.util
import json
import os
import signal

from . import arguments
from .exitcodes import ENVIRONMENT, FINDING, INTERRUPTED, INVALID_INPUT, OK, USAGE, WRITE_FAILED, CommandError
from .progress import Display, isatty
from .tables import fit_lines, output_width

DEFAULT_RUNS, DEFAULT_REPEATS = 2, 10  # tfdet.locating.api's defaults (not imported here: it is slow to)

HELP = "run a script several times and name the first op whose output differed, with its line and fix"

EPILOG = """\
Each of the --runs processes is a fresh Python process with the same arguments
and the same seeds (whatever the script sets; PYTHONHASHSEED is fixed), and runs
the script --repeats times (each time from the top, in the same process: no new
TensorFlow start-up); each call is a run, compared with the same call in the
first process. The defaults, 2 processes x 10 calls, compare 10 runs: a step
that differs in 30% of runs is caught 97% of the time, and "no difference"
says which per-run rate it rules out at 95%. Every op output is
fingerprinted as the script runs, in eager code and inside tf.function; the
runs are aligned op by op (graph ops by function, name and occurrence, eager
ops by order), and the first output that differed while every input it read
matched is the answer: the op that made the difference, not one it spread to.
Then the script runs twice more saving only that output, to say by how much.

examples:
  tfdet locate train.py                       # 2 processes x 10 calls, then the answer
  tfdet locate train.py --repeats 1           # one call per process: quicker, rules out less
  tfdet locate train.py --steps 5 -- --epochs 1   # capture 5 calls of a tf.function; the script gets --epochs 1
  tfdet locate train.py --patch               # the same, with tfdet.patch() applied first: is it fixed?
  tfdet locate train.py --json > where.json   # for machines (schema: locate-1.json)

Options go before the script, or after it and before `--`; what follows `--`
is the script's own arguments.

budget: --steps N stops capture after the N-th call of any top-level
tf.function (a Keras training step is one call); --max-bytes caps each run's
trace; --timeout stops a run that hangs (what it recorded is still compared).
Not instrumented: ops inside tf.data functions and jit_compile functions
(their results are still compared where they come out), TF1 sessions.

across environments (guide: "My results differ between my laptop and the server"):
  tfdet locate --record laptop.jsonl train.py     # on each machine: two runs' fingerprints + the machine
  tfdet locate --compare laptop.jsonl server.jsonl   # the first op that differs, inputs matching
  tfdet locate --between TF_ENABLE_ONEDNN_OPTS=0 TF_ENABLE_ONEDNN_OPTS=1 train.py   # both, on this machine
A side of --between is NAME=VALUE items separated by commas: a setting (threads=N,
execution=eager|function, xla=on|off, onednn=on|off) or an environment variable
(a value may hold spaces, not commas); '' runs as the caller's environment is.
The answer says whether the first difference is expected (the op is the same in
both runs of each side and the catalogue knows it sensitive to a setting that
changed) or unexplained, what differs between the environments, and how many
outputs could not be matched (other TF versions name and arrange ops otherwise).
exit codes of --record: 0 recorded, 3 nothing recorded; of --compare and
--between: 0 no difference, 1 a difference, 3 a file that is not a fingerprints
file (one line naming the file and line), two files fingerprinted differently
(farmhash64 on a CPU, sums2 on a GPU), or nothing recorded; and 2, 4, 5, 130
as below.

exit codes: 0 no difference, 1 the runs differed (like diff), 2 usage,
3 nothing to compare: no two runs finished (the script is missing, broken,
raised or timed out in every run, or ran no TensorFlow op; what they recorded
did not differ; traces and logs kept), 4 no TensorFlow, 5 a trace could not
be written (file too large, disk full) and what was written did not differ,
130 interrupted by Ctrl-C or SIGTERM (every run stopped, with what it started;
a --traces directory keeps what was recorded, a temporary one is removed).
"""


def add_parser(commands):
    parser = commands.add_parser("locate", help=HELP, description=HELP.capitalize() + ".", epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("script", metavar="SCRIPT", nargs="?", help="the Python script to run")
    parser.add_argument("script_args", metavar="ARGS", nargs=argparse.REMAINDER,
                        help="arguments for the script (after --)")
    parser.add_argument("--runs", type=arguments.positive_int, default=DEFAULT_RUNS,
                        help="processes to run the script in (default: %d)" % DEFAULT_RUNS)
    parser.add_argument("--repeats", type=arguments.positive_int, default=DEFAULT_REPEATS,
                        help="calls of the script in each process, each compared as a run (default: %d)"
                        % DEFAULT_REPEATS)
    parser.add_argument("--steps", type=arguments.steps, help="stop capture after N calls of a tf.function")
    parser.add_argument("--max-bytes", type=arguments.max_bytes, help="stop capture when a trace reaches this size")
    parser.add_argument("--timeout", type=arguments.timeout, help="seconds before a run is stopped (default: none)")
    parser.add_argument("--patch", action="store_true", help="apply tfdet.patch() in each run before the script")
    parser.add_argument("--fingerprint", choices=("farmhash64", "sums2"),
                        help="with --record: how graph outputs are fingerprinted (default: farmhash64 on a CPU, sums2 "
                        "on a GPU); record a CPU with sums2 to --compare it with a GPU's file")
    parser.add_argument("--no-detail", dest="detail", action="store_false",
                        help="skip the runs that measure the size of the difference")
    parser.add_argument("--traces", metavar="DIR", help="keep the traces in a new directory under DIR "
                        "(default: a temporary directory, kept only if a run failed)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON (schema: locate-1.json; "
                        "between-1.json for --compare and --between)")
    parser.add_argument("--catalog", metavar="PATH", help="with --compare and --between: a catalogue file or "
                        "directory whose sensitive_to facts say which differences are expected (default: the "
                        "shipped catalogue)")
    across = parser.add_mutually_exclusive_group()
    across.add_argument("--record", metavar="FILE", help="run the script twice here and keep its fingerprints and "
                        "this environment's description in FILE (schema: fingerprints-1.json)")
    across.add_argument("--compare", nargs=2, metavar=("A", "B"), help="compare two --record files: the first op "
                        "whose output differs while its inputs match, and whether that is expected")
    across.add_argument("--between", nargs=2, metavar=("A", "B"), help="record the script under side A and side B "
                        "(NAME=VALUE,...: settings or environment variables) on this machine, then compare")
    parser.set_defaults(run=run, locate_parser=parser)


def _split_arguments(args):
    """`tfdet locate [OPTIONS] SCRIPT [OPTIONS] -- ARGS`: options after the script, up to
    `--`, are locate's; what follows `--` is the script's. Without `--`, everything
    after the script is the script's (as `python SCRIPT ARGS` would take it)."""
    rest = list(args.script_args or ())
    if "--" not in rest:
        ours = [token for token in rest if token.split("=")[0] in args.locate_parser._option_string_actions]
        if ours:
            args.err.write("tfdet locate: note: %s went to the script; locate's own options go before the "
                           "script, or between it and --\n" % " ".join(ours))
        return args, rest
    cut = rest.index("--")
    ours, theirs = rest[:cut], rest[cut + 1:]
    if ours:
        args = args.locate_parser.parse_args(ours + [args.script], namespace=args)
    return args, theirs


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def run(args, out):
    try:
        previous = signal.signal(signal.SIGTERM, _interrupt)  # SIGTERM ends locate as Ctrl-C does
    except ValueError:  # not the main thread
        previous = None
    try:
        return _run(args, out)
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)


def _run(args, out):
    from ..locating import LocateError, LocateInterrupted, LocateWriteError, locate_script

    args, script_args = _split_arguments(args)
    across = args.compare or args.record or args.between
    ignored = [flag for flag, given in (("--runs", args.runs != DEFAULT_RUNS), ("--repeats", args.repeats != DEFAULT_REPEATS),
                                        ("--patch", args.patch), ("--no-detail", not args.detail)) if given]
    if across and ignored:
        raise CommandError("%s: --record, --compare and --between run each side twice, one call each; %s do not "
                           "apply" % (ignored[0], ", ".join(ignored)), USAGE)
    if not across and args.catalog:
        raise CommandError("--catalog applies to --compare and --between", USAGE)
    if args.fingerprint and not args.record:
        raise CommandError("--fingerprint applies to --record (a run and --between fingerprint alike on both sides)",
                           USAGE)
    if args.compare:
        if args.script:
            raise CommandError("--compare takes two recorded files, not a script (%s)" % args.script, USAGE)
        return _compare(args, out)
    if not args.script:
        raise CommandError("a SCRIPT to run is needed (or --compare A B)", USAGE)
    if args.record or args.between:
        return _across(args, script_args, out)
    if args.runs < 2:
        raise CommandError("--runs must be at least 2: locate compares runs", INVALID_INPUT)
    if not os.path.isfile(args.script):
        raise CommandError("%s: no such file" % args.script, INVALID_INPUT)
    # locate's runs say what they do only to a person at a terminal, as they always have
    progress = Display(args.err, "locate", quiet=args.json or not isatty(args.err))

    if importlib.util.find_spec("tensorflow") is None:  # each run needs it: say so once, here
        raise CommandError("tfdet locate needs TensorFlow, and this Python has none", ENVIRONMENT)
    try:
        result = locate_script(args.script, script_args, runs=args.runs, repeats=args.repeats, steps=args.steps,
                               max_bytes=args.max_bytes, timeout=args.timeout, traces=args.traces,
                               detail=args.detail, patch=args.patch, progress=progress.message)
    except LocateWriteError as exc:
        raise CommandError(str(exc), WRITE_FAILED) from None
    except OSError as exc:  # the traces directory: not writable, full, a file where it should be
        raise CommandError("cannot write the traces: %s%s" % (
            exc.strerror or exc, (": %s" % exc.filename) if exc.filename else ""), WRITE_FAILED) from None
    except LocateError as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    except LocateInterrupted as exc:
        raise CommandError(str(exc), INTERRUPTED) from None
    if args.json:
        json.dump(result.to_json(), out, indent=2, sort_keys=True)
        out.write("\n")
    else:
        render(result, out)
    if result.first_difference is not None:
        return FINDING
    if not result.runs_compared:
        return INVALID_INPUT  # no two runs finished: nothing the script was meant to do was compared whole
    return OK


def _compare(args, out):
    from ..locating.between import compare_files
    from ..results import ResultsError

    catalogue = arguments.load_catalogue_or_exit(args.catalog)
    try:
        result = compare_files(*args.compare, catalogue=catalogue)
    except ResultsError as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    return _answer(result, args, out)


def _across(args, script_args, out):
    """--record FILE SCRIPT, or --between A B SCRIPT."""
    from ..locating import LocateError, LocateInterrupted, Target
    from ..locating.sides import SideError, parse_side
    from ..results import ResultsError, ResultsWriteError

    if not os.path.isfile(args.script):
        raise CommandError("%s: no such file" % args.script, INVALID_INPUT)
    try:
        sides = [parse_side(text) for text in args.between or ()]
    except SideError as exc:
        raise CommandError("--between: %s" % exc, USAGE) from None
    if importlib.util.find_spec("tensorflow") is None:
        raise CommandError("tfdet locate needs TensorFlow, and this Python has none", ENVIRONMENT)
    catalogue = arguments.load_catalogue_or_exit(args.catalog) if args.between else None
    progress = Display(args.err, "locate", quiet=args.json or not isatty(args.err))
    target = Target(script=args.script, args=tuple(script_args))
    options = dict(steps=args.steps, max_bytes=args.max_bytes, timeout=args.timeout, traces=args.traces,
                   progress=progress.message)
    try:
        if args.record:
            from ..locating.record import record_target

            from ..locating.capture import FINGERPRINT_IDS

            method = {name: method for method, name in FINGERPRINT_IDS.items()}.get(args.fingerprint)
            header = record_target(target, args.record, method=method, **options)
            _recorded(header, args.record, out)
            return OK
        from ..locating.between import between_target

        result = between_target(target, sides[0], sides[1], catalogue=catalogue, **options)
    except (ResultsWriteError, OSError) as exc:
        raise CommandError(str(exc) if isinstance(exc, ResultsWriteError) else "cannot write: %s%s" % (
            exc.strerror or exc, (": %s" % exc.filename) if exc.filename else ""), WRITE_FAILED) from None
    except (LocateError, ResultsError) as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    except LocateInterrupted as exc:
        raise CommandError(str(exc), INTERRUPTED) from None
    return _answer(result, args, out)


def _recorded(header, path, out):
    machine = header.machine
    out.write("Recorded %d op outputs of %s in %s: %d varied between its two runs here.\n" % (
        header.outputs, header.target, path, header.outputs_varying))
    threads = "%s/%s" % (machine.intra_op_threads, machine.inter_op_threads)
    out.write("  TF %s on %s (%s), oneDNN %s, threads intra/inter %s, %s%s\n" % (
        machine.tf_version, machine.device.upper(), machine.cpu_model or "?", machine.onednn or "?",
        "0/0 (TF's default: one per core)" if threads == "0/0" else threads, machine.execution or "?",
        ("; %s" % ", ".join("%s=%s" % item for item in sorted(header.side.items()))) if header.side else ""))
    for note in header.notes:
        out.write("note: %s\n" % note)


def _answer(result, args, out):
    if args.json:
        json.dump(result.to_json(), out, indent=2, sort_keys=True)
        out.write("\n")
    else:
        render_between(result, out)
    return OK if result.verdict == "same" else FINDING


def render_between(result, out):
    width = output_width(out)
    out.write(fit_lines(result.summary, width) + "\n")
    first = result.first_difference
    lines = [("a", result.a), ("b", result.b)]
    if first is not None:
        lines.append(("op", "%s  %s%s" % (first.op_type, first.op_name,
                                          (" (b: %s)" % first.op_name_b) if first.op_name_b != first.op_name else "")))
        lines.append(("in", "%s%s" % (first.function or "eager code", (", step %d" % first.step) if first.step else "")))
        lines.append(("your code", first.source or "not in your code (made inside a library)"))
        lines.append(("measured", "; ".join("%s: %s" % (side, {True: "same in both runs", False: "varied between "
                                                                "its runs", None: "one run only"}[value])
                                            for side, value in sorted(first.stable_within.items()))))
        for setting, fact in sorted(first.sensitive_to.items()):
            said = [fact.get("note"), ("max %s ULP" % fact["max_ulp"]) if fact.get("max_ulp") is not None else None,
                    ", ".join(fact.get("sources") or ())]
            lines.append(("known", "%s changes it (%s)" % (setting, "; ".join(p for p in said if p))))
    for name, (a, b) in sorted(result.environment_changes.items()):
        lines.append(("changed", "%s: %s -> %s" % (name, _value(a), _value(b))))
    for unmatched in result.unmatched:
        lines.append(("unmatched", "%d outputs of %s, first: %s" % (unmatched.count, unmatched.side,
                                                                     "; ".join(unmatched.first))))
    for other in result.other_roots:
        lines.append(("also", other))
    for label, text in lines:  # continued under the value, as the labels have no colon for fit_lines to find
        out.write(_labelled(label, text, width) + "\n")
    out.write("Compared %d op outputs (%d differed); varied run to run within a side: a %d, b %d.\n" % (
        result.outputs_compared, result.outputs_differing, result.varying_within.get("a", 0),
        result.varying_within.get("b", 0)))
    for note in result.notes:
        out.write(fit_lines("note: %s" % note, width) + "\n")


def _labelled(label, text, width):
    import textwrap

    line = "  %-10s %s" % (label, text)
    if width is None or len(line) <= width:
        return line
    return textwrap.fill(text, width=width, initial_indent="  %-10s " % label, subsequent_indent=" " * 13,
                         break_on_hyphens=False)


def _value(value):
    if value is None:
        return "(unset)"
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or "[]"
    return str(value)


def render(result, out):
    width = output_width(out)
    first = result.first_difference
    out.write(result.verdict + "\n")
    if first is not None:
        lines = [("op", "%s  %s%s" % (first.op_type, first.op_name,
                                      (" (output %d)" % first.output_slot) if first.output_slot > 0 else
                                      " (the variable it wrote)" if first.output_slot < 0 else ""))]
        lines.append(("in", "%s%s" % (first.function or "eager code",
                                      (", step %d" % first.step) if first.step else "")))
        source = first.source or "not in your code (made inside a library)"
        if first.gradient_of:
            source += "  (the gradient of %s; taken at %s)" % (first.gradient_of, first.created_at or "?")
        lines.append(("your code", source))
        if first.made_in:
            lines.append(("made in", first.made_in))
        lines.append(("differed", "%s; between runs %d and %d; every input it read matched" % (
            first.size_in_words(), first.runs[0], first.runs[1])))
        if first.catalog_entries:
            lines.append(("catalogue", "%s: %s on %s with TF %s" % (
                ", ".join(first.catalog_entries), first.status, result.device.upper(), result.tf_version)))
            lines.append(("fix", first.fix or "none known"))
        else:
            lines.append(("catalogue", "no entry for %s: worth reporting" % first.op_type))
        for label, text in lines:
            out.write(fit_lines("  %-10s %s" % (label, text), width) + "\n")
        if result.spread:
            path = " -> ".join("%s%s" % (s.op_type, (" (step %d)" % s.step) if s.step else "") for s in result.spread)
            more = result.spread_total - len(result.spread)
            out.write(fit_lines("  %-10s %s%s" % ("then", path, (" ... (%d more)" % more) if more > 0 else ""),
                                width) + "\n")
        for other in result.other_roots:
            out.write(fit_lines("  %-10s %s (%s) at %s, step %s" % (
                "also", other.op_type, other.op_name, other.source or "?", other.step or "-"), width) + "\n")
    seconds = sum(o.seconds for o in result.run_outcomes)
    size = sum(o.trace_bytes for o in result.run_outcomes)
    out.write("Compared %d op outputs across %d runs (%.0f s, %s of traces)%s.\n" % (
        result.ops_compared, result.runs * result.calls, seconds, _bytes(size),
        ("; traces kept in %s" % result.traces) if result.traces else ""))
    for note in result.notes:
        out.write(fit_lines("note: %s" % note, width) + "\n")


def _bytes(size):
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return ("%d %s" % (size, unit)) if unit == "bytes" else ("%.1f %s" % (size, unit))
        size /= 1024.0
