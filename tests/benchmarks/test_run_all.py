"""benchmarks/run_all.py: the README's Performance section is its output (issue 30 item 5).
Not a test of the figures (times are never asserted): of the markers, the generator and the
parsing of what it reads."""

import importlib.util
import os
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def run_all():
    path = os.path.join(ROOT, "benchmarks", "run_all.py")
    spec = importlib.util.spec_from_file_location("run_all_under_test", path)
    module = importlib.util.module_from_spec(spec)
    before = list(sys.path)
    try:
        spec.loader.exec_module(module)
    finally:
        sys.path[:] = before
    return module


def readme():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        return handle.read()


def test_the_readme_has_one_performance_section_with_the_markers(run_all):
    text = readme()
    assert text.count(run_all.START) == 1 and text.count(run_all.END) == 1
    assert text.index(run_all.START) < text.index(run_all.END)
    section = text.split("## Performance", 1)[1].split("\n## ", 1)[0]
    assert run_all.START in section and "benchmarks/run_all.py" in section
    assert "docs/topics/performance.md" in section and os.path.exists(os.path.join(ROOT, "docs", "topics",
                                                                                   "performance.md"))


def test_the_generator_round_trips_and_touches_nothing_else(run_all):
    text = readme()
    figures = [run_all.Figure("locate capture: a step", "1.40x [1.30, 1.50]", "<= 1.5x", True, load=(1.0, 2.0)),
               run_all.Figure("a | piped name", "2.00x [1.90, 2.10]", "<= 1.2x", False, "too slow", (3.0, 3.5)),
               run_all.Figure("suite", "-", "<= 300 s", None, "run with --full"),
               run_all.Figure("another step", "1.60x [1.29, 2.00]", "- (no target)", None)]
    body = run_all.table(figures, markdown=True)
    written = run_all.readme_section(text, body)
    assert run_all.readme_body(written) == body
    assert run_all.readme_section(written, body) == written  # generating again changes nothing
    outside = lambda t: (t.split(run_all.START)[0], t.split(run_all.END)[1])  # noqa: E731
    assert outside(written) == outside(text)
    assert run_all.readme_section(text, run_all.readme_body(text)) == text  # what is there now round-trips
    rows = body.splitlines()
    assert len(rows) == 2 + len(figures) and all(row.count(" | ") == 4 for row in rows[2:])
    assert "not met (too slow)" in body and "not measured (run with --full)" in body and "| met |" in body
    assert "1.0-2.0" in body  # the load beside the figure
    assert body.splitlines()[-1].split(" | ")[3] == "no target"


def test_text_without_markers_is_refused(run_all):
    with pytest.raises(ValueError, match="markers"):
        run_all.readme_section("# a README\n", "table")


def test_the_suite_time_is_read_from_pytest_s_last_summary_line(run_all):
    log = "....\n= 3 failed, 2118 passed, 14 skipped in 495.12s (0:08:15) =\n"
    assert run_all.suite_seconds(log) == (2118, 495.12)
    assert run_all.suite_seconds("no summary here") is None
