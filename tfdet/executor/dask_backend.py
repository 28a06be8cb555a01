"""The Dask backend: jobs on an existing dask.distributed cluster (scheduler
address), or on a LocalCluster of `jobs` single-threaded worker processes."""

from .base import ExecutorError, JobError


class DaskExecutor(object):
    def __init__(self, jobs=1, scheduler=None):
        try:
            import distributed  # noqa: F401
        except ImportError:
            raise ExecutorError("--executor dask needs dask.distributed: pip install 'tfdet[dask]'") from None
        self.jobs = max(1, int(jobs))
        self.scheduler = scheduler
        self.client = None
        self.cluster = None

    def describe(self):
        if self.scheduler:
            return "dask (scheduler %s)" % self.scheduler
        return "dask (LocalCluster, %d worker%s)" % (self.jobs, "" if self.jobs == 1 else "s")

    def __enter__(self):
        from distributed import Client, LocalCluster

        try:
            if self.scheduler:
                self.client = Client(self.scheduler, timeout="20s")
            else:
                self.cluster = LocalCluster(n_workers=self.jobs, threads_per_worker=1, processes=True,
                                            dashboard_address=None)
                self.client = Client(self.cluster)
        except (OSError, TimeoutError) as exc:
            self.__exit__(None, None, None)
            raise ExecutorError("cannot reach the Dask scheduler %s: %s" % (self.scheduler, exc)) from None
        return self

    def __exit__(self, *exc):
        if self.client is not None:
            self.client.close()
            self.client = None
        if self.cluster is not None:
            self.cluster.close()
            self.cluster = None
        return False

    def machines(self):
        """The cluster's workers: {address: a name for files and tables}.

        The name is the worker's own name (`dask worker --name gpu-a`, or a
        LocalCluster's 0, 1, ...) after its host, so it stays the same when the
        worker restarts on another port and a resumed run finds its files."""
        workers = self.client.scheduler_info(n_workers=-1)["workers"] if _takes_n_workers(self.client) \
            else self.client.scheduler_info()["workers"]
        names = {}
        for address, info in sorted(workers.items()):
            host = info.get("host") or address.split("://")[-1].rsplit(":", 1)[0]
            name = str(info.get("name", address))
            names[address] = name if name.startswith(host) else "%s-%s" % (host, name)
        return names

    def run(self, jobs, placement=None):
        """Yield (key, result or JobError) as the jobs finish. `placement` maps a
        job key to a worker address from machines(): that job runs there only."""
        from distributed import as_completed

        placement = placement or {}
        futures = {}
        for key, (function, args, kwargs) in jobs.items():
            where = {"workers": [placement[key]], "allow_other_workers": False} if key in placement else {}
            futures[self.client.submit(function, *args, pure=False, **where, **kwargs)] = key
        try:
            for future in as_completed(list(futures)):
                key = futures[future]
                try:
                    yield key, future.result()
                except Exception as exc:  # the job raised, or its worker died too often
                    yield key, JobError(type(exc).__name__, str(exc))
        finally:
            for future in futures:
                future.cancel()


def _takes_n_workers(client):
    """Newer distributed lists only the first few workers unless n_workers=-1 is given."""
    import inspect

    return "n_workers" in inspect.signature(client.scheduler_info).parameters
