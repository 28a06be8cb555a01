"""The op x mode grid: one row per (case, pass), one column per (run, mode),
and in each cell what that case came to there, with its figures. Pure."""

from collections import OrderedDict

from ..results import stats
from ..results.interpret import cost_words
from ..results.vocabulary import DETERMINISTIC, FAILED, RAISED, SKIPPED, VARIES
from . import claims
from .formatting import DASH, TIMES, big, cost_label, percent, ratio_text, seconds, text
from .view import Cell, Column, Row

# What a cell can show: the outcomes a record holds, and two the grid adds.
MISSING, ABSENT = "missing", "absent"
OUTCOMES = (DETERMINISTIC, VARIES, RAISED, FAILED, SKIPPED, MISSING, ABSENT)
OUTCOME_TEXT = {
    DETERMINISTIC: "deterministic: every run gave bitwise the same result",
    VARIES: "varies: runs gave different results",
    RAISED: "raised: the op raised an error (ops without a deterministic kernel do, under determinism)",
    FAILED: "failed: the worker process crashed or hung; the run went on",
    SKIPPED: "skipped: the entry cannot run here (the reason is in the cell)",
    MISSING: "not measured (interrupted): planned, but the run stopped before it",
    ABSENT: "not in this run: not planned there, or the mode was not run",
}
LEGEND = [(o, OUTCOME_TEXT[o]) for o in OUTCOMES]
MAX_STDERR_LINES = 12


def columns(runs):
    return [Column(run, mode) for run in runs for mode in run.modes]


def row_keys(runs):
    """(case, pass) of every row, in the order planned then measured; skipped cases last, with no pass."""
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


def figures(record, mode):
    """[(name, value)] of a measured record: what the cell shows on hover and click."""
    outcome = record.outcome
    shown = []
    if outcome in (DETERMINISTIC, VARIES):
        shown.append(("distinct results / runs", "%s / %s" % (text(record.distinct), text(record.runs))))
        shown.append(("distinct within a process, across processes", "%s, %s" % (
            text(record.distinct_within_process), text(record.distinct_across_processes))))
        shown.append(("max ULP difference", big(record.max_ulp_diff)))
        shown.append(("max absolute difference", big(record.max_abs_diff)))
        shown.append(("elements that differ", percent(record.frac_elements_differ)))
        if outcome == DETERMINISTIC and record.runs:
            shown.append(("what this rules out", stats.describe_ruled_out(record.runs)))
        if record.catalogue_expects_variance:
            shown.append(("catalogue", record.catalogue_expects_variance))
        if record.extra_runs:
            shown.append(("repeated", "%s more runs, because %s" % (
                text(record.extra_runs), text(record.repeated_because, "variance was expected"))))
        if record.shape_mismatch:
            shown.append(("shapes", "differ between runs"))
        if record.matches_baseline is not None and mode != "baseline":
            shown.append(("bitwise equal to baseline", text(record.matches_baseline)))
        shown.append(("output", "%s %s" % (text(record.dtype), text(record.shape))))
    elif outcome == RAISED:
        shown.append(("error", "%s: %s" % (text(record.error_type, "Error"), text(record.error_message, ""))))
        if record.raised_in_processes is not None:
            shown.append(("raised in processes", "%s of %s" % (text(record.raised_in_processes),
                                                             text(record.processes))))
    elif outcome == FAILED:
        shown.append(("what happened", text(record.error_message)))
    if record.median_s is not None:
        iqr = record.iqr_s or []
        shown.append(("median latency", seconds(record.median_s) + (
            " (IQR %s\u2013%s)" % (seconds(iqr[0]), seconds(iqr[1])) if len(iqr) == 2 else "")))
    ratio = ratio_text(record.ratio, record.ratio_low, record.ratio_high)
    if ratio and record.ratio_low is not None and record.ratio_high is not None:
        ratio = cost_words(record.ratio, record.ratio_low, record.ratio_high)
        if ratio.startswith("no measurable"):
            ratio += " (median %s%.2f)" % (TIMES, record.ratio)
    if ratio:
        p = record.cost_p_value
        shown.append(("cost vs baseline (95% interval)", ratio + ("; p=%.2g" % p if p is not None else "")))
    return shown


