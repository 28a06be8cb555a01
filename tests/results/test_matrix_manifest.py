"""The matrix manifest as typed records, read one way by `tfdet matrix` and `tfdet report --matrix`."""

import json
import os

import pytest

from cli_runner import run_cli
from tfdet.matrix import manifest as matrix_manifest
from tfdet.report.matrix_page import parse_manifest as report_statuses
from tfdet.results import ResultsError
from tfdet.results.matrix_manifest import SCHEMA, ManifestError, MatrixManifest, read_manifest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COMMITTED = os.path.join(ROOT, "reports", "matrix", "matrix.json")


def test_the_committed_manifest_reads_into_records_and_back_unchanged():
    with open(COMMITTED, encoding="utf-8") as handle:
        raw = json.load(handle)
    manifest = read_manifest(COMMITTED)
    assert manifest.to_json() == raw
    assert manifest.versions["2.21"].probe.results == "probe-tf2.21-cpu.jsonl"
    assert manifest.last_run.versions[-1] == "2.21"


def test_matrix_and_report_read_the_same_manifest_alike():
    """The matrix's dict view and the report's statuses come from the same records."""
    data = matrix_manifest.load(COMMITTED)
    statuses = report_statuses(json.load(open(COMMITTED, encoding="utf-8")), COMMITTED)
    assert {tf: entry["status"] for tf, entry in data["versions"].items()} == {
        tf: status for tf, (status, _) in statuses.items()}


def test_no_file_yet_is_an_empty_manifest(tmp_path):
    assert read_manifest(str(tmp_path / "matrix.json")) == MatrixManifest(schema=SCHEMA)
    assert matrix_manifest.load(str(tmp_path / "matrix.json")) == {"schema": SCHEMA, "versions": {}}


@pytest.mark.parametrize("change, words", [
    (lambda v: v["probe"].update(seconds="long"), "field versions.2.21.probe.seconds: expected a number"),
    (lambda v: v.update(status="done"), "field versions.2.21.status: 'done' is not one of probed"),
    (lambda v: v["environment"].update(speed=1), "unknown field versions.2.21.environment.speed"),
])
def test_a_damaged_entry_names_the_file_and_the_field(tmp_path, change, words):
    """The manifest was read as untyped JSON: a damaged field went unnoticed until something used it."""
    with open(COMMITTED, encoding="utf-8") as handle:
        data = json.load(handle)
    change(data["versions"]["2.21"])
    (tmp_path / "out").mkdir()
    path = tmp_path / "out" / "matrix.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ManifestError, match=words) as caught:
        matrix_manifest.load(str(path))
    assert str(caught.value).startswith(str(path)) and isinstance(caught.value, ResultsError)
    code, _, err = run_cli("matrix", "--list", "--out", str(tmp_path / "out"), "--venvs", str(tmp_path / "v"))
    assert code == 3 and words in err and err.count("\n") == 1, err
