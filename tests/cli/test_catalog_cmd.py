"""`tfdet catalog ...`: output and exit codes, through main() and as a real process."""

import json
import subprocess
import sys

import pytest

from cli_runner import run_cli as run
from tfdet.cli.exitcodes import INVALID_INPUT, OK, USAGE

from catalog_fixtures import document




@pytest.fixture()
def demo_file(tmp_path):
    path = tmp_path / "demo.yaml"
    path.write_text(document())
    return str(path)


def test_list_table(demo_file):
    code, out, _ = run("catalog", "list", "--catalog", demo_file, "--tf-version", "2.6", "--device", "gpu")
    assert code == OK
    assert "TF 2.6: 1 entry" in out
    assert "demo-op" in out and "raises_under_determinism" in out
    code, out, _ = run("catalog", "list", "--catalog", demo_file, "--tf-version", "2.4", "--device", "gpu")
    assert "nondeterministic" in out and "tfdet.patch() (demo)" in out


def test_list_json_and_status_filter(demo_file):
    code, out, _ = run("catalog", "list", "--catalog", demo_file, "--tf-version", "2.9", "--status", "all", "--json")
    assert code == OK
    rows = json.loads(out)
    assert {(r["device"], r["status"]) for r in rows} == {("gpu", "deterministic_with_switch"), ("cpu", "deterministic")}
    code, out, _ = run("catalog", "list", "--catalog", demo_file, "--tf-version", "2.9", "--status", "deterministic", "--json")
    assert [r["device"] for r in json.loads(out)] == ["cpu"]


def test_status_abbreviation_and_unknown_status(demo_file):
    code, out, _ = run("catalog", "list", "--catalog", demo_file, "--tf-version", "2.6", "--status", "raises", "--json")
    assert code == OK and len(json.loads(out)) == 1
    code, _, err = run("catalog", "list", "--catalog", demo_file, "--tf-version", "2.6", "--status", "flaky")
    assert code == INVALID_INPUT and "unknown status 'flaky'" in err


def test_a_non_version_is_a_usage_error_with_the_subcommand_usage(demo_file):
    code, _, err = run("catalog", "list", "--catalog", demo_file, "--tf-version", "two")
    assert code == USAGE and "not a TensorFlow version: 'two'" in err
    assert err.startswith("usage: tfdet catalog list")
    code, _, err = run("catalog", "diff", "2.6", "latest")
    assert code == USAGE and err.startswith("usage: tfdet catalog diff") and "'latest'" in err


@pytest.mark.parametrize("argv, old", [(["list", "--tf-version", "1.10"], "1.10"), (["diff", "1.13", "2.6"], "1.13")])
def test_a_version_older_than_the_catalogue_is_invalid_input(argv, old):
    code, out, err = run("catalog", *argv)
    assert code == INVALID_INPUT and out == ""
    assert err == "tfdet: error: TF %s is older than any version the catalogue covers (1.14 to 2.21)\n" % old


def test_a_version_newer_than_the_catalogue_warns_and_answers_for_the_newest():
    code, out, err = run("catalog", "list", "--tf-version", "2.99", "--json")
    assert code == OK
    assert err == ("tfdet: warning: TF 2.99 is newer than the catalogue (1.14 to 2.21); these are the facts "
                   "for 2.21 and may be stale\n")
    assert out == run("catalog", "list", "--tf-version", "2.21", "--json")[1]  # the facts, and their version, are 2.21's
    code, out, err = run("catalog", "list", "--tf-version", "2.99", "--device", "gpu")
    assert code == OK and out.startswith("TF 2.99 (answered for 2.21): ") and "may be stale" in err


def test_show_by_raw_op(demo_file):
    code, out, _ = run("catalog", "show", "DemoOp", "--catalog", demo_file)
    assert code == OK
    assert "Demo op  (demo-op)" in out and "raises UnimplementedError: no." in out
    assert "https://github.com/tensorflow/tensorflow/issues/1" in out


def test_show_unknown_suggests(demo_file):
    code, _, err = run("catalog", "show", "demo-opp", "--catalog", demo_file)
    assert code == INVALID_INPUT and "did you mean: demo-op" in err


def test_diff(demo_file):
    code, out, _ = run("catalog", "diff", "2.7", "2.8", "--catalog", demo_file, "--json")
    (change,) = json.loads(out)
    assert change["old"]["status"] == "raises_under_determinism"
    assert change["new"]["status"] == "deterministic_with_switch"


def test_check_good_and_bad(demo_file, tmp_path):
    code, out, _ = run("catalog", "check", demo_file)
    assert code == OK and "valid catalogue (1 entries" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text(document().replace("status: deterministic\n", "status: fine\n"))
    code, _, err = run("catalog", "check", str(bad))
    assert code == INVALID_INPUT
    assert "bad.yaml:" in err and "'fine' is not one of" in err
    code, out, _ = run("catalog", "check", str(bad), "--json")
    assert code == INVALID_INPUT and json.loads(out)["valid"] is False


def test_check_missing_path(tmp_path):
    code, _, err = run("catalog", "check", str(tmp_path / "nope.yaml"))
    assert code == INVALID_INPUT and "no such file" in err


def test_shipped_catalogue_checks_clean():
    code, out, _ = run("catalog", "check")
    assert code == OK and "valid catalogue" in out


def test_usage_errors_exit_2():
    assert run("catalog", "lis")[0] == USAGE
    assert run("catalog")[0] == USAGE
    assert run()[0] == USAGE
    assert run("catalog", "list", "--device", "tpu")[0] == USAGE


def test_console_script_and_module_agree():
    for command in (["tfdet"], [sys.executable, "-m", "tfdet"]):
        done = subprocess.run(command + ["catalog", "list", "--tf-version", "2.6", "--device", "gpu"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == OK, done.stderr
        assert "TF 2.6:" in done.stdout
