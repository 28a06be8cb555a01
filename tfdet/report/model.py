"""Probe results -> the report's view model. Pure: no I/O.

The caller reads each results file (tfdet.results.load) and hands in the
ProbeResults, each with its path, and a catalogue; `build_report` returns a
Report (view.py): the runs and their environments, what differs between them,
one row per catalogue entry and pass with one cell per (run, mode), the
cross-check against the catalogue, the plain-language summary and the charts
(as SVG strings, every text in them escaped).

Each step is a module of its own, imported one way (none imports this one):
runs.py (a file as a Run), environment.py (its environment table), grid.py
(rows, columns and cells), findings.py (the cross-check on the grid),
prose.py (the summary and advice), charts.py (the pictures' data), all on
formatting.py and view.py.
"""

from ..catalog import crosscheck
from . import charts, environment, findings, grid, prose
from . import runs as run_views
from .view import Report


def build_report(results, catalogue=None, title=None, tfdet_version=""):
    """The Report of results: [ProbeResults] (each with its path), in the order
    the columns should appear; catalogue: a tfdet Catalogue for titles, claims,
    fixes and the cross-check (None: no cross-check)."""
    runs = [run_views.build_run(index, result) for index, result in enumerate(results)]
    run_views.tell_apart(runs)
    for run, result in zip(runs, results):
        run.mode_switches = run_views.mode_switches(run, result.header, catalogue)
        run.determinism_label = run_views.determinism_label(run, catalogue)

    columns = grid.columns(runs)
    keys = grid.row_keys(runs)
    rows, cells = grid.rows(keys, columns, catalogue)
    found, checked = findings.check(runs, keys, catalogue, cells)
    for row in rows:
        grid.arrange(row, runs)
        row.advice = prose.row_advice(row, runs, catalogue)
    for run in runs:
        run.summary, run.summary_lists = prose.summarise(run, rows, single=len(runs) == 1)

    keys_shown, differing, difference_values, differences = environment.compare(runs)
    return Report(
        title=title or ("tfdet probe report: " + ", ".join(run.label for run in runs) if runs else "tfdet probe report"),
        runs=runs, columns=columns, rows=rows, environment_keys=keys_shown, differing_keys=differing,
        differences=differences, difference_values=difference_values, disagreements=found[crosscheck.DISAGREEMENT],
        not_reproduced=found[crosscheck.NOT_REPRODUCED], newly_measured=found[crosscheck.NEWLY_MEASURED],
        claims_checked=checked, summary_intro=environment.hardware_intro(runs),
        cost_charts=charts.cost_charts(runs, rows), variance_charts=charts.variance_charts(runs, rows),
        heatmaps=charts.heatmaps(runs, rows), legend=list(grid.LEGEND), tfdet_version=tfdet_version,
        catalogue_used=catalogue is not None)

