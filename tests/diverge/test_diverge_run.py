"""`tfdet diverge` end to end: real trainings of the embedding workload, each
in its own process. The proofs of issue 17: under `patched`, fixed init and
batches give bitwise-equal weights and no disagreement across processes;
baseline is measured (it varies on a multi-core CPU: the Embedding's sparse
gradient is summed by several threads); random init disagrees more than fixed;
Dask gives the local executor's numbers; --resume runs only what is missing.
"""

import json
import os

import jsonschema
import pytest

from tfdet.results import schema
from tfdet.results.diverge_file import read_diverge

from cli_runner import run_cli

FAST = ["--workload", "embedding", "--lr", "0.1", "--epochs", "1"]


def _cells(stdout):
    return {(c["condition"], c["mode"]): c for c in json.loads(stdout)["cells"]}


def _validate(path):
    validator = jsonschema.Draft7Validator(schema.committed_schema("diverge"))
    with open(path) as handle:
        for line in handle:
            validator.validate(json.loads(line))


def test_patched_fixed_seeds_give_identical_weights_in_separate_processes(tmp_path):
    out = str(tmp_path / "d.jsonl")
    code, stdout, stderr = run_cli("diverge", *FAST, "--conditions", "fixed-fixed", "--modes", "patched",
                                   "--runs", "2", "--jobs", "2", "--out", out, "--json")
    assert code == 0, stderr
    cell = _cells(stdout)[("fixed-fixed", "patched")]
    assert cell["runs"] == 2 and cell["cell_name"] == "control"
    assert cell["weight_distance_max"] == 0.0 and cell["weight_frobenius_max"] == 0.0
    assert cell["disagreement_any"] == 0.0 and cell["distinct_weights"] == 1
    assert 0.2 < cell["accuracy_mean"] <= 1.0  # it trained (chance: 0.25)
    results = read_diverge(out)
    assert len({r.pid for r in results.trainings}) == 2  # two processes
    assert all(r.op_determinism for r in results.trainings)
    assert results.summary.complete
    _validate(out)


def test_a_training_that_hangs_is_recorded_and_the_run_goes_on(tmp_path):
    out = str(tmp_path / "d.jsonl")
    code, stdout, stderr = run_cli("diverge", *FAST, "--conditions", "fixed-fixed", "--modes", "baseline",
                                   "--runs", "2", "--jobs", "2", "--out", out, "--timeout", "0.3")
    assert code == 1, stderr
    assert "2 trainings failed (--resume retries them)" in stdout
    results = read_diverge(out)
    assert [r.outcome for r in results.trainings] == ["timeout", "timeout"]
    assert "killed" in results.trainings[0].error
    assert results.summary.cells[0].runs == 0 and results.summary.cells[0].failed == 2
    _validate(out)


def test_usage_errors_are_one_line(tmp_path):
    code, _, stderr = run_cli("diverge", "--workload", "embedding", "--modes", "baseline,fast")
    assert code == 2 and "unknown mode fast" in stderr
    code, _, stderr = run_cli("diverge", "--workload", "embedding", "--scheduler", "tcp://h:1")
    assert code == 2 and stderr.strip().endswith("--scheduler needs --executor dask")
    (tmp_path / "x.jsonl").write_text("{}\n")
    code, _, stderr = run_cli("diverge", *FAST, "--out", str(tmp_path / "x.jsonl"), "--resume")
    assert code == 3 and "not a tfdet diverge results file" in stderr
    assert "Traceback" not in stderr


# --------------------------------------------------------------------------- slow: the proofs

RUNS = 3


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    out = str(tmp_path_factory.mktemp("diverge") / "local.jsonl")
    code, stdout, stderr = run_cli("diverge", "--workload", "embedding", "--lr", "0.1", "--epochs", "3",
                                   "--conditions", "fixed-fixed,random-fixed", "--modes", "baseline,patched",
                                   "--runs", str(RUNS), "--jobs", "2", "--out", out, "--json")
    assert code == 0, stderr
    return out, _cells(stdout)


