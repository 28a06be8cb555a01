"""The one way tfdet starts a child process: a TensorFlow worker, a training,
a locate run, a probe of another environment, or an environment's own tools.

    result = launch(ChildSpec(module="tfdet.diverge.training", args=[spec, out], timeout=600))
    child = start(ChildSpec(module="tfdet.probe.worker", env=environ), interactive=True)  # long-lived

What every child gets, decided here once:

- the interpreter (`python`, default this one) and, for a tfdet module, exactly
  this process's tfdet package: the working directory is dropped from sys.path
  before tfdet is loaded from its own directory (`python -m` would put the
  working directory first, so a checkout there would shadow the installed tfdet,
  and PYTHONPATH would also expose this interpreter's site-packages to another
  Python). Paths the user's code needs (locate imports the user's function from
  where it was found) are added after tfdet is loaded: they cannot shadow it;
- the environment (`child_environ`: this one, minus and plus what the mode says);
- a timeout, and how a child is stopped (`stop`: signals in turn, each with a
  grace period), for the whole process group when the child leads one;
- that it dies with the process that started it (PR_SET_PDEATHSIG, see
  executor/lifeline.py), and, for a job run by an executor, that SIGTERM to the
  job stops the child the same way (executor/signals.py);
- how it ended (`describe_exit`) and the tail of what it said on stderr.

Only this module starts processes (tests/test_layers.py checks it).
"""

import collections
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

from ..executor.lifeline import child_guard
from ..executor.signals import restore_sigterm, unwind_on_sigterm

# How a child is stopped: (signal, seconds to wait for it to go) in turn.
KILL = ((signal.SIGKILL, 5.0),)
TERMINATE = ((signal.SIGTERM, 60.0), (signal.SIGKILL, 5.0))  # a probe stops as on Ctrl-C, keeping its cases
INTERRUPT = ((signal.SIGINT, 5.0), (signal.SIGKILL, 5.0))  # a user's program: KeyboardInterrupt first

STDERR_TAIL = 2000  # characters of stderr a failed child's record keeps


def package_dir():
    """The directory of the tfdet package this process runs (source tree or site-packages)."""
    return os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# Python 3.7 syntax: the interpreter may be another environment's.
_BOOTSTRAP = """\
import importlib.util, os, runpy, sys
here = os.getcwd()
sys.path[:] = [p for p in sys.path if p not in ('', '.') and os.path.abspath(p) != here]
spec = importlib.util.spec_from_file_location(
    'tfdet', os.path.join(%(package)r, '__init__.py'), submodule_search_locations=[%(package)r])
module = importlib.util.module_from_spec(spec)
sys.modules['tfdet'] = module
spec.loader.exec_module(module)
sys.path[:0] = [p for p in %(user_paths)r if p not in sys.path]
runpy.run_module(%(module)r, run_name='__main__', alter_sys=True)
"""


def module_argv(python, module, args=(), user_paths=()):
    """argv that runs `python -m module ARGS` against this process's tfdet, whatever the working directory."""
    code = _BOOTSTRAP % {"package": package_dir(), "module": module, "user_paths": list(user_paths)}
    return [python, "-u", "-c", code] + [str(a) for a in args]


@dataclass(frozen=True)
class ChildSpec:
    """What to start, and how. Exactly one of module, code and tool."""

    module: Optional[str] = None  # a tfdet module, run as __main__ with this process's tfdet
    code: Optional[str] = None  # Python source for a bare interpreter (an environment's smoke test)
    tool: Optional[Tuple[str, ...]] = None  # an argv as it is (pip, pyenv, python -m venv)
    args: Tuple[str, ...] = ()
    python: Optional[str] = None  # the interpreter (module, code); default this one
    env: Optional[Mapping[str, str]] = None  # the whole environment; default this process's
    user_paths: Tuple[str, ...] = ()  # added to sys.path after tfdet is loaded (module only)
    cwd: Optional[str] = None
    timeout: Optional[float] = None  # seconds; then the child is stopped and the result says timed_out
    stop: Tuple[Tuple[int, float], ...] = KILL
    dies_with_parent: int = signal.SIGKILL  # what the child gets when the starting thread ends
    own_group: bool = False  # lead a process group: what the child starts is stopped with it
    stop_on_sigterm: bool = False  # an executor job: SIGTERM to this process stops the child, then unwinds
    stdout: str = "discard"  # "discard" or "capture"
    log: Optional[str] = None  # a file that gets stdout and stderr (instead of capturing stderr)
    pass_fds: Tuple[int, ...] = ()  # descriptors the child keeps (the fork server's control socket)

    def argv(self):
        python = self.python or sys.executable
        if self.module is not None:
            return module_argv(python, self.module, self.args, self.user_paths)
        if self.code is not None:
            return [python, "-c", self.code] + [str(a) for a in self.args]
        return [str(a) for a in self.tool] + [str(a) for a in self.args]


@dataclass(frozen=True)
class ChildResult:
    """How a child ended and what it said."""

    returncode: Optional[int]
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    seconds: float = 0.0

    @property
    def ok(self):
        return self.returncode == 0 and not self.timed_out

    def describe_exit(self):
        return describe_exit(self.returncode)

    def stderr_tail(self, chars=STDERR_TAIL):
        return (self.stderr or "").strip()[-chars:]

    def last_line(self):
        tail = self.stderr_tail()
        return tail.splitlines()[-1] if tail else ""


