"""Runs within a process, what a pass rules out, and JSON every locate result
can be read back from (eager ops among the roots)."""

import json
import math
import os
import sys

import jsonschema
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "examples", "locate"))
sys.path.insert(0, HERE)
import programs  # noqa: E402 - tests/locate/programs.py
import steps  # noqa: E402 - examples/locate/steps.py

from cli_runner import run_cli  # noqa: E402
from tfdet.cli import locate_cmd  # noqa: E402
from tfdet.cli.exitcodes import WRITE_FAILED  # noqa: E402
from tfdet.locating import api, locate  # noqa: E402
from tfdet.results import load, schema  # noqa: E402
from tfdet.results.locate_records import KIND, SCHEMA_VERSION, Difference, LocateResult, RunOutcome, Spread  # noqa: E402
from tfdet import testing  # noqa: E402


def line_of(marker, path=steps.__file__):
    with open(path) as handle:
        for number, line in enumerate(handle, 1):
            if marker in line:
                return "%s:%d" % (path, number)
    raise AssertionError(marker)


def eager_difference(index):
    return Difference(op_type="ResourceScatterSub", op_name="ResourceScatterSub (eager #%d)" % index, function=None,
                      source=None, output_slot=-1, runs=[0, 1])


def test_an_eager_root_and_eager_spread_are_written_with_their_nulls_and_read_back(tmp_path):
    result = LocateResult(
        kind=KIND, schema_version=SCHEMA_VERSION, tfdet_version="0", tf_version="2.21.0", device="cpu",
        target="m:f", runs=2, ops_compared=9, verdict="First difference", first_difference=eager_difference(2),
        other_roots=[eager_difference(5)], spread=[Spread(op_type="Sum", op_name="Sum (eager #3)", function=None,
                                                          step=None)],
        run_outcomes=[RunOutcome(status="finished")], calls=2, runs_compared=2, runs_differing=2)
    data = result.to_json()
    assert data["other_roots"][0]["function"] is None and data["spread"][0]["step"] is None
    jsonschema.validate(data, schema.committed_schema("locate"))
    path = tmp_path / "where.json"
    path.write_text(json.dumps(data))
    assert load(str(path)) == result


def test_the_defaults_catch_a_step_varying_in_30_percent_of_runs_95_percent_of_the_time():
    assert (locate_cmd.DEFAULT_RUNS, locate_cmd.DEFAULT_REPEATS) == (api.DEFAULT_RUNS, api.DEFAULT_REPEATS)
    assert (testing.DEFAULT_RUNS, testing.DEFAULT_REPEATS) == (api.DEFAULT_RUNS, api.DEFAULT_REPEATS)
    compared = (api.DEFAULT_RUNS - 1) * api.DEFAULT_REPEATS  # each call of a later process vs the first's
    assert 1 - 0.7 ** compared >= 0.95
    assert api.Evidence(compared, 0).rate_ruled_out < 0.3
    assert api.Evidence(12, 0).describe() == "0 of 12 runs differed: a per-run rate above 22% is ruled out at 95%"
    assert api.Evidence(12, 1).rate_ruled_out is None


def test_traces_that_cannot_be_a_directory_is_exit_5_in_one_line(tmp_path):
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    code, out, err = run_cli("locate", "--traces", str(blocker), str(script))
    assert code == WRITE_FAILED and out == "", err
    assert err.count("\n") == 1 and str(blocker) in err and "Traceback" not in err


def test_two_eager_roots_the_json_reads_back_and_renders(tmp_path):
    pytest.importorskip("tensorflow")
    result = locate(steps.two_tables_step, runs=2, repeats=2, detail=False)
    first = result.first_difference
    assert first is not None, result.verdict
    # the write itself, read back (not the recorder's own read of it, which came first)
    assert (first.op_type, first.output_slot, first.function) == ("ResourceScatterSub", -1, None)
    assert first.source == line_of("SCATTER SUB LINE")
    assert any(root.function is None for root in result.other_roots), result.other_roots
    path = tmp_path / "where.json"
    path.write_text(json.dumps(result.to_json()))
    jsonschema.validate(json.loads(path.read_text()), schema.committed_schema("locate"))
    assert load(str(path)) == result
    code, _, err = run_cli("report", str(path), "-o", str(tmp_path / "where.html"))
    assert code == 0, err
    assert "ResourceScatterSub" in (tmp_path / "where.html").read_text()


@pytest.mark.slow
def test_a_call_is_compared_with_the_same_call_of_the_other_process_so_state_carried_is_no_difference():
    result = locate(programs.counting_step, runs=2, repeats=4, detail=False)
    assert result.first_difference is None, result.verdict
    assert (result.calls, result.runs_compared, result.runs_differing) == (4, 4, 0)
    assert result.rate_ruled_out == round(1 - 0.05 ** (1 / 4.0), 4)
    assert "0 of 4 runs differed: a per-run rate above 53% is ruled out at 95%" in result.verdict
    assert [(o.process, o.call, o.status) for o in result.run_outcomes] == [
        (p, c, "finished") for p in range(2) for c in range(4)]


@pytest.mark.slow
def test_by_default_assert_reproducible_fails_a_stock_scatter_sub_naming_its_line():
    with pytest.raises(AssertionError, match="ResourceScatterSub") as failed:
        testing.assert_reproducible(steps.scatter_sub_step)
    assert line_of("SCATTER SUB LINE") in str(failed.value)


@pytest.mark.slow
def test_a_pass_says_what_it_ruled_out():
    result = testing.assert_reproducible(steps.deterministic_step, 2, repeats=3)
    assert result.rate_ruled_out == round(1 - 0.05 ** (1 / 3.0), 4) and not math.isnan(result.rate_ruled_out)
    assert result.verdict.endswith("0 of 3 runs differed: a per-run rate above 63% is ruled out at 95%.")


@pytest.mark.slow
def test_each_call_in_a_process_has_its_own_trace_knowing_the_graphs_traced_before(tmp_path):
    from tfdet.locating import runs
    from tfdet.locating.trace_file import repeat_path

    target = runs.function_target(programs.traced_once_step, (), {})
    calls = runs.run_once(target, str(tmp_path), 0, repeats=3)
    assert [outcome.status for _, outcome in calls] == ["finished"] * 3
    assert [outcome.call for _, outcome in calls] == [0, 1, 2]
    assert os.path.exists(repeat_path(str(tmp_path / "run-0.trace.jsonl"), 2))
    keys = [[e.key for e in run.executions if e.key[0] == "g"] for run, _ in calls]
    assert keys[0] and keys[0] == keys[1] == keys[2]  # occurrences and steps count per call
    for run, _ in calls[1:]:  # traced once, in the first call: the later traces still name every op
        assert all(e.op.op_type != "?" for e in run.executions), [e.key for e in run.executions if e.op.op_type == "?"]
        assert {e.step for e in run.executions if e.key[0] == "g"} == {1}
