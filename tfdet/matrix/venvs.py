"""One virtual environment per TF version: find, check, create. Stdlib only.

    record = ensure(version, base_dir)     # reuse or create; never raises for a bad version

An environment is reused when its python passes the smoke test (import, an
eager op, a gradient) with the wanted TF minor. Otherwise it is recreated from
the pyenv interpreter of the version's Python minor with `pip --no-cache-dir`
(each TF wheel is 0.2-0.6 GB; caching them too would double the disk the
matrix takes). A step that fails is recorded -- which step, the last lines of
its stderr -- and the caller goes on with the other versions.
"""

import glob
import os
import re
import shutil
import time

from ..runtime.launch import ChildSpec, launch
from .versions import env_name

# Where environments live unless --venvs or TFDET_VENVS says otherwise.
DEFAULT_VENVS = "~/.cache/tfdet/venvs"
VENVS_VARIABLE = "TFDET_VENVS"

# Recorded when a step fails: enough to see pip's resolver message or TF's
# import error, small enough for the manifest.
TAIL_LINES = 15

# Steps, in order; a failure names one.
STEPS = ("interpreter", "venv", "pip", "smoke")

PIP_TIMEOUT = 3600
SMOKE_TIMEOUT = 600

# Smoke test run in each environment: import, eager op, gradient. Prints the TF
# and numpy versions on its last line. Written for Python 3.7 and TF 1.15 up.
SMOKE = r"""
import tensorflow as tf
if tf.__version__.startswith("1."):
    tf.compat.v1.enable_eager_execution()
x = tf.constant([[1.0, 2.0], [3.0, 4.0]])
assert tf.matmul(x, x).numpy().tolist() == [[7.0, 10.0], [15.0, 22.0]]
if tf.__version__.startswith("1."):
    g = tf.Graph()
    with g.as_default():
        a = tf.compat.v1.placeholder(tf.float32, [2])
        grad = tf.gradients(tf.reduce_sum(a * a), a)[0]
        with tf.compat.v1.Session(graph=g) as s:
            got = s.run(grad, {a: [1.0, 2.0]}).tolist()
else:
    v = tf.Variable([1.0, 2.0])
    with tf.GradientTape() as t:
        y = tf.reduce_sum(v * v)
    got = t.gradient(y, v).numpy().tolist()
assert got == [2.0, 4.0], got
import numpy
print(tf.__version__, numpy.__version__)
"""


