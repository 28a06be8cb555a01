"""How a job stops when its executor stops it. A local pool process runs a job in
its main thread and is ended with SIGTERM; turning that signal into SystemExit
unwinds the job, so its `finally` and `except` blocks stop the child process it
waits for. A Dask worker runs jobs in threads, where no handler can be set."""

import signal
import threading


def _unwind(signum, frame):
    raise SystemExit(128 + signum)


def unwind_on_sigterm():
    """Make SIGTERM raise SystemExit here; the handler it replaced, or None off the main thread."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGTERM, _unwind)


def restore_sigterm(previous):
    """Put back what unwind_on_sigterm() replaced."""
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)
