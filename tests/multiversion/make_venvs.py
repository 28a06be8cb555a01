#!/usr/bin/env python3
"""Build the virtual environments used for multi-version TensorFlow checks.

Stdlib only. Each environment gets one pyenv interpreter and an exact set of
pip pins (CPU TensorFlow + the numpy/protobuf it works with). Idempotent: an
environment whose python already imports tensorflow at the pinned version is
skipped.

    python tests/multiversion/make_venvs.py                    # all, into ~/.cache/tfdet/venvs
    python tests/multiversion/make_venvs.py --dir /work/venvs
    python tests/multiversion/make_venvs.py --only tf2.10-py3.10
    python tests/multiversion/make_venvs.py --list
"""

import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import time

# name, python (major.minor, taken from pyenv), pip requirements (exact pins that
# were installed and verified: import, eager op, gradient).
ENVS = [
    ("tf1.15-py3.7", "3.7",
     ["tensorflow-cpu==1.15.0", "numpy==1.18.5", "protobuf==3.20.3", "h5py==2.10.0"]),
    ("tf2.4-py3.7", "3.7",
     ["tensorflow-cpu==2.4.4", "numpy==1.19.5", "protobuf==3.20.3"]),
    ("tf2.6-py3.9", "3.9",
     ["tensorflow-cpu==2.6.4", "keras==2.6.0", "numpy==1.19.5", "protobuf==3.20.3"]),
    ("tf2.10-py3.10", "3.10",
     ["tensorflow-cpu==2.10.1", "numpy==1.23.5", "protobuf==3.19.6"]),
    ("tf2.21-py3.13", "3.13",
     ["tensorflow-cpu==2.21.0", "numpy==2.5.5", "protobuf==7.36.2"]),
]

# Smoke test run in each new environment: import, eager op, gradient.
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

QUIET_ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONWARNINGS="ignore")


def log(msg):
    print("[make_venvs] " + msg, flush=True)


def tf_pin(reqs):
    for r in reqs:
        m = re.match(r"tensorflow(-cpu)?==(.+)$", r)
        if m:
            return m.group(2)
    raise ValueError("no tensorflow pin in %r" % (reqs,))


def pyenv_roots():
    roots = []
    if shutil.which("pyenv"):
        try:
            out = subprocess.run(["pyenv", "root"], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, universal_newlines=True,
                                 timeout=30).stdout.strip()
            if out:
                roots.append(out)
        except (OSError, subprocess.SubprocessError):
            pass
    for r in (os.environ.get("PYENV_ROOT"), os.path.expanduser("~/.pyenv"), "/root/.pyenv"):
        if r and r not in roots:
            roots.append(r)
    return roots


def find_python(minor):
    """Newest pyenv interpreter <root>/versions/<minor>.<patch>/bin/python."""
    pat = re.compile(r"^%s\.(\d+)$" % re.escape(minor))
    best = None
    for root in pyenv_roots():
        for d in glob.glob(os.path.join(root, "versions", minor + ".*")):
            m = pat.match(os.path.basename(d))
            exe = os.path.join(d, "bin", "python")
            if m and os.access(exe, os.X_OK):
                key = int(m.group(1))
                if best is None or key > best[0]:
                    best = (key, exe)
        if best:
            return best[1]
    return None


def installed_tf(py):
    """Version of tensorflow importable by `py`, or None."""
    if not os.access(py, os.X_OK):
        return None
    try:
        r = subprocess.run([py, "-c", "import tensorflow as tf; print(tf.__version__)"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True, env=QUIET_ENV, timeout=300)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = r.stdout.strip().splitlines()
    return lines[-1].strip() if r.returncode == 0 and lines else None


def run(cmd):
    log("$ " + " ".join(cmd))
    subprocess.run(cmd, check=True)


def build(name, minor, reqs, base):
    target = os.path.join(base, name)
    py = os.path.join(target, "bin", "python")
    want = tf_pin(reqs)
    have = installed_tf(py)
    if have == want:
        log("%s: ok (tensorflow %s already importable), skipping" % (name, have))
        return
    interp = find_python(minor)
    if interp is None:
        raise SystemExit("[make_venvs] ERROR: %s needs Python %s, but no interpreter "
                         "%s.* was found under pyenv (%s). Install it with "
                         "`pyenv install %s` or use --only to build other envs."
                         % (name, minor, minor, ", ".join(pyenv_roots()), minor))
    t0 = time.time()
    if os.path.exists(target):
        log("%s: %s, want %s: recreating" % (
            name, "tensorflow %s" % have if have else "no importable tensorflow", want))
    log("%s: creating with %s" % (name, interp))
    run([interp, "-m", "venv", "--clear", target])
    pip = [py, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    run(pip + ["--upgrade", "pip"])
    run(pip + list(reqs))
    log("%s: smoke test (import, eager op, gradient)" % name)
    r = subprocess.run([py, "-c", SMOKE], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, env=QUIET_ENV)
    if r.returncode != 0:
        sys.stderr.write(r.stderr[-3000:])
        raise SystemExit("[make_venvs] ERROR: %s: smoke test failed" % name)
    log("%s: ok, tensorflow/numpy %s (%.0fs)" % (name, r.stdout.strip(), time.time() - t0))


def main(argv=None):
    names = [e[0] for e in ENVS]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", default=os.path.expanduser("~/.cache/tfdet/venvs"),
                    help="where to put the environments (default: %(default)s)")
    ap.add_argument("--only", choices=names, metavar="NAME",
                    help="build only this one: " + ", ".join(names))
    ap.add_argument("--list", action="store_true", help="print the pins table and exit")
    args = ap.parse_args(argv)
    if args.list:
        for name, minor, reqs in ENVS:
            print("%-15s python%-5s %s" % (name, minor, " ".join(reqs)))
        return 0
    base = os.path.abspath(os.path.expanduser(args.dir))
    os.makedirs(base, exist_ok=True)
    for name, minor, reqs in ENVS:
        if args.only and name != args.only:
            continue
        build(name, minor, reqs, base)
    log("done: %s" % base)
    return 0


if __name__ == "__main__":
    sys.exit(main())
