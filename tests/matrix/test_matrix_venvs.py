"""Environments: a failing step is recorded (which step, what it printed), never
raised. The failing interpreters here are real executables that fail."""

import os
import stat

from tfdet.matrix import venvs
from tfdet.matrix.versions import by_tf


def _executable(path, script):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as handle:
        handle.write("#!/bin/sh\n" + script + "\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IXUSR)
    return path


def test_no_interpreter_for_the_python_minor(tmp_path):
    record = venvs.ensure(by_tf("2.6"), str(tmp_path / "venvs"), roots=[str(tmp_path / "pyenv")])
    assert record["status"] == "failed" and record["failed_step"] == "interpreter"
    assert "no Python 3.9.* under pyenv" in record["error"]


def test_an_interpreter_that_cannot_make_a_venv(tmp_path):
    roots = str(tmp_path / "pyenv")
    _executable(os.path.join(roots, "versions", "3.9.1", "bin", "python"),
                "echo 'Error: ensurepip is missing' >&2; exit 1")
    record = venvs.ensure(by_tf("2.6"), str(tmp_path / "venvs"), roots=[roots])
    assert record["status"] == "failed" and record["failed_step"] == "venv"
    assert record["error"] == "Error: ensurepip is missing"
    assert record["interpreter"].endswith("3.9.1/bin/python")


def test_the_newest_patch_release_is_chosen(tmp_path):
    roots = str(tmp_path / "pyenv")
    for patch in ("3.10.2", "3.10.13", "3.1.0"):
        _executable(os.path.join(roots, "versions", patch, "bin", "python"), "exit 0")
    assert venvs.find_python("3.10", [roots]).endswith("3.10.13/bin/python")


def test_an_environment_whose_tf_is_broken_is_not_reused(tmp_path):
    base = str(tmp_path / "venvs")
    broken = _executable(venvs.env_python(by_tf("2.6"), base),
                         "echo 'ImportError: numpy.core.multiarray failed to import' >&2; exit 1")
    ok, tf_version, _, error = venvs.smoke(broken)
    assert not ok and tf_version is None and "numpy.core.multiarray" in error
    # then it is recreated: here from an interpreter that fails, so that is recorded
    record = venvs.ensure(by_tf("2.6"), base, roots=[str(tmp_path / "none")])
    assert record["failed_step"] == "interpreter"


def test_an_environment_with_another_tf_is_not_wanted(tmp_path):
    python = _executable(str(tmp_path / "python"), "echo 2.7.4 1.21.6")
    ok, tf_version, numpy_version, _ = venvs.smoke(python)
    assert ok and (tf_version, numpy_version) == ("2.7.4", "1.21.6")
    assert not venvs.wanted(by_tf("2.6"), tf_version) and venvs.wanted(by_tf("2.7"), tf_version)
    assert not venvs.wanted(by_tf("2.1"), "2.10.1")


def test_venvs_dir_option_then_variable_then_default():
    assert venvs.venvs_dir("/a", {"TFDET_VENVS": "/b"}) == "/a"
    assert venvs.venvs_dir(None, {"TFDET_VENVS": "/b"}) == "/b"
    assert venvs.venvs_dir(None, {}) == os.path.expanduser("~/.cache/tfdet/venvs")


def test_tail_keeps_the_last_lines():
    assert venvs.tail("\n".join(str(i) for i in range(40)) + "\n\n", 3) == "37\n38\n39"