@pytest.mark.slow
def test_patched_removes_what_baseline_varies(local_run, record_property):
    _, cells = local_run
    patched, baseline = cells[("fixed-fixed", "patched")], cells[("fixed-fixed", "baseline")]
    assert patched["weight_distance_max"] == 0.0 and patched["distinct_weights"] == 1
    assert patched["disagreement_any"] == 0.0 and patched["disagreement_pairwise_max"] == 0.0
    # Reported: what baseline (IMPL) does here.
    for name in ("distinct_weights", "weight_distance_max", "disagreement_any", "step_time_ratio"):
        record_property("baseline_" + name, baseline[name])
    record_property("patched_step_time_ratio", patched["step_time_ratio"])
    print("IMPL (fixed-fixed baseline): %d/%d distinct weights, L2 max %s, disagreement %s; patched step x %.2f" % (
        baseline["distinct_weights"], baseline["runs"], baseline["weight_distance_max"],
        baseline["disagreement_any"], patched["step_time_ratio"]))
    if (os.cpu_count() or 1) >= 2:  # one thread sums in one order: nothing to vary
        assert baseline["distinct_weights"] >= 2 and baseline["weight_distance_max"] > 0


@pytest.mark.slow
def test_random_init_disagrees_more_than_fixed_init(local_run):
    _, cells = local_run
    for mode in ("baseline", "patched"):
        fixed, random = cells[("fixed-fixed", mode)], cells[("random-fixed", mode)]
        assert random["disagreement_any"] > fixed["disagreement_any"]
        assert random["disagreement_pairwise_mean"] > fixed["disagreement_pairwise_mean"]
        assert random["weight_distance_max"] > 100 * (fixed["weight_distance_max"] or 1e-3)


@pytest.mark.slow
def test_dask_local_cluster_gives_the_local_numbers(local_run, tmp_path):
    pytest.importorskip("distributed")
    local_out, local_cells = local_run
    out = str(tmp_path / "dask.jsonl")
    code, stdout, stderr = run_cli("diverge", "--workload", "embedding", "--lr", "0.1", "--epochs", "3",
                                   "--conditions", "fixed-fixed", "--modes", "patched", "--runs", str(RUNS),
                                   "--executor", "dask", "--jobs", "2", "--out", out, "--json")
    assert code == 0, stderr
    dask_cell, local_cell = _cells(stdout)[("fixed-fixed", "patched")], local_cells[("fixed-fixed", "patched")]
    for name in ("runs", "disagreement_any", "weight_distance_max", "accuracy_mean", "per_class_disagreement"):
        assert dask_cell[name] == local_cell[name], name
    local = {r.key: r for r in read_diverge(local_out).trainings if r.mode == "patched"
             and r.condition == "fixed-fixed"}
    remote = {r.key: r for r in read_diverge(out).trainings}
    assert set(remote) == set(local)
    for key, record in remote.items():  # bit for bit: same weights, same predictions
        assert record.weights_sha256 == local[key].weights_sha256
        assert record.predictions == local[key].predictions


@pytest.mark.slow
def test_resume_runs_only_the_missing_trainings(tmp_path):
    out = tmp_path / "r.jsonl"
    args = ("diverge", *FAST, "--conditions", "fixed-fixed", "--modes", "patched", "--runs", "2", "--jobs", "2",
            "--out", str(out))
    code, _, stderr = run_cli(*args)
    assert code == 0, stderr
    lines = out.read_text().splitlines()
    kept = json.loads(lines[1])
    out.write_text("\n".join(lines[:2]) + "\n")  # as if interrupted after the first training
    code, stdout, stderr = run_cli(*args, "--resume")
    assert code == 0, stderr
    assert "1 training to run on local (2 processes) (1 already in the results file)" in stderr
    results = read_diverge(str(out))
    assert len(results.trainings) == 2 and results.trainings[0].pid == kept["pid"]
    assert results.summary.complete and results.summary.cells[0].distinct_weights == 1


@pytest.mark.slow
def test_resume_grows_a_run_by_runs_and_modes_without_training_again(tmp_path):
    out = str(tmp_path / "g.jsonl")
    base = ("diverge", *FAST, "--conditions", "fixed-fixed", "--jobs", "2", "--out", out)
    code, _, stderr = run_cli(*base, "--modes", "patched", "--runs", "2")
    assert code == 0, stderr
    first = {(r.mode, r.run): r.pid for r in read_diverge(out).trainings}
    code, stdout, stderr = run_cli(*base, "--modes", "baseline", "--runs", "3", "--resume")
    assert code == 0, stderr
    assert "growing it: modes patched -> patched,baseline; runs 2 -> 3" in stderr
    assert "4 trainings to run on local (2 processes) (2 already in the results file)" in stderr
    results = read_diverge(out)
    assert results.header.runs == 3 and results.header.modes == ["patched", "baseline"]
    assert {(r.mode, r.run): r.pid for r in results.trainings if (r.mode, r.run) in first} == first  # kept
    cells = {(c.condition, c.mode): c for c in results.summary.cells}
    assert cells[("fixed-fixed", "patched")].runs == 3 and cells[("fixed-fixed", "baseline")].runs == 3
    assert cells[("fixed-fixed", "patched")].distinct_weights == 1
    _validate(out)


