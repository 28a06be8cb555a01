"""HTML reports of probe results: `tfdet report RESULTS... -o report.html`.

model.py turns typed results (tfdet.results) into a view model (pure), its
steps each in a module of their own (runs, environment, grid, findings, prose,
charts, on formatting and view); tfdet.catalog.crosscheck compares measurements
with the catalogue (pure; `tfdet catalog update` uses it too), svg.py draws the charts (pure), render.py renders the page
with Jinja2 (autoescaped).
"""

from .model import build_report
from .render import render_report


def report_from_files(paths, catalogue=None, title=None, generated=None):
    """Read results files and render their report: (Report, the page as a string).

    A `tfdet locate --json` file gives the locate page instead (the result, the page),
    a `tfdet diverge` file the diverge page (its DivergePage, the page).
    Raises tfdet.results.ResultsError, naming the file (and line and field),
    for a file that is missing, not a results file, malformed, or of an unknown
    schema version.
    """
    from .. import __version__
    from ..results import load

    from ..results import ResultsError
    from ..results.locate_records import LocateResult

    results = [load(path) for path in paths]
    diverged = [r for r in results if getattr(r, "kind", None) == "diverge"]
    if diverged:
        if len(results) > 1:
            raise ResultsError("%s: a diverge results file is reported on its own, not with other files" % (
                diverged[0].path))
        from .diverge_page import render_diverge

        return render_diverge(diverged[0], generated=generated, title=title)
    located = [r for r in results if isinstance(r, LocateResult)]
    if located:
        if len(results) > 1:
            raise ResultsError("%s: a locate result is reported on its own, not with other files" % paths[0])
        from .locate_page import render_locate

        return located[0], render_locate(located[0], generated=generated, title=title)
    report = build_report(results, catalogue=catalogue, title=title, tfdet_version=__version__)
    return report, render_report(report, generated=generated)


__all__ = ["build_report", "render_report", "report_from_files"]
