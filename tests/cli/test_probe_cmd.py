"""`tfdet probe` arguments, exit codes and the CI gate."""

import subprocess
import sys

import pytest

from cli_runner import run_cli as run
from tfdet.cli.exitcodes import ENVIRONMENT, FINDING, INVALID_INPUT, OK, USAGE




@pytest.mark.parametrize("argv, message", [
    (["--repeats", "0"], "must be at least 1"),
    (["--size", "-1"], "must be at least 0.001"),
    (["--modes", "baseline,turbo"], "unknown mode turbo"),
    (["--fail-on-nondeterminism", "api", "--modes", "baseline"], "that mode is not being run"),
    (["--python", "/no/such/python"], "no such executable"),
])
def test_bad_arguments_are_usage_errors(tmp_path, capsys, argv, message):
    code, _, err = run("probe", "--out", str(tmp_path / "r.jsonl"), *argv)
    assert code == USAGE
    assert message in err + capsys.readouterr().err


def test_existing_results_file_is_not_overwritten(tmp_path):
    out = tmp_path / "r.jsonl"
    out.write_text("precious\n")
    code, _, err = run("probe", "--out", str(out))
    assert code == USAGE and "--resume" in err and out.read_text() == "precious\n"


def test_unknown_op_is_invalid_input(tmp_path):
    code, _, err = run("probe", "--ops", "unsorted-segment-summ", "--out", str(tmp_path / "r.jsonl"))
    assert code == INVALID_INPUT and "did you mean unsorted-segment-sum" in err
    code, _, err = run("probe", "--ops", "tf.math.bincountt", "--out", str(tmp_path / "r.jsonl"))
    assert code == INVALID_INPUT and "did you mean tf.math.bincount" in err


def test_default_results_file_is_new_each_run_and_resume_takes_the_newest(tmp_path, monkeypatch):
    import argparse

    from tfdet.cli.probe_cmd import _results_path

    monkeypatch.chdir(tmp_path)
    fresh = _results_path(argparse.Namespace(out=None, resume=False))
    assert fresh.startswith("tfdet-probe-") and fresh.endswith(".jsonl") and not (tmp_path / fresh).exists()
    assert _results_path(argparse.Namespace(out="mine.jsonl", resume=False)) == "mine.jsonl"
    code, _, err = run("probe", "--resume")
    assert code == USAGE and "no tfdet-probe-*.jsonl here" in err
    (tmp_path / "tfdet-probe-20250101-000000.jsonl").write_text("old")
    (tmp_path / "tfdet-probe-20260101-000000.jsonl").write_text("new")
    import os

    os.utime(tmp_path / "tfdet-probe-20250101-000000.jsonl", (1, 1))
    assert _results_path(argparse.Namespace(out=None, resume=True)) == "tfdet-probe-20260101-000000.jsonl"


def test_help_teaches_the_modes():
    done = subprocess.run([sys.executable, "-m", "tfdet", "probe", "--help"], capture_output=True, text=True)
    assert done.returncode == OK
    for word in ("baseline", "TF_DETERMINISTIC_OPS", "enable_op_determinism", "--resume", "exit codes",
                 "--max-repeats", "--allow-missing-modes", "did not run", "4 environment", "tfdet-probe-YYYYMMDD",
                 "5 the results file", "one writer"):
        assert word in done.stdout


def test_a_mode_that_did_not_run_exits_4_unless_allowed(tmp_path):
    # Every case fails in the only mode: no measurement, so the mode did not run.
    pytest.importorskip("tensorflow")
    base = [sys.executable, "-m", "tfdet", "probe", "--ops", "fixture-crash", "--modes", "baseline", "--processes",
            "1", "--repeats", "1", "--rounds", "1"]
    done = subprocess.run(base + ["--out", str(tmp_path / "a.jsonl")], capture_output=True, text=True, timeout=300)
    assert done.returncode == ENVIRONMENT, done.stderr
    assert done.stdout.splitlines()[0].startswith("MODE baseline DID NOT RUN: no case gave a measurement")
    assert "mode baseline did not run (exit 4" in done.stderr
    from tfdet.results import load

    assert "baseline" in load(str(tmp_path / "a.jsonl")).end.mode_failures
    allowed = subprocess.run(base + ["--out", str(tmp_path / "b.jsonl"), "--allow-missing-modes", "--quiet"],
                             capture_output=True, text=True, timeout=300)
    assert allowed.returncode == OK, allowed.stderr


