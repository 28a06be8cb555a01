"""The HTML page of a `tfdet probe --vary` results file: the op x setting grid,
which ops each setting changes, the arms and the notes. Pure: VaryResults in,
a page out; autoescaped, self-contained (no scripts, no network)."""

from .render import environment
from .vary_grid import build_grid, sensitive_by_setting

TEMPLATE = "vary.html.j2"


def render_vary(results, generated=None, title=None):
    """(the Grid, the page)."""
    from .. import __version__

    grid = build_grid(results)
    header = results.header
    title = title or "tfdet probe --vary: TF %s, %s, %d cores" % (header.tf_version, header.device, header.cpu_count)
    arms = [{"name": name, "env": ", ".join("%s=%s" % kv for kv in sorted(info.env.items())) or "-",
             "threads": info.threads, "execution": info.execution, "devices": info.logical_devices or 1,
             "start": "%.0f s" % info.import_seconds if info.import_seconds is not None else "-"}
            for name, info in sorted(header.arms.items())]
    page = environment().get_template(TEMPLATE).render(
        title=title, tfdet_version=__version__, generated=generated or "", grid=grid,
        sensitive=sensitive_by_setting(grid), arms=arms, repeats=header.repeats,
        notes=list(results.end.notes) if results.end else [],
        seconds=results.end.seconds if results.end else None, partial=results.end is None)
    return grid, page
