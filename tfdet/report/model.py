"""Results files -> the report's view model. Pure: no I/O.

The caller reads each results file (tfdet.probe.results.read_results) and
hands in (path, header, records) triples and a catalogue; `build_report`
returns a Report: the runs and their environments, what differs between
them, one row per catalogue entry and pass with one cell per (run, mode), the
cross-check against the catalogue, the plain-language summary and the charts
(as SVG strings, every text in them escaped).

Nothing here trusts the results files: every value is read with .get() and
turned into text for display; the template escapes it.
"""

import statistics
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..results import stats as probe_stats
from ..catalog import expected_to_vary
from ..probe.summary import cost_words, describe_patch_cost, mode_problems, patch_cost
from . import crosscheck, svg

MODE_ORDER = ("baseline", "env", "api", "patched")
DETERMINISM_MODES = ("env", "api", "patched")
OUTCOMES = ("deterministic", "varies", "raised", "failed", "skipped", "missing", "absent")
OUTCOME_TEXT = {
    "deterministic": "deterministic: every run gave bitwise the same result",
    "varies": "varies: runs gave different results",
    "raised": "raised: the op raised an error (ops without a deterministic kernel do, under determinism)",
    "failed": "failed: the worker process crashed or hung; the run went on",
    "skipped": "skipped: the entry cannot run here (the reason is in the cell)",
    "missing": "not measured (interrupted): planned, but the run stopped before it",
    "absent": "not in this run: not planned there, or the mode was not run",
}
COST_CHART_ROWS = 30
MAX_STDERR_LINES = 12


# -- the view model -----------------------------------------------------------

@dataclass
class Run:
    key: str
    index: int
    path: str
    name: str
    label: str
    tf_version: str
    device: Optional[str]
    modes: List[str]
    unavailable_modes: List[Tuple[str, str]]
    environment: "OrderedDict[str, str]"
    mode_settings: List[Tuple[str, str]]
    planned: List[Tuple[str, Optional[str]]]
    missing: List[Tuple[str, Optional[str]]]
    skipped: Dict[str, str]
    records: Dict[Tuple[str, Optional[str], str], dict]
    mode_switches: Dict[str, frozenset] = field(default_factory=dict)
    determinism_label: str = ""
    summary: List[str] = field(default_factory=list)
    summary_lists: List[Tuple[str, List[str]]] = field(default_factory=list)
    mode_problems: list = field(default_factory=list)  # probe.summary.ModeProblem: modes that did not run

    @property
    def partial(self):
        return bool(self.missing)


@dataclass
class Column:
    run: Run
    mode: str

    @property
    def key(self):
        return "%s-%s" % (self.run.key, self.mode)


@dataclass
class Cell:
    column: Column
    outcome: str
    label: str
    title: str
    figures: List[Tuple[str, str]] = field(default_factory=list)
    cost: str = ""
    detail: str = ""  # long text shown preformatted (a stderr tail)
    disagreement: bool = False
    unconfirmed: bool = False  # the catalogue says it varies here; it did not vary in this run
    span: int = 1  # columns covered (a skipped entry: all of its run's modes)

    @property
    def css(self):
        return "o-" + self.outcome + (" disagrees" if self.disagreement else "") + (
            " unconfirmed" if self.unconfirmed else "")


@dataclass
class Row:
    case: str
    pass_name: Optional[str]
    title: str
    in_catalogue: bool
    cells: List[Cell]
    display: List[Cell] = field(default_factory=list)  # cells as shown: a run's skipped cells merged into one
    group: str = "reproducible"  # attention | reproducible | not-measured
    advice: List[Tuple[str, str]] = field(default_factory=list)  # (who: run label or "", text)
    disagreements: int = 0

    @property
    def anchor(self):
        text = "row-%s-%s" % (self.case, self.pass_name or "none")
        return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)


@dataclass
class FindingView:
    kind: str
    run: Run
    case: str
    pass_name: Optional[str]
    title: str
    status: str
    versions: str
    device: str
    modes: Tuple[str, ...]
    message: str
    sources: List[Tuple[str, Optional[str]]]
    measured: str
    notable: bool = False  # varied or raised somewhere (for newly measured facts)


@dataclass
class Chart:
    title: str
    caption: str
    svg: str


@dataclass
class Report:
    title: str
    runs: List[Run]
    columns: List[Column]
    rows: List[Row]
    environment_keys: List[str]
    differing_keys: List[str]
    differences: str
    difference_values: List[Tuple[str, List[str]]]
    disagreements: List[FindingView]
    not_reproduced: List[FindingView]
    newly_measured: List[FindingView]
    claims_checked: int
    summary_intro: str
    cost_charts: List[Chart]
    variance_charts: List[Chart]
    heatmaps: List[Chart]
    legend: List[Tuple[str, str]]
    tfdet_version: str
    catalogue_used: bool

    @property
    def groups(self):
        names = OrderedDict([
            ("attention", "Varied, raised or failed somewhere"),
            ("reproducible", "Reproducible in every run and mode"),
            ("not-measured", "Not measured (skipped or interrupted)"),
        ])
        return [(key, label, [r for r in self.rows if r.group == key]) for key, label in names.items()
                if any(r.group == key for r in self.rows)]


# -- helpers ------------------------------------------------------------------

def _text(value, none="\u2014"):
    if value is None or value == "":
        return none
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return "%g" % value
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value) or none
    if isinstance(value, dict):
        return ", ".join("%s=%s" % (k, _text(v)) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))) or none
    return str(value)


