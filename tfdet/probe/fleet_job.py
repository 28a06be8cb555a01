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
import subprocess
import sys

from ..executor.lifeline import child_guard
from ..executor.signals import restore_sigterm, unwind_on_sigterm

STDERR_TAIL = 2000


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
    command = [sys.executable, "-m", "tfdet", "probe"] + list(flags) + [
        "--out", path, "--quiet", "--allow-missing-modes", "--resume" if resume and os.path.exists(path)
        else "--overwrite"]
    # SIGTERM when this process ends: the probe then stops as on Ctrl-C, keeping its cases
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               universal_newlines=True, preexec_fn=child_guard(signal.SIGTERM))
    previous = unwind_on_sigterm()  # in a pool process, SIGTERM from the executor lands in the except below
    try:
        _, stderr = process.communicate()
    except BaseException:  # the executor stopping this job: stop the probe as Ctrl-C would (it keeps its cases)
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
        raise
    finally:
        restore_sigterm(previous)
    text = None
    if os.path.exists(path):
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    return {"host": socket.gethostname(), "returncode": process.returncode, "text": text,
            "stderr_tail": (stderr or "")[-STDERR_TAIL:], "path": path}
