"""Property tests of the typed records: any record the declarations allow survives
to_json -> JSON text -> from_json unchanged, and validates against the committed
schema; any single field set to a value of the wrong kind is refused, naming it."""

import dataclasses
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from strategies import records_of
from tfdet.results import CaseRecord, EndRecord, ProbeHeader, RecordError
from tfdet.results.typed import json_name

RECORDS = (ProbeHeader, CaseRecord, EndRecord)


@pytest.fixture(scope="module")
def validator():
    import jsonschema

    from tfdet.results import schema

    return jsonschema.Draft7Validator(schema.committed_schema("probe"))


@settings(max_examples=60, deadline=None)
@given(st.one_of([records_of(cls) for cls in RECORDS]))
def test_every_record_round_trips_through_json_text(record):
    text = json.dumps(record.to_json())
    assert type(record).from_json(json.loads(text), "x:1") == record


@settings(max_examples=60, deadline=None)
@given(record=st.one_of([records_of(cls) for cls in RECORDS]))
def test_every_record_is_valid_against_the_committed_schema(validator, record):
    validator.validate(record.to_json())


@settings(max_examples=60, deadline=None)
@given(record=records_of(CaseRecord), data=st.data())
def test_a_wrong_kind_of_value_in_any_field_is_refused_by_name(record, data):
    fields = [f for f in dataclasses.fields(CaseRecord)]
    chosen = data.draw(st.sampled_from(fields))
    name = json_name(chosen)
    wrong = {"record": 7, "case": 7, "outcome": "sometimes", "pass": 3.5, "mode": "turbo"}.get(
        name, {"nested": "object"})  # no declared field of a case record takes an object
    bad = dict(record.to_json(), **{name: wrong})
    with pytest.raises(RecordError, match="field %s" % name.replace("_", "_")):
        CaseRecord.from_json(bad, "x:1")
