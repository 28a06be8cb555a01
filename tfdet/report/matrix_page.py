"""The matrix page: probe results of one device across TF versions. One table
per mode (rows: catalogue entry and pass; columns: TF versions, oldest first,
sorted as versions), a verdict in words (matrix_verdict.py), the cost of
determinism per op and version, and each version's environment. Pure:
ProbeResults (and an optional install manifest, already parsed) in, a
MatrixPage and its HTML out.

Each cell is the cell the multi-file report would show (grid.py), flagged by
the same cross-check (findings.py over crosscheck.py and claims.py), pivoted
into version columns; this module only decides how a cell reads at matrix
size and what a column without a results file means.
"""

from dataclasses import dataclass, field
from typing import List, Optional, Tuple

from packaging.version import Version

from ..catalog.versions import tf_minor
from ..results import ResultsError, stats
from ..results.vocabulary import DETERMINISTIC, FAILED, MODES, RAISED, SKIPPED, VARIES
from ..results.interpret import NOT_PRECISE
from ..results.matrix_manifest import parse_manifest as read_manifest_json
from . import claims, findings, grid, matrix_verdict, svg
from . import runs as run_views
from .formatting import DASH, cost_label, file_name, mode_key, ratio_text, row_label, seconds, text
from .render import environment as jinja_environment

TEMPLATE = "matrix.html.j2"

# What a matrix cell can be: the measured outcomes, and two that say why there is no measurement.
UNSUPPORTED, NOT_MEASURED = "unsupported", "not-measured"
STATES = (DETERMINISTIC, VARIES, RAISED, FAILED, UNSUPPORTED, NOT_MEASURED)
STATE_TEXT = {
    DETERMINISTIC: "deterministic: every run gave bitwise the same result (the number is the distinct results: 1)",
    VARIES: "varies: the number is how many distinct results the runs gave",
    RAISED: "raised: the op raised an error (what ops without a deterministic kernel do under determinism)",
    FAILED: "failed: the worker crashed or hung, or the whole mode failed to run",
    UNSUPPORTED: "n/a: not in this version (no such op or API, or the case needs a newer TF or a GPU)",
    NOT_MEASURED: "not measured: no results file for this version, or the run did not reach it",
}
LEGEND = [(s, STATE_TEXT[s]) for s in STATES]

# Manifest statuses (`tfdet matrix` writes installed, probed, probe-failed, failed): the version installed;
# it installed and its probe failed; anything else is a failure to install or import.
INSTALLED = ("installed", "ok", "probed", "measured", "done")
PROBE_FAILED = ("probe-failed", "probe failed")
# A version column's status.
MEASURED_COLUMN, NOT_INSTALLED, NO_FILE = "measured", "failed", "not measured"
COLUMN_WORDS = {NOT_INSTALLED: "not installed", PROBE_FAILED[0]: "probe failed", NO_FILE: "no file"}
ROW_WORDS = {NOT_INSTALLED: "failed to install or import", PROBE_FAILED[0]: "installed; the probe failed",
             NO_FILE: "no results file"}


@dataclass
class VersionColumn:
    version: str  # major.minor: the matrix has one column per minor release
    run: Optional[object] = None  # the report's Run of this version's file; None when there is none
    status: str = MEASURED_COLUMN  # or NOT_INSTALLED, PROBE_FAILED[0], NO_FILE (from the manifest)
    note: str = ""  # why there is no file (the manifest's words)

    @property
    def key(self):
        return Version(self.version)

    @property
    def full_version(self):
        return self.run.tf_version if self.run is not None else ""

    @property
    def short_status(self):
        return COLUMN_WORDS.get(self.status, self.status)

    @property
    def long_status(self):
        return ROW_WORDS.get(self.status, self.status)

    @property
    def title(self):
        if self.run is not None:
            return "TF %s (%s)" % (self.run.tf_version, self.run.name)
        return "TF %s: %s%s" % (self.version, self.long_status, ": " + self.note if self.note else "")


@dataclass
class MatrixCell:
    state: str
    label: str
    title: str
    disagreement: bool = False
    unconfirmed: bool = False
    runs: Optional[int] = None  # how many runs a measured cell's count is out of
    unclaimed: bool = False  # the catalogue has no claim here (unknown): a new fact

    @property
    def css(self):
        return "s-" + self.state + (" disagrees" if self.disagreement else "") + (
            " unconfirmed" if self.unconfirmed else "") + (" unclaimed" if self.unclaimed else "")


@dataclass
class MatrixRow:
    case: str
    pass_name: Optional[str]
    title: str
    cells: List[MatrixCell]  # one per version column

    @property
    def label(self):
        return row_label(self.case, self.pass_name)


