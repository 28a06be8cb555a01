"""One training as an executor job: start `tfdet.diverge.training` in a fresh
interpreter with the mode's environment, wait (with a timeout), read what it
wrote. Runs wherever the executor puts it (a local pool process or a Dask
worker), so it takes and returns plain data; a crash or a hang is a result
({"ok": False, ...}), never an exception.
"""

import json
import os
import shutil
import socket
import tempfile
import time

from ..runtime.launch import ChildSpec, child_environ, launch


def _environ(spec):
    return child_environ(spec.get("unset", ()), spec.get("env", {}), {"TF_CPP_MIN_LOG_LEVEL": "2"})


def run_training(spec, timeout=None, python=None):
    """Train once in a new process. spec: workload, lr, momentum, epochs,
    batch_size, init_seed, batch_seed, and the mode's env / unset / api_calls / patch."""
    import numpy as np

    workdir = tempfile.mkdtemp(prefix="tfdet-diverge-")
    started = time.time()
    base = {"host": socket.gethostname()}
    try:
        spec_path = os.path.join(workdir, "spec.json")
        with open(spec_path, "w", encoding="utf-8") as handle:
            json.dump(spec, handle)
        # dies with this process; Ctrl-C, or the executor stopping this job, stops the training too
        done = launch(ChildSpec(module="tfdet.diverge.training", args=(spec_path, workdir), python=python,
                                env=_environ(spec), timeout=timeout, stop_on_sigterm=True))
        if done.timed_out:
            return dict(base, ok=False, outcome="timeout", error="no result after %g s (killed)" % timeout,
                        wall_seconds=time.time() - started)
        if done.returncode != 0 or not os.path.exists(os.path.join(workdir, "result.json")):
            return dict(base, ok=False, outcome="failed",
                        error="exit %d: %s" % (done.returncode, done.last_line()), stderr_tail=done.stderr_tail(),
                        wall_seconds=time.time() - started)
        with open(os.path.join(workdir, "result.json"), encoding="utf-8") as handle:
            meta = json.load(handle)
        with np.load(os.path.join(workdir, "arrays.npz")) as arrays:
            weights = [arrays[name] for name in sorted(n for n in arrays.files if n.startswith("w"))]
            predictions = arrays["predictions"]
            labels = arrays["labels"].tolist() if "labels" in arrays.files else None
        return dict(base, ok=True, outcome="ok", meta=meta, predictions=predictions.tolist(),
                    labels=labels, weights=weights, wall_seconds=time.time() - started)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
