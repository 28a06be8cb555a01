"""tfdet locate under real faults: a trace that cannot be written (a file-size
limit), runs that all time out, two locates sharing one --traces directory,
processes the program starts, SIGTERM. Each ends with one line and the
documented exit code, and leaves no process and no temporary directory."""

import json
import os
import resource
import signal
import subprocess
import sys
import time

import pytest

from faultkit import assert_no_traceback, environ, wait_for
from tfdet.cli.exitcodes import INTERRUPTED, INVALID_INPUT, OK, WRITE_FAILED
from tfdet.locating.trace_file import read_trace

pytest.importorskip("tensorflow")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIMEOUT = 900

MANY_OPS = "import tensorflow as tf\nx = tf.constant([1.0, 2.0])\nfor _ in range(3000):\n    x = x * 1.0001\n"
DETERMINISTIC = "import tensorflow as tf\nprint(float(tf.reduce_sum(tf.square(tf.constant([1.0, 2.0])))))\n"
# Writes its pid (and its sleep's) to the directory in argv[1]; the second call in a process hangs.
LEAVES_A_SLEEP_AND_HANGS_AGAIN = """\
import builtins, os, subprocess, sys, time
import tensorflow as tf
where = sys.argv[1]
sleep = subprocess.Popen(["sleep", "300"])
for pid in (os.getpid(), sleep.pid):
    open(os.path.join(where, "%d.pid" % pid), "w").close()
print(float(tf.reduce_sum(tf.square(tf.constant([1.0, 2.0])))), flush=True)
if getattr(builtins, "_called_before", False):
    time.sleep(300)
builtins._called_before = True
"""


def locate_argv(*argv):
    return [sys.executable, "-m", "tfdet", "locate"] + list(argv)


def start(argv, tmp_path, preexec_fn=None):
    env = dict(environ(tmp_path), PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                            env=env, cwd=ROOT, preexec_fn=preexec_fn)


def finish(proc):
    out, err = proc.communicate(timeout=TIMEOUT)
    assert_no_traceback(err)
    return proc.returncode, out, err