@dataclass
class ModeTable:
    mode: str
    description: str  # what the mode turns on
    rows: List[MatrixRow]
    groups: List[Tuple[str, List[MatrixRow]]] = field(default_factory=list)


@dataclass
class CostCell:
    label: str
    title: str
    css: str = ""


@dataclass
class CostRow:
    case: str
    pass_name: Optional[str]
    mode: str
    cells: List[CostCell]

    @property
    def label(self):
        return row_label(self.case, self.pass_name)


# The environment table: one row per version; these keys of the report's per-run table (environment.py).
ENVIRONMENT_KEYS = ("TensorFlow", "TF build", "Python", "numpy", "CPU", "CPU cores", "Platform",
                    "Threads (intra / inter)", "oneDNN", "Modes run", "Modes not run", "Processes x runs", "Recorded")


@dataclass
class MatrixPage:
    title: str
    device: str
    columns: List[VersionColumn]
    tables: List[ModeTable]
    cost_rows: List[CostRow]
    cost_left_out: int  # (op, mode) pairs timed, with no measurable cost in any version
    environment_keys: Tuple[str, ...]
    verdict: matrix_verdict.Verdict
    disagreements: list  # FindingView (view.py), the report's
    not_reproduced: list
    newly_measured: list
    claims_checked: int
    unsupported_everywhere: List[Tuple[str, str]]  # (case, why) for cases no version could run
    legend: List[Tuple[str, str]]
    tfdet_version: str
    catalogue_used: bool
    kind: str = "matrix"

    @property
    def runs(self):
        return [c.run for c in self.columns if c.run is not None]


def parse_manifest(data, name="manifest"):
    """{major.minor: (status, reason)} from a matrix manifest's JSON, read by its typed
    records (tfdet.results.matrix_manifest.parse_manifest: the file `tfdet matrix`
    writes, or a shorter form written by hand). Raises ResultsError, naming the
    file, for anything else."""
    parsed = {}
    for version, entry in read_manifest_json(data, name).versions.items():
        try:
            minor = str(tf_minor(version))
        except ValueError as exc:
            raise ResultsError("%s: not a matrix manifest: %s" % (name, exc)) from None
        parsed[minor] = (entry.status, entry.why())
    return parsed


def version_columns(runs, manifest=None):
    """The columns, oldest version first: one per file, and one per manifest version without a file.

    Raises ResultsError for a file whose TF version is unknown and for two files of one minor release.
    """
    by_version = {}
    for run in runs:
        try:
            minor = str(tf_minor(run.tf_version))
        except ValueError:
            raise ResultsError("%s: TF version %s: the matrix needs each file's TF version" % (
                run.path, run.tf_version)) from None
        if minor in by_version:
            raise ResultsError("%s and %s are both TF %s: the matrix takes one results file per TF version" % (
                by_version[minor].path, run.path, minor))
        by_version[minor] = run
    columns = [VersionColumn(minor, run) for minor, run in by_version.items()]
    for minor, (status, reason) in (manifest or {}).items():
        if minor in by_version:
            continue
        if status.lower() in INSTALLED:
            columns.append(VersionColumn(minor, None, NO_FILE, reason or "installed; no results file given"))
        elif status.lower() in PROBE_FAILED:
            columns.append(VersionColumn(minor, None, PROBE_FAILED[0], reason))
        else:
            note = reason if status.lower() == NOT_INSTALLED else "%s%s" % (status, ": " + reason if reason else "")
            columns.append(VersionColumn(minor, None, NOT_INSTALLED, note))
    return sorted(columns, key=lambda c: c.key)


# The figures (grid.figures) a cell's title keeps, by outcome: enough to read on hover, at matrix size.
TITLE_FIGURES = {
    DETERMINISTIC: ("distinct results / runs", "median latency", "cost vs baseline (95% interval)"),
    VARIES: ("distinct results / runs", "distinct within a process, across processes", "max ULP difference",
             "elements that differ", "median latency", "cost vs baseline (95% interval)"),
    RAISED: ("error", "raised in processes"),
    FAILED: ("what happened",),
}
MAX_FIGURE = 240  # characters of one figure (an error message) in a title


def title(run, mode, record, grid_cell):
    """A measured cell's hover text: the version, the mode, the outcome, its main figures, and the
    remarks the cross-check added to the grid's cell (a disagreement, a claim of variance not seen)."""
    wanted = TITLE_FIGURES.get(record.outcome, ())
    figures = ["%s: %s" % (name, value if len(value) <= MAX_FIGURE else value[:MAX_FIGURE] + "\u2026")
               for name, value in grid.figures(record, mode) if name in wanted]
    remarks = grid_cell.title.split(" | ")[1:]
    return "; ".join(["TF %s, %s: %s" % (run.tf_version, mode, record.outcome)] + figures) + "".join(
        " | " + remark for remark in remarks)


