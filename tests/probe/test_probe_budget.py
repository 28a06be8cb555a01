"""The probe's time budget: modes run their cases at once where there are cores
for it (tests/probe/test_probe_run.py shows it in a real run), a Ctrl-C still
ends it at once, and what several cases share is drawn once per worker."""

import signal
import subprocess
import sys
import time

import numpy as np
import psutil
import pytest

from orphans import describe, descendants, survivors
from tfdet.probe.runner import default_concurrency
from tfdet.results import load


def test_two_cores_run_two_modes_at_once_and_one_core_runs_them_in_turn():
    assert default_concurrency(2) == default_concurrency(8) == 2
    assert default_concurrency(1) == default_concurrency(0) == 1


def test_the_bincount_cases_share_one_draw_of_their_inputs_and_leave_the_rng_as_a_draw_would():
    from tfdet.probe import cases_ops

    first, second = np.random.RandomState(0), np.random.RandomState(0)
    shared = cases_ops._bincount_inputs(np, first, 0.01)
    again = cases_ops._bincount_inputs(np, second, 0.01)
    assert again[0] is shared[0] and again[1] is shared[1]  # drawn once
    fresh = np.random.RandomState(0)
    ids = fresh.randint(0, 1000, 80000).astype(np.int32)
    weights = (fresh.standard_normal(80000) * 10.0 ** fresh.uniform(-4, 4, 80000)).astype(np.float32)
    np.testing.assert_array_equal(shared[0], ids)
    np.testing.assert_array_equal(shared[1], weights)
    assert first.randint(2 ** 31) == second.randint(2 ** 31) == fresh.randint(2 ** 31)
    other = cases_ops._bincount_inputs(np, np.random.RandomState(1), 0.01)  # another seed: drawn afresh
    assert other[0] is not shared[0] and not np.array_equal(other[1], shared[1])


@pytest.mark.slow
def test_ctrl_c_while_two_modes_run_at_once_ends_the_probe_and_its_workers(tmp_path):
    # Both modes' workers are inside fixture-hang (600 s timeout), each waited on by a
    # thread of the probe: Ctrl-C must end the run at once, as with one mode, keep
    # the results file, and leave no worker behind.
    pytest.importorskip("tensorflow")
    out = tmp_path / "p.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "tfdet", "probe", "--ops", "fixture-hang", "--modes",
                             "baseline,env", "--processes", "1", "--repeats", "1", "--rounds", "1", "--timeout",
                             "600", "--concurrent", "2", "--quiet", "--out", str(out)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and '"record": "header"' in out.read_text() and len(_workers(proc.pid)) >= 2:
                break
            time.sleep(0.2)
        time.sleep(3)  # both requests sent: each worker is inside the case
        below = descendants(proc.pid)
        assert len(_workers(proc.pid)) == 2, describe(below)
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert survivors(below, 10.0) == [], describe(below)
    assert load(str(out)).header.settings["concurrent"] == 2


def _workers(pid):
    """The probe's workers below `pid`: started as one, or forked from the fork
    server (keeping its command line: their parent has the same one)."""
    found = []
    for process in descendants(pid):
        try:
            command = " ".join(process.cmdline())
            if "run_module('tfdet.probe.worker'" in command or (
                    "run_module('tfdet.runtime.forkserver'" in command
                    and " ".join(process.parent().cmdline()) == command):
                found.append(process)
        except psutil.Error:
            pass
    return found


def test_extra_runs_go_in_waves_that_keep_every_core_busy():
    from tfdet.probe.runner import repeat_waves

    # three modes on two cores: two at once, then the third in two of its processes at once
    assert repeat_waves(3, 2) == [[(0, 1), (1, 1)], [(2, 2)]]
    assert repeat_waves(1, 2) == [[(0, 2)]]
    assert repeat_waves(4, 2) == [[(0, 1), (1, 1)], [(2, 1), (3, 1)]]
    assert repeat_waves(3, 1) == [[(0, 1)], [(1, 1)], [(2, 1)]]
    assert repeat_waves(0, 2) == []


def test_a_worker_keeps_only_the_case_in_hand():
    # The runner finishes a case before the next and never comes back to it, so a
    # worker that kept every case held all their inputs and graphs to the end of a
    # default run (over 1.4 GB a worker, in 8 to 12 workers: the OOM killer's pick).
    tf = pytest.importorskip("tensorflow")
    from tfdet.probe.worker import Worker

    worker = Worker(tf, np)
    worker.execution = "function"
    first = {"case": "fixture-fixed-order-sum", "pass": "forward", "size": 0.01, "seed": 0, "repeats": 2}
    second = dict(first, case="fixture-random-order-sum")
    assert worker.variance(first)["ok"] and len(worker.time(dict(first, samples=2))["samples"]) == 2
    assert len(worker.prepared) == 1  # timing reused the case the variance runs built
    built = worker.prepare_seconds
    assert worker.variance(second)["ok"]
    assert list(worker.prepared) == [("fixture-random-order-sum", "forward", 0.01, 0)]
    assert worker.prepare_seconds > built
