"""One way to run independent jobs, on this machine or a Dask cluster.

    with executor.open_executor("local", jobs=2) as ex:
        for key, outcome in ex.run({key: (function, args, kwargs), ...}):
            ...   # as each job finishes, in completion order

`function` must be importable by name (a module-level function) and its
arguments and result picklable: a Dask worker on another machine runs it. A
job that raises yields a JobError (the exception's type and message), never
stops the others. Leaving the `with` block (normally, by an exception or by
Ctrl-C) cancels jobs not yet finished. `machines()` names where jobs can go (this machine; a cluster's workers) and
`run(jobs, placement)` pins a job to one of them: a fleet probe runs once per
machine. Used by diverge and by `tfdet probe --executor dask`.
"""

from .base import EXECUTORS, ExecutorError, JobError


def open_executor(kind, jobs=1, scheduler=None):
    """An executor (a context manager with .run(jobs) and .describe())."""
    if kind == "local":
        if scheduler:
            raise ExecutorError("--scheduler needs --executor dask")
        from .local import LocalExecutor

        return LocalExecutor(jobs)
    if kind == "dask":
        from .dask_backend import DaskExecutor

        return DaskExecutor(jobs, scheduler)
    raise ExecutorError("unknown executor %r (choose from %s)" % (kind, ", ".join(EXECUTORS)))


__all__ = ["EXECUTORS", "ExecutorError", "JobError", "open_executor"]
