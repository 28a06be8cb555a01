"""A real probe run, as committed in reports/: TF 2.21 on two CPU cores, the
README's main command (schema version 1, migrated on read). It reads, holds
to the current schema once migrated, and renders with the facts of that run."""

import pytest
from report_paths import REAL_RUN

import tfdet.results
from tfdet.catalog import default_catalogue
from tfdet.report import build_report, render_report
from tfdet.results.schema import committed_schema


@pytest.fixture(scope="module")
def real():
    return tfdet.results.load(REAL_RUN)


@pytest.fixture(scope="module")
def report(real):
    return build_report([real], catalogue=default_catalogue(), tfdet_version="test")


def test_a_version_1_file_is_migrated_on_read(real):
    with open(REAL_RUN, encoding="utf-8") as handle:
        assert '"schema_version": 1' in handle.readline()
    header = real.header
    assert header.schema_version == tfdet.results.SCHEMA_VERSION and header.kind == "probe"
    assert header.tf_version == "2.21.0" and header.device == "cpu"
    assert header.modes == ["baseline", "env", "api", "patched"] and header.execution == "function"
    assert real.end is not None and real.end.mode_failures == {}
    assert len(real.measured) == 350 - len(real.skipped)


def test_the_migrated_records_hold_to_the_committed_schema(real):
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft7Validator(committed_schema("probe"))
    for line in real.to_json_lines():
        validator.validate(line)


def test_the_report_of_the_real_run(report, real):
    (run,) = report.runs
    assert run.label == "TF 2.21.0 \u00b7 cpu" and run.modes == ["baseline", "env", "api", "patched"]
    assert not run.partial and run.mode_problems == []
    env = run.environment
    assert (env["TensorFlow"], env["Device"], env["CPU cores"], env["Execution"], env["Processes x runs"]) == (
        "2.21.0", "cpu", "2", "function", "2 x 5")
    assert env["oneDNN"] == "default (active: yes)" and env["Modes not run"] == "none"
    # one row per (case, pass) planned, and one per skipped entry
    planned = {tuple(p) for p in real.header.planned}
    assert len(report.rows) == len(planned) + len({s[0] for s in real.header.skipped} - {c for c, _ in planned})
    # bincount varies without determinism and under TF's switches; tfdet.patch() fixes it
    row = next(r for r in report.rows if r.case == "bincount" and r.pass_name == "forward")
    outcomes = {c.column.mode: c.outcome for c in row.cells}
    assert outcomes == {"baseline": "varies", "env": "varies", "api": "varies", "patched": "deterministic"}
    assert row.group == "attention"
    assert run.summary[0].startswith("On this machine (TF 2.21.0, cpu: AMD EPYC, 2 cores), 20 ops of 75 measured "
                                     "vary from run to run without determinism")
    assert dict(run.summary_lists)["reproducible only with tfdet.patch()"] == ["bincount"]
    assert any(s.startswith("tfdet.patch() costs a median \u00d7") and "over the 13 ops that vary without it" in s
               for s in run.summary)
    assert len(report.cost_charts) == 1 and len(report.variance_charts) == 1 and report.heatmaps == []


def test_the_real_run_renders(report):
    html = render_report(report, generated="2026-01-01 00:00 UTC")
    assert html.startswith("<!DOCTYPE html>") and "</html>" in html
    assert 'data-case="bincount"' in html and 'data-outcome="varies"' in html
    assert "probe-tf2.21-cpu-2core-default.jsonl" in html and "<script" not in html
