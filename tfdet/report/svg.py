"""Inline SVG charts for the report. Pure: plain data in, an SVG string out.

Every piece of text that reaches the SVG (labels, titles, tooltips) goes
through `esc`, so an op name or a message containing markup renders as text.
No scripts, no external fonts or stylesheets: the charts work offline.
"""

import html
import math

OUTCOME_COLOURS = {
    "deterministic": "#1a9850",
    "varies": "#d73027",
    "raised": "#7b3294",
    "failed": "#8c510a",
    "skipped": "#9e9e9e",
    "missing": "#ffffff",
    "absent": "#f4f4f4",
}
OUTCOME_LETTERS = {"deterministic": "D", "varies": "V", "raised": "R", "failed": "F", "skipped": "S",
                   "missing": "?", "absent": ""}
MODE_COLOURS = {"baseline": "#4d4d4d", "env": "#1f78b4", "api": "#e66101", "patched": "#5e3c99"}
_EXTRA_COLOURS = ("#1b9e77", "#a6761d", "#e7298a", "#66a61e")

FONT = "font-family=\"system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif\""
CHAR_W = 6.2  # average glyph width at 11px, for laying out labels
ROW_LABEL_MAX = 44


def esc(text):
    """Text made safe for SVG/HTML element content and attribute values."""
    return html.escape("" if text is None else str(text), quote=True)


def series_colour(name, index=0):
    return MODE_COLOURS.get(name) or _EXTRA_COLOURS[index % len(_EXTRA_COLOURS)]


def _clip(text, limit=ROW_LABEL_MAX):
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _fmt(x):
    return ("%.1f" % x).rstrip("0").rstrip(".")


def _finite_positive(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def _open(width, height, title, description):
    return ['<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="%d" height="%d" '
            'viewBox="0 0 %d %d" %s font-size="11" aria-label="%s">' % (width, height, width, height, FONT, esc(title)),
            "<title>%s</title>" % esc(title), "<desc>%s</desc>" % esc(description)]


def _legend(x, y, names, colour_of, shape="dot"):
    parts = []
    for index, name in enumerate(names):
        colour = colour_of(name, index)
        if shape == "dot":
            parts.append('<circle cx="%.1f" cy="%.1f" r="4" fill="%s"/>' % (x + 4, y - 4, colour))
        else:
            parts.append('<rect x="%.1f" y="%.1f" width="10" height="10" fill="%s" stroke="#666" stroke-width="0.5"/>'
                         % (x, y - 9, colour))
        parts.append('<text x="%.1f" y="%.1f">%s</text>' % (x + 14, y, esc(name)))
        x += 14 + CHAR_W * len(str(name)) + 18
    return parts


def _log_ticks(lo, hi):
    """Readable tick values on a log axis between lo and hi (ratios near 1)."""
    candidates = [0.01, 0.02, 0.05, 0.1, 0.2, 0.25, 0.5, 0.67, 0.8, 1, 1.25, 1.5, 2, 3, 5, 10, 20, 50, 100, 200, 500,
                  1000]
    ticks = [t for t in candidates if lo <= t <= hi]
    while len(ticks) > 9:
        keep = [t for i, t in enumerate(ticks) if i % 2 == 0 or t == 1]
        if len(keep) == len(ticks):
            break
        ticks = keep
    return ticks or [1]


def _rows_and_series(items, key):
    """[(label, marks)] for items with at least one drawable mark (a finite
    positive value), and the mark series in the order first seen."""
    rows = []
    for item in items:
        marks = [m for m in item.get(key, ()) if _finite_positive(m.get("value"))]
        if marks:
            rows.append((item.get("label", ""), marks))
    series = []
    for _, marks in rows:
        for mark in marks:
            if mark.get("series") not in series:
                series.append(mark.get("series"))
    return rows, series


def dot_whisker_chart(items, title, x_label="median latency relative to baseline (log scale); bars: 95% interval",
                      description=None, width=1100):
    """A dot-and-whisker chart: one row per item, one dot per series.

    items: [{"label": str, "points": [{"series", "value", "low", "high", "note"}]}]
    Values are ratios (> 0) drawn on a log axis with a reference line at 1.
    Points without a finite positive value are left out.
    """
    rows, series = _rows_and_series(items, "points")
    description = description or "%d ops; dots are median latency ratios, whiskers the 95%% interval" % len(rows)
    label_w = min(ROW_LABEL_MAX, max([len(str(label)) for label, _ in rows] + [8])) * CHAR_W + 16
    x0, x1 = label_w, width - 24
    per_row = max(14, 9 * len(series) + 6)
    top, bottom = 34, 46
    height = top + per_row * max(1, len(rows)) + bottom
    out = _open(width, height, title, description)
    out.append('<text x="0" y="14" font-weight="600" font-size="13">%s</text>' % esc(title))
    if not rows:
        out.append('<text x="0" y="40" fill="#555">%s</text>' % esc("No cost ratios in these results."))
        out.append("</svg>")
        return "\n".join(out)
    values = [v for _, points in rows for p in points for v in (p.get("value"), p.get("low"), p.get("high"))
              if _finite_positive(v)]
    lo = min(min(values) / 1.1, 0.8)
    hi = max(max(values) * 1.1, 1.25)

    def x_of(v):
        v = min(max(v, lo), hi)
        return x0 + (math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo)) * (x1 - x0)

    plot_bottom = top + per_row * len(rows)
    for t in _log_ticks(lo, hi):
        x = x_of(t)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="%s"%s/>' % (
            x, top - 4, x, plot_bottom, "#444" if t == 1 else "#ddd", "1.2" if t == 1 else "1",
            "" if t == 1 else ' stroke-dasharray="2,3"'))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#333">\u00d7%s</text>' % (
            x, plot_bottom + 14, esc(_fmt(t) if t >= 1 else ("%g" % t))))
    out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#333">%s</text>' % (
        (x0 + x1) / 2, plot_bottom + 30, esc(x_label)))
    for index, (label, points) in enumerate(rows):
        y_row = top + index * per_row
        if index % 2 == 0:
            out.append('<rect x="0" y="%d" width="%d" height="%d" fill="#f7f7f7"/>' % (y_row, width, per_row))
        out.append('<text x="%.1f" y="%.1f" text-anchor="end">%s<title>%s</title></text>' % (
            x0 - 8, y_row + per_row / 2 + 4, esc(_clip(label)), esc(label)))
        for p in points:
            k = series.index(p.get("series"))
            y = y_row + 7 + k * 9 if len(series) > 1 else y_row + per_row / 2
            colour = series_colour(p.get("series"), k)
            tip = "%s, %s: \u00d7%.3f" % (label, p.get("series"), p["value"])
            low, high = p.get("low"), p.get("high")
            out.append('<g class="point"><title>%s</title>' % esc(
                tip + (" [%.3f\u2013%.3f]" % (low, high) if _finite_positive(low) and _finite_positive(high) else "")
                + (" " + p["note"] if p.get("note") else "")))
            if _finite_positive(low) and _finite_positive(high):
                out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/>' % (
                    x_of(low), y, x_of(high), y, colour))
                for end in (low, high):
                    out.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1.5"/>' % (
                        x_of(end), y - 3, x_of(end), y + 3, colour))
            out.append('<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="#fff" stroke-width="0.8"/></g>' % (
                x_of(p["value"]), y, colour))
    out.extend(_legend(x0, height - 6, series, series_colour))
    out.append("</svg>")
    return "\n".join(out)


