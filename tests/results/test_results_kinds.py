"""results.load() reads a file by its header's `kind`, not by guessing from its text; every kind's
header shares one base; what earlier tfdet versions wrote still loads."""

import dataclasses
import glob
import json
import os

import pytest

import records as make
from cli_runner import run_cli
from tfdet.cli.exitcodes import INVALID_INPUT
from tfdet.results import ResultsError, load, schema
from tfdet.results.compare_records import CompareHeader
from tfdet.results.diverge_records import DivergeHeader
from tfdet.results.header import KINDS, FileHeader, ResultsHeader
from tfdet.results.kinds import READERS, read_header
from tfdet.results.locate_records import LocateResult, RunOutcome
from tfdet.results.probe_records import ProbeHeader
from tfdet.results.scan_records import ScanReport

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REFUSED = ("not_results.jsonl", "schema_v99.jsonl")  # the report's fixtures of files it must refuse


def _committed():
    found = glob.glob(os.path.join(ROOT, "reports", "**", "*.jsonl"), recursive=True)
    found += glob.glob(os.path.join(ROOT, "tests", "report", "fixtures", "*.jsonl"))
    return sorted(path for path in found if os.path.basename(path) not in REFUSED)


def _load_as_header_kind(paths):
    kinds = set()
    for path in paths:
        kind, header, _ = read_header(path)
        kinds.add((kind, header.get("schema_version")))
        assert load(path).kind == kind, path
    return kinds


def test_the_smallest_committed_file_of_each_kind_and_version_loads_as_its_header_kind():
    """Files written by earlier tfdet versions (schema 1 probe files, without a kind, among them)."""
    smallest = {}
    for path in sorted(_committed(), key=os.path.getsize):
        kind, header, _ = read_header(path)
        smallest.setdefault((kind, header.get("schema_version")), path)
    assert _load_as_header_kind(smallest.values()) >= {("probe", 1), ("probe", 2), ("diverge", 1), ("compare", 1)}


@pytest.mark.slow
def test_every_committed_results_file_loads_as_its_header_kind():
    paths = _committed()
    assert len(paths) > 30 and len(_load_as_header_kind(paths)) >= 4


def _locate():
    return LocateResult(kind="locate", schema_version=1, tfdet_version="0.1.0", tf_version="2.21.0", device="cpu",
                        target="train.py", runs=2, ops_compared=12, verdict="No difference.", first_difference=None,
                        run_outcomes=[RunOutcome(status="finished"), RunOutcome(status="finished")])


@pytest.mark.parametrize("indent", [None, 0, 2])
def test_a_locate_result_loads_however_it_is_laid_out(tmp_path, indent):
    """indent=0 starts an object of a list at the start of a line, which the text guess took for JSON Lines."""
    path = tmp_path / "where.json"
    path.write_text(json.dumps(_locate().to_json(), indent=indent))
    assert load(str(path)) == _locate()


@pytest.mark.parametrize("header, words", [
    ({"record": "header", "schema_version": 2, "kind": "tuning"},
     'r.jsonl:1: kind "tuning" is not a kind of tfdet results (probe, diverge, compare, locate, scan, vary)'),
    ({"record": "header", "schema_version": 1, "kind": 7}, "r.jsonl:1: kind 7 is not a kind of tfdet results"),
    ({"schema_version": 1, "runs": []}, "r.jsonl: not a tfdet results file (no header record on line 1)"),
    (dict(make.header().to_json(), kind="scan"),
     "r.jsonl:1: a scan results file, not a probe results file (load reads probe, diverge, compare, locate, vary files)"),
])
def test_a_missing_or_unknown_kind_is_one_line_naming_the_file_and_line(tmp_path, header, words):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(header) + "\n" + json.dumps(make.case("a", "baseline", "varies").to_json()) + "\n")
    with pytest.raises(ResultsError) as caught:
        load(str(path))
    assert str(caught.value).startswith(str(path.parent / words)) and "\n" not in str(caught.value)
    code, out, err = run_cli("report", str(path), "-o", str(tmp_path / "r.html"))
    assert code == INVALID_INPUT and err.count("\n") == 1 and str(path.parent / words) in err, err


def test_a_probe_header_without_a_kind_is_a_version_1_probe_file(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(dict(make.header().to_json(), schema_version=1, kind=None)) + "\n")
    assert read_header(str(path))[0] == "probe"


def test_load_reads_every_kind_but_scan_and_the_kinds_are_the_schemas():
    assert set(KINDS) == set(schema.SCHEMAS) and set(READERS) == set(KINDS) - {"scan"}


def test_one_header_base_for_every_kind():
    base = [f.name for f in dataclasses.fields(ResultsHeader)]
    line_one = [f.name for f in dataclasses.fields(FileHeader)]
    for header in (ProbeHeader, DivergeHeader, CompareHeader):
        assert issubclass(header, FileHeader) and [f.name for f in dataclasses.fields(header)][:6] == line_one
    for result in (LocateResult, ScanReport):
        assert issubclass(result, ResultsHeader) and [f.name for f in dataclasses.fields(result)][:3] == base
    # each kind's header still accepts only its own kind
    with pytest.raises(Exception, match="kind: 'diverge' is not one of probe"):
        ProbeHeader.from_json(dict(make.header().to_json(), kind="diverge"), "h")
