"""Plain-text tables for terminals. Pure: returns strings."""


def format_table(headers, rows, max_width=None):
    """Align rows of strings under headers; shrink the last column to fit max_width."""
    rows = [[str(cell) for cell in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(cell)) for w, cell in zip(widths, row)]
    if max_width and len(widths) > 1:
        fixed = sum(widths[:-1]) + 2 * (len(widths) - 1)
        widths[-1] = max(10, min(widths[-1], max_width - fixed))
    lines = [_line(headers, widths), _line(["-" * w for w in widths], widths)]
    lines.extend(_line(row, widths) for row in rows)
    return "\n".join(lines)


def _line(cells, widths):
    cells = [_clip(cell, width) for cell, width in zip(cells, widths)]
    return "  ".join(cell.ljust(width) for cell, width in zip(cells, widths)).rstrip()


def _clip(text, width):
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"