def _dict(value):
    return value if isinstance(value, dict) else {}


def _list(value):
    return value if isinstance(value, list) else []


def _first_environment(header):
    environments = _dict(header.get("environment"))
    for mode in _list(header.get("modes")):
        if isinstance(mode, str) and isinstance(environments.get(mode), dict):
            return environments[mode]
    for value in environments.values():
        if isinstance(value, dict):
            return value
    return {}


def _number(value):
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _seconds(value):
    value = _number(value)
    if value is None:
        return "\u2014"
    if value < 1e-3:
        return "%.1f \u00b5s" % (value * 1e6)
    if value < 1:
        return "%.2f ms" % (value * 1e3)
    return "%.2f s" % value


def _ratio_text(record):
    ratio, low, high = (_number(record.get(k)) for k in ("ratio", "ratio_low", "ratio_high"))
    if ratio is None:
        return ""
    if low is None or high is None:
        return "\u00d7%.2f" % ratio
    return "\u00d7%.2f [%.2f\u2013%.2f]" % (ratio, low, high)


def _big(value):
    value = _number(value)
    if value is None:
        return "\u2014"
    if isinstance(value, int) or float(value).is_integer():
        return "{:,}".format(int(value)) if abs(value) < 1e18 else "%.3g" % value
    return "%.3g" % value


def _version_key(text):
    parts = []
    for piece in str(text).replace("-", ".").split("."):
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def _mode_key(mode):
    return (MODE_ORDER.index(mode) if mode in MODE_ORDER else len(MODE_ORDER), str(mode))


def _pair(value):
    """(case, pass) from a header's planned item, or None if malformed."""
    if isinstance(value, (list, tuple)) and len(value) == 2 and isinstance(value[0], str):
        return (value[0], value[1] if isinstance(value[1], str) else None)
    return None


# -- runs ---------------------------------------------------------------------

ENVIRONMENT_KEYS = (
    "TensorFlow", "TF build", "Python", "numpy", "Device", "CPU", "CPU cores", "GPUs", "NVIDIA driver",
    "CUDA build", "CUDA", "cuDNN", "Threads (intra / inter)", "oneDNN", "Execution", "Modes run", "Modes not run",
    "Processes x runs", "Timing rounds", "Input size, seed", "Platform", "Interpreter", "tfdet", "Recorded",
    "Results file",
)
# Keys that always differ between two files and say nothing about the environment.
NOT_ENVIRONMENT = ("Recorded", "Results file")


def _gpus(value):
    gpus = _list(value)
    if not gpus:
        return "none"
    names = []
    for gpu in gpus:
        gpu = _dict(gpu)
        name = gpu.get("name") or gpu.get("device") or "GPU"
        cc = gpu.get("compute_capability")
        names.append("%s%s" % (name, " (compute %s)" % cc if cc else ""))
    return "; ".join(str(n) for n in names)


def _environment(header, env, path, run_modes, unavailable):
    build = _dict(env.get("build"))
    threads = _dict(env.get("threads")) or _dict(header.get("threads"))
    onednn = _text(env.get("onednn"))
    if "onednn_enabled" in env:
        onednn += " (active: %s)" % _text(env.get("onednn_enabled"), "unknown")
    values = OrderedDict([
        ("TensorFlow", _text(env.get("tf_version"), "unknown")),
        ("TF build", _text(env.get("tf_git_version"))),
        ("Python", _text(env.get("python"))),
        ("numpy", _text(env.get("numpy"))),
        ("Device", _text(env.get("device"), "unknown")),
        ("CPU", _text(env.get("cpu_model"))),
        ("CPU cores", _text(env.get("cpu_count"))),
        ("GPUs", _gpus(env.get("gpus"))),
        ("NVIDIA driver", _text(env.get("nvidia_driver"), "none")),
        ("CUDA build", _text(build.get("cuda_build"), "unknown")),
        ("CUDA", _text(build.get("cuda_version"), "none")),
        ("cuDNN", _text(build.get("cudnn_version"), "none")),
        ("Threads (intra / inter)", "%s / %s" % (_text(threads.get("intra_op")), _text(threads.get("inter_op")))),
        ("oneDNN", onednn),
        ("Execution", _text(header.get("execution"))),
        ("Modes run", _text(run_modes)),
        ("Modes not run", "; ".join("%s (%s)" % kv for kv in unavailable) or "none"),
        ("Processes x runs", "%s x %s" % (_text(header.get("processes")), _text(header.get("repeats")))),
        ("Timing rounds", _text(header.get("rounds"))),
        ("Input size, seed", "%s, %s" % (_text(header.get("size")), _text(header.get("seed")))),
        ("Platform", _text(env.get("platform"))),
        ("Interpreter", _text(env.get("python_executable"))),
        ("tfdet", _text(header.get("tfdet_version"))),
        ("Recorded", _text(header.get("created"))),
        ("Results file", _text(path)),
    ])
    return values


def _mode_settings(header, modes):
    environments = _dict(header.get("environment"))
    settings = []
    for mode in modes:
        env = _dict(environments.get(mode))
        variables = _dict(env.get("env"))
        text = ", ".join("%s=%s" % (k, _text(v)) for k, v in sorted(variables.items(), key=lambda kv: str(kv[0])))
        parts = [text or "no determinism variables"]
        if mode == "api":
            parts.append("enable_op_determinism() called")
        if mode == "patched":
            parts.append("tfdet.patch() called")
        enabled = env.get("op_determinism_enabled")
        parts.append({True: "TF reports op determinism on", False: "TF reports op determinism off"}.get(
            enabled, "TF does not report op determinism (before 2.8)"))
        settings.append((mode, "; ".join(parts)))
    return settings


