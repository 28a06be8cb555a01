"""SIGKILL a real run of every command that runs a pool or child processes --
diverge, probe (on this machine and across a Dask cluster) and matrix -- while
its children work: nothing it started survives it, and nothing new starts
(issue 25: orphaned pool processes went on to start new trainings)."""

import os
import sys
import time

import psutil
import pytest

from faultkit import start, wait_for
from orphans import describe, descendants, kill_leaving_nothing

pytest.importorskip("tensorflow")

pytestmark = pytest.mark.slow

SLEEPY = """\
import os, time
open(os.path.join(os.environ["MARKS"], "pid%d" % os.getpid()), "w").close()  # this training started
time.sleep(300)
"""


def _tfdet(*argv):
    return [sys.executable, "-m", "tfdet"] + list(argv)


def _kill_and_check(proc, expect_below):
    below, left = kill_leaving_nothing(proc)
    assert len(below) >= expect_below, describe(below)
    assert left == [], "outlived the killed command:\n" + describe(left)
    return below


def test_diverge_killed_leaves_no_pool_process_and_starts_no_training(tmp_path, monkeypatch):
    marks = tmp_path / "marks"
    marks.mkdir()
    script = tmp_path / "sleepy.py"
    script.write_text(SLEEPY)
    monkeypatch.setenv("MARKS", str(marks))
    proc = start(_tfdet("diverge", "--script", str(script), "--conditions", "random-random", "--modes",
                        "baseline", "--runs", "4", "--jobs", "2", "--timeout", "600", "--quiet",
                        "--out", str(tmp_path / "d.jsonl")), tmp_path)
    assert wait_for(lambda: len(os.listdir(marks)) == 2 or proc.poll() is not None, timeout=240), proc.communicate()
    _kill_and_check(proc, 4)  # 2 pool processes, 2 trainings
    time.sleep(5)  # long enough for a queued training to import TF and mark its start
    assert len(os.listdir(marks)) == 2


def _probe_hanging(tmp_path, *extra):
    return start(_tfdet("probe", "--ops", "fixture-hang", "--modes", "baseline", "--processes", "1",
                        "--repeats", "1", "--max-repeats", "1", "--rounds", "1", "--timeout", "600",
                        "--quiet", *extra), tmp_path)


def _is_worker(process):
    """A probe worker: started as one, or forked from the fork server (whose
    command line it keeps: its parent has the same; the server's own names
    the worker's module among those it imports)."""
    try:
        command = " ".join(process.cmdline())
        return "run_module('tfdet.probe.worker'" in command or (
            "run_module('tfdet.runtime.forkserver'" in command and " ".join(process.parent().cmdline()) == command)
    except psutil.Error:
        return False


def _hanging_worker(proc, out):
    """Wait until the probe's worker is inside the hanging case."""
    assert wait_for(lambda: (out.exists() and '"record": "header"' in out.read_text()
                             and any(_is_worker(p) for p in descendants(proc.pid)))
                    or proc.poll() is not None, timeout=240), proc.communicate()
    time.sleep(3)  # the case has started: the worker no longer reads its stdin


@pytest.mark.parametrize("startup", ["auto", "plain"])
def test_probe_killed_leaves_no_worker(tmp_path, startup):
    out = tmp_path / "p.jsonl"
    proc = _probe_hanging(tmp_path, "--out", str(out), "--startup", startup)
    _hanging_worker(proc, out)
    workers = [" ".join(p.cmdline()) for p in descendants(proc.pid) if _is_worker(p)]
    below = _kill_and_check(proc, 1)
    assert len(workers) == 1, describe(below)
    if startup == "auto" and sys.platform == "linux":  # the fork server and the worker it forked
        assert len(below) == 2 and "tfdet.runtime.forkserver" in workers[0], describe(below)


def test_matrix_killed_leaves_no_pool_process_probe_or_worker(tmp_path):
    from tfdet.matrix.versions import by_tf, env_name

    venvs, results = tmp_path / "venvs", tmp_path / "matrix"
    python = venvs / env_name(by_tf("2.21")) / "bin" / "python"
    python.parent.mkdir(parents=True)
    # The 2.21 environment, reused as is: this interpreter (it passes the smoke test).
    python.write_text("#!/bin/sh\nexec %s \"$@\"\n" % sys.executable)
    python.chmod(0o755)
    proc = start(_tfdet("matrix", "--versions", "2.21", "--modes", "baseline", "--ops", "fixture-hang",
                        "--timeout", "600", "--venvs", str(venvs), "--out", str(results), "--quiet"), tmp_path)
    _hanging_worker(proc, results / "probe-tf2.21-cpu.jsonl")
    _kill_and_check(proc, 3)  # the pool process, the probe, its worker


@pytest.mark.skipif(sys.platform != "linux", reason="the probe's children die with it by prctl, Linux only")
def test_fleet_probe_killed_leaves_no_dask_worker_or_probe(tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.setenv("TFDET_FLEET_DIR", str(tmp_path / "fleet-state"))
    proc = _probe_hanging(tmp_path, "--executor", "dask", "--jobs", "1", "--out", str(tmp_path / "fleet"))
    assert wait_for(lambda: any(_is_worker(p) for p in descendants(proc.pid))
                    or proc.poll() is not None, timeout=240), proc.communicate()
    time.sleep(3)
    _kill_and_check(proc, 2)


