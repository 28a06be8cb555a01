"""The local backend: a pool of `jobs` processes (spawned, so a job never
inherits a parent's TensorFlow state), results in completion order. The pool
processes die with the process that made them (lifeline.py): a parent killed
by SIGKILL leaves no worker behind to start a job still queued."""

import concurrent.futures
import multiprocessing
import os

from . import lifeline
from .base import JobError


class LocalExecutor(object):
    def __init__(self, jobs=1):
        self.jobs = max(1, int(jobs))
        self.pool = None

    def describe(self):
        return "local (%d process%s)" % (self.jobs, "" if self.jobs == 1 else "es")

    def __enter__(self):
        self.pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=self.jobs, mp_context=multiprocessing.get_context("spawn"),
            initializer=lifeline.watch_parent, initargs=(os.getpid(),))
        return self

    def __exit__(self, *exc):
        # A clean exit waits for the pool; an interrupted one cancels what has not
        # started and stops the running jobs (SIGTERM to each pool process).
        if exc[0] is not None:
            for process in list((getattr(self.pool, "_processes", None) or {}).values()):
                try:
                    process.terminate()
                except (OSError, AttributeError):
                    pass
        self.pool.shutdown(wait=exc[0] is None, cancel_futures=True)
        self.pool = None
        return False

    def machines(self):
        """Where jobs can be placed: this machine only."""
        import socket

        return {"local": socket.gethostname()}

    def run(self, jobs, placement=None):
        """Yield (key, result or JobError) as the jobs finish. `placement` (a
        job key -> a key of machines()) is accepted for symmetry: every job runs here."""
        futures = {self.pool.submit(lifeline.guarded_call, function, args, kwargs): key
                   for key, (function, args, kwargs) in jobs.items()}
        for future in concurrent.futures.as_completed(futures):
            key = futures[future]
            try:
                yield key, future.result()
            except concurrent.futures.process.BrokenProcessPool as exc:
                yield key, JobError("BrokenProcessPool", str(exc) or "a pool process died")
            except Exception as exc:  # the job's own error: a result, not the end of the run
                yield key, JobError(type(exc).__name__, str(exc))
