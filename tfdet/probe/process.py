"""One worker process: start it, talk JSON lines to it, time out, restart."""

import json
import queue
import threading
import time

from ..runtime.launch import ChildSpec, StderrTail, describe_exit, start


class WorkerFailed(Exception):
    """The worker died or stopped answering. `stderr_tail` says what it said last."""

    def __init__(self, message, stderr_tail="", returncode=None):
        super().__init__(message)
        self.stderr_tail = stderr_tail
        self.returncode = returncode


class WorkerProcess(object):
    STDERR_LINES = 40

    def __init__(self, python, environ, name):
        self.python = python
        self.environ = dict(environ)
        self.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
        self.name = name
        self.proc = None

    def start(self):
        self.lines = queue.Queue()
        try:  # dies with the probe, even mid-case
            self.proc = start(ChildSpec(module="tfdet.probe.worker", python=self.python, env=self.environ),
                              interactive=True)
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

    def stop(self):
        if self.alive():
            try:
                self.request({"cmd": "exit"}, timeout=5)
            except WorkerFailed:
                pass
            finally:
                self.kill()
