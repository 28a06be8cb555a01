"""Whether a killed command left any process behind: its descendants, found
through /proc before the kill (psutil), must all be gone soon after."""

import os
import signal
import time

import psutil


def descendants(pid):
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def survivors(processes, timeout=10.0):
    """Those of `processes` still running (zombies count as gone) after up to `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        alive = []
        for process in processes:
            try:
                if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                    alive.append(process)
            except psutil.NoSuchProcess:
                pass
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.1)


def pid_gone(pid, timeout=10.0):
    """True once process `pid` has ended (a zombie counts as ended) within `timeout` s."""
    try:
        return not survivors([psutil.Process(pid)], timeout)
    except psutil.NoSuchProcess:
        return True


def describe(processes):
    lines = []
    for process in processes:
        try:
            lines.append("%d %s" % (process.pid, " ".join(process.cmdline())[:160]))
        except psutil.Error:
            lines.append("%d (gone)" % process.pid)
    return "\n".join(lines)


def kill_leaving_nothing(proc, settle=10.0):
    """SIGKILL `proc` (a Popen); the processes below it that outlived it by `settle` s (then killed)."""
    below = descendants(proc.pid)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()  # not communicate(): an orphan holding the pipes would keep it waiting
    left = survivors(below, settle)
    for process in left:  # leave the machine clean for the next test either way
        try:
            process.kill()
        except psutil.Error:
            pass
    return below, left
