"""The probe results file: typed records, validation on read (file:line and the
field), migration of older versions, one writer, resume comparisons."""

import json
import os

import pytest

import records as make
from tfdet.results import ProbeResultsWriter, ResultsError, ResultsInUse, ResultsMismatch, ResultsWriteError, load
from tfdet.results.probe_file import resume_mismatches, unrecorded_parameters
from tfdet.results.typed import RecordError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _writer(path, head=None, **how):
    writer = ProbeResultsWriter(str(path), **how)
    if head is not False:
        try:
            writer.start(head or make.header())
        except BaseException:
            writer.close()  # as the probe does: a refused resume leaves the file free
            raise
    return writer


# -- reading: what is not a results file, and what is malformed, says where ------

def test_what_is_not_a_results_file_is_refused(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("hello\n")
    with pytest.raises(ResultsError, match="not a tfdet results file"):
        load(str(path))
    path.write_text(json.dumps({"record": "header", "schema_version": 99}) + "\n")
    with pytest.raises(ResultsError, match="schema version 99 is newer than this tfdet reads"):
        load(str(path))
    path.write_text(json.dumps({"record": "header", "schema_version": 0}) + "\n")
    with pytest.raises(ResultsError, match="schema version 0; this tfdet reads versions 1 to 2"):
        load(str(path))
    path.write_text(json.dumps(dict(make.header().to_json(), kind="scan")) + "\n")
    with pytest.raises(ResultsError, match="a scan results file, not a probe results file"):
        load(str(path))
    with pytest.raises(ResultsError, match="cannot read"):
        load(str(tmp_path / "missing.jsonl"))


@pytest.mark.parametrize("change, message", [
    ({"runs": "ten"}, "r.jsonl:3: field runs: expected an integer or null, got 'ten'"),
    ({"outcome": "flaky"}, "r.jsonl:3: field outcome: 'flaky' is not one of deterministic, varies"),
    ({"mode": "turbo"}, "r.jsonl:3: field mode: 'turbo' is not one of baseline, env, api, patched"),
    ({"median_seconds": 1.0}, "r.jsonl:3: unknown field median_seconds"),
    ({"ratio": True}, "r.jsonl:3: field ratio: expected a number or null, got True"),
    ({"shape": [2, "x"]}, "r.jsonl:3: field shape[1]: expected an integer, got 'x'"),
])
def test_a_malformed_record_names_the_file_the_line_and_the_field(tmp_path, change, message):
    path = make.write(tmp_path / "r.jsonl", make.header(), [make.case("a", "baseline", "varies", runs=10)])
    with open(path, "a") as handle:
        handle.write(json.dumps(dict(make.case("b", "baseline", "varies").to_json(), **change)) + "\n")
        handle.write(json.dumps(make.case("c", "baseline", "varies").to_json()) + "\n")  # not the last line
    with pytest.raises(ResultsError) as caught:
        load(path)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_a_malformed_header_or_a_missing_field_says_so(tmp_path):
    bad = dict(make.header().to_json())
    bad["environment"]["baseline"]["cpu_count"] = "two"
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(bad) + "\n")
    with pytest.raises(ResultsError, match=r"r.jsonl:1: field environment.baseline.cpu_count: expected an integer"):
        load(str(path))
    record = make.case("a", "baseline", "varies").to_json()
    del record["case"]
    path.write_text(json.dumps(make.header().to_json()) + "\n" + json.dumps(record) + "\n\n")
    with pytest.raises(ResultsError, match="r.jsonl:2: missing field case"):
        load(str(path))
    path.write_text(json.dumps(dict(make.header().to_json(), planned=[["a", "forward"], ["b"]])) + "\n")
    with pytest.raises(ResultsError, match=r"r.jsonl:1: field planned\[1\]: expected a list of 2, got \['b'\]"):
        load(str(path))
    path.write_text(json.dumps(make.header().to_json()) + "\n" + json.dumps({"record": "summary"}) + "\n\n")
    with pytest.raises(ResultsError, match="r.jsonl:2: record 'summary' is not a case or end record"):
        load(str(path))


def test_records_round_trip_through_the_file(tmp_path):
    cases = [make.case("a", "baseline", "varies", runs=10, distinct=3, shape=[4], samples_s=[0.5, 1]),
             make.case("a", "env", "raised", error_type="E", error_message="<m>"),
             make.skipped("x", "needs a GPU")]
    path = make.write(tmp_path / "r.jsonl", make.header(modes=("baseline", "env")), cases, make.end())
    results = load(path)
    assert results.cases == cases and results.end == make.end()
    assert results.header == make.header(modes=("baseline", "env"))
    assert results.cases[0].samples_s == [0.5, 1.0] and isinstance(results.cases[0].samples_s[1], float)
    assert [r.case for r in results.skipped] == ["x"] and [r.mode for r in results.measured] == ["baseline", "env"]


