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


def _descendants(pid):
    """The pids below `pid` (from /proc), including those in sessions of their own
    (tfdet locate starts each run in a new session, out of reach of a group kill)."""
    children = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _kill_group(proc, grace=10.0):
    """SIGTERM to the group (a tfdet command cleans up on it), then SIGKILL to the group
    and to every process below it that is still there."""
    below = _descendants(proc.pid)
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        pass
    below += [p for p in _descendants(proc.pid) if p not in below]
    for kill in ([lambda: os.killpg(proc.pid, signal.SIGKILL)] + [
            (lambda p=p: os.kill(p, signal.SIGKILL)) for p in below]):
        try:
            kill()
        except (ProcessLookupError, PermissionError):
            pass
