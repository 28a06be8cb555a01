"""Pure parts of the probe: planning, modes, records, summary, results file,
environment description (GPU paths through fakes)."""

import json
import os
import types

import numpy as np
import pytest
import yaml

from tfdet.catalog import load_user_catalogue
from tfdet.probe import cases, environment, measure
from tfdet.probe.modes import mode_setups, process_environment
from tfdet.probe.plan import machine_capabilities, plan_cases
from tfdet.probe.results import ResultsError, ResultsWriter, read_results
from tfdet.probe.summary import summarise, varied_under

from catalog_fixtures import GOOD_ENTRY, document


@pytest.fixture()
def catalogue(tmp_path):
    gpu_only = dict(GOOD_ENTRY, id="gpu-thing", raw_ops=["GpuThing"], apis=["tf.gpu.thing"], requires=["gpu", "cudnn"])
    absent = dict(GOOD_ENTRY, id="absent-op", raw_ops=["AbsentOp"], apis=["tf.absent.op"])
    absent["devices"] = {"cpu": [
        {"versions": "<2.4", "status": "not_applicable", "sources": ["tf-release:2.4"]},
        {"versions": ">=2.4", "status": "deterministic", "sources": ["tf-release:2.4"]}]}
    no_case = dict(GOOD_ENTRY, id="no-case", raw_ops=["NoCase"], apis=["tf.no.case"])
    path = tmp_path / "c.yaml"
    data = yaml.safe_load(document(GOOD_ENTRY))
    data["entries"] += [gpu_only, absent, no_case]
    path.write_text(yaml.safe_dump(data))
    return load_user_catalogue(str(path))


SPECS = {
    "demo-op": {"passes": ["forward", "gradient"], "min_tf": None, "fixture": False},
    "gpu-thing": {"passes": ["forward"], "min_tf": None, "fixture": False},
    "absent-op": {"passes": ["forward"], "min_tf": [2, 9], "fixture": False},
    "fixture-x": {"passes": ["forward"], "min_tf": None, "fixture": True},
}


def test_plan_runs_what_exists_and_says_why_not(catalogue):
    planned, skipped = plan_cases(catalogue, SPECS, "2.6", "cpu", machine_capabilities("cpu"))
    assert [tuple(p) for p in planned] == [("demo-op", "forward"), ("demo-op", "gradient")]
    reasons = dict(skipped)
    assert "needs a GPU" in reasons["gpu-thing"] and "cpu only" in reasons["gpu-thing"]
    assert "needs TF 2.9" in reasons["absent-op"]
    assert reasons["no-case"] == "no probe case for this entry yet"


def test_plan_not_applicable_and_gpu_machine(catalogue):
    planned, skipped = plan_cases(catalogue, SPECS, "2.3", "gpu", machine_capabilities("gpu", 1))
    assert ("gpu-thing", "forward") in [tuple(p) for p in planned]
    _, skipped = plan_cases(catalogue, SPECS, "2.3", "cpu", machine_capabilities("cpu"))
    assert "not_applicable" in dict(skipped)["absent-op"]


def test_plan_only_and_fixtures(catalogue):
    planned, skipped = plan_cases(catalogue, SPECS, "2.6", "cpu", set(), only=["demo-op", "fixture-x"])
    assert [p.case_id for p in planned] == ["demo-op", "demo-op", "fixture-x"] and skipped == []
    with pytest.raises(ValueError, match="unknown probe case or catalogue id: nope"):
        plan_cases(catalogue, SPECS, "2.6", "cpu", set(), only=["nope"])


def test_modes_follow_the_catalogue_switches(catalogue):
    setups = mode_setups(catalogue, "2.6", patch_available=False)
    assert setups["env"].env == {"TF_DETERMINISTIC_OPS": "1", "TF_CUDNN_DETERMINISTIC": "1"}
    assert not setups["api"].available and "2.8" in setups["api"].reason
    assert not setups["patched"].available
    setups = mode_setups(catalogue, "1.15", patch_available=True)
    assert setups["env"].env == {"TF_CUDNN_DETERMINISTIC": "1"} and setups["patched"].available
    setups = mode_setups(catalogue, "2.21", patch_available=False)
    assert setups["api"].api_calls == [{"name": "tf.config.experimental.enable_op_determinism"}]