def test_to_frame_one_row_per_record_with_the_run_on_every_row(tmp_path):
    cases = [make.case("a", "baseline", "varies", runs=10, distinct=3), make.case("a", "env", "deterministic", runs=10),
             make.skipped("x", "needs a GPU")]
    frame = load(make.write(tmp_path / "r.jsonl", make.header(modes=("baseline", "env")), cases)).to_frame()
    assert list(frame["case"]) == ["a", "a", "x"] and list(frame["pass"])[:2] == ["forward", "forward"]
    assert set(frame["tf_version"]) == {"2.21.0"} and set(frame["results_file"]) == {"r.jsonl"}
    assert frame.groupby("mode")["runs"].sum().to_dict() == {"baseline": 10, "env": 10}


def test_the_committed_schema_is_the_records_own_and_accepts_a_real_file():
    import jsonschema

    from tfdet.results import schema

    assert schema.main(["--check"]) == 0, "run: python -m tfdet.results.schema"
    validator = jsonschema.Draft7Validator(schema.committed_schema("probe"))
    for line in make.results(make.header(), [make.case("a", "baseline", "varies", runs=3)], make.end()).to_json_lines():
        validator.validate(line)
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(dict(make.case("a", "baseline", "varies").to_json(), outcome="flaky"))


# -- older files: migrated on read, never rewritten ---------------------------------

def _version_1_header():
    old = make.header(modes=("baseline", "env")).to_json()
    for key in ("kind", "modes_asked", "mode_failures", "not_applicable_modes", "onednn", "catalogue_digest",
                "max_repeats", "modes_requested"):
        old.pop(key, None)
    old.update(schema_version=1, unavailable_modes={"api": "no determinism API in TF 1.15"})
    old["environment"]["baseline"]["onednn"] = "0"
    return old


def test_a_version_1_file_is_migrated_on_read_and_left_as_it_is(tmp_path):
    path = tmp_path / "r.jsonl"
    text = json.dumps(_version_1_header()) + "\n" + json.dumps(make.case("a", "baseline", "varies").to_json()) + "\n"
    path.write_text(text)
    results = load(str(path))
    assert results.header.schema_version == 2 and results.header.kind == "probe"
    assert results.header.modes_asked == ["baseline", "env", "api"] and results.header.onednn == "off"
    assert results.header.mode_failures == {} and results.header.not_applicable_modes == {}
    assert path.read_text() == text


@pytest.mark.parametrize("name", sorted(
    os.path.relpath(os.path.join(d, f), ROOT) for d, _, fs in os.walk(os.path.join(ROOT, "reports"))
    for f in fs if f.endswith(".jsonl") and os.path.basename(d) not in ("diverge", "compare", "vary")))
# diverge's files: test_report_diverge; compare's: tests/compare/test_compare_records.py; vary: tests/catalog/test_sensitivity.py
def test_every_committed_results_file_reads(name):
    results = load(os.path.join(ROOT, name))
    assert results.header.tf_version and results.cases
    assert all(r.mode in results.header.modes for r in results.measured)


# -- one writer per file --------------------------------------------------------------

def test_the_writer_keeps_records_and_drops_a_torn_last_line(tmp_path):
    path = tmp_path / "r.jsonl"
    writer = _writer(path)
    writer.write_cases([make.case("a", "baseline", "varies")])
    writer.close()
    with open(path, "a") as handle:
        handle.write('{"record": "case", "case": "b", "pa')  # killed mid-write
    assert [r.case for r in load(str(path)).cases] == ["a"]
    writer = _writer(path, resume=True)
    assert writer.done == {("a", "forward", "baseline")}
    writer.write_cases([make.case("a", "baseline", "deterministic"), make.case("b", "baseline", "deterministic")])
    writer.close()
    assert [(r.case, r.outcome) for r in load(str(path)).cases] == [("a", "varies"), ("b", "deterministic")]
    other = make.header(environment={"baseline": make.environment(tf_version="1.15.0")})
    with pytest.raises(ResultsMismatch, match="cannot resume"):
        _writer(path, other, resume=True)


def test_the_end_record_is_read_and_the_last_one_counts(tmp_path):
    path = tmp_path / "r.jsonl"
    writer = _writer(path)
    writer.write_cases([make.case("a", "baseline", "failed")])
    writer.write_end(make.end(baseline="all failed"))
    writer.write_end(make.end())
    writer.close()
    results = load(str(path))
    assert results.end == make.end() and len(results.cases) == 1


