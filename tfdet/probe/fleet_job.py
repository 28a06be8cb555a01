"""One machine's probe as an executor job: `tfdet probe` in a fresh process on
whichever Dask worker the job was placed on, into a results file kept on that
machine, returned as text when it finishes.

Runs on the worker, so it takes and returns plain data. The file on the
worker is named after the probe's flags and the machine, so the same command
run again with --resume continues it case by case: an interrupted fleet run
loses no finished case on any machine.
"""

import os
import signal
import socket

from ..runtime.launch import TERMINATE, ChildSpec, launch


def state_dir():
    """Where a worker keeps its machine's results file ($TFDET_FLEET_DIR, or ~/.cache/tfdet/fleet)."""
    return os.environ.get("TFDET_FLEET_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "tfdet", "fleet")


def probe_on_this_machine(flags, key, resume):
    """Run `tfdet probe FLAGS` here; {"host", "returncode", "text", "stderr_tail", "path"}.

    `text` is the results file as the probe left it (None if it wrote nothing).
    A probe that fails is a result, not an exception: the coordinator records it.
    """
    directory = state_dir()
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, key + ".jsonl")
    args = ["probe"] + list(flags) + [
        "--out", path, "--quiet", "--resume" if resume and os.path.exists(path) else "--overwrite"]
    # This tfdet, whatever the worker's working directory. SIGTERM when this process
    # ends, or when the executor stops this job: the probe then stops as on Ctrl-C,
    # keeping its cases.
    done = launch(ChildSpec(module="tfdet", args=tuple(args), dies_with_parent=signal.SIGTERM, stop=TERMINATE,
                            stop_on_sigterm=True))
    text = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    return {"host": socket.gethostname(), "returncode": done.returncode, "text": text,
            "stderr_tail": done.stderr_tail(), "path": path}