def test_process_environment_clears_inherited_switches(catalogue):
    setups = mode_setups(catalogue, "2.21", patch_available=False)
    base = {"PATH": "/bin", "TF_DETERMINISTIC_OPS": "1", "TF_CUDNN_USE_AUTOTUNE": "0"}
    assert process_environment(base, setups["baseline"]) == {"PATH": "/bin"}
    env = process_environment(base, setups["env"], {"TF_ENABLE_ONEDNN_OPTS": "0"})
    assert env["TF_DETERMINISTIC_OPS"] == "1" and env["TF_ENABLE_ONEDNN_OPTS"] == "0"


def _arrays(tmp_path, *arrays):
    saved = {}
    for i, array in enumerate(arrays):
        path = str(tmp_path / ("a%d.npy" % i))
        np.save(path, array)
        saved["d%d" % i] = path
    return saved


def test_case_records_varies_raised_failed_and_cost(tmp_path):
    a = np.array([1.0, 2.0], np.float32)
    b = np.array([1.0, np.nextafter(np.float32(2.0), np.float32(3.0))], np.float32)
    saved = _arrays(tmp_path, a, b)
    variance = {
        "baseline": [{"digests": ["d0", "d0"], "saved": {"d0": saved["d0"]}, "raised": None},
                     {"digests": ["d1", "d0"], "saved": {"d1": saved["d1"]}, "raised": None}],
        "env": [{"digests": [], "saved": {}, "raised": {"type": "UnimplementedError", "message": "no"}}],
        "api": [{"failed": {"message": "api#0 died (killed by SIGABRT)", "stderr_tail": "boom"}}],
    }
    samples = {"baseline": [1.0, 1.0, 1.0], "env": [], "api": []}
    records = {r["mode"]: r for r in measure.case_records("c", "forward", variance, samples, np.load)}
    assert records["baseline"]["outcome"] == "varies" and records["baseline"]["distinct"] == 2
    assert records["baseline"]["max_ulp_diff"] == 1 and records["baseline"]["frac_elements_differ"] == 0.5
    assert records["baseline"]["distinct_across_processes"] == 2
    assert records["env"]["outcome"] == "raised" and records["env"]["error_type"] == "UnimplementedError"
    assert records["api"]["outcome"] == "failed" and records["api"]["stderr_tail"] == "boom"
    cost = measure.cost_fields([2.0, 2.0, 2.0], [1.0, 1.0, 1.0])
    assert cost["ratio"] == 2.0 and cost["ratio_low"] == 2.0 and cost["median_s"] == 2.0


def test_summary_names_what_varied_raised_and_failed(tmp_path):
    header = {"modes": ["baseline", "env"], "processes": 2, "repeats": 5, "environment": {
        "baseline": {"tf_version": "2.21.0", "device": "cpu", "cpu_model": "X", "cpu_count": 2}},
        "planned": [["a", "forward"], ["b", "forward"], ["c", "forward"]], "unavailable_modes": {"api": "too old"}}
    records = [
        {"case": "a", "pass": "forward", "mode": "baseline", "outcome": "varies", "distinct": 3, "runs": 10},
        {"case": "a", "pass": "forward", "mode": "env", "outcome": "deterministic", "distinct": 1, "runs": 10,
         "ratio": 1.5, "ratio_low": 1.4, "ratio_high": 1.6},
        {"case": "b", "pass": "forward", "mode": "env", "outcome": "raised", "error_type": "E", "error_message": "<m>"},
        {"case": "x", "pass": None, "mode": None, "outcome": "skipped", "reason": "needs a GPU; cpu only"},
    ]
    text = summarise(header, records, path="r.jsonl")
    assert "a" in text and "3/10 VARIES" in text and "1/10" in text
    assert "E: <m>" in text and "x1.50 [1.40-1.60]" in text
    assert "mode api not run (not applicable here): too old" in text and "Skipped 1 catalogue entries: needs a GPU (1)" in text
    assert "Not measured yet (interrupted run): 1" in text
    assert varied_under(records, "baseline") == [("a", "forward")] and varied_under(records, "env") == []


