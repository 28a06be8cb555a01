"""The op x setting grid of a `tfdet probe --vary` results file. Pure: the same
grid feeds the HTML page (vary_page.py), the command line's table and --json."""

from collections import namedtuple

from ..results.vary_records import SETTINGS

Column = namedtuple("Column", "setting variant")
Cell = namedtuple("Cell", "verdict text detail figures")  # detail: the figures in words, for a tooltip
Row = namedtuple("Row", "case title cells")


class Grid(namedtuple("Grid", "columns rows counts")):
    kind = "vary"


NOT_RUN = Cell("n/a", "\u2014", "does not apply to this op, or not measured", {})
FIGURES = ("max_ulp", "max_rel", "max_abs", "frac_differ", "reference_distinct", "changed_distinct", "varies_in",
           "error")


def cell_text(record):
    """What a cell says: same / differs (N ulp) / varies (which arm) / raised / failed."""
    if record.verdict == "differs":
        return "differs (%s ulp)" % _ulps(record.max_ulp)
    if record.verdict == "varies":
        return "varies run to run (%s)" % (record.varies_in or "?")
    return record.verdict


def _ulps(value):
    if value is None:
        return "?"
    return "%d" % value if value < 10 ** 6 else "%.1e" % value


def cell_detail(record):
    parts = ["%s vs %s" % (record.variant, "reference")]
    if record.reference_runs is not None:
        parts.append("runs: reference %s (%s distinct), changed %s (%s distinct)" % (
            record.reference_runs, record.reference_distinct, record.changed_runs, record.changed_distinct))
    if record.verdict == "differs":
        parts.append("max ulp %s, max relative error %s, max abs %s, %.1f%% of %s elements differ" % (
            record.max_ulp, "%.3g" % record.max_rel if record.max_rel is not None else "?",
            "%.3g" % record.max_abs if record.max_abs is not None else "?", 100 * (record.frac_differ or 0),
            record.elements))
    if record.error:
        parts.append(record.error)
    if record.note:
        parts.append(record.note)
    return "; ".join(parts)


def build_grid(results):
    """Columns: each (setting, variant) in settings order; rows: each planned case; the latest record per cell."""
    latest = results.latest()
    order = {s: i for i, s in enumerate(SETTINGS)}
    columns, seen = [], set()
    for record in sorted(latest.values(), key=lambda r: order.get(r.setting, 99)):
        column = Column(record.setting, record.variant)
        if column not in seen:
            seen.add(column)
            columns.append(column)
    columns.sort(key=lambda c: (order.get(c.setting, 99), _variant_order(c.variant)))
    titles = results.header.titles if results.header else {}
    cases = list(results.header.cases) if results.header else []
    for record in latest.values():
        if record.case not in cases:
            cases.append(record.case)
    rows, counts = [], {}
    for case in cases:
        cells = []
        for column in columns:
            record = latest.get((case, column.setting, column.variant))
            cell = NOT_RUN if record is None else Cell(
                record.verdict, cell_text(record), cell_detail(record),
                {k: getattr(record, k) for k in FIGURES if getattr(record, k) is not None})
            counts[cell.verdict] = counts.get(cell.verdict, 0) + 1
            cells.append(cell)
        rows.append(Row(case, titles.get(case, ""), cells))
    return Grid(columns, rows, counts)


def _variant_order(variant):
    """Replica counts in order, then worker counts (a loopback cluster of K processes) in order."""
    words = variant.split()
    if len(words) > 1 and words[0].isdigit():
        for kind, word in enumerate(("replicas", "workers")):
            if words[1].rstrip(",").startswith(word):
                return (kind, int(words[0]), variant)
    return (-1, 0, variant)


def sensitive_by_setting(grid):
    """{setting: [cases whose bits change under it]} (any variant), in grid order."""
    found = {}
    for row in grid.rows:
        for column, cell in zip(grid.columns, row.cells):
            if cell.verdict == "differs":
                cases = found.setdefault(column.setting, [])
                if row.case not in cases:
                    cases.append(row.case)
    return found


def grid_json(grid):
    """The grid as plain JSON (what --json prints)."""
    return {"columns": [{"setting": c.setting, "variant": c.variant} for c in grid.columns],
            "rows": [{"case": r.case, "title": r.title,
                      "cells": [dict(c.figures, verdict=c.verdict, text=c.text) for c in r.cells]} for r in grid.rows],
            "counts": dict(grid.counts), "sensitive": sensitive_by_setting(grid)}


def grid_text(grid, width=200):
    """A plain-text table: one row per op, one column per setting variant."""
    heads = ["op"] + ["%s: %s" % (c.setting, c.variant) for c in grid.columns]
    table = [heads] + [[r.case] + [c.text for c in r.cells] for r in grid.rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(heads))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in table]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
