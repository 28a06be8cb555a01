"""Fitting tables to a width: which columns give way, and how cells wrap."""

import io

import pytest

from tfdet.cli.tables import (
    EXTRA, EXTRA_MIN, FIX, FIX_COMFORT, FIX_MIN, FIXED, KEY, KEY_MIN, Column, fit_widths, output_width, render_table,
)

KINDS = [KEY, FIXED, KEY, FIX, EXTRA]
NATURAL = [40, 6, 25, 158, 66]  # the shipped catalogue's widest id, device, status, fix and title


def total(widths):
    shown = [w for w in widths if w]
    return sum(shown) + 2 * (len(shown) - 1)


@pytest.mark.parametrize("width, expected", [
    (None, NATURAL),
    (400, NATURAL),
    (200, [40, 6, 25, 109, 12]),                   # the title is cut first, the fix wraps
    (120, [40, 6, 25, 43, 0]),                     # below a comfortable fix, the title goes
    (80, [KEY_MIN, 6, KEY_MIN, 36, 0]),            # then ids and statuses wrap, evenly
    (60, [KEY_MIN, 6, KEY_MIN, FIX_MIN, 0]),
])
def test_fit_widths_gives_way_in_order(width, expected):
    widths = fit_widths(KINDS, NATURAL, width)
    assert widths == expected
    if width is not None and width >= 60:
        assert total(widths) <= width


def test_fit_widths_leaves_a_table_that_fits_alone():
    assert fit_widths([KEY, FIX, EXTRA], [10, 20, 30], 100) == [10, 20, 30]
    assert fit_widths([KEY, FIX, EXTRA], [10, 60, 30], 80) == [10, 54, 12]
    assert FIX_COMFORT > EXTRA_MIN


def test_render_wraps_keys_at_separators_and_never_cuts_the_fix():
    columns = [Column("ID", KEY), Column("FIX", FIX), Column("TITLE", EXTRA)]
    rows = [("random-generator-non-deterministic-state", "switch: TF_DETERMINISTIC_OPS and " + "more " * 20,
             "A title far too long to keep")]
    text = render_table(columns, rows, width=40)
    lines = text.splitlines()
    assert max(map(len, lines)) <= 40
    ids = [line[:KEY_MIN].strip() for line in lines[2:]]
    assert "".join(ids) == rows[0][0]
    assert ids[:3] == ["random-", "generator-non-", "deterministic-"]  # broken after '-', not mid-word
    fix = " ".join(line[18:].strip() for line in lines[2:])
    assert fix.split() == rows[0][1].split()
    assert "TITLE" not in text


def test_render_without_a_width_puts_each_row_on_one_line():
    columns = [Column("ID", KEY), Column("FIX", FIX)]
    text = render_table(columns, [("a", "x " * 200), ("b", "[red]y[/red]")])
    assert text.splitlines()[2].startswith("a   x x") and len(text.splitlines()) == 4
    assert text.splitlines()[3].endswith("[red]y[/red]")


class _Tty(io.StringIO):
    def isatty(self):
        return True


def test_output_width_prefers_columns_then_a_terminal_then_no_limit():
    assert output_width(io.StringIO(), {"COLUMNS": "77"}) == 77
    assert output_width(io.StringIO(), {}) is None
    assert output_width(io.StringIO(), {"COLUMNS": "wide"}) is None
    assert isinstance(output_width(_Tty(), {}), int)
