"""Render a report view model to one self-contained HTML page. Returns a
string; only the CLI writes files.

Jinja2 autoescaping is on for every template: op names, messages, paths and
environment values render as text. The only markup passed through unescaped
is the SVG built by tfdet.report.svg, whose every text is escaped there.
"""

import jinja2
from markupsafe import Markup

from . import svg

TEMPLATE = "report.html.j2"


def environment():
    """The Jinja2 environment over the templates shipped in tfdet/report/templates/."""
    return jinja2.Environment(
        loader=jinja2.PackageLoader("tfdet.report", "templates"),
        autoescape=True,  # every template, whatever its file name
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _charts(charts):
    # svg.py escaped every text it put into these strings; only now are they marked safe.
    return [{"title": c.title, "caption": c.caption, "svg": Markup(c.svg)} for c in charts]


def render_report(report, generated=None):
    """The HTML page of a Report (tfdet.report.model.build_report)."""
    template = environment().get_template(TEMPLATE)
    return template.render(
        report=report,
        generated=generated,
        cost_charts=_charts(report.cost_charts),
        variance_charts=_charts(report.variance_charts),
        heatmaps=_charts(report.heatmaps),
        outcome_colours=svg.OUTCOME_COLOURS,
        mode_colours=svg.MODE_COLOURS,
    )
