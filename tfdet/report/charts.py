"""The data behind the report's pictures: the cost of determinism per op, how
far results vary, and (for several TF versions) an op x version grid per mode.
svg.py draws them. Pure."""

from ..results.vocabulary import VARIES
from . import svg
from .formatting import mode_key, row_label, text, version_key
from .view import Chart

COST_CHART_ROWS = 30


def cost_chart(run, rows):
    """Each op's latency ratio to baseline under each determinism mode (the costliest first); None without any."""
    items = []
    for row in rows:
        if row.pass_name is None:
            continue
        points = []
        for mode in run.modes:
            if mode == "baseline":
                continue
            record = run.records.get((row.case, row.pass_name, mode))
            if record is None or record.ratio is None:
                continue
            points.append({"series": mode, "value": record.ratio, "low": record.ratio_low,
                           "high": record.ratio_high, "note": record.outcome})
        if points:
            items.append({"label": row_label(row.case, row.pass_name), "points": points,
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


def variance_chart(run, rows, max_value=None):
    """The largest ULP difference of every op and mode that varied; None where nothing varied."""
    items = []
    for row in rows:
        if row.pass_name is None:
            continue
        bars = []
        for mode in run.modes:
            record = run.records.get((row.case, row.pass_name, mode))
            if record is None or record.outcome != VARIES:
                continue
            value = record.max_ulp_diff
            if value is not None and value > 0:
                bars.append({"series": mode, "value": value,
                             "note": "(%s/%s distinct)" % (text(record.distinct), text(record.runs))})
        if bars:
            items.append({"label": row_label(row.case, row.pass_name), "bars": bars,
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


def shared_ulp_scale(runs):
    """The largest ULP difference over several runs (their charts share it); None for one run."""
    if len(runs) < 2:
        return None
    ulps = [r.max_ulp_diff for run in runs for r in run.records.values()
            if r.outcome == VARIES and r.max_ulp_diff is not None]
    return max(ulps or [0]) or None


def cost_charts(runs, rows):
    return [c for c in (cost_chart(run, rows) for run in runs) if c is not None]


def variance_charts(runs, rows):
    shared = shared_ulp_scale(runs)
    return [c for c in (variance_chart(run, rows, shared) for run in runs) if c is not None]


def heatmaps(runs, rows):
    """One outcome-by-TF-version grid per mode two runs share; none for a single TF version."""
    versions = {run.tf_version for run in runs}
    if len(versions) < 2:
        return []
    ordered = sorted(runs, key=lambda r: (version_key(r.tf_version), r.index))
    labels = []
    for run in ordered:
        label = run.tf_version
        if sum(1 for r in ordered if r.tf_version == run.tf_version) > 1:
            label = "%s #%d" % (run.tf_version, run.index + 1)
        labels.append(label)
    # a mode only one run has makes no comparison
    modes = sorted({m for run in runs for m in run.modes if sum(1 for r in runs if m in r.modes) > 1}, key=mode_key)
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
                    outcomes.append((cell.outcome, "TF %s, %s: %s" % (
                        run.tf_version, mode, cell.title.split(": ", 1)[-1])))
            kinds = {o for o, _ in outcomes}
            if kinds <= {"deterministic", "absent", "skipped"} and not any(c.disagreement for c in by_run.values()):
                continue
            i = len(row_labels)
            row_labels.append(row_label(row.case, row.pass_name))
            for j, value in enumerate(outcomes):
                cells[(i, j)] = value
        if not row_labels:
            continue
        title = "Outcome by TF version, %s mode" % mode
        caption = ("Every op that varied, raised or failed under %s in some version (ops reproducible wherever they "
                   "ran are left out). D deterministic, V varies, R raised, F failed, S skipped, ? not measured; "
                   "blank: not in that run." % mode)
        charts.append(Chart(title, caption, svg.heatmap(row_labels, labels, cells, title)))
    return charts
