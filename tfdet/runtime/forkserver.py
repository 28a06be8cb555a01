"""The fork server: a process that imports TensorFlow once and forks a child per
TensorFlow process tfdet asks for, so each pays the import once between them.

    python -m tfdet.runtime.forkserver FD PRELOAD   (started by runtime.forking, through launch)

It imports the modules in PRELOAD (tensorflow and the tfdet modules its children
run) but creates no TensorFlow runtime: no op, no eager context, no device
listing. TF reads its determinism switches when the first op or the context
needs them (TF_DETERMINISTIC_OPS: determinism.cc, OpDeterminismRequired, reads
the variable on its first call and caches it), so a child that sets its mode's
environment right after the fork starts from the same state as a fresh
interpreter would. runtime.forking decides where that holds and checks it in
every child where TF can say (TF 2.8 and later).

It forks only while it is the only thread (a fork copies one thread; a lock
held by another, say a BLAS pool's, would stay locked in the child): it says
in its hello when it is not, and the client starts plain processes instead.

It talks over FD, a SOCK_SEQPACKET Unix socket (one JSON message per packet;
a fork request carries the child's stdin, stdout and stderr as SCM_RIGHTS):

    {"cmd": "fork", "module": M, "args": [...], "env": {...}, "cwd": C, "user_paths": [...]} + 3 fds
        -> {"ok": true, "pid": P}
    {"cmd": "status", "pid": P}            -> {"ok": true, "returncode": None or an int (-N: signal N)}
    {"cmd": "signal", "pid": P, "signal": S} -> {"ok": true, "sent": bool}
    {"cmd": "exit"}                        -> every child still running is killed, and the server ends

Every answer carries its request's "id".

A child gets SIGKILL when the server ends (PR_SET_PDEATHSIG), as the server
does when the process that started it ends (launch), so nothing outlives the
command, whichever is killed.

Runs in the interpreter under test: Python 3.7 syntax, standard library only
(plus what PRELOAD names).
"""

import array
import atexit
import gc
import importlib
import json
import os
import runpy
import select
import signal
import socket
import sys
import time
import traceback

MAX_MESSAGE = 1 << 20  # bytes: a fork request carries a whole environment
FDS_PER_CHILD = 3


def send(sock, message, fds=()):
    data = json.dumps(message).encode("utf-8")
    if fds:
        sock.sendmsg([data], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.send(data)


def receive(sock):
    """(message, [fds]); (None, []) when the other end has closed."""
    fds = array.array("i")
    data, ancillary, _, _ = sock.recvmsg(MAX_MESSAGE, socket.CMSG_SPACE(FDS_PER_CHILD * fds.itemsize))
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[:len(payload) - (len(payload) % fds.itemsize)])
    if not data:
        for fd in fds:
            os.close(fd)
        return None, []
    return json.loads(data.decode("utf-8")), list(fds)


def thread_count():
    """Threads of this process (Linux: /proc); None where it cannot be told."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return None


def runtime_started():
    """Whether TensorFlow's eager runtime exists here already (it must not, before
    a fork). TF 2.6's import makes the Python Context object, uninitialised: no runtime yet."""
    module = sys.modules.get("tensorflow.python.eager.context")
    context = getattr(module, "_context", None)
    return context is not None and bool(getattr(context, "_initialized", True))


def why_not_fork():
    """Why this process must not fork, or None."""
    threads = thread_count()
    if threads is None:
        return "cannot count this process's threads (no /proc)"
    if threads != 1:
        return "the server has %d threads after importing TensorFlow (a fork copies only one)" % threads
    if runtime_started():
        return "TensorFlow's runtime was created while importing"
    return None


def preload(names):
    """Import `names` in turn; {name: error} of those that failed (tensorflow's is fatal)."""
    failed = {}
    for name in names:
        try:
            importlib.import_module(name)
        except Exception as exc:  # e.g. tfdet.patching without PyYAML: its child reports it as a plain one would
            if name == "tensorflow":
                raise
            failed[name] = "%s: %s" % (type(exc).__name__, exc)
    return failed


def exit_code(status):
    """A waitpid status as Popen's returncode (-N for signal N)."""
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