def _build_run(index, path, header, records):
    env = _first_environment(header)
    modes = sorted({m for m in _list(header.get("modes")) if isinstance(m, str)}, key=_mode_key)
    # modes seen in records but not in the header (a hand-edited file) still get columns
    for record in records:
        mode = record.get("mode")
        if isinstance(mode, str) and record.get("outcome") != "skipped" and mode not in modes:
            modes.append(mode)
    modes.sort(key=_mode_key)
    problems = mode_problems(header, [r for r in records if isinstance(r.get("mode"), str)])
    not_run = dict(_dict(header.get("unavailable_modes")))
    not_run.update((p.mode, p.reason) for p in problems if p.failure and p.mode not in not_run)
    unavailable = sorted(((str(m), _text(r)) for m, r in not_run.items()), key=lambda kv: _mode_key(kv[0]))
    planned = []
    for item in _list(header.get("planned")):
        pair = _pair(item)
        if pair and pair not in planned:
            planned.append(pair)
    skipped = OrderedDict()
    for item in _list(header.get("skipped")):
        if isinstance(item, (list, tuple)) and item and isinstance(item[0], str):
            skipped[item[0]] = _text(item[1] if len(item) > 1 else None, "no reason recorded")
    by_key = {}
    for record in records:
        case = record.get("case")
        if not isinstance(case, str):
            continue
        if record.get("outcome") == "skipped":
            skipped.setdefault(case, _text(record.get("reason"), "no reason recorded"))
            continue
        pass_name = record.get("pass") if isinstance(record.get("pass"), str) else None
        mode = record.get("mode")
        if isinstance(mode, str):
            by_key[(case, pass_name, mode)] = record
    missing = [p for p in planned if any((p[0], p[1], m) not in by_key for m in modes)]
    tf_version = _text(env.get("tf_version"), "unknown")
    device = env.get("device") if env.get("device") in ("cpu", "gpu") else None
    name = str(path).replace("\\", "/").rsplit("/", 1)[-1]
    return Run(
        key="r%d" % (index + 1), index=index, path=str(path), name=name,
        label="TF %s \u00b7 %s" % (tf_version, device or _text(env.get("device"), "unknown device")),
        tf_version=tf_version, device=device, modes=modes, unavailable_modes=unavailable,
        environment=_environment(header, env, path, modes, unavailable), mode_settings=_mode_settings(header, modes),
        planned=planned, missing=missing, skipped=dict(skipped), records=by_key,
        mode_problems=problems)


def _mode_switches(run, header, catalogue):
    """{mode: switch ids on for the run's device}; empty without a catalogue or device."""
    if catalogue is None or run.device is None or run.tf_version == "unknown":
        return {m: frozenset() for m in run.modes}
    environments = _dict(header.get("environment"))
    recorded = {m: _dict(_dict(environments.get(m)).get("env")) for m in run.modes}

    def honoured(switch):
        try:
            return switch.available_in(run.tf_version)
        except ValueError:
            return False

    same_as = {s.id: tuple(s.same_as) for s in catalogue.switches}
    return crosscheck.switch_sets(run.modes, recorded, catalogue.switches, honoured, run.device, same_as)


def _determinism_label(run, catalogue):
    names = []
    for mode in run.modes:
        on = run.mode_switches.get(mode) or frozenset()
        if not on or catalogue is None:
            continue
        if mode == "env":
            environments = [s.name for s in catalogue.switches if s.id in on and s.kind == "env"]
            names.extend(n for n in environments if n not in names)
        elif mode == "api":
            names.extend(n for n in ["enable_op_determinism()"] if n not in names)
        elif mode == "patched":
            names.append("tfdet.patch()")
    return " / ".join(names)


# -- cells and rows -----------------------------------------------------------

def _figures(record, mode):
    outcome = record.get("outcome")
    figures = []
    if outcome in ("deterministic", "varies"):
        figures.append(("distinct results / runs", "%s / %s" % (_text(record.get("distinct")), _text(record.get("runs")))))
        figures.append(("distinct within a process, across processes", "%s, %s" % (
            _text(record.get("distinct_within_process")), _text(record.get("distinct_across_processes")))))
        figures.append(("max ULP difference", _big(record.get("max_ulp_diff"))))
        figures.append(("max absolute difference", _big(record.get("max_abs_diff"))))
        frac = _number(record.get("frac_elements_differ"))
        figures.append(("elements that differ", "\u2014" if frac is None else "%.3g%%" % (frac * 100)))
        if outcome == "deterministic" and _number(record.get("runs")):
            figures.append(("what this rules out", probe_stats.describe_ruled_out(int(record["runs"]))))
        if record.get("catalogue_expects_variance"):
            figures.append(("catalogue", _text(record.get("catalogue_expects_variance"))))
        if _number(record.get("extra_runs")):
            figures.append(("repeated", "%s more runs, because %s" % (
                _text(record.get("extra_runs")), _text(record.get("repeated_because"), "variance was expected"))))
        if record.get("shape_mismatch"):
            figures.append(("shapes", "differ between runs"))
        if "matches_baseline" in record and mode != "baseline":
            figures.append(("bitwise equal to baseline", _text(record.get("matches_baseline"))))
        figures.append(("output", "%s %s" % (_text(record.get("dtype")), _text(record.get("shape")))))
    elif outcome == "raised":
        figures.append(("error", "%s: %s" % (_text(record.get("error_type"), "Error"), _text(record.get("error_message"), ""))))
        if record.get("raised_in_processes") is not None:
            figures.append(("raised in processes", "%s of %s" % (_text(record.get("raised_in_processes")),
                                                                _text(record.get("processes")))))
    elif outcome == "failed":
        figures.append(("what happened", _text(record.get("error_message"))))
    if record.get("median_s") is not None:
        iqr = _list(record.get("iqr_s"))
        figures.append(("median latency", _seconds(record.get("median_s")) + (
            " (IQR %s\u2013%s)" % (_seconds(iqr[0]), _seconds(iqr[1])) if len(iqr) == 2 else "")))
    ratio = _ratio_text(record)
    if ratio and _number(record.get("ratio_low")) is not None and _number(record.get("ratio_high")) is not None:
        ratio = cost_words(record["ratio"], record["ratio_low"], record["ratio_high"])
        if ratio.startswith("no measurable"):
            ratio += " (median \u00d7%.2f)" % record["ratio"]
    if ratio:
        p = _number(record.get("cost_p_value"))
        figures.append(("cost vs baseline (95% interval)", ratio + ("; p=%.2g" % p if p is not None else "")))
    return figures


