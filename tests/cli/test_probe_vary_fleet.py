"""`tfdet probe --vary --executor dask`: the same --vary run on every worker of a real
Dask cluster (a LocalCluster here), one file per machine, each a real vary run."""

import argparse
import json
import os
import subprocess
import sys

import pytest

from tfdet.cli.probe_vary_fleet import machine_flags, page_for
from tfdet.probe.fleet import KINDS, complete, file_name
from tfdet.results import load

from vary_fixture import write


def test_each_machine_gets_the_same_settings_cases_repeats_and_seed():
    args = argparse.Namespace(ops=["reduce_sum"], repeats=3, seed=None, timeout=None)
    assert machine_flags(args, ["threads", "xla"], ["reduce-sum"]) == [
        "--vary", "threads,xla", "--ops", "reduce-sum", "--repeats", "3"]
    args = argparse.Namespace(ops=None, repeats=None, seed=4, timeout=900.0)
    assert machine_flags(args, ["onednn"], ["matmul", "conv2d"]) == ["--vary", "onednn", "--seed", "4",
                                                                     "--timeout", "900.0"]


def test_files_and_pages_are_named_after_the_machine(tmp_path):
    assert file_name("tcp://10.0.0.5:4000", KINDS["vary"]) == "vary-tcp_10.0.0.5_4000.jsonl"
    assert page_for("out/vary.html", "tcp://10.0.0.5:4000") == "out/vary-tcp_10.0.0.5_4000.html"
    assert page_for("vary", "a b") == "vary-a_b.html"
    finished, unfinished = write(tmp_path / "a.jsonl"), write(tmp_path / "b.jsonl", finished=False)
    assert complete(finished, KINDS["vary"]) and not complete(unfinished, KINDS["vary"])
    assert not complete(finished)  # not a probe file


@pytest.mark.slow
def test_vary_on_a_local_cluster_writes_one_file_and_one_page_per_worker(tmp_path):
    pytest.importorskip("distributed")
    pytest.importorskip("tensorflow")
    env = dict(os.environ, TFDET_FLEET_DIR=str(tmp_path / "worker"))
    out = str(tmp_path / "fleet")
    command = [sys.executable, "-m", "tfdet", "probe", "--vary", "threads", "--ops", "reduce-sum,conv2d",
               "--executor", "dask", "--jobs", "2", "--out", out]
    done = subprocess.run(command + ["--report", str(tmp_path / "vary.html"), "--json"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env)
    assert done.returncode == 0, done.stderr
    summary = json.loads(done.stdout)
    assert len(summary["machines"]) == 2 and {m["state"] for m in summary["machines"]} == {"probed"}
    for machine in summary["machines"]:
        assert os.path.basename(machine["path"]).startswith("vary-")
        verdicts = {r.case: r.verdict for r in load(machine["path"]).records}
        assert verdicts == {"reduce-sum": "differs", "conv2d": "same"}  # each machine's own real run
        assert machine["sensitive"] == {"threads": 1}
        page = open(page_for(str(tmp_path / "vary.html"), machine["machine"])).read()
        assert "reduce-sum" in page and "<script" not in page
    again = subprocess.run(command + ["--resume"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, env=env)
    assert again.returncode == 0, again.stderr
    assert again.stderr.count("kept (finished in an earlier run)") == 2
    refused = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                             env=env)
    assert refused.returncode == 2 and "already exist" in refused.stderr and "Traceback" not in refused.stderr
