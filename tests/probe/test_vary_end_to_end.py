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


def test_loopback_workers_agree_and_a_lost_worker_fails_only_its_cluster(tmp_path):
    """The workers arms for real: K processes of one MultiWorkerMirroredStrategy cluster on
    localhost answer together, and agree bitwise; one worker of the 4-worker cluster exits
    at start (a wrapper interpreter), so that cluster's cells are failed, naming the worker,
    its other workers are stopped rather than left waiting in a collective, and every other
    arm's cells are still measured."""
    import json
    import stat
    import sys

    import psutil

    from tfdet.probe.vary_run import VaryConfig, run_vary
    from tfdet.results.jsonl import JsonLinesWriter

    wrapper = tmp_path / "python"
    wrapper.write_text(
        "#!%s\n"
        "import json, os, sys\n"
        "cluster = json.loads(os.environ.get('TF_CONFIG') or '{}')\n"
        "if len(cluster.get('cluster', {}).get('worker', ())) == 4 and cluster['task']['index'] == 1:\n"
        "    sys.exit(3)\n"
        "os.execv(sys.executable, [sys.executable] + sys.argv[1:])\n" % sys.executable)
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    path = str(tmp_path / "vary.jsonl")
    writer = JsonLinesWriter(path)
    config = VaryConfig(writer, ["replicas"], ["mlp-grad"], python=str(wrapper), timeout=600.0, tf_version="test")
    run_vary(config, lambda event: None)
    writer.close()
    records = {r.variant: r for r in load(path).records}
    assert records["3 workers"].verdict == "differs"  # the batch split three ways sums in another order
    assert records["3 workers"].note.startswith("all 3 workers gave these bits")
    assert records["3 workers vs 3 replicas"].verdict in ("same", "differs")
    for variant in ("4 workers", "4 workers, all-reduce alone", "4 workers vs 4 replicas"):
        assert records[variant].verdict == "failed"
        assert "worker 1: process ended with code 3" in records[variant].error
    assert records["4 replicas"].verdict == "differs"
    header = json.loads(open(path).readline())
    assert header["arms"]["workers-3"]["workers"] == 3
    assert not psutil.Process().children(recursive=True)  # no worker left waiting for the lost one