def _measured_cell(column, record):
    outcome = record.get("outcome")
    if outcome not in ("deterministic", "varies", "raised", "failed"):
        outcome = "failed"
    mode = column.mode
    if outcome in ("deterministic", "varies"):
        label = "%s/%s" % (_text(record.get("distinct"), "?"), _text(record.get("runs"), "?"))
    else:
        label = outcome
    figures = _figures(record, mode)
    cost = _cost_label(record) if mode != "baseline" else ""
    title = "%s, %s: %s; " % (column.run.label, mode, outcome) + "; ".join("%s: %s" % f for f in figures)
    detail = ""
    if outcome == "failed" and record.get("stderr_tail"):
        detail = "\n".join(str(record.get("stderr_tail")).splitlines()[-MAX_STDERR_LINES:])
    cell = Cell(column, outcome, label, title, figures, cost, detail)
    if outcome == "deterministic" and record.get("catalogue_expects_variance"):
        _mark_unconfirmed(cell, record)
    return cell


def _cost_label(record):
    """The cost shown in a cell: in words where its interval includes 1."""
    ratio, low, high = (_number(record.get(k)) for k in ("ratio", "ratio_low", "ratio_high"))
    if ratio is None:
        return ""
    if probe_stats.no_measurable_cost(low, high):
        return "no measurable cost"
    return "\u00d7%.2f" % ratio


def _mark_unconfirmed(cell, record):
    if cell.unconfirmed:
        return
    cell.unconfirmed = True
    runs = _number(record.get("runs"))
    cell.title += " | THE CATALOGUE SAYS THIS VARIES HERE; not seen: " + (
        probe_stats.describe_ruled_out(int(runs)) if runs else "no runs")


def _cell(run, column, case, pass_name):
    record = run.records.get((case, pass_name, column.mode))
    if record is not None:
        return _measured_cell(column, record)
    if case in run.skipped:
        reason = run.skipped[case]
        return Cell(column, "skipped", "skipped", "%s: skipped: %s" % (run.label, reason), [("reason", reason)])
    if (case, pass_name) in run.planned:
        return Cell(column, "missing", "not measured", "%s, %s: not measured (interrupted)" % (run.label, column.mode),
                    [("status", "not measured (interrupted): the run stopped before this case")])
    return Cell(column, "absent", "\u2014", "%s: not in this run" % run.label, [])


def _row_keys(runs):
    keys = OrderedDict()
    for run in runs:
        for pair in run.planned:
            keys.setdefault(pair, None)
        for case, pass_name, _ in run.records:
            keys.setdefault((case, pass_name), None)
    measured_cases = {case for case, _ in keys}
    for run in runs:
        for case in run.skipped:
            if case not in measured_cases:
                keys.setdefault((case, None), None)
    return list(keys)


def _entry(catalogue, case):
    if catalogue is None:
        return None
    try:
        return catalogue.get(case)
    except KeyError:
        return None


def _claim_range(entry, run):
    if entry is None or run.device is None:
        return None
    try:
        return entry.range_for(run.tf_version, run.device)
    except ValueError:  # not a TF version the catalogue understands
        return None


def _advice(entry, run, pass_name, cells_by_mode):
    """(run label, text): what the catalogue says fixes a varying row, and what that cost here."""
    from ..catalog import Verdict

    version_range = _claim_range(entry, run)
    if entry is None:
        text = "Not a catalogue entry."
    elif version_range is None:
        text = "The catalogue has no claim for TF %s on %s." % (run.tf_version, run.device or "this device")
    else:
        verdict = Verdict(entry, run.tf_version, run.device, version_range)
        text = verdict.fix
        if version_range.status == "raises_under_determinism" and version_range.error:
            message = version_range.error.message
            if len(message) > 160:
                message = message[:159].rstrip() + "\u2026"
            raises = "Under determinism it raises %s: %s" % (version_range.error.type, message)
            text = "%s. %s" % (text, raises) if text else raises
        if not text and version_range.note:
            text = version_range.note
        if not text:
            text = "The catalogue knows no fix (%s)." % version_range.status
    effects = []
    for mode in run.modes:
        cell = cells_by_mode.get(mode)
        if mode not in DETERMINISM_MODES or cell is None:
            continue
        if cell.outcome == "deterministic":
            effects.append("reproducible under %s%s" % (mode, ", cost " + cell.cost if cell.cost else ""))
        elif cell.outcome == "varies":
            effects.append("still varies under %s" % mode)
        elif cell.outcome == "raised":
            effects.append("raises under %s" % mode)
    if effects:
        text = text.rstrip()
        text += ("" if text.endswith((".", "!", "?", "\u2026")) else ".") + " Here: " + "; ".join(effects) + "."
    return text