def _from_grid(run, mode, grid_cell, record):
    """A measured or skipped grid cell, as the matrix shows it."""
    outcome = grid_cell.outcome
    if outcome in (DETERMINISTIC, VARIES, RAISED, FAILED) and record is not None:
        label = text(record.distinct, "?") if outcome in (DETERMINISTIC, VARIES) else outcome
        return MatrixCell(outcome, label, title(run, mode, record, grid_cell), grid_cell.disagreement,
                          grid_cell.unconfirmed, record.runs)
    if outcome == SKIPPED:
        return MatrixCell(UNSUPPORTED, "n/a", grid_cell.title)
    # interrupted before it (missing), or not in this run (absent)
    return MatrixCell(NOT_MEASURED, DASH, grid_cell.title)


def cell(column, case, pass_name, mode, grid_cells):
    """What (case, pass) came to under `mode` in one version column."""
    run = column.run
    if run is None:
        return MatrixCell(NOT_MEASURED, DASH, column.title)
    grid_cell = grid_cells.get((run.key, case, pass_name, mode))
    if grid_cell is not None:
        return _from_grid(run, mode, grid_cell, run.records.get((case, pass_name, mode)))
    if case in run.skipped:
        return MatrixCell(UNSUPPORTED, "n/a", "TF %s: skipped: %s" % (run.tf_version, run.skipped[case]))
    problem = next((p for p in run.mode_problems if p.mode == mode), None)
    if problem is not None and not problem.failure:
        return MatrixCell(UNSUPPORTED, "n/a", "TF %s, %s: not in this version: %s" % (
            run.tf_version, mode, problem.reason))
    if problem is not None:
        return MatrixCell(FAILED, "failed", "TF %s, %s: the mode did not run: %s" % (
            run.tf_version, mode, problem.reason))
    return MatrixCell(NOT_MEASURED, DASH, "TF %s, %s: not in this run" % (run.tf_version, mode))


def _cost_cell(run, record):
    if record is None or record.ratio is None:
        return CostCell(DASH, "TF %s: no cost measured" % run.tf_version if run is not None else "no results file")
    label = cost_label(record.ratio, record.ratio_low, record.ratio_high)
    if label == "no measurable cost":
        label, css = "~1", "nocost"
    elif label == NOT_PRECISE:  # too wide an interval: neither dearer nor cheaper
        label, css = "?", "nocost"
    else:
        css = "dearer" if record.ratio > 1 else "cheaper"
    interval = ratio_text(record.ratio, record.ratio_low, record.ratio_high)
    return CostCell(label, "TF %s, %s: %s the baseline's latency (95%% interval); median %s" % (
        run.tf_version, record.mode, interval, seconds(record.median_s)), css)


def cost_rows(keys, modes, columns):
    """(rows, how many left out): one row per (case, pass, determinism mode) with a measurable cost (a 95%
    interval that excludes 1) in at least one version; the pairs with none anywhere are only counted."""
    made, left_out = [], 0
    for case, pass_name in keys:
        for mode in modes:
            if mode == "baseline":
                continue
            records = [c.run.records.get((case, pass_name, mode)) if c.run is not None else None for c in columns]
            timed = [r for r in records if r is not None and r.ratio is not None]
            if not timed:
                continue
            if all(stats.no_measurable_cost(r.ratio_low, r.ratio_high) for r in timed):
                left_out += 1
                continue
            made.append(CostRow(case, pass_name, mode, [_cost_cell(c.run, r) for c, r in zip(columns, records)]))
    return made, left_out


def _unsupported_everywhere(keys, runs):
    """(case, why) of the cases no version ran (the reason the newest file gives)."""
    gone = []
    for case, pass_name in keys:
        if pass_name is None and all(case in run.skipped for run in runs):
            gone.append((case, runs[-1].skipped[case] if runs else ""))
    return gone


def _mode_description(mode, columns):
    """What the mode turned on, with the versions where that differs: 'A (1.15); A, B (2.4\u20132.21)'."""
    by_setting = {}
    for column in columns:
        if column.run is None:
            continue
        for name, setting in column.run.mode_settings:
            if name == mode:
                setting = setting.split("; TF ")[0]  # whether TF reports op determinism: the environment table says
                by_setting.setdefault(setting, []).append(column.version)
    if len(by_setting) == 1:
        return next(iter(by_setting))
    sequence = [v for versions in by_setting.values() for v in versions]
    sequence.sort(key=Version)
    return "; ".join("%s (%s)" % (setting, matrix_verdict.version_list(versions, sequence))
                     for setting, versions in by_setting.items())


