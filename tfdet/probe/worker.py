"""The probe worker: runs probe cases inside one TensorFlow process.

Started by the runner as `python -m tfdet.probe.worker` in the interpreter under
test, possibly another virtual environment with another TF (1.14 to 2.21), so it
uses only the standard library, numpy and TensorFlow, and Python 3.7 syntax.

The mode (which determinism switches are on) is fixed for the life of the
process: environment variables arrive in the environment, before TF is
imported; API calls are listed in the first command. Then the worker answers
one JSON command per line on stdin with one JSON line on its protocol stream.
TF and user code may print to stdout, so the protocol gets a private copy of
the original stdout and fd 1 is pointed at stderr.
"""

import io
import json
import os
import re
import sys
import time
import traceback


def _protocol_stream():
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return protocol


class Worker(object):
    def __init__(self, tf, np):
        self.tf = tf
        self.np = np
        self.prepared = {}  # (case id, pass, size, seed) -> Prepared: the case in hand only
        self.prepare_seconds = 0.0  # spent building cases, told with each answer (where a probe's time goes)

    # -- commands ----------------------------------------------------------

    def setup(self, command):
        """Apply the mode's API switches, pin threads and execution mode, seed."""
        tf = self.tf
        threads = command.get("threads") or {}
        if hasattr(tf.config, "threading"):
            if threads.get("intra"):
                tf.config.threading.set_intra_op_parallelism_threads(int(threads["intra"]))
            if threads.get("inter"):
                tf.config.threading.set_inter_op_parallelism_threads(int(threads["inter"]))
        from tfdet.runtime.apply import apply_mode

        patch = None
        if command.get("patch"):
            import tfdet

            patch = tfdet.patch
        # What patch() says (a line on stderr, warnings about what it does not
        # cover) is kept, never fatal: the mode is measured either way.
        patch_warnings = apply_mode(tf, command.get("api_calls", []), patch, command.get("patch_kwargs", {}))
        self.execution = command.get("execution", "function")
        environment = self.environment()
        if patch_warnings is not None:
            environment["patch_warnings"] = patch_warnings
        return {"ok": True, "environment": environment}

    def environment(self):
        from tfdet.probe import environment

        return environment.describe(self.tf, self.np)

    def variance(self, command):
        """Run one case `repeats` times; digest every result, keep distinct ones."""
        from tfdet.results import stats

        digests, saved = [], {}
        for _ in range(int(command["repeats"])):
            try:
                output = self._prepare(command).run()
            except Exception as exc:  # an error is a result: ops that raise under determinism
                return {"ok": True, "raised": _describe_error(exc), "digests": digests, "saved": saved}
            key = stats.digest(output)
            digests.append(key)
            if key not in saved and command.get("scratch"):
                path = os.path.join(command["scratch"], "%s-%s.npy" % (command["tag"], key[:16]))
                try:
                    _save(self.np, path, output)
                except OSError as exc:  # the machine's fault, not the case's: the probe stops (exit 5)
                    return {"ok": False, "scratch_error": {"errno": exc.errno, "strerror": exc.strerror or str(exc),
                                                           "path": exc.filename or path}}
                saved[key] = path
        return {"ok": True, "raised": None, "digests": digests, "saved": saved}

    def time(self, command):
        """Latency samples (seconds) of one case, after the variance runs warmed it up."""
        samples = []
        for _ in range(int(command.get("samples", 1))):
            try:
                prepared = self._prepare(command)
                start = time.perf_counter()
                prepared.run()
            except Exception as exc:
                return {"ok": True, "raised": _describe_error(exc), "samples": samples}
            samples.append(time.perf_counter() - start)
        return {"ok": True, "raised": None, "samples": samples}

    def _prepare(self, command):
        """The case built (and traced, in a tf.function) once per worker; its runs reuse it."""
        from tfdet.probe import cases

        key = (command["case"], command["pass"], float(command.get("size", 1.0)), int(command.get("seed", 0)))
        if key not in self.prepared:
            # Only the case in hand is kept: the runner finishes a case (variance, extra
            # runs, timing) before the next, and never returns to it. Keeping every case
            # held its inputs and traced graphs to the end, over 1.4 GB a worker by the
            # last cases of a default run, in each of its 8 to 12 workers.
            self.prepared.clear()
            started = time.perf_counter()
            self.prepared[key] = cases.prepare(
                self.tf, self.np, command["case"], command["pass"], key[2], key[3], self.execution)
            self.prepare_seconds += time.perf_counter() - started
        return self.prepared[key]