def quiet_environ(base=None):
    environ = dict(os.environ if base is None else base)
    environ.update(TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")
    environ.pop("PYTHONPATH", None)
    return environ


def venvs_dir(option=None, environ=None):
    """The environments' directory: --venvs, else $TFDET_VENVS, else the default."""
    environ = os.environ if environ is None else environ
    chosen = option or environ.get(VENVS_VARIABLE) or DEFAULT_VENVS
    return os.path.abspath(os.path.expanduser(chosen))


def env_python(version, base):
    return os.path.join(base, env_name(version), "bin", "python")


def pyenv_roots():
    roots = []
    if shutil.which("pyenv"):
        try:
            done = launch(ChildSpec(tool=("pyenv", "root"), stdout="capture", timeout=30))
            out = "" if done.timed_out else done.stdout.strip()
            if out:
                roots.append(out)
        except OSError:
            pass
    for root in (os.environ.get("PYENV_ROOT"), os.path.expanduser("~/.pyenv"), "/root/.pyenv"):
        if root and root not in roots:
            roots.append(root)
    return roots


def find_python(minor, roots=None):
    """The newest pyenv interpreter <root>/versions/<minor>.<patch>/bin/python, or None."""
    pattern = re.compile(r"^%s\.(\d+)$" % re.escape(minor))
    for root in (pyenv_roots() if roots is None else roots):
        best = None
        for d in glob.glob(os.path.join(root, "versions", minor + ".*")):
            m = pattern.match(os.path.basename(d))
            exe = os.path.join(d, "bin", "python")
            if m and os.access(exe, os.X_OK) and (best is None or int(m.group(1)) > best[0]):
                best = (int(m.group(1)), exe)
        if best:
            return best[1]
    return None


def tail(text, lines=TAIL_LINES):
    kept = [line for line in (text or "").strip().splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def smoke(python, timeout=SMOKE_TIMEOUT):
    """(ok, tf version, numpy version, stderr tail) of the smoke test in `python`."""
    if not os.access(python, os.X_OK):
        return False, None, None, "%s does not exist" % python
    try:  # a bare interpreter: the environment's own TF, no tfdet
        r = launch(ChildSpec(code=SMOKE, python=python, env=quiet_environ(), stdout="capture", timeout=timeout))
    except OSError as exc:
        return False, None, None, str(exc)
    if r.timed_out:
        return False, None, None, "smoke test timed out after %ds" % timeout
    words = (r.stdout.strip().splitlines() or [""])[-1].split()
    if r.returncode != 0 or len(words) != 2:
        return False, None, None, tail(r.stderr) or "exit code %d" % r.returncode
    return True, words[0], words[1], ""


def wanted(version, tf_version):
    """Whether an installed TF version string is the row's minor ("2.6.5" for "2.6")."""
    return bool(tf_version) and tf_version.split(".")[:2] == version.tf.split(".")


def _step(command, timeout):
    """(ok, stderr tail) of one creation step."""
    try:  # pip dies with this process
        r = launch(ChildSpec(tool=tuple(command), env=quiet_environ(), stdout="capture", timeout=timeout))
    except OSError as exc:
        return False, str(exc)
    if r.timed_out:
        return False, "timed out after %ds: %s" % (timeout, " ".join(command))
    if r.returncode != 0:
        return False, tail(r.stderr + "\n" + r.stdout) or "exit code %d" % r.returncode
    return True, ""


def record(version, base, status, seconds, step=None, error="", tf_version=None,
           numpy_version=None, interpreter=None):
    """What became of one version's environment (JSON-ready)."""
    return {"tf": version.tf, "python": version.python, "env": env_name(version),
            "path": os.path.join(base, env_name(version)),
            "requirements": list(version.requirements),
            "status": status, "seconds": round(seconds, 1), "failed_step": step,
            "error": error, "tf_version": tf_version, "numpy_version": numpy_version,
            "interpreter": interpreter}


def ensure(version, base, log=None, roots=None):
    """Reuse or create the environment of `version` under `base`; a record, never raises.

    status: "reused" (it already passed the smoke test), "created", or "failed"
    with failed_step one of STEPS and error the tail of that step's stderr.
    """
    log = log or (lambda message: None)
    start = time.time()
    python = env_python(version, base)
    ok, tf_version, np_version, _ = smoke(python) if os.path.exists(python) else (False, None, None, "")
    if ok and wanted(version, tf_version):
        return record(version, base, "reused", time.time() - start, tf_version=tf_version,
                      numpy_version=np_version)
    interpreter = find_python(version.python, roots)
    if interpreter is None:
        return record(version, base, "failed", time.time() - start, "interpreter",
                      "no Python %s.* under pyenv (%s); `pyenv install %s` adds one" % (
                          version.python, ", ".join(pyenv_roots() if roots is None else roots),
                          version.python))
    target = os.path.join(base, env_name(version))
    log("%s: creating with %s" % (env_name(version), interpreter))
    pip = [python, "-m", "pip", "install", "--quiet", "--no-cache-dir", "--disable-pip-version-check"]
    for step, command, timeout in (
            ("venv", [interpreter, "-m", "venv", "--clear", target], 600),
            ("pip", pip + ["--upgrade", "pip"], PIP_TIMEOUT),
            ("pip", pip + list(version.requirements), PIP_TIMEOUT)):
        done, error = _step(command, timeout)
        if not done:
            return record(version, base, "failed", time.time() - start, step, error,
                          interpreter=interpreter)
    ok, tf_version, np_version, error = smoke(python)
    if not ok or not wanted(version, tf_version):
        return record(version, base, "failed", time.time() - start, "smoke",
                      error or "tensorflow %s installed, %s.* wanted" % (tf_version, version.tf),
                      tf_version=tf_version, interpreter=interpreter)
    return record(version, base, "created", time.time() - start, tf_version=tf_version,
                  numpy_version=np_version, interpreter=interpreter)
