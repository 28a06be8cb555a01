"""HTML reports of probe results: `tfdet report RESULTS... -o report.html`.

model.py turns typed results (tfdet.results) into a view model (pure), its
steps each in a module of their own (runs, environment, grid, findings, prose,
charts, on formatting and view); tfdet.catalog.crosscheck compares
measurements with the catalogue (pure; `tfdet catalog update` uses it too),
svg.py draws the charts (pure), render.py renders the page with Jinja2
(autoescaped). matrix_page.py pivots the same grid into one table per mode
with TF versions as columns (`tfdet report --matrix`).
"""

from .model import build_report
from .render import render_report


def report_from_files(paths, catalogue=None, title=None, generated=None):
    """Read results files and render their report: (Report, the page as a string).

    A `tfdet locate --json` file gives the locate page instead (the result, the page),
    a `tfdet diverge` file the diverge page (its DivergePage, the page),
    a `tfdet compare` file the compare page (its CompareResults, the page).
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
    varied = [r for r in results if getattr(r, "kind", None) == "vary"]
    if varied:
        if len(results) > 1:
            raise ResultsError("%s: a probe --vary results file is reported on its own, not with other files" % (
                varied[0].path))
        from .vary_page import render_vary

        return render_vary(varied[0], generated=generated, title=title)
    compared = [r for r in results if getattr(r, "kind", None) == "compare"]
    if compared:
        # The A vs B file is the page; A/A files (tfdet compare --aa), in any order, its noise floor.
        compared.sort(key=lambda r: bool(r.header is not None and r.header.aa))
        floors = [r for r in compared[1:] if r.header is not None and r.header.aa]
        if len(results) > 1 + len(floors):
            raise ResultsError("%s: a compare results file is reported on its own, or with A/A files (tfdet "
                               "compare --aa) that give its noise floor" % compared[0].path)
        from .compare_page import render_compare

        return render_compare(compared[0], generated=generated, title=title, floors=floors)
    located = [r for r in results if isinstance(r, LocateResult)]
    if located:
        if len(results) > 1:
            raise ResultsError("%s: a locate result is reported on its own, not with other files" % paths[0])
        from .locate_page import render_locate

        return located[0], render_locate(located[0], generated=generated, title=title)
    report = build_report(results, catalogue=catalogue, title=title, tfdet_version=__version__)
    return report, render_report(report, generated=generated)


def matrix_from_files(paths, catalogue=None, manifest=None, title=None, generated=None):
    """Read probe results files (one per TF version, one device) and an optional
    matrix manifest (JSON: each version's install status); render the matrix
    page: (MatrixPage, the page as a string). Raises ResultsError, naming the
    file, for anything that cannot be read or does not belong in a matrix."""
    import json

    from .. import __version__
    from ..results import ResultsError, load, describe_os_error
    from .matrix_page import build_matrix, parse_manifest, render_matrix

    parsed = None
    if manifest is not None:
        try:
            with open(manifest, encoding="utf-8") as handle:
                data = json.load(handle)
        except OSError as exc:
            raise ResultsError(describe_os_error(exc, manifest, "cannot read")) from None
        except ValueError as exc:
            raise ResultsError("%s: not JSON: %s" % (manifest, exc)) from None
        parsed = parse_manifest(data, manifest)
    page = build_matrix([load(path) for path in paths], catalogue=catalogue, manifest=parsed, title=title,
                        tfdet_version=__version__)
    return page, render_matrix(page, generated=generated)


__all__ = ["build_report", "render_report", "report_from_files", "matrix_from_files"]