def _pow10_label(k):
    return "1" if k == 0 else ("10" if k == 1 else "1e%d" % k)


def log_bar_chart(items, title, x_label="largest difference between runs, in ULPs (log scale)", description=None,
                  width=1100, max_value=None):
    """Horizontal bars on a log10 axis: one row per item, one bar per series.

    items: [{"label": str, "bars": [{"series", "value", "note"}]}]; values
    must be > 0 (a value of 0 or less, or not a number, is left out).
    max_value: extend the axis to at least this value (to share a scale).
    """
    rows, series = _rows_and_series(items, "bars")
    description = description or "%d ops that varied; bar length is the largest ULP difference" % len(rows)
    # max_value: the same axis for several charts meant to be compared
    label_w = min(ROW_LABEL_MAX, max([len(str(label)) for label, _ in rows] + [8])) * CHAR_W + 16
    x0, x1 = label_w, width - 90
    bar_h = 8
    per_row = max(14, (bar_h + 2) * len(series) + 6)
    top, bottom = 34, 46
    height = top + per_row * max(1, len(rows)) + bottom
    out = _open(width, height, title, description)
    out.append('<text x="0" y="14" font-weight="600" font-size="13">%s</text>' % esc(title))
    if not rows:
        out.append('<text x="0" y="40" fill="#555">%s</text>' % esc("Nothing varied in these results."))
        out.append("</svg>")
        return "\n".join(out)
    biggest = max([b["value"] for _, bars in rows for b in bars] + ([max_value] if _finite_positive(max_value) else []))
    decades = max(1, int(math.ceil(math.log10(max(biggest, 10)))))

    def x_of(v):
        return x0 + min(max(math.log10(max(v, 1)), 0), decades) / decades * (x1 - x0)

    plot_bottom = top + per_row * len(rows)
    step = 1 if decades <= 10 else int(math.ceil(decades / 10.0))
    for k in range(0, decades + 1, step):
        x = x_of(10 ** k)
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd" stroke-dasharray="2,3"/>' % (
            x, top - 4, x, plot_bottom))
        out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#333">%s</text>' % (
            x, plot_bottom + 14, esc(_pow10_label(k))))
    out.append('<text x="%.1f" y="%d" text-anchor="middle" fill="#333">%s</text>' % (
        (x0 + x1) / 2, plot_bottom + 30, esc(x_label)))
    for index, (label, bars) in enumerate(rows):
        y_row = top + index * per_row
        if index % 2 == 0:
            out.append('<rect x="0" y="%d" width="%d" height="%d" fill="#f7f7f7"/>' % (y_row, width, per_row))
        out.append('<text x="%.1f" y="%.1f" text-anchor="end">%s<title>%s</title></text>' % (
            x0 - 8, y_row + per_row / 2 + 4, esc(_clip(label)), esc(label)))
        for b in bars:
            k = series.index(b.get("series"))
            y = y_row + 3 + k * (bar_h + 2) if len(series) > 1 else y_row + (per_row - bar_h) / 2
            colour = series_colour(b.get("series"), k)
            value = b["value"]
            tip = "%s, %s: max %s ULP%s" % (label, b.get("series"), "{:,}".format(int(value)) if value < 1e18 else
                                            "%.3g" % value, " " + b["note"] if b.get("note") else "")
            out.append('<g class="bar"><title>%s</title><rect x="%.1f" y="%.1f" width="%.1f" height="%d" fill="%s"/>'
                       '</g>' % (esc(tip), x0, y, max(1.5, x_of(value) - x0), bar_h, colour))
        # the largest value, as a number, at the end of the row
        top_bar = max(bars, key=lambda b: b["value"])
        out.append('<text x="%.1f" y="%.1f" fill="#333">%s</text>' % (
            x_of(top_bar["value"]) + 4, y_row + per_row / 2 + 4, esc("%.2g" % top_bar["value"])))
    out.extend(_legend(x0, height - 6, series, series_colour, shape="square"))
    out.append("</svg>")
    return "\n".join(out)