class Server(object):
    def __init__(self, control):
        self.control = control
        self.children = {}  # pid -> None while running, then its returncode

    def reap(self):
        for pid, code in list(self.children.items()):
            if code is None:
                try:
                    done, status = os.waitpid(pid, os.WNOHANG)
                except ChildProcessError:
                    self.children[pid] = -signal.SIGKILL
                    continue
                if done:
                    self.children[pid] = exit_code(status)

    def serve(self):
        while True:
            self.reap()
            ready, _, _ = select.select([self.control], [], [], 0.2)
            if not ready:
                continue
            message, fds = receive(self.control)
            if message is None or message.get("cmd") == "exit":
                return
            cmd = message.get("cmd")
            if cmd == "fork":
                self.reply(message, {"ok": True, "pid": self.fork(message, fds)})
            elif cmd == "status":
                self.reap()
                self.reply(message, {"ok": True, "returncode": self.children.get(message["pid"])})
            elif cmd == "signal":
                sent = False
                if message["pid"] in self.children and self.children[message["pid"]] is None:
                    try:  # only a child not yet reaped: its pid cannot have been reused
                        os.kill(message["pid"], int(message["signal"]))
                        sent = True
                    except OSError:
                        pass
                self.reply(message, {"ok": True, "sent": sent})
            else:
                self.reply(message, {"ok": False, "error": "unknown command %r" % cmd})

    def reply(self, message, answer):
        answer["id"] = message.get("id")  # the client skips answers to requests it gave up on
        send(self.control, answer)

    def fork(self, message, fds):
        sys.stdout.flush()
        sys.stderr.flush()
        server = os.getpid()
        pid = os.fork()
        if pid == 0:  # the child never returns into the server's loop
            code = 1
            try:
                code = become_child(message, fds, self.control, server)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            except BaseException:
                traceback.print_exc()
            finally:
                try:
                    # as a fresh interpreter ends: TF's autograph, for one, removes the
                    # source files it wrote to the temp directory in an atexit function
                    atexit._run_exitfuncs()
                    sys.stdout.flush()
                    sys.stderr.flush()
                finally:
                    os._exit(code)
        for fd in fds:
            os.close(fd)
        self.children[pid] = None
        return pid

    def stop_children(self):
        self.reap()
        for pid, code in self.children.items():
            if code is None:
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except OSError:
                    pass


def reseed_as_a_fresh_interpreter():
    """In a forked child: numpy's global generator was seeded from the OS once, in the
    server, for every child alike; a fresh interpreter seeds its own (Python's random
    reseeds itself after a fork)."""
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed()


def become_child(message, fds, control, server):
    """In the forked child: dies with the server, takes its pipes and its
    mode's environment (before anything of TF's runs), then runs its module."""
    from tfdet.executor.lifeline import die_with_parent

    control.close()
    die_with_parent(signal.SIGKILL, server)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        if fd > 2:
            os.close(fd)
    os.environ.clear()  # unsetenv for each: TF's getenv sees exactly the mode's environment
    os.environ.update(message["env"])
    if message.get("cwd"):
        os.chdir(message["cwd"])
    sys.path[:0] = [p for p in message.get("user_paths", []) if p not in sys.path]
    sys.argv = [message["module"]] + [str(a) for a in message.get("args", [])]
    reseed_as_a_fresh_interpreter()
    runpy.run_module(message["module"], run_name="__main__", alter_sys=True)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    fd, names = int(argv[0]), [n for n in argv[1].split(",") if n] if len(argv) > 1 else []
    control = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET, fileno=fd)
    started = time.perf_counter()
    try:
        failed = preload(["numpy", "tensorflow"] + [n for n in names if n not in ("numpy", "tensorflow")])
    except Exception as exc:
        send(control, {"ok": False, "error": "%s: %s" % (type(exc).__name__, exc)})
        return 4
    tf = sys.modules["tensorflow"]
    refused = why_not_fork() if hasattr(os, "fork") else "no os.fork on this platform"
    send(control, {"ok": True, "hello": True, "tf_version": tf.__version__, "pid": os.getpid(),
                   "import_seconds": time.perf_counter() - started, "preload_failed": failed, "refused": refused})
    if refused:
        return 0
    if hasattr(gc, "freeze"):  # what the imports made stays shared with the children (no copy on write)
        gc.collect()
        gc.freeze()
    server = Server(control)
    try:
        server.serve()
    finally:
        server.stop_children()
    return 0


if __name__ == "__main__":
    sys.exit(main())
