"""Children forked from a fork server (runtime/forkserver.py): TensorFlow
imported once for all of them. The client side, and when it may be used.

    server = ForkServer(python, environ, preload=("tfdet.probe.worker",), lazy=switch_names).start()
    child = launch.start(ChildSpec(module="tfdet.probe.worker", env=mode_environ), interactive=True, server=server)
    ...
    server.close()

A forked child looks like a started one (runtime.launch.Child: its pipes,
poll, wait, signal, kill), so its user cannot tell, except in how long it
took. Where a fork is not safe or its outcome is not verified, `fork_verdict`
says why, and the caller starts plain processes (and says so in its results).
"""

import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time

from . import forkserver as protocol
from .launch import ChildSpec, StderrTail, describe_exit, start

# From TF 2.8 a child can ask TF whether op determinism is on
# (tf.config.experimental.enable_op_determinism's own flag, which
# TF_DETERMINISTIC_OPS sets too: determinism.cc), so the probe checks in every
# forked child that its mode's environment took effect. Before, it cannot tell.
CHECKED_FROM = (2, 8)

# Set for the server only: with a BLAS pool running, it would have more than
# one thread and refuse to fork. Its children get their own environment back
# (numpy in them keeps one BLAS thread; the probe measures TensorFlow's ops).
SERVER_ONLY = {"OPENBLAS_NUM_THREADS": "1"}


NVIDIA_DRIVER = "/proc/driver/nvidia/version"


class ForkServerError(Exception):
    """The fork server cannot start, refused to fork, or is gone."""


def fork_verdict(tf_version, platform=None):
    """None where a probe may fork its TensorFlow processes for this TF, else why not."""
    platform = sys.platform if platform is None else platform
    if not platform.startswith("linux"):
        return "the fork server runs on Linux only (here %s)" % platform
    if os.path.exists(NVIDIA_DRIVER):
        return "a GPU driver is present, and forking after TF's CUDA libraries are loaded is not checked on a GPU"
    numbers = [int(n) for n in re.findall(r"\d+", tf_version or "")[:2]]
    if len(numbers) < 2:
        return "unknown TF version %r" % tf_version
    if tuple(numbers) < CHECKED_FROM:
        return ("TF %s cannot say whether op determinism is on in a forked child (its flag arrived in TF 2.8), "
                "so the child's mode could not be checked" % tf_version)
    return None


class ForkedProcess(object):
    """A child of the fork server, Popen-style (what launch.Child needs of a process)."""

    def __init__(self, server, pid, stdin, stdout, stderr):
        self.server, self.pid = server, pid
        self.stdin, self.stdout, self.stderr = stdin, stdout, stderr
        self.returncode = None

    def poll(self):
        if self.returncode is None:
            self.returncode = self.server.status(self.pid)
        return self.returncode

    def wait(self, timeout=None):
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired("forked child %d" % self.pid, timeout)
            time.sleep(0.02)
        return self.returncode

    def send_signal(self, signum):
        if self.poll() is None:
            self.server.signal(self.pid, signum)

    def kill(self):
        self.send_signal(signal.SIGKILL)

    def communicate(self, timeout=None):
        raise NotImplementedError("a forked child is interactive: read its pipes")