def _save(np, path, array):
    """np.save through a Python file write, whose OSError keeps its errno (ENOSPC,
    EFBIG, ...); numpy's own writer reports only '40000 requested and 16352 written'."""
    buffer = io.BytesIO()
    np.save(buffer, array)
    with open(path, "wb") as handle:
        handle.write(buffer.getbuffer())


_WRAPPER_LINES = ("Graph execution error", "Detected at node", "Node: ", "[[", "]]", "in user code:", "File ",
                  "Traceback (most recent call last)", "Errors may have originated", "Input Source operations",
                  "Operation defined at", "Call arguments received", ">>>", "In[", "(defined at")
# "RuntimeError: message": a Python exception raised inside tf.py_function,
# which TF re-raises as UnknownError.
_INNER_EXCEPTION = re.compile(r"^([A-Z][A-Za-z0-9_]*(?:Error|Exception)): (.*)$")


def _describe_error(exc):
    """Type and the informative line(s) of an error. TF graph errors wrap the
    real message in 'Graph execution error:', node names and a Python
    traceback (before TF 2.3, autograph's in 'in converted code:'); an error
    raised in Python inside tf.py_function (how the probe runs Keras cases)
    comes back as UnknownError around the exception a user calling that code
    directly would get, so that inner exception is the one described."""
    text = str(getattr(exc, "message", None) or exc)
    lines = [line.strip() for line in text.splitlines()]
    if lines and lines[0] == "in converted code:":  # the error itself is its last, indented line
        return {"type": type(exc).__name__, "message": [line for line in lines if line][-1][:500]}
    useful = [
        line for line, raw in zip(lines, text.splitlines())
        if line and not raw.startswith(("\t", "  ")) and not line.startswith(_WRAPPER_LINES)
    ]
    kind = type(exc).__name__
    inner = _INNER_EXCEPTION.match(useful[0]) if useful and kind == "UnknownError" else None
    if inner:
        kind = inner.group(1)
        useful[0] = inner.group(2)
    message = " ".join(useful[:2]) or (lines[0] if lines else "")
    return {"type": kind, "message": message[:500]}


def _identity(np):
    """What a fresh interpreter has of its own and forks of one server share unless
    reseeded: Python's hash seed and numpy's global generator (runtime/forkserver.py
    reseeds the latter; the probe forks the processes of a mode from different servers)."""
    # the key's word 0 is the same after any seeding; word 1 is not
    return {"str_hash": hash("tfdet"), "numpy_state": int(np.random.get_state()[1][1])}


def main():
    protocol = _protocol_stream()

    def reply(obj):
        protocol.write(json.dumps(obj) + "\n")
        protocol.flush()

    started = time.perf_counter()
    import warnings

    # A warning (TF's, or tfdet.patch()'s about an op it does not cover) goes to
    # stderr once per place; it never becomes an error inside a measured case,
    # whatever PYTHONWARNINGS the user has.
    warnings.resetwarnings()
    warnings.simplefilter("default")
    try:
        import numpy as np
        import tensorflow as tf

        if not hasattr(tf, "function") or tf.__version__.startswith("1."):
            tf.compat.v1.enable_eager_execution()
    except Exception as exc:
        reply({"ok": False, "fatal": True, "error": _describe_error(exc), "traceback": traceback.format_exc()})
        return 4
    worker = Worker(tf, np)
    reply({"ok": True, "hello": True, "tf_version": tf.__version__, "import_seconds": time.perf_counter() - started,
           "pid": os.getpid(), "identity": _identity(np)})
    handlers = {"setup": worker.setup, "variance": worker.variance, "time": worker.time}
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        if command.get("cmd") == "exit":
            reply({"ok": True, "bye": True})
            return 0
        try:
            before, cpu = worker.prepare_seconds, time.process_time()
            answer = handlers[command["cmd"]](command)
            answer["prepare_seconds"] = worker.prepare_seconds - before
            answer["cpu_seconds"] = time.process_time() - cpu  # every thread of the worker: where CPU goes
            reply(answer)
        except Exception as exc:  # a bug or a bad case: report it and stay alive
            reply({"ok": False, "error": _describe_error(exc), "traceback": traceback.format_exc()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
