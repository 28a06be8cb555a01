"""`tfdet scan MODEL`: every catalogued source of nondeterminism a model's training will hit."""

import argparse
import importlib.util
import inspect
import json
import os

from .. import catalog
from . import arguments
from .exitcodes import ENVIRONMENT, FINDING, INVALID_INPUT, OK, CommandError
from .tables import FIX, FIXED, KEY, Column, fit_lines, output_width, print_table

HELP = "which catalogued nondeterministic ops a model's training will hit, and the fix for each"

LEVELS = ("nondeterministic", "raises", "unknown")

EPILOG = """\
MODEL is a Keras .keras file, a Keras 2 / tf_keras .h5 file (read with
tf_keras when it is installed: pip install tfdet[keras2]), or a SavedModel
directory. The scan traces the inference call and the whole training step
Keras runs (forward, loss, gradient, optimizer update, metric updates) and
judges every raw op in those graphs against the catalogue, for the TF version
and device you will train on. It imports TensorFlow (a few seconds).

examples:
  tfdet scan model.keras                                  # the installed TF, on GPU
  tfdet scan model.keras --tf-version 2.6 --device gpu    # for a TF 2.6 GPU cluster
  tfdet scan model.keras --fail-on nondeterministic       # a CI gate: exit 1 if anything remains
  tfdet scan model.keras --no-assume-patched --json       # stock TF, for machines
  tfdet scan trusted.h5 --unsafe                          # its Lambda layers' code runs

outcome of each op, after the fixes tfdet.patch() would apply on that plan
(--no-assume-patched: stock TF): fixed, unknown (the catalogue has no claim for
this version and device; counted apart, never as "will vary"), raises (TF
raises with determinism on and nothing replaces the op), nondeterministic. An
entry with no row for the device does not apply there (TF32 on a CPU).
--fail-on LEVEL exits 1 when an op at or above LEVEL remains
(nondeterministic > raises > unknown).

model files are not trusted: a .keras or .h5 file whose layers carry Python
code (a Lambda layer's bytecode) is refused before it is loaded, since loading
would run that code; --unsafe loads it (only for a file you trust).
--custom-objects runs the Python file you give. A SavedModel holds no Python.

exit codes: 0 done (and the gate passed), 1 the --fail-on gate failed, 2 usage,
3 the model cannot be read, trusted or traced (a specific message), 4 no TensorFlow.
"""


def add_parser(commands):
    parser = commands.add_parser("scan", help=HELP, description=HELP.capitalize() + ".", epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", metavar="MODEL", help="a .keras or .h5 file, or a SavedModel directory")
    parser.add_argument("--tf-version", type=arguments.tf_version,
                        help="the TF version you will train with (default: the installed one)")
    parser.add_argument("--device", choices=catalog.DEVICES, default="gpu", help="where you will train (default: gpu)")
    parser.add_argument("--fail-on", choices=LEVELS, help="exit 1 if an op at or above this level remains")
    parser.add_argument("--no-assume-patched", dest="assume_patched", action="store_false",
                        help="judge stock TF, not TF with tfdet.patch()")
    parser.add_argument("--custom-objects", metavar="MODULE.py",
                        help="a Python file defining the custom layers, losses or metrics the model uses "
                             "(it runs, as Python)")
    parser.add_argument("--unsafe", action="store_true",
                        help="load a file whose layers carry Python code (a Lambda layer), which runs: only for a "
                             "file you trust (default: refused, exit 3)")
    parser.add_argument("--all", action="store_true", help="also list catalogued ops that are deterministic")
    parser.add_argument("--json", action="store_true", help="print the report as JSON (schema: scan-1.json)")
    parser.set_defaults(run=run)


def _custom_objects(path):
    if path is None:
        return None
    if not os.path.isfile(path):
        raise CommandError("--custom-objects %s: no such file" % path, INVALID_INPUT)
    spec = importlib.util.spec_from_file_location("tfdet_custom_objects", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        raise CommandError("--custom-objects %s: %s: %s" % (path, type(exc).__name__, exc), INVALID_INPUT) from None
    return {name: value for name, value in vars(module).items()
            if not name.startswith("_") and (inspect.isclass(value) or inspect.isfunction(value))}


def run(args, out):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")  # TF's start-up chatter is not the answer
    from ..scanning import ScanError, load_model, scan


    if args.tf_version:
        try:
            catalog.answering_version(args.tf_version)  # older than the catalogue: refused before any tracing
        except catalog.UncoveredVersionError as exc:
            raise CommandError(str(exc), INVALID_INPUT) from None
    custom = _custom_objects(args.custom_objects)
    try:
        notes = []
        model = load_model(args.model, custom, notes, safe_mode=not args.unsafe)
        report = scan(model, tf_version=args.tf_version, device=args.device, assume_patched=args.assume_patched,
                      name=args.model, notes=notes, fresh=False)  # its weights come from the file
    except ScanError as exc:  # found before TensorFlow is imported where it can be: a typo answers at once
        raise CommandError(str(exc), INVALID_INPUT) from None
    except ImportError as exc:
        raise CommandError("tfdet scan needs TensorFlow and Keras: %s" % exc, ENVIRONMENT) from None
    if args.json:
        json.dump(report.to_json(), out, indent=2, sort_keys=True)
        out.write("\n")
    else:
        render(report, out, show_all=args.all)
    if args.fail_on:
        from ..scanning.findings import fails

        if fails(report.hits, args.fail_on):
            return FINDING
    return OK


def _groups(assume_patched):
    """(outcome, heading) in order of severity: the table is grouped by what remains."""
    return (("nondeterministic", "Will vary from run to run"), ("raises", "Will raise once determinism is on"),
            ("unknown", "Not known for this TF version"),
            ("fixed", "Fixed by tfdet.patch()" if assume_patched else "Deterministic here"))


def render(report, out, show_all=False):
    out.write("%s\n" % report.verdict)
    shown = [h for h in report.hits if show_all or h.status not in ("deterministic", "not_applicable")]
    if shown:
        columns = [Column("OP", KEY), Column("N", FIXED), Column("PASS", KEY), Column("FIX", FIX)]
        for outcome, heading in _groups(report.assume_patched):
            group = [h for h in shown if h.outcome == outcome]
            if group:
                out.write("\n%s (%d):\n" % (heading, len(group)))
                print_table(out, columns, [[h.op_type, h.count, ",".join(h.passes), h.fix or "-"] for h in group])
        width = output_width(out)
        open_hits = [h for h in shown if h.outcome != "fixed" or show_all]
        if open_hits:
            out.write("\nwhere they are made%s:\n" % ("" if show_all else " (what remains; --all for every op)"))
        for hit in open_hits:
            out.write(fit_lines("  %s: %s" % (hit.op_type, "; ".join(hit.where) or "-"), width) + "\n")
    hidden = len(report.hits) - len(shown)
    out.write("\nTF %s judged (traced with %s) on %s; %s; %d raw op types in %s.%s\n" % (
        report.tf_version, report.traced_with, report.device.upper(),
        "after tfdet.patch()" if report.assume_patched else "stock TF", report.op_types, ", ".join(report.graphs),
        " %d catalogued deterministic op%s not shown (--all)." % (hidden, "" if hidden == 1 else "s")
        if hidden else ""))
    for note in report.notes:
        out.write("note: %s\n" % note)
