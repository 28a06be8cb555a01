"""One worker process: start it, talk JSON lines to it, time out, restart."""

import json
import queue
import threading
import time

from ..runtime.forking import ForkServerError
from ..runtime.launch import ChildSpec, StderrTail, describe_exit, start

# What the worker imports, for a fork server to import once for all workers
# (tfdet.patching only where the interpreter has its dependencies).
PRELOAD = ("tfdet.probe.worker", "tfdet.probe.cases", "tfdet.probe.environment", "tfdet.results.stats",
           "tfdet.runtime.apply", "tfdet.patching")


# Seconds a worker asked to exit has to end by itself before it is killed (Python's exit with
# TensorFlow loaded takes well under one here).
EXIT_GRACE = 5.0


class WorkerFailed(Exception):
    """The worker died or stopped answering. `stderr_tail` says what it said last."""

    def __init__(self, message, stderr_tail="", returncode=None):
        super().__init__(message)
        self.stderr_tail = stderr_tail
        self.returncode = returncode


def worker_environ(environ):
    """A worker's environment: `environ`, with TF's C++ logging at warnings unless set."""
    environ = dict(environ)
    environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    return environ


class WorkerProcess(object):
    STDERR_LINES = 40

    def __init__(self, python, environ, name, server=None):
        self.python = python
        self.environ = worker_environ(environ)
        self.name = name
        self.server = server  # a runtime.forking.ForkServer to fork from, or None: a fresh interpreter
        self.proc = None
        self.forked = False
        self.fork_failed = None  # why a worker meant to be forked was started plainly

    def start(self):
        self.lines = queue.Queue()
        spec = ChildSpec(module="tfdet.probe.worker", python=self.python, env=self.environ)
        self.forked = False
        if self.server is not None and self.server.alive():
            try:
                self.proc = start(spec, interactive=True, server=self.server)
                self.forked = True
            except ForkServerError as exc:  # the server is gone, or this environment cannot be forked
                self.fork_failed = str(exc)
        if not self.forked:
            try:  # dies with the probe, even mid-case
                self.proc = start(spec, interactive=True)
            except OSError as exc:
                raise WorkerFailed("cannot start %s: %s" % (self.python, exc.strerror or exc)) from None
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put), daemon=True).start()
        self.stderr = StderrTail(self.proc.stderr, self.STDERR_LINES)

    @staticmethod
    def _pump(stream, sink):
        for line in stream:
            sink(line.rstrip("\n"))
        sink(None)  # end of stream: the process has exited

    def stderr_tail(self, lines=12):
        return self.stderr.text(lines)

    def receive(self, timeout):
        """The next protocol message; WorkerFailed on death or timeout."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self.kill()
                raise WorkerFailed("%s did not answer within %.0f s (killed)" % (self.name, timeout),
                                   self.stderr_tail()) from None
            if line is None:
                code = self.proc.wait()
                time.sleep(0.05)  # let the stderr pump catch the last words
                raise WorkerFailed("%s died (%s)" % (self.name, describe_exit(code)), self.stderr_tail(), code)
            try:
                return json.loads(line)
            except ValueError:
                self.stderr.append("[stdout] " + line)

    def request(self, command, timeout):
        try:
            self.proc.stdin.write(json.dumps(command) + "\n")
            self.proc.stdin.flush()
        except (OSError, ValueError):
            pass  # a dead worker: receive() reports how it died
        return self.receive(timeout)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        if self.proc is not None:
            self.proc.kill()

    def ask_to_exit(self):
        """Ask the worker to end by itself, as a Python program ends: its atexit functions
        run (TF's autograph removes the source files it wrote to the temp directory there).
        False if it is gone or did not answer."""
        if not self.alive():
            return False
        try:
            self.request({"cmd": "exit"}, timeout=5)
            return True
        except WorkerFailed:
            return False

    def await_exit(self, seconds):
        """Wait up to `seconds` for the worker to end; whether it has."""
        deadline = time.monotonic() + seconds
        while self.proc.poll() is None:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.01)
        return True


def stop_all(workers, grace=EXIT_GRACE):
    """Stop `workers` together: each is asked to exit, then all get the same `grace` seconds
    to end by themselves, then any left is killed. Killed right after its goodbye, a worker
    often had not run its atexit functions yet: a default probe left about 30 of autograph's
    files in the temp directory."""
    try:
        asked = [worker for worker in workers if worker.ask_to_exit()]
        deadline = time.monotonic() + grace
        for worker in asked:
            worker.await_exit(deadline - time.monotonic())
    finally:
        for worker in workers:
            worker.kill()
