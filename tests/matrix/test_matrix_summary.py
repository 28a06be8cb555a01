"""What the matrix shows: outcomes per mode from a results file, and the
changes from one version to the next over cases both measured."""

import os

from tfdet.matrix import summary
from tfdet.results import read_probe

REPORTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "reports")


def test_outcomes_and_varied_from_a_results_file():
    results = read_probe(os.path.join(REPORTS, "probe-tf2.21-cpu-2core-default.jsonl"))
    by_mode = summary.outcomes(results)
    varied = summary.varied(results)
    for mode, cases in by_mode.items():
        records = [r for r in results.measured if r.mode == mode and r.outcome in ("varies", "deterministic",
                                                                                   "raised")]
        assert set(cases) == {r.case for r in records}
        assert varied[mode] == sorted({r.case for r in records if r.outcome == "varies"})


def test_changes_compare_only_cases_both_versions_measured():
    rows = [
        {"tf": "2.0", "outcomes": {"baseline": {"a": "deterministic", "b": "varies"}}},
        {"tf": "2.1", "outcomes": {"baseline": {"a": "varies", "b": "varies", "new": "varies"},
                                   "api": {"a": "varies"}}},
        {"tf": "2.2", "outcomes": None},  # not probed: skipped, 2.3 is compared with 2.1
        {"tf": "2.3", "outcomes": {"baseline": {"a": "raised", "b": "varies", "new": "varies"},
                                   "api": {"a": "varies"}}},
    ]
    assert summary.changes(rows) == [
        ("2.1", "baseline", [("a", "deterministic", "varies")]),
        ("2.3", "baseline", [("a", "varies", "raised")]),
    ]


def test_a_create_only_run_keeps_the_probe_of_a_version():
    from tfdet.matrix import manifest

    data = {"schema": manifest.SCHEMA, "versions": {}}
    data = manifest.update(data, "2.6", {"status": "probed", "probe": {"seconds": 300}, "creation_seconds": 75})
    data = manifest.update(data, "2.6", {"status": "installed", "probe": None, "creation_seconds": None})
    assert data["versions"]["2.6"] == {"status": "probed", "probe": {"seconds": 300}, "creation_seconds": 75}
    data = manifest.update(data, "2.6", {"status": "failed", "probe": None})
    assert data["versions"]["2.6"]["status"] == "failed"