@pytest.mark.slow
def test_digits_cnn_trains_offline_and_random_seeds_disagree(tmp_path):
    pytest.importorskip("sklearn")
    code, stdout, stderr = run_cli("diverge", "--workload", "digits-cnn", "--lr", "0.1", "--epochs", "2",
                                   "--conditions", "random-random", "--modes", "baseline", "--runs", "2",
                                   "--jobs", "2", "--out", str(tmp_path / "d.jsonl"), "--json")
    assert code == 0, stderr
    cell = _cells(stdout)[("random-random", "baseline")]
    assert cell["cell_name"] == "ALGO+IMPL" and cell["runs"] == 2
    assert cell["accuracy_mean"] > 0.5  # 10 classes: chance is 0.1
    assert cell["disagreement_any"] > 0 and cell["weight_distance_max"] > 0
    assert sorted(cell["per_class_disagreement"]) == [str(c) for c in range(10)]
    assert cell["top5_accuracy_mean"] is not None and cell["top5_accuracy_mean"] >= cell["accuracy_mean"]


EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "diverge_train.py")


@pytest.mark.slow
def test_a_script_of_your_own_under_the_context_contract(tmp_path):
    code, stdout, stderr = run_cli("diverge", "--script", EXAMPLE, "--conditions", "fixed-fixed,random-random",
                                   "--modes", "patched", "--runs", "2", "--jobs", "2",
                                   "--out", str(tmp_path / "s.jsonl"), "--json")
    assert code == 0, stderr
    cells = _cells(stdout)
    fixed, random = cells[("fixed-fixed", "patched")], cells[("random-random", "patched")]
    assert fixed["weight_distance_max"] == 0.0 and fixed["disagreement_any"] == 0.0
    assert random["disagreement_any"] > 0 and random["weight_distance_max"] > 0
    assert fixed["accuracy_mean"] > 0.5 and sorted(fixed["per_class_disagreement"]) == ["0", "1", "2"]
    assert fixed["seconds_per_step"] > 0  # the script said how many steps it took
    assert read_diverge(str(tmp_path / "s.jsonl")).header.workload == "script:" + EXAMPLE


@pytest.mark.slow
def test_a_script_that_saves_nothing_is_a_failed_training(tmp_path):
    script = tmp_path / "silent.py"
    script.write_text("print('trained, forgot to save')\n")
    code, stdout, stderr = run_cli("diverge", "--script", str(script), "--conditions", "fixed-fixed", "--modes",
                                   "baseline", "--runs", "1", "--out", str(tmp_path / "s.jsonl"))
    assert code == 1, stderr
    record = read_diverge(str(tmp_path / "s.jsonl")).trainings[0]
    assert record.outcome == "failed" and "saved no predictions" in record.error
    code, _, stderr = run_cli("diverge", "--script", str(tmp_path / "missing.py"))
    assert code == 3 and "no such file" in stderr


@pytest.mark.slow
def test_the_python_api_trains_a_function_in_separate_processes(tmp_path):
    import importlib.util

    from tfdet.diverge import diverge

    spec = importlib.util.spec_from_file_location("diverge_train_example", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    cells = diverge(example.train, str(tmp_path / "f.jsonl"), labels=example.data()[3], runs=2,
                    conditions=["fixed-fixed"], modes=["patched"], jobs=2)
    (cell,) = cells
    assert cell.runs == 2 and cell.weight_distance_max == 0.0 and cell.disagreement_any == 0.0
    assert cell.accuracy_mean > 0.5
    assert len({r.pid for r in read_diverge(str(tmp_path / "f.jsonl")).trainings}) == 2


def test_the_python_api_refuses_a_function_a_new_process_cannot_find(tmp_path):
    from tfdet.diverge import DivergeInputError, diverge

    with pytest.raises(DivergeInputError, match="top level of a .py file"):
        diverge(lambda init, batch: ([0], []), str(tmp_path / "f.jsonl"))
