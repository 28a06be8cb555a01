"""`tfdet report`: one HTML page from one or more probe results files."""

import argparse
import datetime
import os

from . import arguments
from .exitcodes import FINDING, INVALID_INPUT, OK, USAGE, WRITE_FAILED, CommandError

HELP = ("an HTML report of probe results (what varies, what fixes it, what it costs), of a locate result, or of "
        "a diverge run")

EPILOG = """\
Rows are catalogue entries and their pass (forward, gradient); columns are the
runs (files) and their modes. Cells are coloured by outcome; hover or click a
cell for its figures. The page also lists each run's environment and what
differs between runs, where a measurement disagrees with the catalogue's claim
for that TF version and device, and charts of the cost of determinism and of
how much results vary. The page is self-contained: no scripts, no network.

A `tfdet locate --json` file gives a page of its own: the op that made the
runs differ, the user's line, the size of the difference, the fix, and how
the difference spread through the step.

A `tfdet diverge` results file gives a page of its own too: a verdict (how
much runs with the same seeds disagree, what determinism removes, which
classes, the cost), disagreement per condition and mode (the shape of
Fig. S4 of Fort et al.) and per learning rate, per-class disagreement, weight
distances and the cost table; cells also carry the names of Zhuang et al.,
MLSys 2022 (IMPL, ALGO, ALGO+IMPL, control).

A `tfdet compare` results file gives its own page: the verdict, each
setup's accuracy per training, P(A>B) and its interval at every look against
0.5 and gamma, the variance shares, and the runs the rule took.

--matrix gives the page for many TF versions of one device (what `tfdet
matrix` writes: one probe results file per version): a verdict in words
(which ops vary without TF's switches and in which versions, which the
switches fix, which still vary or raise with them, where behaviour changed
between versions), one table per mode with the TF versions as columns
(oldest first) and the number of distinct results in each cell, the same
catalogue cross-check as the grid, the cost of each mode per op and version,
and each version's environment. --manifest FILE (the matrix.json `tfdet
matrix` writes, or any {"versions": {"2.0": {"status": "failed", "reason":
"..."}}}) adds a column for each version without a results file, saying
why: it failed to install or import, or its probe failed. The flag is
explicit: the kind of page follows from the command line, never from how
many files there are. With --matrix a directory stands for its *.jsonl
files and its matrix.json: `tfdet report --matrix reports/matrix`.

examples:
  tfdet report tfdet-probe.jsonl -o report.html
  tfdet locate train.py --json > where.json && tfdet report where.json -o where.html
  tfdet diverge --workload embedding --out emb.jsonl && tfdet report emb.jsonl -o emb.html
  tfdet report tf115.jsonl tf26.jsonl tf221.jsonl -o compare.html
  tfdet report --matrix reports/matrix -o matrix.html  # its results files and matrix.json
  tfdet probe --report report.html             # probe, then render

exit codes: 0 written; 1 --fail-on-disagreement found one; 2 usage;
3 invalid input (missing file, not a results file, a malformed record: one
line names file:line and the field, unknown schema version, bad --catalog;
for --matrix also files of different devices, two files of one TF version,
a manifest that is not one);
5 the report could not be written (one line names the path and why).
"""


# From this many TF versions on, the grid's one column per run and mode reads badly: say --matrix exists.
MATRIX_HINT = 4