def _merge_skipped(cells, runs):
    """The cells to show: where every mode of a run is skipped, one cell spanning them, with the reason."""
    shown = []
    for run in runs:
        mine = [c for c in cells if c.column.run is run]
        if len(mine) > 1 and all(c.outcome == "skipped" for c in mine):
            first = mine[0]
            reason = dict(first.figures).get("reason", "")
            shown.append(Cell(first.column, "skipped", "skipped: " + reason if reason else "skipped", first.title,
                              [], span=len(mine)))
        else:
            shown.extend(mine)
    return shown


# -- cross-check --------------------------------------------------------------

def _finding_view(finding, run, entry, version_range, records_by_mode):
    from ..catalog import describe_source

    sources = [describe_source(s) for s in (version_range.sources if version_range is not None else ())]
    measured = "; ".join(crosscheck.describe(m, r) for m, r in records_by_mode.items()
                         if r and r.get("outcome") in ("deterministic", "varies", "raised"))
    return FindingView(
        kind=finding.kind, run=run, case=finding.case, pass_name=finding.pass_name,
        title=entry.title if entry is not None else finding.case, status=finding.status,
        versions=version_range.versions if version_range is not None else "",
        device=run.device or "", modes=finding.modes, message=finding.message, sources=sources, measured=measured,
        notable=any(r and r.get("outcome") in ("varies", "raised") for r in records_by_mode.values()))


def _crosscheck(runs, row_keys, catalogue, cells):
    found = {kind: [] for kind in crosscheck.KINDS}
    checked = 0
    if catalogue is None:
        return found, checked
    for run in runs:
        if run.device is None:
            continue
        rows = OrderedDict()
        claims = {}
        ranges = {}
        for case, pass_name in row_keys:
            records_by_mode = OrderedDict((m, run.records.get((case, pass_name, m))) for m in run.modes)
            records_by_mode = OrderedDict((m, r) for m, r in records_by_mode.items() if r is not None)
            if not records_by_mode:
                continue
            entry = _entry(catalogue, case)
            if entry is None:
                continue
            rows[(case, pass_name)] = records_by_mode
            ranges[case] = _claim_range(entry, run)
            for mode, record in records_by_mode.items():  # green, but the catalogue says it varies here
                cell = cells.get((run.key, case, pass_name, mode))
                if cell is not None and cell.outcome == "deterministic" and expected_to_vary(
                        ranges[case], run.mode_switches.get(mode) or frozenset(), mode == crosscheck.PATCHED):
                    _mark_unconfirmed(cell, record)
            claims[case] = crosscheck.Claim.from_range(ranges[case], entry.condition,
                                                       getattr(entry, "fixed_by_seeding", False))
        checked += sum(1 for (case, _) in rows if claims.get(case) is not None and claims[case].status != "unknown")
        for finding in crosscheck.check_run(rows, claims, run.mode_switches):
            entry = _entry(catalogue, finding.case)
            view = _finding_view(finding, run, entry, ranges.get(finding.case), rows[(finding.case, finding.pass_name)])
            found[finding.kind].append(view)
            if finding.kind == crosscheck.NOT_REPRODUCED:
                for mode in finding.modes:
                    cell = cells.get((run.key, finding.case, finding.pass_name, mode))
                    record = run.records.get((finding.case, finding.pass_name, mode))
                    if cell is not None and record is not None and cell.outcome == "deterministic":
                        _mark_unconfirmed(cell, record)
            if finding.kind == crosscheck.DISAGREEMENT:
                for mode in finding.modes:
                    cell = cells.get((run.key, finding.case, finding.pass_name, mode))
                    if cell is not None:
                        cell.disagreement = True
                        cell.title += " | DISAGREES WITH THE CATALOGUE: " + finding.message
    found[crosscheck.NEWLY_MEASURED].sort(key=lambda f: (not f.notable, f.run.index))
    return found, checked


# -- summary ------------------------------------------------------------------

def _median(values):
    return statistics.median(values) if values else None


def _cost_phrase(records):
    """'at no measurable cost' / 'at no measurable cost in 3 of 5 measurements, ×1.2 to ×2.0 in the others' /
    'at a median cost of ×1.40 (×1.20 to ×2.00)': costs whose 95% interval includes 1 are none."""
    quiet, costly = [], []
    for record in records:
        low, high = _number(record.get("ratio_low")), _number(record.get("ratio_high"))
        (quiet if probe_stats.no_measurable_cost(low, high) else costly).append(record["ratio"])
    if not quiet and not costly:
        return ""
    if not costly:
        return "at no measurable cost" + (" (all %d measurements)" % len(quiet) if len(quiet) > 1 else "")
    spread = "\u00d7%.2f to \u00d7%.2f" % (min(costly), max(costly)) if len(costly) > 1 else "\u00d7%.2f" % costly[0]
    if quiet:
        return "at no measurable cost in %d of %d measurements, %s in the others" % (
            len(quiet), len(quiet) + len(costly), spread)
    return "at a median cost of \u00d7%.2f%s" % (_median(costly), " (%s)" % spread if len(costly) > 1 else "")