class ForkServer(object):
    """A started fork server; `start()` raises ForkServerError with the reason when there is none."""

    def __init__(self, python=None, environ=None, preload=(), lazy=(), timeout=180.0):
        self.python = python
        self.environ = dict(os.environ if environ is None else environ)
        self.preload = tuple(preload)
        self.lazy = set(lazy)  # variables a child may set differently: TF reads them after the fork
        self.timeout = timeout
        self.child = None
        self.socket = None
        self.lock = threading.Lock()
        self.hello = {}
        self.asked = 0  # requests sent: each answer names its request, so a late one is skipped

    def start(self):
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        environ = dict(self.environ, **SERVER_ONLY)
        spec = ChildSpec(module="tfdet.runtime.forkserver", python=self.python, env=environ, own_group=True,
                         args=(str(theirs.fileno()), ",".join(self.preload)), pass_fds=(theirs.fileno(),))
        try:
            self.child = start(spec, interactive=True)
        except OSError as exc:
            raise ForkServerError("cannot start %s: %s" % (self.python or sys.executable, exc)) from None
        finally:
            theirs.close()
        self.socket = mine
        self.stderr = StderrTail(self.child.stderr)
        StderrTail(self.child.stdout)  # drained, so that the server never blocks on a full pipe
        hello = self._ask(None, timeout=self.timeout)
        if not hello.get("ok"):
            self.close()
            raise ForkServerError("the fork server could not import TensorFlow: %s" % hello.get("error"))
        if hello.get("refused"):
            self.close()
            raise ForkServerError(hello["refused"])
        self.hello = hello
        return self

    def _ask(self, message, fds=(), timeout=30.0):
        with self.lock:
            if self.socket is None:
                raise ForkServerError("the fork server is closed")
            try:
                self.socket.settimeout(timeout)
                if message is not None:
                    self.asked += 1
                    protocol.send(self.socket, dict(message, id=self.asked), fds)
                while True:  # an answer to a request interrupted (Ctrl-C) while waiting is skipped
                    answer, _ = protocol.receive(self.socket)
                    if answer is None or message is None or answer.get("id") == self.asked:
                        break
            except OSError as exc:  # socket.timeout too
                raise ForkServerError("the fork server did not answer (%s)%s" % (exc, self._said())) from None
        if answer is None:
            raise ForkServerError("the fork server ended (%s)%s" % (describe_exit(self.child.poll()), self._said()))
        return answer

    def _said(self):
        tail = self.stderr.text(3) if self.child is not None and hasattr(self, "stderr") else ""
        return (": " + tail) if tail else ""

    def alive(self):
        return self.socket is not None and self.child is not None and self.child.poll() is None

    def spawn(self, spec):
        """Fork a child running `spec.module` with `spec.env`; a ForkedProcess.
        ForkServerError when the server is gone, or when the child's environment
        differs from the server's in a variable TF may have read already."""
        environ = dict(os.environ if spec.env is None else spec.env)
        early = sorted(k for k in set(environ) | set(self.environ)
                       if environ.get(k) != self.environ.get(k) and k not in self.lazy)
        if early:
            raise ForkServerError("the child's environment differs in %s, which TF may read on import" %
                                  ", ".join(early))
        stdin, stdout, stderr = os.pipe(), os.pipe(), os.pipe()  # (read, write) each
        ours = [stdin[1], stdout[0], stderr[0]]
        theirs = [stdin[0], stdout[1], stderr[1]]
        try:
            answer = self._ask({"cmd": "fork", "module": spec.module, "args": list(spec.args), "env": environ,
                                "cwd": spec.cwd, "user_paths": list(spec.user_paths)}, fds=theirs)
        except ForkServerError:
            for fd in ours:
                os.close(fd)
            raise
        finally:
            for fd in theirs:
                os.close(fd)
        return ForkedProcess(self, answer["pid"], os.fdopen(ours[0], "w", buffering=1), os.fdopen(ours[1], "r"),
                             os.fdopen(ours[2], "r"))

    def status(self, pid):
        """The child's returncode, None while it runs; one gone with the server died by SIGKILL (its lifeline)."""
        try:
            return self._ask({"cmd": "status", "pid": pid})["returncode"]
        except ForkServerError:
            return -signal.SIGKILL

    def signal(self, pid, signum):
        try:
            return self._ask({"cmd": "signal", "pid": pid, "signal": int(signum)})["sent"]
        except ForkServerError:
            return False

    def close(self):
        """Stop the server and every child it forked."""
        if self.socket is not None:
            with self.lock:
                try:
                    protocol.send(self.socket, {"cmd": "exit"})
                except OSError:
                    pass
                self.socket.close()
                self.socket = None
        if self.child is not None:
            try:
                self.child.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self.child.stop()  # its group, and whatever ended up below it


__all__ = ["ForkServer", "ForkServerError", "ForkedProcess", "fork_verdict", "CHECKED_FROM"]
