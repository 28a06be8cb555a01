"""The one place the harness starts processes (a later issue moves launching to
tfdet/runtime/launch.py: swap this function). Each run is its own process group,
killed whole on timeout; a crash or a hang is an outcome, never an exception."""

import os
import signal
import subprocess
import sys
import time
from collections import namedtuple

Outcome = namedtuple("Outcome", "returncode stdout stderr seconds timed_out")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(argv, timeout, env=None, cwd=ROOT):
    """Run `argv` (a list; "python" means this interpreter) in a new process group with
    cwd = the repo root and `env` added to the environment. Returns an Outcome."""
    argv = [sys.executable if a == "python" else a for a in argv]
    environ = dict(os.environ)
    environ.update({"PYTHONPATH": ROOT + os.pathsep + environ.get("PYTHONPATH", ""), "TF_CPP_MIN_LOG_LEVEL": "2",
                    "PYTHONHASHSEED": "0"})
    environ.update(env or {})
    started = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, env=environ, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        out, err = proc.communicate()
        timed_out = True
    except BaseException:  # Ctrl-C: the run goes with us
        _kill_group(proc)
        proc.wait()
        raise
    return Outcome(proc.returncode, out, err, time.perf_counter() - started, timed_out)


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