def test_a_second_writer_is_refused_while_the_first_holds_the_file(tmp_path):
    path = tmp_path / "r.jsonl"
    first = _writer(path)
    with pytest.raises(ResultsInUse, match="exists: add --resume"):
        _writer(path)
    for how in ({"resume": True}, {"overwrite": True}):
        with pytest.raises(ResultsInUse, match="in use: another tfdet run is writing it"):
            _writer(path, **how)
    first.write_cases([make.case("a", "baseline", "varies")])
    first.close()
    assert [r.case for r in load(str(path)).cases] == ["a"]  # nothing the refused writers did reached it
    second = _writer(path, resume=True)  # free again once the first is done
    assert second.done == {("a", "forward", "baseline")}
    second.close()


def test_overwrite_renames_a_new_file_over_the_old_one(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("precious\n")
    with open(path) as reader:  # someone reading the old file keeps reading all of it
        _writer(path, overwrite=True).close()
        assert reader.read() == "precious\n"
    assert load(str(path)).header.size == 1.0
    assert [p.name for p in tmp_path.iterdir()] == ["r.jsonl"]  # no temp file left behind


def test_a_claimed_file_never_started_is_not_left_empty(tmp_path):
    path = tmp_path / "r.jsonl"
    _writer(path, head=False).close()
    assert not path.exists()


def test_a_directory_where_the_file_should_be_is_a_write_error(tmp_path):
    (tmp_path / "r.jsonl").mkdir()
    for how in ({}, {"resume": True}, {"overwrite": True}):
        with pytest.raises(ResultsWriteError, match="r.jsonl: cannot create: Is a directory"):
            _writer(tmp_path / "r.jsonl", **how)
    (tmp_path / "file").write_text("")
    with pytest.raises(ResultsWriteError, match="cannot create: Not a directory"):
        _writer(tmp_path / "file" / "r.jsonl")


def test_a_failed_write_leaves_the_file_at_its_last_complete_line(tmp_path):
    import resource

    path = str(tmp_path / "r.jsonl")
    writer = _writer(path)
    writer.write_cases([make.case("a", "baseline", "varies")])
    size = os.path.getsize(path)
    big = make.case("b", "baseline", "raised", error_message="y" * 5000)
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 1000, hard))  # Python ignores SIGXFSZ: the write gets EFBIG
    try:
        with pytest.raises(ResultsWriteError, match="r.jsonl: cannot write: File too large"):
            writer.write_cases([big])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert os.path.getsize(path) == size  # the part of the record that fitted was taken back
    writer.write_cases([big])  # the cause is gone: writing goes on
    writer.close()
    assert [r.case for r in load(path).cases] == ["a", "b"]


# -- resume compares every parameter that changes what a record means ----------------

def test_resume_names_every_parameter_that_differs(tmp_path):
    from tfdet.results import Threads

    path = tmp_path / "r.jsonl"
    _writer(path).close()
    changed = make.header(size=10.0, seed=3, modes_asked=["baseline", "env"], threads=Threads(1, 1),
                          environment={"baseline": make.environment(tf_version="2.20.0")})
    with pytest.raises(ResultsMismatch) as caught:
        _writer(path, changed, resume=True)
    message = str(caught.value)
    for part in ("tf_version is 2.21.0 in the file, 2.20.0 here",
                 "size is 1.0 in the file, 10.0 here", "seed is 0 in the file, 3 here",
                 "modes is baseline in the file, baseline,env here", "intra_op_threads is 2 in the file, 1 here"):
        assert part in message
    assert "repeats" not in message and "\n" not in message
    _writer(path, resume=True).close()  # the same parameters resume


def test_resume_of_an_older_file_takes_what_it_does_not_record_as_unknown(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(json.dumps(_version_1_header()) + "\n")
    old = load(str(path)).header
    assert resume_mismatches(old, make.header(modes_asked=["baseline", "env", "api"], onednn="off")) == []
    assert resume_mismatches(old, make.header(modes_asked=["baseline", "env"], onednn="off")) == [
        ("modes", ["api", "baseline", "env"], ["baseline", "env"])]
    assert unrecorded_parameters(old) == ["catalogue", "max_repeats"]
    # the environment's oneDNN setting stands in for the missing header field
    assert resume_mismatches(old, make.header(modes_asked=["baseline", "env", "api"], onednn="on")) == [
        ("onednn", "off", "on")]


# -- the typed-record machinery itself ------------------------------------------------

def test_a_record_refuses_what_its_declaration_does_not_allow():
    from tfdet.results import CaseRecord

    good = make.case("a", "baseline", "varies", runs=3).to_json()
    assert CaseRecord.from_json(good, "x:1") == make.case("a", "baseline", "varies", runs=3)
    assert "pass" in good and "pass_name" not in good and "ratio" not in good  # None is left out, pass kept
    for bad, words in (([], "expected an object"), (dict(good, runs=3.5), "field runs"),
                       (dict(good, runs=None, distinct=False), "field distinct")):
        with pytest.raises(RecordError, match=words):
            CaseRecord.from_json(bad, "x:1")
