"""`python SCRIPT` (or `python -c CODE`, `python -m tfdet ...`) in a fresh interpreter, for tests whose
scripts begin by importing TensorFlow and tfdet (`import tensorflow as tf` / `import
tfdet`, before any other line) and for tfdet commands that import TensorFlow (scan):
forked from a process that imported them once (tfdet's fork server,
tfdet/runtime/forking.py), so a test process pays TensorFlow's 4 s import once, not
once per script. Up to that first line a forked child is where a fresh interpreter
would be: TF imported, no runtime, no op run, the script's own environment set before
any of TF's code reads it (the fork server's conditions; docs/topics/probe.md).

Where the fork server cannot be used (fork_verdict: not Linux, a GPU driver, TF < 2.8;
the server refuses, e.g. a thread after its imports; or the script's environment
differs from the server's in a variable TF may read on import), the script runs in a
plain `python SCRIPT`, as before. TFDET_TESTS_FORK=0 makes every run plain.

The child (this module, run as __main__ in it) runs the script as `python SCRIPT`
would: its directory first on sys.path, sys.argv, an uncaught exception's traceback
from the script's frame on and exit status 1, SystemExit's code, and the atexit
functions at the end (tfdet's at-exit summary among them)."""

import atexit
import os
import subprocess
import sys
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
PRELOAD = ("numpy", "tensorflow", "tfdet")
# Changes from test to test (pytest sets it) and TF never reads it.
LAZY = ("PYTEST_CURRENT_TEST",)
SERVERS = 3  # at most, a test process (one per environment the tests use; ~0.5 GB each)

_servers = {}  # frozen environment -> a started ForkServer, or the reason there is none
_starting = threading.Lock()  # runs from several threads (the corpus subset's pool) start one server an environment
_plain = []  # why runs were plain, in order (for whoever wonders why a test process was slow)


def _server(environ):
    with _starting:
        return _started_server(environ)


def _started_server(environ):
    from tfdet.runtime.forking import ForkServer, ForkServerError, fork_verdict

    key = frozenset((k, v) for k, v in environ.items() if k not in LAZY)
    if key not in _servers:
        if len(_servers) >= SERVERS:
            return None, "%d fork servers run already, for other environments" % SERVERS
        import tensorflow as tf

        why = fork_verdict(tf.__version__)
        if why is None:
            try:
                server = ForkServer(environ=environ, preload=PRELOAD, lazy=LAZY).start()
                atexit.register(server.close)
                _servers[key] = server
            except ForkServerError as exc:
                why = str(exc)
        if why is not None:
            _servers[key] = why
    found = _servers[key]
    return (None, found) if isinstance(found, str) else (found, None)


def close(environ):
    """Stop the server of this environment, if one runs (its memory back, its place free for another)."""
    with _starting:
        found = _servers.pop(frozenset((k, v) for k, v in environ.items() if k not in LAZY), None)
    if found is not None and not isinstance(found, str):
        found.close()


def run(script, env, cwd, timeout):
    """subprocess.run([python] + SCRIPT, capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout),
    forked. SCRIPT: a path, or a list: [path, args...], ["-c", code, args...] or ["-m", module, args...]."""
    from tfdet.runtime.forking import ForkServerError
    from tfdet.runtime.launch import ChildSpec

    script = [str(a) for a in script] if isinstance(script, (list, tuple)) else [str(script)]
    argv = [sys.executable] + script
    server, why = (None, "TFDET_TESTS_FORK=0") if os.environ.get("TFDET_TESTS_FORK") == "0" else _server(env)
    proc = None
    if server is not None:
        try:
            proc = server.spawn(ChildSpec(module="fresh_python", args=[HERE] + script, env=env, cwd=str(cwd),
                                          user_paths=(HERE,)))
        except ForkServerError as exc:
            why = str(exc)
    if proc is None:
        _plain.append(why)
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=str(cwd))
    proc.stdin.close()
    out, err = [], []
    readers = [threading.Thread(target=lambda s, into: into.append(s.read()), args=pair, daemon=True)
               for pair in ((proc.stdout, out), (proc.stderr, err))]
    for reader in readers:
        reader.start()
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise subprocess.TimeoutExpired(argv, timeout) from None
    for reader in readers:
        reader.join(timeout=30)
    return subprocess.CompletedProcess(argv, code, "".join(out), "".join(err))


def _ours(filename):
    return filename == __file__ or os.path.basename(filename) == "runpy.py" or filename == "<frozen runpy>"


def _child():
    """In the forked child: run sys.argv[2:] as `python ARGS` would."""
    import runpy

    helpers, script = sys.argv[1], sys.argv[2]
    if helpers in sys.path:
        sys.path.remove(helpers)
    from tfdet.runtime.forkserver import reseed_as_a_fresh_interpreter

    reseed_as_a_fresh_interpreter()
    code = 0
    try:
        if script == "-c":
            import types

            code_text, sys.argv = sys.argv[3], ["-c"] + sys.argv[4:]
            sys.path.insert(0, "")  # as python -c has it
            main = sys.modules["__main__"] = types.ModuleType("__main__")
            exec(compile(code_text, "<string>", "exec"), main.__dict__)
        elif script == "-m":
            sys.argv = [sys.argv[3]] + sys.argv[4:]  # runpy sets [0] to the module's path, as -m does
            sys.path.insert(0, os.getcwd())
            runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
        else:
            sys.argv = sys.argv[2:]
            sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        code = exc.code
    except BaseException:
        kind, value, tb = sys.exc_info()
        while tb is not None and _ours(tb.tb_frame.f_code.co_filename):
            tb = tb.tb_next  # from the script's frame on, as python prints it
        sys.excepthook(kind, value.with_traceback(tb), tb)  # the hook prints the exception's own traceback
        code = 1
    atexit._run_exitfuncs()
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)  # sys.exit("message"), as python prints it
        code = 1
    raise SystemExit(code or 0)


if __name__ == "__main__":
    _child()