def _plural(n, one, many=None):
    return "%d %s" % (n, one if n == 1 else (many or one + "s"))


def _summarise(run, rows, single):
    """Plain-language sentences about one run, and the op names behind them."""
    by_case = OrderedDict()  # case -> mode -> [(pass, outcome)]
    for row in rows:
        if row.pass_name is None:
            continue
        for cell in row.cells:
            if cell.column.run is run:
                by_case.setdefault(row.case, {}).setdefault(cell.column.mode, []).append((row.pass_name, cell.outcome))

    def outcomes(case, mode):
        return [o for _, o in by_case[case].get(mode, [])]

    det_modes = [m for m in run.modes if run.mode_switches.get(m)]
    has_baseline = "baseline" in run.modes
    varying = [c for c in by_case if has_baseline and "varies" in outcomes(c, "baseline")]
    fixed, only_patch, still, raised, unclear = [], [], [], [], []
    for case in varying:
        seen = [o for m in det_modes for o in outcomes(case, m)]
        patched = outcomes(case, "patched") if "patched" in det_modes else []
        if "raised" in seen:
            raised.append(case)
        elif "varies" in seen and patched and all(o == "deterministic" for o in patched):
            only_patch.append(case)  # TF's switches leave it varying; tfdet's replacement fixes it
        elif "varies" in seen:
            still.append(case)
        elif seen and all(o == "deterministic" for o in seen):
            fixed.append(case)
        else:
            unclear.append(case)
    only_under = [c for c in by_case if c not in varying and any("varies" in outcomes(c, m) for m in det_modes)]
    measured = [c for c in by_case if any(o in ("deterministic", "varies", "raised")
                                          for m in run.modes for o in outcomes(c, m))]

    def ratios(cases, modes, only_deterministic):
        values = []
        for case in cases:
            for mode in modes:
                for pass_name, outcome in by_case[case].get(mode, []):
                    record = run.records.get((case, pass_name, mode)) or {}
                    if _number(record.get("ratio")) is not None and (
                            outcome == "deterministic" or not only_deterministic):
                        values.append(record)
        return values

    env = run.environment
    if single:
        where = "On this machine (TF %s, %s: %s, %s cores)" % (run.tf_version, env.get("Device"), env.get("CPU"),
                                                             env.get("CPU cores"))
    else:
        where = "With TF %s (%s, %s)" % (run.tf_version, env.get("Device"), run.name)
    sentences = ["Mode %s did not run: %s. Its column is empty or failed; nothing here says what it fixes or costs." % (
        p.mode, p.reason) for p in run.mode_problems if p.failure]
    if not has_baseline:
        sentences.append("%s, no baseline mode was run, so run-to-run variance without determinism was not measured."
                         % where)
    elif not measured:
        sentences.append("%s, nothing was measured yet." % where)
    elif not varying:
        sentences.append("%s, none of the %s measured varies from run to run without determinism." % (
            where, _plural(len(measured), "op")))
    else:
        text = "%s, %s of %d measured vary from run to run without determinism" % (
            where, _plural(len(varying), "op"), len(measured))
        if det_modes:
            label = run.determinism_label or "/".join(det_modes)
            cost = _cost_phrase(ratios(fixed, det_modes, True))
            text += "; %d of them become%s reproducible with %s%s" % (
                len(fixed), "s" if len(fixed) == 1 else "", label, " " + cost if cost else "")
            if only_patch:
                text += "; %d more only with tfdet.patch() (%s)" % (len(only_patch), ", ".join(only_patch))
            text += "; %d still var%s; %d raise%s errors under determinism" % (
                len(still), "ies" if len(still) == 1 else "y", len(raised), "s" if len(raised) == 1 else "")
            if unclear:
                text += "; %d could not be told (failed or not measured)" % len(unclear)
        else:
            text += ("; no determinism switch of TF %s applies to %s in the modes run, so no switch can fix them"
                     % (run.tf_version, run.device or "this device"))
        sentences.append(text + ".")
    if only_under:
        sentences.append("%s only with determinism on: %s." % (
            ("1 more op varies" if len(only_under) == 1 else "%d more ops vary" % len(only_under)),
            ", ".join(only_under)))
    if det_modes and measured:
        overall = []
        for mode in det_modes:
            values = ratios(list(by_case), [mode], False)
            if values:
                overall.append("under %s, %s" % (mode, _cost_phrase(values)))
        if overall:
            sentences.append("Across all measured ops (latency relative to baseline, 95%% intervals): %s." %
                             "; ".join(overall))
    patch_line = describe_patch_cost(patch_cost(list(run.records.values())))
    if patch_line:
        sentences.append(patch_line + ".")
    unconfirmed = [(row, cell) for row in rows for cell in row.cells if cell.column.run is run and cell.unconfirmed]
    if unconfirmed:
        groups = OrderedDict()  # case -> (passes, modes, fewest runs)
        for row, cell in unconfirmed:
            passes, modes, runs = groups.setdefault(row.case, ([], [], []))
            for value, bucket in ((row.pass_name, passes), (cell.column.mode, modes)):
                if value not in bucket:
                    bucket.append(value)
            runs.append(int(_number(run.records[(row.case, row.pass_name, cell.column.mode)].get("runs")) or 0))
        shown = ["%s (%s) under %s: %s" % (case, ", ".join(passes), ", ".join(modes),
                                           probe_stats.describe_ruled_out(min(runs)))
                 for case, (passes, modes, runs) in list(groups.items())[:6]]
        sentences.append("The catalogue says %s here that did not vary in this run; their cells are marked ? "
                         "rather than read as safe: %s%s." % (
                             _plural(len(groups), "op varies", "ops vary"), "; ".join(shown),
                             "; and %d more" % (len(groups) - 6) if len(groups) > 6 else ""))
    for problem in run.mode_problems:
        if not problem.failure:
            sentences.append("Mode %s was not run (not applicable here): %s." % (problem.mode, problem.reason))
    failed = sorted({c for c in by_case for m in run.modes if "failed" in outcomes(c, m)})
    if failed:
        sentences.append("%s failed (crashed or hung): %s." % (_plural(len(failed), "op"), ", ".join(failed)))
    if run.missing:
        sentences.append("This run is incomplete: %d of %d planned case passes were not measured (interrupted); "
                         "continue it with tfdet probe --resume." % (len(run.missing), len(run.planned)))
    lists = [(title, names) for title, names in (
        ("vary without determinism", varying), ("reproducible with determinism", fixed),
        ("reproducible only with tfdet.patch()", only_patch), ("still vary with determinism", still), ("raise under determinism", raised),
        ("vary only with determinism", only_under)) if names]
    return sentences, lists


