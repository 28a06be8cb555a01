"""Driving real `tfdet probe` processes for the fault-injection tests, and the
invariants every fault must leave intact."""

import os
import signal
import subprocess
import sys
import time

from tfdet.results import load

# Fixture cases with known behaviour that run in a second or two each; three of
# them so a run has several points to be stopped at.
FAST_OPS = "fixture-random-order-sum,fixture-fixed-order-sum,fixture-raises"
FAST_KEYS = {(case, "forward", "baseline") for case in FAST_OPS.split(",")}
# For stopping runs part-way: the hang, cut off by --timeout, and the worker's
# restart after it spread the cases' finishing times over a few seconds.
STAGGERED_OPS = "fixture-random-order-sum,fixture-hang,fixture-fixed-order-sum,fixture-raises"
STAGGERED_KEYS = {(case, "forward", "baseline") for case in STAGGERED_OPS.split(",")}
STAGGERED_ARGS = ("--timeout", "1.5")
TIMEOUT = 180


def probe_argv(out, *extra, ops=FAST_OPS):
    return [sys.executable, "-m", "tfdet", "probe", "--ops", ops, "--modes", "baseline", "--processes", "1",
            "--repeats", "2", "--max-repeats", "2", "--rounds", "1", "--quiet", "--out", str(out)] + list(extra)


def environ(tmp_path):
    """A private temp directory, so the scratch space each run leaves can be seen."""
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    return dict(os.environ, TMPDIR=str(scratch))


def scratch_dirs(tmp_path):
    return sorted(p.name for p in (tmp_path / "tmp").iterdir() if p.name.startswith("tfdet-probe-"))


def start(argv, tmp_path, preexec_fn=None):
    return subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                            env=environ(tmp_path), preexec_fn=preexec_fn)


def run(argv, tmp_path, preexec_fn=None):
    proc = start(argv, tmp_path, preexec_fn)
    out, err = proc.communicate(timeout=TIMEOUT)
    return proc.returncode, out, err


def wait_for(predicate, timeout=TIMEOUT, poll=0.02):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(poll)
    return False


def finished_keys(path):
    """(case, pass, mode) of every record the file holds, in order, repeats kept."""
    if not header_written(path):
        return []  # stopped before its header was on disk: nothing finished
    return [r.key for r in load(str(path)).cases]


def header_written(path):
    try:
        with open(path, "rb") as handle:
            return b"\n" in handle.read()
    except OSError:
        return False


def assert_intact(path):
    """The file parses; no case is in it twice; only its last line may be torn
    (a kill between write and fsync), and never by the writer's own error path."""
    keys = finished_keys(path)
    assert len(keys) == len(set(keys)), "a case is in %s twice: %s" % (path, keys)
    return keys


def assert_no_traceback(err):
    assert "Traceback" not in err, err


def records_by_key(path):
    return {r.key: r for r in load(str(path)).cases} if header_written(path) else {}


def interrupt(proc, how):
    proc.send_signal({"int": signal.SIGINT, "term": signal.SIGTERM, "kill": signal.SIGKILL}[how])
    out, err = proc.communicate(timeout=TIMEOUT)
    return proc.returncode, out, err