def test_ops_takes_a_raw_op_name(tmp_path):
    pytest.importorskip("tensorflow")
    out = tmp_path / "r.jsonl"
    done = subprocess.run([sys.executable, "-m", "tfdet", "probe", "--ops", "DenseBincount", "--modes", "baseline",
                           "--processes", "1", "--repeats", "1", "--max-repeats", "1", "--rounds", "1", "--quiet",
                           "--out", str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == OK, done.stderr
    from tfdet.results import load

    assert {r.case for r in load(str(out)).cases} == {"dense-bincount"}


def test_fail_on_nondeterminism_gate(tmp_path):
    pytest.importorskip("tensorflow")
    base = [sys.executable, "-m", "tfdet", "probe", "--modes", "baseline", "--processes", "1", "--repeats", "5",
            "--rounds", "1", "--quiet", "--fail-on-nondeterminism", "baseline"]
    varies = subprocess.run(base + ["--ops", "fixture-random-order-sum", "--out", str(tmp_path / "a.jsonl")],
                            capture_output=True, text=True, timeout=300)
    assert varies.returncode == FINDING, varies.stderr
    steady = subprocess.run(base + ["--ops", "fixture-fixed-order-sum", "--out", str(tmp_path / "b.jsonl")],
                            capture_output=True, text=True, timeout=300)
    assert steady.returncode == OK, steady.stderr


def test_resume_takes_the_files_parameters_and_refuses_different_ones(tmp_path):
    import json

    from tfdet.results import load

    pytest.importorskip("tensorflow")
    out = tmp_path / "r.jsonl"
    probe = [sys.executable, "-m", "tfdet", "probe", "--quiet", "--out", str(out)]
    first = subprocess.run(probe + ["--ops", "fixture-fixed-order-sum,fixture-random-order-sum", "--modes",
                                    "baseline", "--processes", "1", "--repeats", "3", "--max-repeats", "2",
                                    "--rounds", "1", "--seed", "7"], capture_output=True, text=True, timeout=300)
    assert first.returncode == OK, first.stderr
    # --max-repeats 2 is recorded as 3 (at least processes x repeats): the same, not a mismatch
    refused = subprocess.run(probe + ["--resume", "--size", "10", "--seed", "8", "--repeats", "3", "--max-repeats", "2"],
                             capture_output=True, text=True, timeout=300)
    assert refused.returncode == USAGE
    assert refused.stderr == ("tfdet: error: cannot resume %s: size is 1.0 in the file, 10.0 here; seed is 7 in the "
                              "file, 8 here; resume with the file's values (leave those flags out) or start a new "
                              "file\n" % out)
    # An "interrupted" run of an older tfdet: only its header, which lacks the catalogue digest.
    header = json.loads(out.read_text().splitlines()[0])
    del header["catalogue_digest"]
    out.write_text(json.dumps(header) + "\n")
    resumed = subprocess.run(probe + ["--resume"], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == OK, resumed.stderr
    assert "note: %s does not record catalogue" % out in resumed.stderr
    records = load(str(out)).cases
    # the file's ops, modes, processes and repeats, not the built-in defaults (all ops, every mode, 2 x 5)
    assert sorted((r.case, r.mode, r.runs) for r in records) == [
        ("fixture-fixed-order-sum", "baseline", 3), ("fixture-random-order-sum", "baseline", 3)]
