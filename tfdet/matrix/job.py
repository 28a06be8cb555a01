"""One version of the matrix, as an executor job: make sure its environment
exists, then run `tfdet probe --python` in it. Module-level and picklable (a
Dask worker runs it); never raises for a version that fails: the record says
which step failed and the last lines it printed."""

import resource
import signal
import time

from ..results.probe_settings import child_argv
from ..runtime.launch import TERMINATE, ChildSpec, launch
from . import venvs
from .versions import by_tf


def probe_spec(python, results, modes, options, resume, controller=None):
    """The child of one version's probe: this tfdet in this interpreter (or
    `controller`), the version's interpreter as worker. An interrupted matrix
    terminates its pool processes: the probe then stops as on Ctrl-C (finished
    cases kept, so --resume continues it) before this job ends."""
    args = ["probe", "--python", python, "--out", results, "--modes", ",".join(modes), "--quiet"]
    args += child_argv({name: value for name, value in options.items() if name not in ("python", "modes")})
    return ChildSpec(module="tfdet", args=tuple(args + (["--resume"] if resume else [])), python=controller,
                     env=venvs.quiet_environ(), stdout="capture", dies_with_parent=signal.SIGTERM, stop=TERMINATE,
                     stop_on_sigterm=True)


def probe_command(python, results, modes, options, resume, controller=None):
    """argv of the probe of one version (probe_spec's)."""
    return probe_spec(python, results, modes, options, resume, controller).argv()


def run_version(tf, base, results, modes, options, resume, create_only=False, roots=None):
    """{"env": what ensure() recorded, "probe": {status, seconds, exit_code, error} or None}."""
    version = by_tf(tf)
    env = venvs.ensure(version, base, roots=roots)
    if env["status"] == "failed" or create_only or not modes:
        return {"env": env, "probe": None}
    start, used = time.time(), _children_cpu()
    try:
        done = launch(probe_spec(venvs.env_python(version, base), results, modes, options, resume))
    except OSError as exc:
        code, error = None, str(exc)
    else:
        code, error = done.returncode, venvs.tail(done.stderr) if done.returncode else ""
    # CPU seconds of the probe and its workers: what the version costs on an idle
    # machine, where wall time also counts the waits of a shared one.
    return {"env": env, "probe": {"status": "probed" if code == 0 else "failed", "exit_code": code,
                                  "seconds": round(time.time() - start, 1),
                                  "cpu_seconds": round(_children_cpu() - used, 1), "error": error}}


def _children_cpu():
    """User + system CPU seconds of the finished child processes (and theirs) so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