# -- charts -------------------------------------------------------------------

def _row_label(case, pass_name):
    return case if not pass_name else "%s (%s)" % (case, pass_name)


def _cost_chart(run, rows):
    items = []
    for row in rows:
        if row.pass_name is None:
            continue
        points = []
        for mode in run.modes:
            if mode == "baseline":
                continue
            record = run.records.get((row.case, row.pass_name, mode))
            if record is None or _number(record.get("ratio")) is None:
                continue
            points.append({"series": mode, "value": record.get("ratio"), "low": _number(record.get("ratio_low")),
                           "high": _number(record.get("ratio_high")), "note": record.get("outcome")})
        if points:
            items.append({"label": _row_label(row.case, row.pass_name), "points": points,
                          "top": max(p["value"] for p in points)})
    if not items:
        return None
    items.sort(key=lambda item: -item["top"])
    shown = items[:COST_CHART_ROWS]
    title = "Cost of determinism, %s" % run.label
    caption = ("Median latency under each determinism mode relative to baseline, with its 95%% bootstrap interval, "
               "for the %d ops with the highest ratio%s. Left of \u00d71 is faster, right is slower; an interval that "
               "crosses \u00d71 means no measurable cost." % (
                   len(shown), " (of %d; the rest are in the table)" % len(items) if len(items) > len(shown) else ""))
    return Chart(title, caption, svg.dot_whisker_chart(shown, title))


def _variance_chart(run, rows, max_value=None):
    items = []
    for row in rows:
        if row.pass_name is None:
            continue
        bars = []
        for mode in run.modes:
            record = run.records.get((row.case, row.pass_name, mode))
            if record is None or record.get("outcome") != "varies":
                continue
            value = _number(record.get("max_ulp_diff"))
            if value is not None and value > 0:
                bars.append({"series": mode, "value": value,
                             "note": "(%s/%s distinct)" % (_text(record.get("distinct")), _text(record.get("runs")))})
        if bars:
            items.append({"label": _row_label(row.case, row.pass_name), "bars": bars,
                          "top": max(b["value"] for b in bars)})
    if not items:
        return None
    items.sort(key=lambda item: -item["top"])
    title = "How much results vary, %s" % run.label
    caption = ("The largest difference between any two runs' results, in units in the last place (ULPs), log "
               "scale, for every op and mode that varied. 1 ULP is a last-bit rounding difference; values near "
               "1e9 mean unrelated numbers (random ops, reordered data).")
    if max_value is not None:
        caption += " Every run's chart uses the same scale."
    return Chart(title, caption, svg.log_bar_chart(items, title, max_value=max_value))


def _heatmaps(runs, rows):
    versions = {run.tf_version for run in runs}
    if len(versions) < 2:
        return []
    ordered = sorted(runs, key=lambda r: (_version_key(r.tf_version), r.index))
    labels = []
    for run in ordered:
        label = run.tf_version
        if sum(1 for r in ordered if r.tf_version == run.tf_version) > 1:
            label = "%s #%d" % (run.tf_version, run.index + 1)
        labels.append(label)
    # a mode only one run has makes no comparison
    modes = sorted({m for run in runs for m in run.modes if sum(1 for r in runs if m in r.modes) > 1}, key=_mode_key)
    charts = []
    for mode in modes:
        row_labels, cells = [], {}
        for row in rows:
            if row.pass_name is None:
                continue
            by_run = {c.column.run.key: c for c in row.cells if c.column.mode == mode}
            outcomes = []
            for run in ordered:
                cell = by_run.get(run.key)
                if cell is None:
                    if mode not in run.modes:
                        reason = dict(run.unavailable_modes).get(mode, "mode not run")
                        outcomes.append(("absent", "TF %s: %s not run (%s)" % (run.tf_version, mode, reason)))
                    else:
                        outcomes.append(("absent", "TF %s: not in this run" % run.tf_version))
                else:
                    outcomes.append((cell.outcome, "TF %s, %s: %s" % (run.tf_version, mode, cell.title.split(": ", 1)[-1])))
            kinds = {o for o, _ in outcomes}
            if kinds <= {"deterministic", "absent", "skipped"} and not any(c.disagreement for c in by_run.values()):
                continue
            i = len(row_labels)
            row_labels.append(_row_label(row.case, row.pass_name))
            for j, value in enumerate(outcomes):
                cells[(i, j)] = value
        if not row_labels:
            continue
        title = "Outcome by TF version, %s mode" % mode
        caption = ("Every op that varied, raised or failed under %s in some version (ops reproducible wherever they "
                   "ran are left out). D deterministic, V varies, R raised, F failed, S skipped, ? not measured; blank: not "
                   "in that run." % mode)
        charts.append(Chart(title, caption, svg.heatmap(row_labels, labels, cells, title)))
    return charts