def heatmap(row_labels, column_labels, cells, title, description=None, cell_w=76, cell_h=16):
    """An outcome grid: rows (ops) by columns (e.g. TF versions).

    cells: {(row_index, column_index): (outcome, tooltip)}; an outcome is a
    key of OUTCOME_COLOURS; a missing cell is drawn as absent. Each cell also
    carries a letter, so the grid reads without colour.
    """
    description = description or "%d ops by %d columns, coloured by outcome" % (len(row_labels), len(column_labels))
    label_w = min(ROW_LABEL_MAX, max([len(str(label)) for label in row_labels] + [8])) * CHAR_W + 16
    top = 44
    width = int(label_w + cell_w * max(1, len(column_labels)) + 16)
    legend_names = [o for o in ("deterministic", "varies", "raised", "failed", "skipped", "missing")]
    height = top + cell_h * max(1, len(row_labels)) + 34
    width = max(width, 560)
    out = _open(width, height, title, description)
    out.append('<text x="0" y="14" font-weight="600" font-size="13">%s</text>' % esc(title))
    for j, label in enumerate(column_labels):
        out.append('<text x="%.1f" y="%d" text-anchor="middle" font-weight="600">%s<title>%s</title></text>' % (
            label_w + j * cell_w + cell_w / 2, top - 6, esc(_clip(label, 12)), esc(label)))
    for i, label in enumerate(row_labels):
        y = top + i * cell_h
        out.append('<text x="%.1f" y="%.1f" text-anchor="end">%s<title>%s</title></text>' % (
            label_w - 8, y + cell_h / 2 + 4, esc(_clip(label)), esc(label)))
        for j in range(len(column_labels)):
            outcome, tip = cells.get((i, j), ("absent", "not in this run"))
            colour = OUTCOME_COLOURS.get(outcome, OUTCOME_COLOURS["absent"])
            x = label_w + j * cell_w
            dash = ' stroke-dasharray="3,2"' if outcome == "missing" else ""
            out.append('<g class="cell o-%s"><title>%s</title><rect x="%.1f" y="%d" width="%d" height="%d" fill="%s" '
                       'stroke="#fff"%s/>' % (esc(outcome), esc(tip), x, y, cell_w - 2, cell_h - 2, colour, dash))
            letter = OUTCOME_LETTERS.get(outcome, "")
            if letter:
                ink = "#000" if outcome in ("missing", "absent", "skipped") else "#fff"
                out.append('<text x="%.1f" y="%.1f" text-anchor="middle" fill="%s" font-weight="600">%s</text>' % (
                    x + (cell_w - 2) / 2, y + cell_h / 2 + 3, ink, esc(letter)))
            out.append("</g>")
    legend_y = top + cell_h * max(1, len(row_labels)) + 22
    out.extend(_legend(0, legend_y, ["%s %s" % (OUTCOME_LETTERS[o], o) for o in legend_names],
                       lambda name, i: OUTCOME_COLOURS[legend_names[i]], shape="square"))
    out.append("</svg>")
    return "\n".join(out)


__all__ = ["OUTCOME_COLOURS", "MODE_COLOURS", "dot_whisker_chart", "log_bar_chart", "heatmap", "esc"]
