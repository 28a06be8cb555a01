"""`tfdet matrix` end to end, with pyenv interpreters that really fail (fast):
failures are recorded per version, complete versions are kept, errors are one line."""

import json
import os
import shutil
import stat

import pytest

from cli_runner import run_cli

REPORTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "reports")
COMPLETE_FILE = os.path.join(REPORTS, "probe-tf2.21-cpu-2core-default.jsonl")


@pytest.fixture
def failing_pyenv(tmp_path, monkeypatch):
    """A pyenv root whose Python 3.13 cannot make a virtual environment."""
    root = tmp_path / "pyenv"
    python = root / "versions" / "3.13.0" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.write_text("#!/bin/sh\necho 'venv: ensurepip is not available' >&2\nexit 1\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PYENV_ROOT", str(root))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")  # no pyenv shim: PYENV_ROOT is the root
    return root


def _dirs(tmp_path):
    return ["--out", str(tmp_path / "out"), "--venvs", str(tmp_path / "venvs"), "--quiet"]


def test_a_version_that_cannot_install_is_recorded_and_the_others_go_on(tmp_path, failing_pyenv):
    code, out, err = run_cli("matrix", "--versions", "2.20,2.21", "--json", *_dirs(tmp_path))
    assert code == 1, err
    manifest = json.loads((tmp_path / "out" / "matrix.json").read_text())
    assert sorted(manifest["versions"]) == ["2.20", "2.21"]
    for entry in manifest["versions"].values():
        assert entry["status"] == "failed"
        assert entry["environment"]["failed_step"] == "venv"
        assert entry["environment"]["error"] == "venv: ensurepip is not available"
    shown = json.loads(out)
    assert [r["tf"] for r in shown["versions"]] == ["2.20", "2.21"]


def test_complete_versions_are_kept_and_only_the_rest_run(tmp_path, failing_pyenv):
    (tmp_path / "out").mkdir()
    shutil.copy(COMPLETE_FILE, str(tmp_path / "out" / "probe-tf2.21-cpu.jsonl"))
    code, _, err = run_cli("matrix", "--versions", "2.20,2.21", *_dirs(tmp_path))
    assert code == 2 and err.count("\n") == 1
    assert "already has results for TF 2.21; --resume" in err
    code, _, err = run_cli("matrix", "--versions", "2.20,2.21", "--resume", *_dirs(tmp_path))
    assert code == 1, err
    manifest = json.loads((tmp_path / "out" / "matrix.json").read_text())
    assert list(manifest["versions"]) == ["2.20"] and manifest["last_run"]["versions"] == ["2.20"]
    assert os.path.exists(str(tmp_path / "out" / "probe-tf2.21-cpu.jsonl"))


@pytest.mark.parametrize("argv, code, message", [
    (["--versions", "2.99"], 2, "--versions: no TF 2.99 in the matrix"),
    (["--modes", "patched"], 2, "--modes: unknown mode patched"),
    (["--resume", "--overwrite"], 2, "--resume and --overwrite exclude each other"),
    (["--scheduler", "tcp://x:1"], 2, "--scheduler needs --executor dask"),
    (["--repeats", "0"], 2, "--repeats: must be at least 1"),
])
def test_bad_flags_are_one_line(tmp_path, argv, code, message):
    got, out, err = run_cli("matrix", *argv, *_dirs(tmp_path))
    assert got == code and message in err and "Traceback" not in err


def test_a_manifest_that_is_not_one(tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "matrix.json").write_text("[1, 2]")
    code, _, err = run_cli("matrix", "--list", *_dirs(tmp_path))
    assert code == 3 and "matrix.json: not a matrix manifest" in err and err.count("\n") == 1


def test_list_shows_the_table_and_what_exists(tmp_path):
    code, out, err = run_cli("matrix", "--list", "--json", "--versions", "1.15,2.21", *_dirs(tmp_path))
    assert code == 0, err
    rows = json.loads(out)["versions"]
    assert [(r["tf"], r["python"], r["env"], r["env_exists"]) for r in rows] == [
        ("1.15", "3.7", "tf1.15-py3.7", False), ("2.21", "3.13", "tf2.21-py3.13", False)]


def test_a_probe_that_fails_is_recorded_with_its_last_words(tmp_path):
    """An environment that passes the smoke test but whose interpreter cannot run
    the probe's workers: the version is probe-failed, with the probe's exit code
    and what it said, and the run exits 1."""
    python = tmp_path / "venvs" / "tf2.21-py3.13" / "bin" / "python"
    python.parent.mkdir(parents=True)
    # answers the smoke test as TF 2.21 would, and nothing else
    python.write_text("#!/bin/sh\ncase \"$*\" in *SMOKE*|*matmul*) echo 2.21.0 2.0.0; exit 0;; esac\n"
                      "echo 'ImportError: libtensorflow_framework.so.2: cannot open shared object file' >&2\n"
                      "exit 1\n")
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    code, out, err = run_cli("matrix", "--versions", "2.21", "--ops", "segment-sum", "--json", *_dirs(tmp_path))
    assert code == 1, err
    entry = json.loads((tmp_path / "out" / "matrix.json").read_text())["versions"]["2.21"]
    assert entry["environment"]["status"] == "reused" and entry["environment"]["tf_version"] == "2.21.0"
    assert entry["status"] == "probe-failed" and entry["probe"]["exit_code"] not in (0, None)
    assert entry["probe"]["error"].startswith("tfdet: error:")


def test_progress_is_a_line_per_version_on_the_err_stream_and_nothing_when_quiet(tmp_path, failing_pyenv):
    dirs = ["--out", str(tmp_path / "out"), "--venvs", str(tmp_path / "venvs")]
    code, out, err = run_cli("matrix", "--versions", "2.20,2.21", *dirs)
    assert code == 1
    lines = err.splitlines()
    assert lines[0].startswith("tfdet matrix: 2 TF versions to do on local")
    assert [line[:13] for line in lines[1:]] == ["[1/2] TF 2.20", "[2/2] TF 2.21"] or \
        [line[:13] for line in lines[1:]] == ["[1/2] TF 2.21", "[2/2] TF 2.20"]
    assert all("FAILED" in line or "failed" in line for line in lines[1:]) and "[1/2]" not in out
    code, _, err = run_cli("matrix", "--versions", "2.20", "--overwrite", "--quiet", *dirs)
    assert code == 1 and err == ""
