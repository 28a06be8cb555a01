"""The report's fixtures are what the typed records write: the committed files
equal what fixtures/make_fixtures.py produces now (so renaming, retyping or
adding a required field fails here until they are regenerated), every valid
one reads back to the same records, and every line holds to the committed
JSON Schema."""

import json
import os

import pytest
from report_paths import FIXTURES, HOSTILE, PARTIAL, RUN_A, RUN_B, make_fixtures

import tfdet.results
from tfdet.results.schema import committed_schema

VALID = (RUN_A, RUN_B, PARTIAL, HOSTILE)


@pytest.mark.parametrize("name", sorted(make_fixtures().fixtures()))
def test_committed_fixtures_are_what_make_fixtures_writes_now(name):
    with open(os.path.join(FIXTURES, name), encoding="utf-8") as handle:
        committed = handle.read()
    assert committed == make_fixtures().fixtures()[name], (
        "%s is stale: run python tests/report/fixtures/make_fixtures.py" % name)


@pytest.mark.parametrize("path", VALID, ids=os.path.basename)
def test_valid_fixtures_read_back_to_their_records(path):
    results = tfdet.results.load(path)
    assert results.header.schema_version == tfdet.results.SCHEMA_VERSION
    again = tfdet.results.ProbeResults(results.header, results.cases, results.end).to_json_lines()
    with open(path, encoding="utf-8") as handle:
        lines = [line for line in handle.read().splitlines() if line.strip()]
    on_disk = [json.loads(line) for line in lines[:len(again)]]  # the partial run's torn last line left out
    assert again == on_disk


@pytest.mark.parametrize("path", VALID, ids=os.path.basename)
def test_fixture_lines_hold_to_the_committed_schema(path):
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft7Validator(committed_schema("probe"))
    for line in tfdet.results.load(path).to_json_lines():
        validator.validate(line)


def test_the_hostile_fixture_keeps_its_strings_in_free_text_fields():
    """Markup goes only where a valid file can hold any text; fields with a fixed
    set of values (execution, outcome, mode, device, ...) hold one of them."""
    results = tfdet.results.load(HOSTILE)
    header = results.header
    assert header.execution == "function" and header.onednn == "default"
    assert {e.device for e in header.environment.values()} == {"cpu"}
    assert "<" in header.environment["baseline"].cpu_model and any("<" in a for a in header.argv)
    assert any("<" in r.case for r in results.cases) and any(len(r.error_message or "") > 5000 for r in results.cases)
