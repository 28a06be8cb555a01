"""The command line's one progress display (tfdet.cli.progress.Display) shows the
events features send (tfdet.progress): a plain line per finished unit when the
err stream is not a terminal, a transient rich bar with the notable lines kept
when it is, nothing when quiet. (It replaced the probe's, diverge's, matrix's and
compare's own Progress classes and executor/bar.py.)"""

import io

from tfdet.cli.progress import Display
from tfdet.progress import SILENT, Finished, Message, Started, Working


def _show(events, **options):
    stream = io.StringIO()
    with Display(stream, "probe", **options) as display:
        for event in events:
            display(event)
    return stream.getvalue()


RUN = [Message("starting"), Started(2, "2 cases to run", label="starting"), Working("bincount forward: baseline"),
       Finished("bincount forward: baseline varies", notable=True), Working("segment-sum forward: baseline"),
       Finished("segment-sum forward: baseline deterministic")]


def test_plain_lines_when_the_stream_is_not_a_terminal():
    text = _show(RUN, tty=False)
    lines = text.splitlines()
    assert lines[:2] == ["tfdet probe: starting", "tfdet probe: 2 cases to run"]
    assert lines[2].startswith("[1/2] bincount forward: baseline varies (") and lines[2].endswith(" s)")
    assert lines[3].startswith("[2/2] segment-sum forward: baseline deterministic (")
    assert len(lines) == 4  # Working only describes a bar: no line of its own


def test_a_terminal_gets_a_bar_and_keeps_only_the_notable_lines():
    text = _show(RUN, tty=True)
    assert "tfdet probe: starting" in text and "bincount forward: baseline varies" in text
    assert "[1/2]" not in text  # rich draws its own counter
    assert "segment-sum forward: baseline deterministic\n" not in text  # passed through the bar only


def test_time_left_is_estimated_only_for_units_of_similar_length():
    text = _show([Started(2, time_left=True), Finished("a"), Finished("b")], tty=False)
    assert "left)" in text.splitlines()[0] and "~0 s left" in text.splitlines()[1]
    assert "left" not in _show([Started(2), Finished("a")], tty=False)


def test_quiet_says_nothing_even_on_a_terminal():
    assert _show(RUN, quiet=True, tty=True) == ""
    assert _show(RUN, quiet=True, tty=False) == ""


def test_a_new_start_counts_again_and_the_silent_sink_takes_every_event():
    text = _show([Started(1), Finished("a"), Started(1), Finished("b")], tty=False)
    assert [line[:5] for line in text.splitlines()] == ["[1/1]", "[1/1]"]
    for event in RUN:
        SILENT(event)


def test_not_an_event_is_a_programming_error():
    import pytest

    with pytest.raises(TypeError):
        Display(io.StringIO(), "probe", tty=False)("text")
