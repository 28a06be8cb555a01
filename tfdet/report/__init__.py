"""HTML reports of probe results: `tfdet report RESULTS... -o report.html`.

model.py turns results into a view model (pure), crosscheck.py compares
measurements with the catalogue (pure), svg.py draws the charts (pure),
render.py renders the page with Jinja2 (autoescaped).
"""

from .model import build_report
from .render import render_report


def report_from_files(paths, catalogue=None, title=None, generated=None):
    """Read results files and render their report: the page as a string.

    Raises tfdet.probe.results.ResultsError for a file that is missing, not a
    results file, or of an unknown schema version.
    """
    from .. import __version__
    from ..probe.results import read_results

    results = []
    for path in paths:
        header, records = read_results(path)
        results.append((path, header, records))
    report = build_report(results, catalogue=catalogue, title=title, tfdet_version=__version__)
    return report, render_report(report, generated=generated)


__all__ = ["build_report", "render_report", "report_from_files"]
