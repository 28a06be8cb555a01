"""End-to-end probe runs with real TensorFlow worker processes, on fixtures
whose behaviour is known: a computation that sums in a random order (must be
flagged in every mode), one that sums in a fixed order (must not be), and ones
that crash, hang or raise (must be recorded while the others complete)."""

import json
import os

import pytest

from tfdet.catalog import default_catalogue
from tfdet.probe import ProbeConfig, run_probe
from tfdet.probe.runner import Probe
from tfdet.progress import Finished, Started, Working
from tfdet.results import load

pytest.importorskip("tensorflow")

FIXTURES = ["fixture-random-order-sum", "fixture-fixed-order-sum", "fixture-crash", "fixture-hang", "fixture-raises",
            "fixture-rare-variance"]
MAX_REPEATS = 150


@pytest.fixture(scope="module")
def fixture_run(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("probe") / "fixtures.jsonl")
    config = ProbeConfig(default_catalogue(), out, modes=("baseline", "env"), processes=2, repeats=5, rounds=1,
                         timeout=10, ops=FIXTURES, max_repeats=MAX_REPEATS, concurrent=2)
    events = []
    probe = Probe(config, events.append)
    try:
        header = probe.run()
    finally:
        probe.stop()
    return out, header, events, probe.spent


def outcomes(path):
    return {(r.case, r.mode): r for r in load(path).cases}


def test_the_probe_tells_its_progress_one_event_per_case(fixture_run):
    out, header, events, _ = fixture_run
    (started,) = [e for e in events if isinstance(e, Started)]
    finished = [e for e in events if isinstance(e, Finished)]
    assert started.total == len(header.planned) == len(finished) and "case" in started.text
    assert {e.text.split(":")[0] for e in events if isinstance(e, Working)} == {
        "%s %s" % tuple(p) for p in header.planned}
    varied = [e for e in finished if e.text.startswith("fixture-random-order-sum ")]
    quiet = [e for e in finished if e.text.startswith("fixture-fixed-order-sum ")]
    assert varied and all(e.notable for e in varied) and quiet and not any(e.notable for e in quiet)


def test_random_order_sum_is_flagged_in_every_mode(fixture_run):
    by_key = outcomes(fixture_run[0])
    for mode in ("baseline", "env"):
        record = by_key[("fixture-random-order-sum", mode)]
        assert record.outcome == "varies"
        assert record.runs == 10
        assert record.distinct >= 2  # at least 2 distinct in 10 runs, never "exactly N"
        assert record.max_ulp_diff >= 1 and record.max_abs_diff > 0


def test_fixed_order_sum_is_not_flagged(fixture_run):
    by_key = outcomes(fixture_run[0])
    for mode in ("baseline", "env"):
        record = by_key[("fixture-fixed-order-sum", mode)]
        assert record.outcome == "deterministic"
        assert record.distinct == 1 and record.max_ulp_diff == 0 and record.norm_spread == 0.0
        assert record.matches_baseline is True


def test_crash_and_hang_are_failures_and_the_run_goes_on(fixture_run):
    by_key = outcomes(fixture_run[0])
    crash = by_key[("fixture-crash", "baseline")]
    assert crash.outcome == "failed" and "SIGABRT" in crash.error_message
    hang = by_key[("fixture-hang", "env")]
    assert hang.outcome == "failed" and "did not answer within 10 s" in hang.error_message
    # cases planned after the crash and the hang still ran
    assert by_key[("fixture-raises", "env")].outcome == "raised"


def test_the_modes_run_at_once_and_the_header_says_how_many(fixture_run):
    # fixture-hang's request lasts the whole timeout in each mode. Asked one mode
    # after the other, the requests' wall times add up to at most the variance
    # phase's; asked at once (two modes, two at a time), they overlap.
    out, _, _, spent = fixture_run
    assert load(out).header.settings["concurrent"] == 2
    assert spent["variance requests (wall)"] >= 2 * 10
    assert spent["variance requests (wall)"] > spent["variance runs (wall)"]


def test_raised_errors_are_results(fixture_run):
    record = outcomes(fixture_run[0])[("fixture-raises", "baseline")]
    assert record.outcome == "raised"
    assert "no deterministic implementation" in record.error_message


def test_cost_is_a_ratio_to_baseline(fixture_run):
    record = outcomes(fixture_run[0])[("fixture-fixed-order-sum", "env")]
    assert record.ratio_low <= record.ratio <= record.ratio_high
    assert len(record.samples_s) == 2  # one interleaved round per process


def test_header_records_the_environment(fixture_run):
    header = load(fixture_run[0]).header
    assert header.schema_version == 2 and header.modes == ["baseline", "env"]
    baseline, env = header.environment["baseline"], header.environment["env"]
    assert baseline.tf_version and baseline.device in ("cpu", "gpu")
    assert env.env.get("TF_DETERMINISTIC_OPS") == "1" and "TF_DETERMINISTIC_OPS" not in baseline.env
    assert header.threads.intra_op == os.cpu_count()


def test_a_real_run_is_valid_against_the_committed_schema(fixture_run):
    import jsonschema

    from tfdet.results import schema

    validator = jsonschema.Draft7Validator(schema.committed_schema("probe"))
    for line in _records(fixture_run[0]):
        validator.validate(line)