def describe_exit(code):
    """'exit code 3', 'killed by SIGKILL', ... for a returncode."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return "killed by %s" % signal.Signals(-code).name
        except ValueError:
            return "killed by signal %d" % -code
    return "exit code %d" % code


def child_environ(unset=(), env=None, defaults=None, base=None):
    """An environment for a child: `base` (this process's), minus `unset`, plus
    `env`, plus `defaults` for what neither has."""
    environ = {k: v for k, v in (os.environ if base is None else base).items() if k not in set(unset)}
    environ.update(env or {})
    for key, value in (defaults or {}).items():
        environ.setdefault(key, value)
    return environ


def descendants(pid):
    """The pids below `pid` (read from /proc; none where there is no /proc)."""
    children = {}
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                with open("/proc/%s/stat" % entry) as handle:
                    ppid = int(handle.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


class Child(object):
    """A started child, Popen-style: its pipes, poll/wait, and stop() by the spec's signals."""

    def __init__(self, spec, process):
        self.spec = spec
        self.process = process
        self.pid = process.pid
        self.stdin, self.stdout, self.stderr = process.stdin, process.stdout, process.stderr

    @property
    def returncode(self):
        return self.process.returncode

    def poll(self):
        return self.process.poll()

    def wait(self, timeout=None):
        return self.process.wait(timeout)

    def signal(self, signum):
        """Send `signum` to the child (to its whole group when it leads one); False if it is gone."""
        try:
            if self.spec.own_group:
                os.killpg(self.pid, signum)
            else:
                self.process.send_signal(signum)
        except (ProcessLookupError, PermissionError):
            return False
        return True

    def kill(self):
        """SIGKILL now, and reap it."""
        if self.process.poll() is None:
            self.signal(signal.SIGKILL)
            self.process.wait()
        self.kill_group()

    def stop(self, steps=None):
        """Stop the child by the spec's signals in turn (or `steps`), each with its grace period.
        A group leader's descendants go too, even those in sessions of their own (out of reach
        of the group's signal), as found below it before it was stopped."""
        below = descendants(self.pid) if self.spec.own_group else []
        for signum, grace in (self.spec.stop if steps is None else steps):
            if self.process.poll() is not None:
                break
            if not self.signal(signum):
                break
            try:
                self.process.wait(timeout=grace)
                break
            except subprocess.TimeoutExpired:
                continue
        self.kill_group()
        for pid in below:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def kill_group(self):
        """What a group leader started and left running goes with it."""
        if self.spec.own_group:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass

    def finish(self):
        """Wait for the end (the spec's timeout; a timed-out child is stopped) and
        collect what it said. Interrupted (Ctrl-C, or SIGTERM to a job), the
        child is stopped first, then the interruption goes on."""
        started = time.monotonic()
        previous = unwind_on_sigterm() if self.spec.stop_on_sigterm else None
        timed_out = False
        try:
            try:
                stdout, stderr = self.process.communicate(timeout=self.spec.timeout)
            except subprocess.TimeoutExpired:
                timed_out = True
                self.stop()
                stdout, stderr = self.process.communicate()
        except BaseException:
            self.stop()
            raise
        finally:
            restore_sigterm(previous)
            self.kill_group()
        return ChildResult(self.process.returncode, stdout or "", stderr or "", timed_out,
                           time.monotonic() - started)


def start(spec, interactive=False, server=None):
    """Start the child; a Child. interactive: stdin, stdout and stderr are
    line-buffered text pipes (a worker answering requests), and the child may
    outlive the thread starting it. OSError if it cannot start.

    server: a runtime.forking.ForkServer to fork the child from (a tfdet module,
    interactive only) instead of starting an interpreter; ForkServerError when
    it cannot, and the caller starts it plainly."""
    if server is not None:
        if not interactive or spec.module is None or spec.own_group:
            raise ValueError("a forked child is an interactive tfdet module in the fork server's group")
        return Child(spec, server.spawn(spec))
    guard = child_guard(spec.dies_with_parent, outlives_thread=interactive)
    options = dict(env=None if spec.env is None else dict(spec.env), cwd=spec.cwd, universal_newlines=True,
                   preexec_fn=guard, start_new_session=spec.own_group, pass_fds=tuple(spec.pass_fds))
    if interactive:
        options.update(stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=1)
        return Child(spec, subprocess.Popen(spec.argv(), **options))
    if spec.log is not None:
        with open(spec.log, "wb") as log:
            options.update(stdout=log, stderr=subprocess.STDOUT)
            return Child(spec, subprocess.Popen(spec.argv(), **options))
    options.update(stdout=subprocess.PIPE if spec.stdout == "capture" else subprocess.DEVNULL, stderr=subprocess.PIPE)
    return Child(spec, subprocess.Popen(spec.argv(), **options))


def launch(spec):
    """Start the child and wait for its end; a ChildResult. OSError if it cannot start."""
    return start(spec).finish()


class StderrTail(object):
    """The last lines a long-lived child wrote on stderr, read by a thread as they come."""

    def __init__(self, stream, lines=40):
        self.lines = collections.deque(maxlen=lines)
        threading.Thread(target=self._pump, args=(stream,), daemon=True).start()

    def _pump(self, stream):
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def append(self, line):
        self.lines.append(line)

    def text(self, lines=12):
        return "\n".join(list(self.lines)[-lines:])


__all__ = ["ChildSpec", "ChildResult", "Child", "launch", "start", "child_environ", "describe_exit", "module_argv",
           "package_dir", "KILL", "TERMINATE", "INTERRUPT", "StderrTail"]