# -- the whole report ---------------------------------------------------------

def build_report(results, catalogue=None, title=None, tfdet_version=""):
    """The view model of a report.

    results: [(path, header, records)] as read by read_results, in the order
    the columns should appear; catalogue: a tfdet Catalogue for titles,
    claims, fixes and the cross-check (None: no cross-check).
    """
    runs = []
    for index, (path, header, records) in enumerate(results):
        runs.append(_build_run(index, path, _dict(header), [r for r in records if isinstance(r, dict)]))
    labels = [run.label for run in runs]
    for run in runs:
        if labels.count(run.label) > 1:
            run.label = "%s \u00b7 %s" % (run.label, run.name)
    labels = [run.label for run in runs]
    for run in runs:
        if labels.count(run.label) > 1:
            run.label = "%s #%d" % (run.label, run.index + 1)
    for run, (_, header, _) in zip(runs, results):
        run.mode_switches = _mode_switches(run, _dict(header), catalogue)
        run.determinism_label = _determinism_label(run, catalogue)

    columns = [Column(run, mode) for run in runs for mode in run.modes]
    row_keys = _row_keys(runs)
    rows, cells = [], {}
    for case, pass_name in row_keys:
        entry = _entry(catalogue, case)
        row_cells = []
        for column in columns:
            cell = _cell(column.run, column, case, pass_name)
            cells[(column.run.key, case, pass_name, column.mode)] = cell
            row_cells.append(cell)
        rows.append(Row(case, pass_name, entry.title if entry is not None else (
            "" if catalogue is None else "not a catalogue entry"), entry is not None, row_cells))

    found, checked = _crosscheck(runs, row_keys, catalogue, cells)

    for row in rows:
        row.display = _merge_skipped(row.cells, runs)
        outcomes = {c.outcome for c in row.cells}
        row.disagreements = sum(1 for c in row.cells if c.disagreement)
        if outcomes & {"varies", "raised", "failed"} or row.disagreements:
            row.group = "attention"
        elif "deterministic" in outcomes:
            row.group = "reproducible"
        else:
            row.group = "not-measured"
        if "varies" in outcomes:
            for run in runs:
                by_mode = {c.column.mode: c for c in row.cells if c.column.run is run}
                if not any(c.outcome == "varies" for c in by_mode.values()):
                    continue
                who = run.label if len(runs) > 1 else ""
                row.advice.append((who, _advice(_entry(catalogue, row.case), run, row.pass_name, by_mode)))

    for run in runs:
        run.summary, run.summary_lists = _summarise(run, rows, single=len(runs) == 1)

    keys = [k for k in ENVIRONMENT_KEYS if any(k in run.environment for run in runs)]
    differing = [k for k in keys if k not in NOT_ENVIRONMENT and len({run.environment.get(k) for run in runs}) > 1]
    difference_values = []
    for key in differing:
        values = []
        for run in runs:
            value = run.environment.get(key, "\u2014")
            if value not in values:
                values.append(value)
        difference_values.append((key, values))
    if len(runs) < 2:
        differences = "One run: nothing to compare."
    elif not differing:
        differences = "The runs share the same environment and settings; any difference between them is run-to-run."
    else:
        differences = "The runs differ in %d setting%s: %s. Everything else in the table is the same." % (
            len(differing), "" if len(differing) == 1 else "s", ", ".join(differing))

    if len(runs) == 1:
        intro = ""
    elif len({(r.environment.get("CPU"), r.environment.get("CPU cores"), r.environment.get("GPUs")) for r in runs}) == 1:
        intro = "All %d runs are from the same hardware (%s, %s cores, GPUs: %s)." % (
            len(runs), runs[0].environment.get("CPU"), runs[0].environment.get("CPU cores"),
            runs[0].environment.get("GPUs"))
    else:
        intro = "The %d runs come from different hardware; see the environment table." % len(runs)

    cost_charts = [c for c in (_cost_chart(run, rows) for run in runs) if c is not None]
    ulps = [_number(r.get("max_ulp_diff")) for run in runs for r in run.records.values() if r.get("outcome") == "varies"]
    shared = max([u for u in ulps if u is not None] or [0]) if len(runs) > 1 else None
    variance_charts = [c for c in (_variance_chart(run, rows, shared or None) for run in runs) if c is not None]
    return Report(
        title=title or ("tfdet probe report: " + ", ".join(run.label for run in runs) if runs else "tfdet probe report"),
        runs=runs, columns=columns, rows=rows, environment_keys=keys, differing_keys=differing,
        differences=differences, difference_values=difference_values, disagreements=found[crosscheck.DISAGREEMENT],
        not_reproduced=found[crosscheck.NOT_REPRODUCED], newly_measured=found[crosscheck.NEWLY_MEASURED],
        claims_checked=checked, summary_intro=intro, cost_charts=cost_charts, variance_charts=variance_charts,
        heatmaps=_heatmaps(runs, rows), legend=[(o, OUTCOME_TEXT[o]) for o in OUTCOMES], tfdet_version=tfdet_version,
        catalogue_used=catalogue is not None)

