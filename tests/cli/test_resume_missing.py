"""--resume of results that do not exist is one line and exit 2, and starts
nothing, in every command that resumes (issue 25: probe started a full run)."""

import os

import pytest
from cli_runner import run_cli

from tfdet.cli.exitcodes import USAGE


@pytest.mark.parametrize("argv", [
    ["probe", "--resume", "--out", "{missing}"],
    ["probe", "--executor", "dask", "--resume", "--out", "{missing}"],
    ["diverge", "--workload", "embedding", "--resume", "--out", "{missing}"],
    ["diverge", "--workload", "embedding", "--resume"],  # the newest tfdet-diverge-embedding-*.jsonl here: none
    ["matrix", "--versions", "2.21", "--resume", "--out", "{missing}"],
])
def test_resume_of_nothing_is_one_line_and_starts_nothing(tmp_path, monkeypatch, argv):
    monkeypatch.chdir(tmp_path)
    missing = str(tmp_path / "missing.jsonl")
    code, out, err = run_cli(*[a.format(missing=missing) for a in argv])
    assert code == USAGE, err
    assert err.count("\n") == 1 and "--resume" in err and "does not exist" in err, err
    assert "Traceback" not in err
    assert os.listdir(tmp_path) == []  # nothing claimed, so nothing started
