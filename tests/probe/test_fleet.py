"""Probing a fleet: one real probe per machine through the executor, one file
per machine, kept when finished, continued from the worker's own file when not."""

import json
import os
import shutil

import pytest

from tfdet.executor import JobError
from tfdet.probe.fleet import (FleetError, complete, file_name, job_key, machine_outcome, plan_machines,
                               probe_flags)
from tfdet.probe.fleet_job import probe_on_this_machine
from tfdet.results import read_probe

HERE = os.path.dirname(os.path.abspath(__file__))
FINISHED = os.path.join(HERE, "..", "..", "reports", "probe-tf2.21-cpu-2core-default.jsonl")  # has its end record
FIXTURES = "fixture-random-order-sum,fixture-fixed-order-sum"
FLAGS = ["--ops", FIXTURES, "--modes", "baseline,env", "--repeats", "3", "--rounds", "1", "--timeout", "60"]


def test_probe_flags_pass_on_what_was_given_in_a_fixed_order():
    flags = probe_flags({"seed": 3, "ops": ["bincount", "scatter-nd"], "modes": None, "repeats": 4, "python": None})
    assert flags == ["--ops", "bincount,scatter-nd", "--repeats", "4", "--seed", "3"]
    assert probe_flags({}) == []


def test_file_names_are_safe_and_keys_depend_on_command_and_machine():
    assert file_name("tcp://10.0.0.5:4000/gpu a") == "probe-tcp_10.0.0.5_4000_gpu_a.jsonl"
    assert job_key(FLAGS, "a") == job_key(list(FLAGS), "a")
    assert job_key(FLAGS, "a") != job_key(FLAGS, "b")
    assert job_key(FLAGS, "a") != job_key(FLAGS + ["--seed", "1"], "a")


def test_plan_refuses_results_in_the_way_and_resume_keeps_finished_machines(tmp_path):
    machines = {"tcp://h1:1": "h1-0", "tcp://h2:1": "h2-0"}
    shutil.copy(FINISHED, str(tmp_path / file_name("h1-0")))  # a finished probe file
    with pytest.raises(FleetError, match="already exist.*--resume"):
        plan_machines(machines, str(tmp_path), resume=False, overwrite=False)
    todo, kept = plan_machines(machines, str(tmp_path), resume=True, overwrite=False)
    assert [k.machine for k in kept] == ["h1-0"] and list(todo) == ["tcp://h2:1"]
    todo, kept = plan_machines(machines, str(tmp_path), resume=False, overwrite=True)
    assert kept == [] and sorted(todo) == sorted(machines)
    # a file that did not finish (no end record) is probed again on --resume
    lines = open(FINISHED).read().splitlines()
    (tmp_path / file_name("h1-0")).write_text("\n".join(lines[:3]) + "\n")
    assert not complete(str(tmp_path / file_name("h1-0")))
    todo, kept = plan_machines(machines, str(tmp_path), resume=True, overwrite=False)
    assert kept == [] and len(todo) == 2


def test_a_failed_job_or_an_empty_probe_is_a_failed_machine_and_nothing_is_written(tmp_path):
    path = str(tmp_path / "probe-x.jsonl")
    died = machine_outcome("x", path, JobError("KilledWorker", "worker died"), 3.0)
    assert died.state == "failed" and "KilledWorker" in died.error
    empty = machine_outcome("x", path, {"host": "h", "returncode": 4, "text": None,
                                        "stderr_tail": "tfdet probe: error: no TensorFlow\n"}, 3.0)
    assert empty.state == "failed" and "exited 4: tfdet probe: error: no TensorFlow" in empty.error
    assert not os.path.exists(path)


@pytest.mark.slow
def test_a_machine_probe_is_a_real_probe_and_its_file_comes_back(tmp_path, monkeypatch):
    pytest.importorskip("tensorflow")
    monkeypatch.setenv("TFDET_FLEET_DIR", str(tmp_path / "worker"))
    result = probe_on_this_machine(FLAGS, "k1", resume=False)
    assert result["returncode"] == 0, result["stderr_tail"]
    outcome = machine_outcome("here", str(tmp_path / "probe-here.jsonl"), result, 1.0)
    assert outcome.state == "probed", outcome.error
    results = read_probe(outcome.path)
    by_case = {(r.case, r.mode): r.outcome for r in results.measured}
    assert by_case[("fixture-random-order-sum", "baseline")] == "varies"
    assert by_case[("fixture-fixed-order-sum", "env")] == "deterministic"
    assert results.header.repeats == 3 and results.header.modes == ["baseline", "env"]  # the flags were passed on


@pytest.mark.slow
def test_resume_continues_the_machines_own_file_from_its_last_finished_case(tmp_path, monkeypatch):
    pytest.importorskip("tensorflow")
    monkeypatch.setenv("TFDET_FLEET_DIR", str(tmp_path / "worker"))
    first = probe_on_this_machine(FLAGS, "k2", resume=False)
    assert first["returncode"] == 0, first["stderr_tail"]
    # as if interrupted after the first case: header and that case's records only
    records = [json.loads(line) for line in first["text"].splitlines()]
    kept = [json.dumps(r) for r in records if r["record"] == "header" or (
        r["record"] == "case" and r["case"] != "fixture-fixed-order-sum")]
    with open(first["path"], "w") as handle:
        handle.write("\n".join(kept) + "\n")
    second = probe_on_this_machine(FLAGS, "k2", resume=True)
    assert second["returncode"] == 0, second["stderr_tail"]
    again = [json.loads(line) for line in second["text"].splitlines()]
    assert again[:len(kept)] == [json.loads(line) for line in kept]  # what was finished is not run again
    results = read_probe(second["path"])
    assert results.end is not None
    assert {(r.case, r.mode) for r in results.measured} == {
        (case, mode) for case in FIXTURES.split(",") for mode in ("baseline", "env")}


@pytest.mark.slow
def test_fleet_on_a_local_cluster_writes_one_file_per_worker(tmp_path):
    pytest.importorskip("distributed")
    pytest.importorskip("tensorflow")
    import subprocess
    import sys

    env = dict(os.environ, TFDET_FLEET_DIR=str(tmp_path / "worker"))
    out = str(tmp_path / "fleet")
    command = [sys.executable, "-m", "tfdet", "probe", "--executor", "dask", "--jobs", "2", "--out", out] + FLAGS
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
    assert done.returncode == 0, done.stderr
    files = sorted(os.listdir(out))
    assert len(files) == 2 and all(name.startswith("probe-") for name in files)
    for name in files:
        results = read_probe(os.path.join(out, name))
        assert results.end is not None
        assert {r.outcome for r in results.measured if r.case == "fixture-random-order-sum"} == {"varies"}
    assert "machine" in done.stdout and done.stdout.count("probed") == 2
    again = subprocess.run(command + ["--resume"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("kept (finished in an earlier run)") == 2
    refused = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                             env=env)
    assert refused.returncode == 2 and "already exist" in refused.stderr and "Traceback" not in refused.stderr