def test_results_load_as_a_dataframe(fixture_run):
    frame = load(fixture_run[0]).to_frame()
    assert set(frame["outcome"]) >= {"varies", "deterministic", "failed", "raised"}
    assert (frame["results_file"] == "fixtures.jsonl").all()


def _records(path):
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


# -- adaptive repeats: silence the user can trust ---------------------------------

def test_rare_variance_is_caught_by_repeating_where_another_mode_varied(fixture_run):
    # fixture-rare-variance differs in 1 of 2 runs at baseline and in 1 of 10 under
    # env: the default 10 runs miss it under env about a third of the time (0.9**10),
    # 150 runs about once in seven million. It must come out varying, after extra
    # runs in a further process, and say why it was repeated.
    results = load(fixture_run[0])
    by_key = {(r.case, r.mode): r for r in results.cases}
    assert results.header.max_repeats == MAX_REPEATS
    baseline, env = by_key[("fixture-rare-variance", "baseline")], by_key[("fixture-rare-variance", "env")]
    assert baseline.outcome == "varies"
    assert env.outcome == "varies" and 2 <= env.distinct
    if env.extra_runs is not None:  # the first 10 runs may have caught it already
        assert env.runs == 10 + env.extra_runs <= MAX_REPEATS and env.extra_runs > 0
        assert "baseline" in env.repeated_because and 2 <= env.processes <= 3
    # nothing suggested the fixed-order sum varies: 10 runs, and the rate they rule out
    steady = by_key[("fixture-fixed-order-sum", "env")]
    assert steady.outcome == "deterministic" and steady.runs == 10 and steady.extra_runs is None
    assert steady.rate_ruled_out_95 == pytest.approx(1 - 0.05 ** (1 / 10))


def test_catalogue_says_varies_so_silence_needs_the_full_budget(tmp_path):
    # while-loop-parallel-iterations is catalogued nondeterministic on CPU; whatever
    # it does here, it may only be called deterministic after max_repeats runs.
    out = str(tmp_path / "claim.jsonl")
    config = ProbeConfig(default_catalogue(), out, modes=("baseline",), processes=1, repeats=3, rounds=1,
                         ops=["while-loop-parallel-iterations"], max_repeats=12)
    header, records = run_probe(config), load(out).cases
    entry = default_catalogue().get("while-loop-parallel-iterations")
    version_range = entry.range_for(header.environment["baseline"].tf_version, "cpu")
    assert version_range.status == "nondeterministic"
    assert records
    for record in records:
        assert "nondeterministic" in record.catalogue_expects_variance
        if record.outcome == "deterministic":
            assert record.runs == 12 and record.extra_runs == 9 and record.processes == 2
            assert record.rate_ruled_out_95 == pytest.approx(1 - 0.05 ** (1 / 12))
        else:
            assert record.outcome == "varies"


def _unsure_on_cpu(catalogue, entry_id):
    """The catalogue with `entry_id` claiming nothing known on CPU (unknown, every version)."""
    import dataclasses

    from tfdet.catalog.model import Catalogue

    entries = []
    for entry in catalogue.entries:
        if entry.id == entry_id:
            cpu = tuple(dataclasses.replace(r, status="unknown", switches=()) for r in entry.devices["cpu"])
            entry = dataclasses.replace(entry, devices=dict(entry.devices, cpu=cpu))
        entries.append(entry)
    return Catalogue(entries, catalogue.switches)


def test_settle_runs_the_full_budget_only_where_the_catalogue_has_no_claim(tmp_path):
    # softmax-xent made unknown on CPU here; segment-sum is documented deterministic on CPU.
    catalogue = _unsure_on_cpu(default_catalogue(), "softmax-xent")
    out = str(tmp_path / "settle.jsonl")
    config = ProbeConfig(catalogue, out, modes=("baseline",), processes=1, repeats=3, rounds=1,
                         ops=["softmax-xent", "segment-sum"], max_repeats=12, settle=True)
    header = run_probe(config)
    tf_version = header.environment["baseline"].tf_version
    assert catalogue.get("softmax-xent").range_for(tf_version, "cpu").status == "unknown"
    assert catalogue.get("segment-sum").range_for(tf_version, "cpu").status == "deterministic"
    records = {r.case: r for r in load(out).cases}
    unknown, known = records["softmax-xent"], records["segment-sum"]
    if unknown.outcome == "deterministic":  # it may vary; then it stops at once, as any case does
        assert unknown.runs == 12 and unknown.extra_runs == 9 and unknown.processes == 2
    assert "no claim" in unknown.repeated_because and unknown.catalogue_expects_variance is None
    assert known.runs == 3 and known.extra_runs is None and known.repeated_because is None


def test_the_matrix_passes_settle_to_each_probe():
    from tfdet.matrix.job import probe_command

    argv = probe_command("/venv/bin/python", "out.jsonl", ["baseline"], {"repeats": 3, "settle": True}, False)
    assert argv[-3:] == ["--repeats", "3", "--settle"]
    assert "--settle" not in probe_command("/venv/bin/python", "out.jsonl", ["baseline"], {"settle": False}, False)
