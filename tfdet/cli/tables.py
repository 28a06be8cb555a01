"""Tables for the terminal, rendered by rich to fit a width.

Columns say how they may give way when the table is too wide, in this order:
EXTRA columns (titles, descriptions) are cut with '…', then the FIX column
wraps, then EXTRA columns are dropped, then KEY columns (ids, statuses) wrap
at '-' and '_'. The FIX column is never cut: it is the answer people came for.
FIXED columns (short words such as cpu/gpu) never change.
"""

import io
import os
import re
import shutil
from dataclasses import dataclass

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

KEY, FIXED, FIX, EXTRA = "key", "fixed", "fix", "extra"
GAP = 2  # characters between columns: a right padding and an invisible divider
EXTRA_MIN = 12  # narrower than this, a title says nothing: drop it instead
FIX_COMFORT = 40  # the fix wraps down to this before anything is dropped
FIX_MIN = 16
KEY_MIN = 16  # every status fits whole or splits once at '_'
# Plain ASCII: a dashed rule under the headings, nothing else (rich.box layout:
# top, head, head rule, mid, row, foot rule, foot, bottom; 4 characters each).
_RULE_UNDER_HEAD = box.Box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)
_BREAK_AFTER = re.compile(r"[^-_./]*[-_./]?")
_LABEL = re.compile(r"\s*(?:[\w ]+:\s+)?")  # '  apis:       ' or '      note: ' or just the indent


@dataclass(frozen=True)
class Column:
    header: str
    kind: str = KEY


def output_width(out, environ=None):
    """The width to render for, or None for no limit.

    COLUMNS wins (the user's or a test's say); a terminal gives its own
    width; anything else (a pipe, a file) gets whole rows, one line each,
    so grep and `less -S` see every row intact.
    """
    environ = os.environ if environ is None else environ
    columns = environ.get("COLUMNS", "")
    if columns.strip().isdigit() and int(columns) > 0:
        return int(columns)
    isatty = getattr(out, "isatty", None)
    if isatty is not None and isatty():
        return shutil.get_terminal_size().columns
    return None


def render_table(columns, rows, width=None):
    """The table as text at most `width` wide (as far as the KEY and FIX minimums
    allow); None: no limit. Pure."""
    rows = [["" if cell is None else str(cell) for cell in row] for row in rows]
    widths = [max([len(c.header)] + [_longest_line(row[i]) for row in rows]) for i, c in enumerate(columns)]
    keep = fit_widths([c.kind for c in columns], widths, width)
    table = Table(box=_RULE_UNDER_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0),
                  header_style=None, expand=False)
    shown = [i for i, w in enumerate(keep) if w]
    for i in shown:
        kind = columns[i].kind
        # KEY and FIX cells arrive wrapped (below), so rich never cuts them; "fold" is a safety net.
        table.add_column(columns[i].header, width=keep[i], no_wrap=kind != FIX,
                         overflow="fold" if kind == FIX else "ellipsis")
    wrap = {KEY: _wrap_key, FIX: _wrap_words}
    for row in rows:
        # Text(), not str: a fix such as "x[0]" is not rich markup.
        table.add_row(*(Text(wrap[columns[i].kind](row[i], keep[i]) if columns[i].kind in wrap else row[i])
                        for i in shown))
    buffer = io.StringIO()
    total = sum(keep[i] for i in shown) + GAP * (len(shown) - 1)
    Console(file=buffer, width=total + 1, color_system=None, highlight=False, emoji=False).print(table)
    return "\n".join(line.rstrip() for line in buffer.getvalue().splitlines())


def print_table(out, columns, rows, environ=None):
    """Render to the width `out` calls for, and write."""
    out.write(render_table(columns, rows, output_width(out, environ)) + "\n")


def fit_lines(text, width):
    """Wrap each line longer than `width`, continuing under its value ('  apis:  a, b'
    continues under 'a'), long names broken after '_', '-', '.' or '/'. Pure."""
    if width is None:
        return text
    fitted = []
    for line in text.splitlines():
        if len(line) <= width:
            fitted.append(line)
            continue
        start = _LABEL.match(line).end()
        hang = start
        if start > width // 2:  # a long label: the text goes on under the start of the line
            start = len(line) - len(line.lstrip())
            hang = start + 4
        body = _wrap_words(line[start:], width - hang).split("\n")
        fitted.append(line[:start] + body[0])
        fitted.extend(" " * hang + more for more in body[1:])
    return "\n".join(fitted)


def fit_widths(kinds, widths, width):
    """Column widths that fit `width`, 0 for a dropped column. Pure."""
    natural, widths = widths, list(widths)
    if width is None:
        return widths

    def excess():
        shown = [w for w in widths if w]
        return sum(shown) + GAP * (len(shown) - 1) - width

    def shrink(kind, floor):
        for i in reversed(range(len(widths))):
            if kinds[i] == kind and widths[i] > floor and excess() > 0:
                widths[i] -= min(widths[i] - floor, excess())

    shrink(EXTRA, EXTRA_MIN)
    shrink(FIX, FIX_COMFORT)
    for i in reversed(range(len(widths))):
        if kinds[i] == EXTRA and excess() > 0:
            widths[i] = 0
    keys = [i for i, kind in enumerate(kinds) if kind == KEY]
    while excess() > 0:  # the widest key gives one character at a time, so keys stay balanced
        widest = max(keys, key=lambda i: widths[i], default=None)
        if widest is None or widths[widest] <= KEY_MIN:
            break
        widths[widest] -= 1
    shrink(FIX, FIX_MIN)
    for i, kind in enumerate(kinds):  # room freed by a dropped column goes back to the fix
        if kind == FIX and excess() < 0:
            widths[i] += min(natural[i] - widths[i], -excess())
    return widths


def _longest_line(text):
    return max((len(line) for line in text.splitlines()), default=0)


def _wrap_key(text, width):
    """Break an id or status after '-', '_', '.' or '/' to fit; fold what still does not."""
    lines, line = [], ""
    for piece in _BREAK_AFTER.findall(text):
        if line and len(line) + len(piece) > width:
            lines.append(line)
            line = ""
        line += piece
        while len(line) > width:
            lines.append(line[:width])
            line = line[width:]
    lines.append(line)
    return "\n".join(lines)


def _wrap_words(text, width):
    """Wrap prose at spaces; a word longer than the line (TF_DETERMINISTIC_OPS in a
    narrow column) breaks after '_', '-', '.' or '/' rather than anywhere."""
    lines, line = [], ""
    for word in text.split():
        if len(word) > width:
            if line:
                lines.append(line)
            *whole, line = _wrap_key(word, width).split("\n")
            lines.extend(whole)
        elif not line:
            line = word
        elif len(line) + 1 + len(word) <= width:
            line += " " + word
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return "\n".join(lines)