def test_results_file_rejects_what_is_not_one(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("hello\n")
    with pytest.raises(ResultsError, match="not a tfdet results file"):
        read_results(str(path))
    path.write_text(json.dumps({"record": "header", "schema_version": 99}) + "\n")
    with pytest.raises(ResultsError, match="schema version 99"):
        read_results(str(path))
    with pytest.raises(ResultsError, match="cannot read"):
        read_results(str(tmp_path / "missing.jsonl"))


def test_writer_keeps_records_and_drops_a_torn_last_line(tmp_path):
    path = str(tmp_path / "r.jsonl")
    header = {"record": "header", "schema_version": 1, "modes": ["baseline"],
              "environment": {"baseline": {"tf_version": "2.21.0", "python": "3.11"}}}
    writer = ResultsWriter(path, header)
    writer.write_case([{"record": "case", "case": "a", "pass": "forward", "mode": "baseline", "outcome": "varies"}])
    writer.close()
    with open(path, "a") as handle:
        handle.write('{"record": "case", "case": "b", "pa')  # killed mid-write
    assert [r["case"] for r in read_results(path)[1]] == ["a"]
    writer = ResultsWriter(path, header, resume=True)
    assert writer.done == {("a", "forward", "baseline")}
    writer.write_case([{"record": "case", "case": "a", "pass": "forward", "mode": "baseline", "outcome": "x"},
                       {"record": "case", "case": "b", "pass": "forward", "mode": "baseline", "outcome": "x"}])
    writer.close()
    assert [r["case"] for r in read_results(path)[1]] == ["a", "b"]
    other = dict(header, environment={"baseline": {"tf_version": "1.15.0", "python": "3.7"}})
    with pytest.raises(ResultsError, match="cannot resume"):
        ResultsWriter(path, other, resume=True)


class _FakeDevice(object):
    name = "/physical_device:GPU:0"


def _fake_tf(gpus):
    experimental = types.SimpleNamespace(
        list_physical_devices=lambda kind: gpus,
        get_device_details=lambda device: {"device_name": "NVIDIA A100-SXM4-40GB", "compute_capability": (8, 0)})
    threading = types.SimpleNamespace(get_intra_op_parallelism_threads=lambda: 4,
                                      get_inter_op_parallelism_threads=lambda: 2)
    return types.SimpleNamespace(
        __version__="2.9.1", version=types.SimpleNamespace(GIT_VERSION="v2.9.1"),
        config=types.SimpleNamespace(experimental=experimental, threading=threading,
                                     list_physical_devices=lambda kind: gpus),
        test=types.SimpleNamespace(is_built_with_cuda=lambda: bool(gpus)),
        sysconfig=types.SimpleNamespace(get_build_info=lambda: {"cuda_version": "11.2", "cudnn_version": "8"}))


def test_environment_on_a_gpu_machine_through_a_fake_tf(tmp_path):
    described = environment.describe(_fake_tf([_FakeDevice()]), np, environ={
        "TF_DETERMINISTIC_OPS": "1", "TF_CUDNN_USE_AUTOTUNE": "0", "HOME": "/root", "XLA_FLAGS": "--x"})
    assert described["device"] == "gpu"
    assert described["gpus"] == [{"device": "/physical_device:GPU:0", "name": "NVIDIA A100-SXM4-40GB",
                                  "compute_capability": "8.0"}]
    assert described["build"] == {"cuda_build": True, "cuda_version": "11.2", "cudnn_version": "8"}
    assert described["env"] == {"TF_CUDNN_USE_AUTOTUNE": "0", "TF_DETERMINISTIC_OPS": "1", "XLA_FLAGS": "--x"}
    assert described["threads"] == {"intra_op": 4, "inter_op": 2}


def test_environment_on_a_cpu_machine_through_a_fake_tf():
    described = environment.describe(_fake_tf([]), np, environ={})
    assert described["device"] == "cpu" and described["gpus"] == [] and described["nvidia_driver"] is None


def test_nvidia_driver_parsing(tmp_path):
    path = tmp_path / "version"
    path.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n")
    assert environment.nvidia_driver(str(path)) == "535.104.05"
    assert environment.nvidia_driver(str(tmp_path / "none")) is None


def test_case_registry_has_fixtures_and_no_tf_import():
    described = cases.describe_cases()
    assert described["fixture-crash"]["fixture"] is True
    assert all(spec["passes"] for spec in described.values())


# -- what the catalogue expects, modes that did not run, names, cost words ----------

def test_expected_to_vary_follows_the_status_and_the_mode_switches():
    from tfdet.catalog import default_catalogue
    from tfdet.catalog import expected_to_vary
    from tfdet.probe.modes import mode_setups, mode_switch_ids

    shipped = default_catalogue()
    switches = mode_switch_ids(shipped, mode_setups(shipped, "2.21.0", True), "2.21.0", "cpu")
    assert switches["baseline"] == frozenset() and "enable_op_determinism" in switches["api"]
    bincount = shipped.get("bincount").range_for("2.21.0", "cpu")  # nondeterministic, patched by tfdet
    assert bincount.status == "nondeterministic"
    for mode in ("baseline", "env", "api"):
        assert "nondeterministic" in expected_to_vary(bincount, switches[mode])
    assert expected_to_vary(bincount, switches["patched"], patched=True) is None
    with_switch = shipped.get("data-stateful-parallel-map").range_for("2.21.0", "cpu")
    assert with_switch.status == "deterministic_with_switch"
    assert "lacks enable_op_determinism" in expected_to_vary(with_switch, switches["baseline"])
    assert expected_to_vary(with_switch, switches["api"]) is None
    assert expected_to_vary(shipped.get("segment-sum").range_for("2.21.0", "cpu"), frozenset()) is None
    assert expected_to_vary(None, frozenset()) is None


def test_a_mode_tf_lacks_fails_only_when_asked_for():
    from tfdet.catalog import default_catalogue
    from tfdet.probe.modes import classify_modes

    setups = mode_setups(default_catalogue(), "1.15.5", True)
    modes = ("baseline", "env", "api")
    active, failures, not_applicable = classify_modes(modes, setups, requested=True)
    assert active == ["baseline", "env"] and list(failures) == ["api"] and not not_applicable
    assert "no determinism API in TF 1.15.5" in failures["api"]
    active, failures, not_applicable = classify_modes(modes, setups, requested=False)
    assert active == ["baseline", "env"] and not failures and list(not_applicable) == ["api"]


def _case(case, mode, outcome, **extra):
    return dict({"record": "case", "case": case, "pass": "forward", "mode": mode, "outcome": outcome}, **extra)


def test_mode_problems_rule():
    from tfdet.probe.summary import mode_problems

    header = {"modes": ["baseline", "patched"], "mode_failures": {"api": "no determinism API in TF 1.15"},
              "not_applicable_modes": {}, "unavailable_modes": {"api": "no determinism API in TF 1.15"}}
    records = [_case("a", "baseline", "deterministic", runs=10, distinct=1),
               _case("a", "patched", "failed", error_message="ImportError: no module named yaml"),
               _case("b", "baseline", "raised"), _case("b", "patched", "failed")]
    problems = {p.mode: p for p in mode_problems(header, records)}
    assert set(problems) == {"api", "patched"} and problems["api"].failure and problems["patched"].failure
    assert "no case gave a measurement: all 2 failed" in problems["patched"].reason
    assert "ImportError" in problems["patched"].reason
    # one measurement (a raised error counts: it is what the op does) is enough
    records[3] = _case("b", "patched", "raised")
    assert {p.mode for p in mode_problems(header, records)} == {"api"}
    # a default mode this TF lacks is a note, and files from before the field say only "not run"
    old = {"modes": ["baseline"], "unavailable_modes": {"api": "too old"}}
    assert [(p.mode, p.failure) for p in mode_problems(old, records[:1])] == [("api", False)]


def test_summary_says_first_which_mode_did_not_run():
    header = {"modes": ["baseline", "patched"], "processes": 2, "repeats": 5, "max_repeats": 40,
              "environment": {"baseline": {"tf_version": "2.21.0", "device": "cpu"}}}
    records = [_case("a", "baseline", "deterministic", runs=40, distinct=1),
               _case("a", "patched", "failed", error_message="patched#0 died")]
    lines = summarise(header, records).splitlines()
    assert lines[0] == "MODE patched DID NOT RUN: no case gave a measurement: all 1 failed (patched#0 died)"
    assert "up to 40 runs where variance is expected" in lines[1]


def test_summary_flags_what_the_catalogue_says_varies_and_what_silence_rules_out():
    header = {"modes": ["baseline", "env"], "processes": 2, "repeats": 5, "max_repeats": 40, "environment": {}}
    records = [_case("a", "baseline", "varies", runs=10, distinct=3),
               _case("a", "env", "deterministic", runs=40, distinct=1, extra_runs=30),
               _case("b", "baseline", "deterministic", runs=40, distinct=1,
                     catalogue_expects_variance="the catalogue says nondeterministic (TF >=2.21)")]
    text = summarise(header, records)
    assert "1/40 (<7.2%)" in text
    assert "The catalogue says these vary here; they did not vary in this run" in text
    assert "0 of 40 runs differed: a per-run rate above 7.2% is ruled out at 95%" in text


def test_cost_words_and_the_patch_cost():
    from tfdet.probe.summary import cost_words, describe_patch_cost, patch_cost

    assert cost_words(0.96, 0.90, 1.03) == "no measurable cost [0.90\u20131.03]"
    assert cost_words(1.34, 1.2, 1.5, ascii_only=True) == "x1.34 [1.20-1.50]"
    assert cost_words(0.80, 0.7, 0.9).startswith("\u00d70.80")  # a real speed-up stays a number
    records = [_case("a", "baseline", "varies"), _case("a", "patched", "deterministic", ratio=9.0, ratio_low=8.0,
                                                         ratio_high=10.0),
               _case("b", "baseline", "deterministic"), _case("b", "patched", "deterministic", ratio=50.0,
                                                              ratio_low=40.0, ratio_high=60.0)]
    cost = patch_cost(records)  # only where baseline varies: b's cost is not the patch's business
    assert cost["median"] == 9.0 and (cost["low"], cost["high"]) == (8.0, 10.0)
    assert "one op that varies without it (a, forward)" in describe_patch_cost(cost)
    records += [_case("c", "baseline", "varies"), _case("c", "patched", "deterministic", ratio=1.0, ratio_low=0.9,
                                                        ratio_high=1.1)]
    cost = patch_cost(records)
    assert cost["median"] == 5.0 and (cost["low"], cost["high"]) == (1.0, 9.0)
    assert "median \u00d75.00 over the 2 ops" in describe_patch_cost(cost)
    assert patch_cost(records[2:4]) is None


def test_ops_accepts_every_name_catalog_show_takes():
    from tfdet.catalog import default_catalogue
    from tfdet.probe.plan import resolve_ops

    ids, unknown = resolve_ops(default_catalogue(), [
        "tf.math.bincount", "DenseBincount", "bincount", "tensorflow.math.unsorted_segment_sum", "fixture-crash",
        "densebincount", "tf.math.bincountt"], fixture_ids={"fixture-crash"})
    assert ids == ["bincount", "dense-bincount", "unsorted-segment-sum", "fixture-crash"]
    assert [name for name, _ in unknown] == ["tf.math.bincountt"] and "tf.math.bincount" in unknown[0][1]


def test_results_end_record_reaches_the_header(tmp_path):
    path = str(tmp_path / "r.jsonl")
    writer = ResultsWriter(path, {"record": "header", "schema_version": 1, "modes": ["baseline"]})
    writer.write_case([_case("a", "baseline", "failed")])
    writer.write_end({"record": "end", "mode_failures": {"baseline": "all failed"}})
    writer.close()
    header, records = read_results(path)
    assert header["end"]["mode_failures"] == {"baseline": "all failed"} and len(records) == 1


def test_progress_plain_lines_rich_on_a_terminal_and_nothing_when_quiet():
    import io

    from tfdet.probe.plan import PlannedCase
    from tfdet.probe.progress import Progress

    planned = PlannedCase("bincount", "forward")
    records = [_case("bincount", "baseline", "varies")]
    for tty in (False, True):
        stream = io.StringIO()
        progress = Progress(stream, tty=tty)
        progress.message("starting")
        progress.start(1, 0)
        progress.step(planned, "baseline")
        progress.step(planned, "env", runs=10, budget=40)
        progress.finished(planned, records)
        progress.close()
        text = stream.getvalue()
        assert "tfdet probe: starting" in text and "bincount forward: baseline varies" in text
        assert ("[1/1]" in text) is not tty  # the plain line's counter; rich draws its own
    stream = io.StringIO()
    quiet = Progress(stream, quiet=True, tty=True)
    quiet.message("x")
    quiet.start(1, 0)
    quiet.finished(planned, records)
    quiet.close()
    assert stream.getvalue() == ""


# -- one writer per results file; resume compares what records mean --------------

def _header(**changes):
    header = {"record": "header", "schema_version": 1, "modes": ["baseline"], "modes_asked": ["baseline"],
              "size": 1.0, "seed": 0, "repeats": 5, "max_repeats": 100, "processes": 2, "execution": "function",
              "threads": {"intra_op": 2, "inter_op": 2}, "onednn": "default", "tfdet_version": "0.1.0",
              "catalogue_digest": "sha256:abc", "planned": [["a", "forward"]], "skipped": [],
              "environment": {"baseline": {"tf_version": "2.21.0", "python": "3.11.7"}}}
    header.update(changes)
    return header


def test_a_second_writer_is_refused_while_the_first_holds_the_file(tmp_path):
    from tfdet.probe.results import ResultsInUse

    path = str(tmp_path / "r.jsonl")
    first = ResultsWriter(path, _header())
    with pytest.raises(ResultsInUse, match="exists: add --resume"):
        ResultsWriter(path, _header())
    for how in ({"resume": True}, {"overwrite": True}):
        with pytest.raises(ResultsInUse, match="in use: another tfdet probe is writing it"):
            ResultsWriter(path, _header(), **how)
    first.write_case([{"record": "case", "case": "a", "pass": "forward", "mode": "baseline", "outcome": "x"}])
    first.close()
    assert [r["case"] for r in read_results(path)[1]] == ["a"]  # nothing the refused writers did reached it
    second = ResultsWriter(path, _header(), resume=True)  # free again once the first is done
    assert second.done == {("a", "forward", "baseline")}
    second.close()


def test_overwrite_renames_a_new_file_over_the_old_one(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text("precious\n")
    with open(path) as reader:  # someone reading the old file keeps reading all of it
        writer = ResultsWriter(str(path), _header(), overwrite=True)
        writer.close()
        assert reader.read() == "precious\n"
    assert read_results(str(path))[0]["size"] == 1.0
    assert [p.name for p in tmp_path.iterdir()] == ["r.jsonl"]  # no temp file left behind


def test_a_claimed_file_never_started_is_not_left_empty(tmp_path):
    path = tmp_path / "r.jsonl"
    ResultsWriter(str(path)).close()
    assert not path.exists()


def test_a_directory_where_the_file_should_be_is_a_write_error(tmp_path):
    from tfdet.probe.results import ResultsWriteError

    (tmp_path / "r.jsonl").mkdir()
    for how in ({}, {"resume": True}, {"overwrite": True}):
        with pytest.raises(ResultsWriteError, match="r.jsonl: cannot create: Is a directory"):
            ResultsWriter(str(tmp_path / "r.jsonl"), _header(), **how)
    (tmp_path / "file").write_text("")
    with pytest.raises(ResultsWriteError, match="cannot create: Not a directory"):
        ResultsWriter(str(tmp_path / "file" / "r.jsonl"), _header())


def test_resume_names_every_parameter_that_differs(tmp_path):
    from tfdet.probe.results import ResultsMismatch

    path = str(tmp_path / "r.jsonl")
    ResultsWriter(path, _header()).close()
    changed = _header(size=10.0, seed=3, modes_asked=["baseline", "env"], threads={"intra_op": 1, "inter_op": 1},
                      environment={"baseline": {"tf_version": "2.20.0", "python": "3.11.7"}})
    with pytest.raises(ResultsMismatch) as caught:
        ResultsWriter(path, changed, resume=True)
    message = str(caught.value)
    for part in ("tf_version is 2.21.0 in the file, 2.20.0 here",
                 "size is 1.0 in the file, 10.0 here", "seed is 0 in the file, 3 here",
                 "modes is baseline in the file, baseline,env here", "intra_op_threads is 2 in the file, 1 here"):
        assert part in message
    assert "repeats" not in message and "\n" not in message
    ResultsWriter(path, _header(), resume=True).close()  # the same parameters resume


def test_resume_of_an_older_file_takes_what_it_does_not_record_as_unknown(tmp_path):
    from tfdet.probe.results import resume_mismatches, unrecorded_parameters

    old = _header()
    for key in ("catalogue_digest", "max_repeats", "onednn", "modes_asked"):
        old.pop(key)
    old["unavailable_modes"] = {"api": "needs TF 2.8"}
    assert resume_mismatches(old, _header(modes_asked=["baseline", "api"])) == []
    assert resume_mismatches(old, _header()) == [("modes", ["api", "baseline"], ["baseline"])]
    assert unrecorded_parameters(old) == ["catalogue", "max_repeats", "onednn"]
    # the environment's oneDNN setting stands in for the missing header field
    old["environment"]["baseline"]["onednn"] = "0"
    assert resume_mismatches(old, _header(onednn="on", modes_asked=["api", "baseline"])) == [("onednn", "off", "on")]


def test_a_failed_write_leaves_the_file_at_its_last_complete_line(tmp_path):
    import resource

    from tfdet.probe.results import ResultsWriteError

    path = str(tmp_path / "r.jsonl")
    writer = ResultsWriter(path, _header())
    writer.write_case([{"record": "case", "case": "a", "pass": "forward", "mode": "baseline", "outcome": "x"}])
    size = os.path.getsize(path)
    big = {"record": "case", "case": "b", "pass": "forward", "mode": "baseline", "outcome": "x", "pad": "y" * 5000}
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (size + 1000, hard))  # Python ignores SIGXFSZ: the write gets EFBIG
    try:
        with pytest.raises(ResultsWriteError, match="r.jsonl: cannot write: File too large"):
            writer.write_case([big])
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
    assert os.path.getsize(path) == size  # the part of the record that fitted was taken back
    writer.write_case([big])  # the cause is gone: writing goes on
    writer.close()
    assert [r["case"] for r in read_results(path)[1]] == ["a", "b"]


def test_stale_scratch_is_removed_only_when_its_owner_is_dead(tmp_path):
    import subprocess
    import sys

    from tfdet.probe import scratch

    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        names = ["tfdet-probe-%d-abc_12" % alive.pid, "tfdet-probe-%d-xyz" % dead.pid, "tfdet-probe-k3j2h1",
                 "other-%d-x" % dead.pid]
        for name in names:
            (tmp_path / name).mkdir()
            (tmp_path / name / "a.npy").write_bytes(b"x")
        own = scratch.create(str(tmp_path))
        assert scratch.remove_stale(str(tmp_path)) == [str(tmp_path / names[1])]
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names[:1] + names[2:] + [os.path.basename(own)])
    finally:
        alive.kill()
        alive.wait()
