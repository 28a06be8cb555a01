"""Processes that die with their parent, so a killed command leaves nothing running.

A process pool's workers and the trainings and probes they start outlive a
parent ended by SIGKILL (no handler runs): a pool worker even picks up a job
still queued in its pipe and starts a new training. Two guards:

- on Linux, prctl(PR_SET_PDEATHSIG) asks the kernel to signal a process when
  the thread that started it ends (prctl(2)); set in the child itself, then the
  parent is checked once more, since it may have died before the call;
- everywhere, a pool worker checks before each job that its parent is still
  the process that started it (an orphan is adopted by another process).
"""

import os
import signal
import sys
import threading

PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

_parent_pid = None  # a pool worker's parent, set by watch_parent()


def _prctl():
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def die_with_parent(signum, parent_pid, prctl=None):
    """Have this process get `signum` when its parent ends; if the parent is
    already gone, end now. False where the kernel offers no such request."""
    prctl = prctl or _prctl()
    armed = prctl is not None and prctl(PR_SET_PDEATHSIG, int(signum), 0, 0, 0) == 0
    if os.getppid() != parent_pid:
        os._exit(128 + int(signum))
    return armed


def child_guard(signum=signal.SIGKILL, outlives_thread=False):
    """A Popen preexec_fn: the child gets `signum` when the process starting it
    ends. The kernel ties the signal to the starting thread, which is fine for a
    thread that waits for its child (a pool job, a Dask task); a child that
    outlives the call starting it gets the guard only from the main thread."""
    prctl = _prctl()  # looked up here: no dlopen between fork and exec
    if prctl is None or (outlives_thread and threading.current_thread() is not threading.main_thread()):
        return None
    parent = os.getpid()

    def guard():
        die_with_parent(signum, parent, prctl)
    return guard


def watch_parent(parent_pid):
    """A pool worker's initializer: SIGTERM when the parent ends (its job then
    unwinds and stops the process it waits for: see signals.py)."""
    global _parent_pid
    _parent_pid = parent_pid
    die_with_parent(signal.SIGTERM, parent_pid)


def parent_alive():
    """Whether the parent watch_parent() was given still is this process's parent."""
    return _parent_pid is None or os.getppid() == _parent_pid


def guarded_call(function, args, kwargs):
    """Run a pool job, unless the pool's parent has ended: then exit instead,
    also after a job that the parent's end interrupted (the pool would catch its
    SystemExit and wait for the next job forever)."""
    if not parent_alive():
        os._exit(128 + signal.SIGTERM)
    try:
        return function(*args, **kwargs)
    finally:
        if not parent_alive():
            os._exit(128 + signal.SIGTERM)
