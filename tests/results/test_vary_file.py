"""A --vary results file reads back what the runner wrote, through load(); its schema is committed."""

import json

import pytest

from tfdet.results import ResultsError, load
from tfdet.results.schema import committed_schema, vary_schema

from vary_fixture import RECORDS, write


def test_round_trip_through_load(tmp_path):
    results = load(write(tmp_path / "v.jsonl"))
    assert results.kind == "vary"
    assert results.records == RECORDS
    assert results.header.cases == ["matmul", "reduce-sum", "conv2d", "mlp-grad"]
    assert results.end.seconds == 300.0
    assert ("mlp-grad", "replicas", "3 replicas") in results.done()


def test_the_last_record_of_a_cell_counts(tmp_path):
    again = RECORDS + [RECORDS[0].__class__(**dict(RECORDS[0].__dict__, verdict="same", max_ulp=0))]
    latest = load(write(tmp_path / "v.jsonl", again)).latest()
    assert latest[RECORDS[0].key].verdict == "same"


def test_a_bad_verdict_names_file_line_and_field(tmp_path):
    path = write(tmp_path / "v.jsonl")
    lines = open(path).read().splitlines()
    data = json.loads(lines[2])
    data["verdict"] = "maybe"
    lines[2] = json.dumps(data)
    open(path, "w").write("\n".join(lines) + "\n")
    with pytest.raises(ResultsError, match=r"v\.jsonl:3: field verdict"):
        load(path)


def test_committed_schema_is_the_records():
    assert committed_schema("vary") == vary_schema()