def build_matrix(results, catalogue=None, manifest=None, title=None, tfdet_version=""):
    """The MatrixPage of probe results, one file per TF version, all of one device.

    manifest: parse_manifest's {minor: (status, reason)} or None. Raises
    ResultsError for files of different devices, two files of one version, or
    a file that is not a probe results file.
    """
    for result in results:
        if getattr(result, "kind", "probe") != "probe" or not hasattr(result, "cases"):
            raise ResultsError("%s: the matrix page takes probe results files only" % getattr(result, "path", "?"))
    devices = {}
    for result in results:
        devices.setdefault(result.header.device or "unknown", []).append(file_name(result.path))
    if len(devices) > 1:
        raise ResultsError("the matrix page compares TF versions on one device; these files are from %s" % "; ".join(
            "%s (%s)" % (device, ", ".join(names)) for device, names in sorted(devices.items())))
    device = next(iter(devices), "unknown")

    runs = [run_views.build_run(index, result) for index, result in enumerate(results)]
    for run, result in zip(runs, results):
        run.mode_switches = run_views.mode_switches(run, result.header, catalogue)
        run.determinism_label = run_views.determinism_label(run, catalogue)
    columns = version_columns(runs, manifest)
    ordered = [c.run for c in columns if c.run is not None]

    keys = grid.row_keys(ordered)
    _, grid_cells = grid.rows(keys, grid.columns(ordered), catalogue)
    found, checked = findings.check(ordered, keys, catalogue, grid_cells)

    # a table per mode that ran somewhere, or failed somewhere (its cells say so)
    modes = {m for run in ordered for m in run.modes}
    modes.update(p.mode for run in ordered for p in run.mode_problems if p.failure and p.mode in MODES)
    modes = sorted(modes, key=mode_key)

    gone = _unsupported_everywhere(keys, ordered)
    gone_keys = {(case, None) for case, _ in gone}
    shown = [key for key in keys if key not in gone_keys]
    # cells measured where the catalogue says unknown (or nothing) for that version: the cross-check's findings
    unclaimed = {(f.run.key, f.case, f.pass_name, mode) for f in found["newly_measured"] for mode in f.modes}
    tables = []
    for mode in modes:
        rows = []
        for case, pass_name in shown:
            case_entry = claims.entry(catalogue, case)
            cells = [cell(c, case, pass_name, mode, grid_cells) for c in columns]
            for column, made in zip(columns, cells):
                if column.run is not None and (column.run.key, case, pass_name, mode) in unclaimed:
                    made.unclaimed = True
                    made.title += " | the catalogue has no claim for this version and device: a new fact"
            rows.append(MatrixRow(case, pass_name, case_entry.title if case_entry is not None else "", cells))
        tables.append(ModeTable(mode, _mode_description(mode, columns), rows))

    verdict = matrix_verdict.verdict(device, columns, tables, found if catalogue is not None else None)
    attention = {(r.case, r.pass_name) for t in tables for r in t.rows
                 if any(c.state in (VARIES, RAISED, FAILED) or c.disagreement for c in r.cells)}
    for table in tables:
        first = [r for r in table.rows if (r.case, r.pass_name) in attention]
        rest = [r for r in table.rows if (r.case, r.pass_name) not in attention]
        table.groups = [(label, group) for label, group in (
            ("Varied, raised, failed or disagreed with the catalogue in some version and mode", first),
            ("Reproducible wherever measured", rest)) if group]

    costs, left_out = cost_rows(shown, modes, columns)
    first_version = columns[0].version if columns else ""
    last_version = columns[-1].version if columns else ""
    return MatrixPage(
        title=title or "tfdet matrix: TF %s to %s on %s" % (first_version, last_version, device.upper()),
        device=device, columns=columns, tables=tables, cost_rows=costs, cost_left_out=left_out,
        environment_keys=ENVIRONMENT_KEYS, verdict=verdict, disagreements=found["disagreement"],
        not_reproduced=found["not_reproduced"], newly_measured=found["newly_measured"], claims_checked=checked,
        unsupported_everywhere=gone, legend=LEGEND, tfdet_version=tfdet_version, catalogue_used=catalogue is not None)


def render_matrix(page, generated=None):
    """The page as a string (Jinja2, autoescaped; no scripts, no external resources)."""
    return jinja_environment().get_template(TEMPLATE).render(
        page=page, generated=generated, outcome_colours=svg.OUTCOME_COLOURS, file_name=file_name)


__all__ = ["build_matrix", "render_matrix", "parse_manifest", "version_columns", "MatrixPage", "STATES",
           "UNSUPPORTED", "NOT_MEASURED"]
