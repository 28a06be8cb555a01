"""One worker process: start it, talk JSON lines to it, time out, restart."""

import collections
import json
import os
import queue
import subprocess
import threading
import time

from ..executor.lifeline import child_guard


class WorkerFailed(Exception):
    """The worker died or stopped answering. `stderr_tail` says what it said last."""

    def __init__(self, message, stderr_tail="", returncode=None):
        super().__init__(message)
        self.stderr_tail = stderr_tail
        self.returncode = returncode


def package_dir():
    """The directory of the tfdet package this process runs (source tree or site-packages)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Run a tfdet module in another interpreter with exactly this process's tfdet:
# the working directory is dropped from sys.path (`python -m` would put it first,
# so a checkout would shadow an installed tfdet), and tfdet is loaded from its
# own directory instead of PYTHONPATH, which would also expose this
# interpreter's site-packages to one of another Python version. Python 3.7 syntax.
_LAUNCH = """\
import importlib.util, os, runpy, sys
here = os.getcwd()
sys.path[:] = [p for p in sys.path if p not in ('', '.') and os.path.abspath(p) != here]
spec = importlib.util.spec_from_file_location(
    'tfdet', os.path.join(%(package)r, '__init__.py'), submodule_search_locations=[%(package)r])
module = importlib.util.module_from_spec(spec)
sys.modules['tfdet'] = module
spec.loader.exec_module(module)
runpy.run_module(%(module)r, run_name='__main__', alter_sys=True)
"""


def module_command(python, module):
    """argv that runs `python -m module` against this process's tfdet, whatever the working directory."""
    return [python, "-u", "-c", _LAUNCH % {"package": package_dir(), "module": module}]


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
        self.stderr = collections.deque(maxlen=self.STDERR_LINES)
        try:
            self.proc = subprocess.Popen(
                module_command(self.python, "tfdet.probe.worker"), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, env=self.environ, universal_newlines=True, bufsize=1,
                preexec_fn=child_guard(outlives_thread=True))  # dies with the probe, even mid-case
        except OSError as exc:
            raise WorkerFailed("cannot start %s: %s" % (self.python, exc.strerror or exc)) from None
        threading.Thread(target=self._pump, args=(self.proc.stdout, self.lines.put, True), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self.stderr.append, False), daemon=True).start()

    @staticmethod
    def _pump(stream, sink, mark_end):
        for line in stream:
            sink(line.rstrip("\n"))
        if mark_end:
            sink(None)  # end of stream: the process has exited

    def stderr_tail(self, lines=12):
        return "\n".join(list(self.stderr)[-lines:])

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
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()

    def stop(self):
        if self.alive():
            try:
                self.request({"cmd": "exit"}, timeout=5)
            except WorkerFailed:
                pass
            finally:
                self.kill()


def describe_exit(code):
    if code is None:
        return "still running"
    if code < 0:
        import signal

        try:
            return "killed by %s" % signal.Signals(-code).name
        except ValueError:
            return "killed by signal %d" % -code
    return "exit code %d" % code
