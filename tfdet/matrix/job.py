"""One version of the matrix, as an executor job: make sure its environment
exists, then run `tfdet probe --python` in it. Module-level and picklable (a
Dask worker runs it); never raises for a version that fails: the record says
which step failed and the last lines it printed."""

import os
import resource
import signal
import subprocess
import sys
import time

from ..executor.lifeline import child_guard
from ..probe.process import module_command
from . import venvs
from .versions import by_tf

# The probe's flags a matrix passes on, in the probe's own spelling.
PROBE_FLAGS = (("repeats", "--repeats"), ("processes", "--processes"), ("max_repeats", "--max-repeats"),
               ("rounds", "--rounds"), ("timeout", "--timeout"), ("ops", "--ops"), ("settle", "--settle"))


def probe_command(python, results, modes, options, resume, controller=None):
    """argv of the probe of one version: this tfdet, the version's interpreter as worker."""
    argv = module_command(controller or sys.executable, "tfdet") + [
        "probe", "--python", python, "--out", results, "--modes", ",".join(modes), "--quiet"]
    for name, flag in PROBE_FLAGS:
        value = options.get(name)
        if value is True:
            argv.append(flag)
        elif value not in (None, False):
            argv += [flag, ",".join(value) if isinstance(value, (list, tuple)) else str(value)]
    return argv + (["--resume"] if resume else [])


def run_version(tf, base, results, modes, options, resume, create_only=False, roots=None):
    """{"env": what ensure() recorded, "probe": {status, seconds, exit_code, error} or None}."""
    version = by_tf(tf)
    env = venvs.ensure(version, base, roots=roots)
    if env["status"] == "failed" or create_only or not modes:
        return {"env": env, "probe": None}
    start, used = time.time(), _children_cpu()
    command = probe_command(venvs.env_python(version, base), results, modes, options, resume)
    try:
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 universal_newlines=True, env=venvs.quiet_environ(),
                                 preexec_fn=child_guard(signal.SIGTERM))  # ends as on Ctrl-C with this process
    except OSError as exc:
        code, error = None, str(exc)
    else:
        previous = _forward_sigterm(child)
        try:
            _, stderr = child.communicate()
        finally:
            if previous is not None:
                signal.signal(signal.SIGTERM, previous)
        code, error = child.returncode, venvs.tail(stderr) if child.returncode else ""
    # CPU seconds of the probe and its workers: what the version costs on an idle
    # machine, where wall time also counts the waits of a shared one.
    return {"env": env, "probe": {"status": "probed" if code == 0 else "failed", "exit_code": code,
                                  "seconds": round(time.time() - start, 1),
                                  "cpu_seconds": round(_children_cpu() - used, 1), "error": error}}


def _children_cpu():
    """User + system CPU seconds of the finished child processes (and theirs) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _forward_sigterm(child):
    """An interrupted matrix terminates its pool processes: pass that on to the
    probe, which then stops as on Ctrl-C (finished cases kept, so --resume
    continues it), before this process ends. Returns the handler it replaced;
    None where signals cannot be set (a Dask worker's thread)."""
    def stop(signum, frame):
        child.terminate()
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()
        os._exit(130)
    try:
        return signal.signal(signal.SIGTERM, stop)
    except ValueError:
        return None