def script(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def temporary_dirs(tmp_path):
    return sorted(p.name for p in (tmp_path / "tmp").iterdir() if p.name.startswith("tfdet-locate-"))


def alive(pid):
    """A process that exists and is not a zombie (a zombie has ended: only its parent's wait is missing)."""
    try:
        with open("/proc/%d/stat" % pid) as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def pids(where):
    return [int(name.split(".")[0]) for name in os.listdir(str(where)) if name.endswith(".pid")]


@pytest.mark.slow
def test_a_trace_that_hits_a_file_size_limit_is_exit_5_in_one_line(tmp_path):
    limit = 64 * 1024

    def preexec():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    code, out, err = finish(start(locate_argv("--repeats", "1", script(tmp_path, "many.py", MANY_OPS)), tmp_path,
                                  preexec))
    assert code == WRITE_FAILED, (out, err)
    assert err.count("\n") == 1 and "could not be written" in err and "File too large" in err, err
    assert temporary_dirs(tmp_path) == []  # what filled the disk goes


@pytest.mark.slow
def test_runs_that_all_time_out_are_exit_3_nothing_to_compare(tmp_path):
    hangs = script(tmp_path, "hangs.py", DETERMINISTIC + "import time\ntime.sleep(600)\n")
    # 60 s: long enough for TensorFlow to start and the op to be recorded on a busy machine
    code, out, err = finish(start(locate_argv("--timeout", "60", "--repeats", "1", "--json", hangs), tmp_path))
    assert code == INVALID_INPUT and out, (out, err)
    data = json.loads(out)
    assert [o["status"] for o in data["run_outcomes"]] == ["timed-out", "timed-out"]
    assert data["runs_compared"] == 0 and "no two runs finished" in data["verdict"] and data["traces"]


@pytest.mark.slow
def test_two_locates_sharing_one_traces_directory_keep_their_own_traces(tmp_path):
    program = script(tmp_path, "same.py", DETERMINISTIC)
    shared = tmp_path / "traces"
    both = [start(locate_argv("--repeats", "2", "--json", "--traces", str(shared), program), tmp_path)
            for _ in range(2)]
    results = [finish(proc) for proc in both]
    assert [code for code, _, _ in results] == [OK, OK], results
    kept = [json.loads(out)["traces"] for _, out, _ in results]
    assert len(set(kept)) == 2 and all(os.path.dirname(k) == str(shared) for k in kept)
    for directory in kept:
        traces = sorted(name for name in os.listdir(directory) if name.endswith(".trace.jsonl"))
        assert traces == ["run-0.r1.trace.jsonl", "run-0.trace.jsonl", "run-1.r1.trace.jsonl", "run-1.trace.jsonl"]
        assert all(read_trace(os.path.join(directory, name)).status == "finished" for name in traces)


@pytest.mark.slow
def test_sigterm_stops_every_run_with_what_it_started_and_removes_the_temporary_traces(tmp_path):
    program = script(tmp_path, "hangs_again.py", LEAVES_A_SLEEP_AND_HANGS_AGAIN)
    marks = tmp_path / "pids"
    marks.mkdir()
    proc = start(locate_argv("--repeats", "2", program, "--", str(marks)), tmp_path)
    assert wait_for(lambda: len(pids(marks)) >= 3 or proc.poll() is not None, timeout=TIMEOUT)  # in its 2nd call
    time.sleep(1)
    proc.send_signal(signal.SIGTERM)
    code, _, err = finish(proc)
    assert code == INTERRUPTED and err.count("\n") == 1, err
    assert temporary_dirs(tmp_path) == []
    assert wait_for(lambda: not any(alive(pid) for pid in pids(marks)), timeout=10), pids(marks)


@pytest.mark.slow
def test_sigterm_keeps_the_finished_calls_in_a_traces_directory_and_a_finished_locate_leaves_no_process(tmp_path):
    program = script(tmp_path, "hangs_again.py", LEAVES_A_SLEEP_AND_HANGS_AGAIN)
    marks, traces = tmp_path / "pids", tmp_path / "traces"
    marks.mkdir()
    proc = start(locate_argv("--repeats", "2", "--runs", "2", "--traces", str(traces), program, "--", str(marks)),
                 tmp_path)
    assert wait_for(lambda: len(pids(marks)) >= 3 or proc.poll() is not None, timeout=TIMEOUT)
    time.sleep(1)
    proc.send_signal(signal.SIGTERM)
    code, _, err = finish(proc)
    assert code == INTERRUPTED and str(traces) in err, err
    (kept,) = os.listdir(str(traces))
    first_call = read_trace(os.path.join(str(traces), kept, "run-0.trace.jsonl"))
    assert first_call.status == "finished" and first_call.executions
    assert wait_for(lambda: not any(alive(pid) for pid in pids(marks)), timeout=10)
    # a locate that ends by itself: the sleeps its runs started are gone too
    for name in os.listdir(str(marks)):
        os.remove(str(marks / name))
    code, out, err = finish(start(locate_argv("--repeats", "1", program, "--", str(marks)), tmp_path))
    assert code == OK, (out, err)
    assert len(pids(marks)) == 4
    assert wait_for(lambda: not any(alive(pid) for pid in pids(marks)), timeout=10)  # SIGKILL is delivered soon


@pytest.mark.slow
def test_assert_reproducible_leaves_no_process(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "tests", "locate"))
    import programs

    from tfdet.testing import assert_reproducible

    result = assert_reproducible(programs.starts_a_sleep, str(tmp_path), repeats=2)
    assert result.runs_compared == 2
    assert len(pids(tmp_path)) == 4
    assert wait_for(lambda: not any(alive(pid) for pid in pids(tmp_path)), timeout=10)
