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
import subprocess
import sys
import tempfile
import time

from ..executor.lifeline import child_guard
from ..executor.signals import restore_sigterm, unwind_on_sigterm

STDERR_TAIL = 2000


def _environ(spec):
    environ = {k: v for k, v in os.environ.items() if k not in spec.get("unset", ())}
    environ.update(spec.get("env", {}))
    environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    return environ


def run_training(spec, timeout=None, python=None):
    """Train once in a new process. spec: workload, lr, momentum, epochs,
    batch_size, init_seed, batch_seed, and the mode's env / unset / api_calls / patch."""
    import numpy as np

    from tfdet.probe.process import module_command

    workdir = tempfile.mkdtemp(prefix="tfdet-diverge-")
    started = time.time()
    base = {"host": socket.gethostname()}
    try:
        spec_path = os.path.join(workdir, "spec.json")
        with open(spec_path, "w", encoding="utf-8") as handle:
            json.dump(spec, handle)
        command = module_command(python or sys.executable, "tfdet.diverge.training") + [spec_path, workdir]
        proc = subprocess.Popen(command, env=_environ(spec), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                universal_newlines=True, preexec_fn=child_guard())  # dies with this process
        previous = unwind_on_sigterm()
        try:
            _, stderr = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            return dict(base, ok=False, outcome="timeout", error="no result after %g s (killed)" % timeout,
                        wall_seconds=time.time() - started)
        except BaseException:  # Ctrl-C, or the executor stopping this job: the training stops too
            proc.kill()
            proc.wait()
            raise
        finally:
            restore_sigterm(previous)
        if proc.returncode != 0 or not os.path.exists(os.path.join(workdir, "result.json")):
            tail = (stderr or "").strip()[-STDERR_TAIL:]
            last = tail.splitlines()[-1] if tail else ""
            return dict(base, ok=False, outcome="failed",
                        error="exit %d: %s" % (proc.returncode, last), stderr_tail=tail,
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