def add_parser(commands):
    parser = commands.add_parser("report", help=HELP, description=HELP.capitalize() + ".", epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("results", nargs="+", metavar="RESULTS",
                        help="probe results files (JSON Lines), or one locate result (JSON), or one diverge or compare "
                        "results file")
    parser.add_argument("-o", "--output", default="tfdet-report.html", metavar="FILE",
                        help="where to write the page (default tfdet-report.html; '-' for standard output)")
    parser.add_argument("--title", help="page title (default: the runs' TF versions and devices)")
    parser.add_argument("--catalog", metavar="PATH",
                        help="a catalogue file or directory to cross-check against instead of the shipped one")
    parser.add_argument("--matrix", action="store_true",
                        help="one page for many TF versions: a table per mode, TF versions as columns "
                             "(probe results files of one device, one per version; a directory: its *.jsonl "
                             "and matrix.json)")
    parser.add_argument("--manifest", metavar="FILE",
                        help="with --matrix: a JSON file of each version's install status, so versions that failed "
                             "to install show as columns too")
    parser.add_argument("--fail-on-disagreement", action="store_true",
                        help="exit 1 if a measurement disagrees with the catalogue (for CI gates)")
    arguments.add_quiet(parser, "print nothing on success")
    parser.set_defaults(run=run)


# The manifest `tfdet matrix` writes next to its results files.
MATRIX_MANIFEST = "matrix.json"


def matrix_inputs(paths, manifest=None):
    """(results files, manifest) of --matrix: a directory (what `tfdet matrix --out` wrote) stands for its
    *.jsonl files, and its matrix.json is the manifest unless --manifest names one."""
    files = []
    for path in paths:
        if not os.path.isdir(path):
            files.append(path)
            continue
        found = sorted(os.path.join(path, name) for name in os.listdir(path) if name.endswith(".jsonl"))
        if not found:
            raise CommandError("%s: a directory with no results files (*.jsonl)" % path, INVALID_INPUT)
        files.extend(found)
        if manifest is None and os.path.isfile(os.path.join(path, MATRIX_MANIFEST)):
            manifest = os.path.join(path, MATRIX_MANIFEST)
    return files, manifest


def render(paths, output, catalogue, out, title=None, matrix=False, manifest=None):
    """Read results files, render the page and write it (to `out` when output is '-'); returns the Report
    (a MatrixPage with matrix=True; manifest: its optional JSON file).

    Shared with `tfdet probe --report`. Errors are CommandErrors with the
    shared exit codes.
    """
    from ..report import matrix_from_files, report_from_files
    from ..results import ResultsError

    if matrix:
        paths, manifest = matrix_inputs(paths, manifest)
    for path in paths + ([manifest] if manifest else []):
        if os.path.isdir(path):
            raise CommandError("%s: is a directory, not a results file" % path, INVALID_INPUT)
    generated = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    try:
        if matrix:
            report, page = matrix_from_files(paths, catalogue=catalogue, manifest=manifest, title=title,
                                             generated=generated)
        else:
            report, page = report_from_files(paths, catalogue=catalogue, title=title, generated=generated)
    except ResultsError as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    if output == "-":
        out.write(page)
        return report
    partial = output + ".partial"
    try:
        os.makedirs(os.path.dirname(os.path.abspath(output)), exist_ok=True)
        with open(partial, "w", encoding="utf-8") as handle:
            handle.write(page)
        os.replace(partial, output)
    except OSError as exc:
        if os.path.isfile(partial):
            os.remove(partial)
        raise CommandError("cannot write %s: %s" % (output, exc.strerror or exc), WRITE_FAILED) from None
    return report


def describe(report, output):
    if getattr(report, "kind", None) == "locate":
        return "wrote %s: %s" % (output, report.verdict)
    if getattr(report, "kind", None) == "diverge":
        return "wrote %s: %d cells, %d trainings%s" % (output, report.cells, report.trainings, (
            "; " + report.verdict[0]) if report.verdict else "")
    if getattr(report, "kind", None) == "compare":
        summary = report.summary
        return "wrote %s: %s" % (output, "%s, P(A>B) = %.3f over %d pairs" % (
            summary.verdict, summary.p.value, summary.pairs) if summary and summary.p else "nothing compared")
    if getattr(report, "kind", None) == "vary":
        return "wrote %s: %d ops x %d settings, %d cells differ" % (
            output, len(report.rows), len(report.columns), report.counts.get("differs", 0))
    if getattr(report, "kind", None) == "matrix":
        measured = [c.version for c in report.columns if c.run is not None]
        return "wrote %s: %d TF version%s (%s), %d rows, %d disagreement%s with the catalogue" % (
            output, len(measured), "" if len(measured) == 1 else "s", ", ".join(measured),
            len(report.tables[0].rows) if report.tables else 0, len(report.disagreements),
            "" if len(report.disagreements) == 1 else "s")
    runs = len(report.runs)
    text = "wrote %s: %d run%s, %d rows, %d disagreement%s with the catalogue" % (
        output, runs, "" if runs == 1 else "s", len(report.rows), len(report.disagreements),
        "" if len(report.disagreements) == 1 else "s")
    partial = [r for r in report.runs if r.partial]
    if partial:
        text += "; %d interrupted run%s" % (len(partial), "" if len(partial) == 1 else "s")
    versions = {r.tf_version for r in report.runs if r.tf_version != "unknown"}
    if len(versions) >= MATRIX_HINT:
        text += "; %d TF versions: --matrix gives one table per mode with the versions as columns" % len(versions)
    return text


def run(args, out):
    if args.manifest and not args.matrix:
        raise CommandError("--manifest needs --matrix", USAGE)
    catalogue = arguments.load_catalogue_or_exit(args.catalog)
    report = render(args.results, args.output, catalogue, out, title=args.title, matrix=args.matrix,
                    manifest=args.manifest)
    if not args.quiet and args.output != "-":
        out.write(describe(report, args.output) + "\n")
    if args.fail_on_disagreement and getattr(report, "disagreements", None):
        return FINDING
    return OK