def _measured_cell(column, record):
    outcome, mode = record.outcome, column.mode
    if outcome in (DETERMINISTIC, VARIES):
        label = "%s/%s" % (text(record.distinct, "?"), text(record.runs, "?"))
    else:
        label = outcome
    shown = figures(record, mode)
    cost = cost_label(record.ratio, record.ratio_low, record.ratio_high) if mode != "baseline" else ""
    title = "%s, %s: %s; " % (column.run.label, mode, outcome) + "; ".join("%s: %s" % f for f in shown)
    detail = ""
    if outcome == FAILED and record.stderr_tail:
        detail = "\n".join(record.stderr_tail.splitlines()[-MAX_STDERR_LINES:])
    cell = Cell(column, outcome, label, title, shown, cost, detail)
    if outcome == DETERMINISTIC and record.catalogue_expects_variance:
        mark_unconfirmed(cell, record)
    return cell


def mark_unconfirmed(cell, record):
    """Flag a green cell the catalogue says should vary: striped, with what its runs rule out."""
    if cell.unconfirmed:
        return
    cell.unconfirmed = True
    cell.title += " | THE CATALOGUE SAYS THIS VARIES HERE; not seen: " + (
        stats.describe_ruled_out(record.runs) if record.runs else "no runs")


def cell(column, case, pass_name):
    """What (case, pass) came to in one column: measured, skipped, missing (interrupted) or absent."""
    run = column.run
    record = run.records.get((case, pass_name, column.mode))
    if record is not None:
        return _measured_cell(column, record)
    if case in run.skipped:
        reason = run.skipped[case]
        return Cell(column, SKIPPED, "skipped", "%s: skipped: %s" % (run.label, reason), [("reason", reason)])
    if (case, pass_name) in run.planned:
        return Cell(column, MISSING, "not measured", "%s, %s: not measured (interrupted)" % (run.label, column.mode),
                    [("status", "not measured (interrupted): the run stopped before this case")])
    return Cell(column, ABSENT, DASH, "%s: not in this run" % run.label, [])


def rows(keys, all_columns, catalogue):
    """(rows, {(run key, case, pass, mode): cell}): one Row per key, one cell per column."""
    made, cells = [], {}
    for case, pass_name in keys:
        case_entry = claims.entry(catalogue, case)
        row_cells = []
        for column in all_columns:
            made_cell = cell(column, case, pass_name)
            cells[(column.run.key, case, pass_name, column.mode)] = made_cell
            row_cells.append(made_cell)
        title = case_entry.title if case_entry is not None else ("" if catalogue is None else "not a catalogue entry")
        made.append(Row(case, pass_name, title, case_entry is not None, row_cells))
    return made, cells


def merge_skipped(row_cells, runs):
    """The cells to show: where every mode of a run is skipped, one cell spanning them, with the reason."""
    shown = []
    for run in runs:
        mine = [c for c in row_cells if c.column.run is run]
        if len(mine) > 1 and all(c.outcome == SKIPPED for c in mine):
            first = mine[0]
            reason = dict(first.figures).get("reason", "")
            shown.append(Cell(first.column, SKIPPED, "skipped: " + reason if reason else "skipped", first.title,
                              [], span=len(mine)))
        else:
            shown.extend(mine)
    return shown


def arrange(row, runs):
    """Fill in a row's shown cells, its disagreement count and its group (after the cross-check)."""
    row.display = merge_skipped(row.cells, runs)
    outcomes = {c.outcome for c in row.cells}
    row.disagreements = sum(1 for c in row.cells if c.disagreement)
    if outcomes & {VARIES, RAISED, FAILED} or row.disagreements:
        row.group = "attention"
    elif DETERMINISTIC in outcomes:
        row.group = "reproducible"
    else:
        row.group = "not-measured"
