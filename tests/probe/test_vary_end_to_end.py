"""`tfdet probe --vary` for real: fresh TensorFlow processes find a real setting change
(reduce_sum of 1,000,003 floats with 1 thread instead of 2) and report a stable op
(Conv2D) the same; an interrupted file is resumed without losing or redoing its cells."""

import os

import pytest

from cli_runner import run_cli
from tfdet.results import load

pytestmark = pytest.mark.slow


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the threads setting compares 1 thread with the core count")
def test_threads_change_reduce_sum_and_not_conv2d_and_a_cut_file_resumes(tmp_path):
    path = str(tmp_path / "vary.jsonl")
    code, out, err = run_cli("probe", "--vary", "threads", "--ops", "reduce-sum,conv2d", "--out", path, "--quiet")
    assert code == 0, err
    results = load(path)
    verdicts = {r.case: r for r in results.records}
    assert verdicts["reduce-sum"].verdict == "differs" and verdicts["reduce-sum"].max_ulp >= 1
    assert verdicts["reduce-sum"].reference_distinct == 1 and verdicts["reduce-sum"].changed_distinct == 1
    assert verdicts["conv2d"].verdict == "same" and verdicts["conv2d"].reference_runs == 2

    # Cut the file after its first cell (as a kill would leave it) and resume: the first cell is kept
    # as it was, only the missing one is measured again.
    lines = open(path).read().splitlines()
    first = lines[1]
    open(path, "w").write("\n".join(lines[:2]) + "\n")
    code, _, err = run_cli("probe", "--vary", "threads", "--ops", "reduce-sum,conv2d", "--out", path, "--resume",
                           "--quiet")
    assert code == 0, err
    again = open(path).read().splitlines()
    assert again[1] == first
    assert {r.case for r in load(path).records} == {"reduce-sum", "conv2d"}
    assert len(load(path).records) == 2
