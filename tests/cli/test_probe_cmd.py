"""`tfdet probe` arguments, exit codes and the CI gate."""

import subprocess
import sys

import pytest

from cli_runner import run_cli as run
from tfdet.cli.exitcodes import FINDING, INVALID_INPUT, OK, USAGE




@pytest.mark.parametrize("argv, message", [
    (["--repeats", "0"], "must be at least 1"),
    (["--size", "-1"], "must be greater than 0"),
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


def test_help_teaches_the_modes():
    done = subprocess.run([sys.executable, "-m", "tfdet", "probe", "--help"], capture_output=True, text=True)
    assert done.returncode == OK
    for word in ("baseline", "TF_DETERMINISTIC_OPS", "enable_op_determinism", "--resume", "exit codes"):
        assert word in done.stdout


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
