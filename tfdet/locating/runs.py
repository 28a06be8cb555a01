"""Run a program several times, each in its own process with capture on
(child.py), and keep what each run left: its trace, its output, how it ended.

A run that raises, hangs past the timeout or is killed still leaves the trace
it wrote so far; the caller compares what there is.

Each process is the leader of its own process group, and the whole group is
killed when the process ends, is stopped, or locate itself is interrupted: a
process the program started (a data loader, a `sleep`) does not outlive locate.
"""

import json
import os
import pickle
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Optional

from ..results.locate_records import RunOutcome
from ..runtime.launch import INTERRUPT, KILL, ChildSpec, child_environ, start
from .trace_file import TraceError, read_trace, repeat_path

WRITE_FAILED = 5  # child.py's exit status when its trace could not be written

_live = set()  # the processes running now (any thread's), for stop_all
_live_lock = threading.Lock()


@dataclass(frozen=True)
class Target:
    """What to run: a script with its arguments, or an importable function with its arguments."""

    script: Optional[str] = None
    args: tuple = ()
    function: Optional[str] = None  # "module:qualified.name"
    call: tuple = ((), {})          # (args, kwargs) for the function, pickled for the child

    def describe(self):
        if self.script:
            return " ".join([self.script] + [str(a) for a in self.args])
        return self.function

    def command(self, workdir):
        if self.script:
            return ["--script", self.script, "--"] + [str(a) for a in self.args]
        call_file = os.path.join(workdir, "call.pickle")
        if not os.path.exists(call_file):
            with open(call_file, "wb") as handle:
                pickle.dump(self.call, handle)
        return ["--function", self.function, "--call-args", call_file]


def function_target(fn, args, kwargs):
    """A Target for a module-level function the child can import again."""
    module, qualname = getattr(fn, "__module__", None), getattr(fn, "__qualname__", "")
    if not module or "<locals>" in qualname or "<lambda>" in qualname:
        raise ValueError("locate runs %r in fresh processes, which import it again: pass a function defined "
                         "at the top level of an importable module" % (fn,))
    if module == "__main__":
        main = sys.modules["__main__"]
        path = getattr(main, "__file__", None)
        if not path:
            raise ValueError("locate cannot import a function defined in an interactive session: "
                             "put it in a module")
        module = os.path.splitext(os.path.basename(path))[0]
    return Target(function="%s:%s" % (module, qualname), call=(tuple(args), dict(kwargs)))


def _environment(env=None):
    """The child's environment: ours plus `env` (a side's variables), a fixed hash seed, quiet TF logs."""
    return child_environ(env=env, defaults={"PYTHONHASHSEED": "0", "TF_CPP_MIN_LOG_LEVEL": "2"})


def _user_paths():
    """Where the user's code can be found: the working directory and this
    process's sys.path (where the function's module was found). The child loads
    tfdet before it adds them, so a tfdet/ directory among them cannot shadow it."""
    return tuple(p for p in [os.getcwd()] + sys.path if p)


def run_once(target, workdir, index, steps=None, max_bytes=None, timeout=None, save=None, method=None,
             patch=False, repeats=1, env=None, settings=None, describe=False, fold=True):
    """Run the target in one process, calling it `repeats` times there; a list with
    (Run read from its trace or None, RunOutcome) for each call, in order.
    env: variables to set; settings: probe settings to apply (sides.py); describe:
    write the environment of the first call next to its trace (describe_path); fold: False
    hashes the outputs capture folds into an elementwise reader too (capture.CHAIN_READERS)."""
    stem = os.path.join(workdir, "run-%d%s" % (index, "-detail" if save else ""))
    trace = stem + ".trace.jsonl"
    args = ["--trace", trace, "--repeats", str(repeats)]
    if steps:
        args += ["--steps", str(steps)]
    if max_bytes:
        args += ["--max-bytes", str(max_bytes)]
    if method:
        args += ["--method", method]
    if patch:
        args.append("--patch")
    if not fold:
        args.append("--no-fold")
    if settings:
        args += ["--settings", json.dumps(settings, sort_keys=True)]
    if describe:
        args += ["--describe", describe_path(trace)]
    if save:
        save_file, save_dir = stem + ".save.json", stem + ".saved"
        os.makedirs(save_dir, exist_ok=True)
        with open(save_file, "w", encoding="utf-8") as handle:
            json.dump([list(ref) for ref in save], handle)
        args += ["--save", save_file, "--save-dir", save_dir]
    args += target.command(workdir)
    # Its own process group, killed when the run ends, is stopped, or locate is
    # interrupted: what the program started goes with it.
    spec = ChildSpec(module="tfdet.locating.child", args=tuple(args), env=_environment(env), user_paths=_user_paths(),
                     timeout=timeout, stop=INTERRUPT, own_group=True, log=stem + ".log")
    started = time.monotonic()
    process = start(spec)
    with _live_lock:
        _live.add(process)
    try:
        done = process.finish()
    finally:
        with _live_lock:
            _live.discard(process)
    timed_out, seconds = done.timed_out, time.monotonic() - started
    write_failed = process.returncode in (WRITE_FAILED, -getattr(signal, "SIGXFSZ", 25))
    results = []
    for repeat in range(repeats):
        path = repeat_path(trace, repeat)
        try:
            run = read_trace(path)
        except FileNotFoundError:
            if repeat:
                break  # the process ended (or stopped repeating) before this call
            run = None
        except TraceError:
            raise
        last = repeat == repeats - 1 or not os.path.exists(repeat_path(trace, repeat + 1))
        if write_failed and last:
            status, detail = "write-failed", _write_failure(stem + ".log", process.returncode)
        elif timed_out and last:
            status, detail = "timed-out", "no end within %gs: stopped" % timeout
        else:
            status = run.status if run is not None else "unfinished"
            detail = run.detail if run is not None else ""
        if run is None and not detail:
            detail = _last_lines(stem + ".log")
        took = run.seconds if run is not None and run.seconds is not None else (seconds if repeats == 1 else 0.0)
        results.append((run, RunOutcome(
            status=status, detail=detail, stopped_capture=run.stopped_by if run else None, seconds=round(took, 3),
            trace_bytes=os.path.getsize(path) if os.path.exists(path) else 0,
            outputs=len(run.executions) if run else 0, process=index, call=repeat)))
    return results


def describe_path(trace):
    """Where a run started with describe=True writes its environment."""
    return trace[:-len(".trace.jsonl")] + ".machine.json" if trace.endswith(".trace.jsonl") else trace + ".machine.json"


def stop_all():
    """Stop every run still going (locate was interrupted): their process groups are killed."""
    with _live_lock:
        running = list(_live)
    for process in running:
        process.stop(KILL)


def _write_failure(log, returncode):
    """What child.py said about its trace (its last line), or what its exit says."""
    said = [line for line in _last_lines(log, 5).split(" | ") if "could not be written: " in line]
    if said:
        return said[-1].split("could not be written: ", 1)[1]
    return "the trace could not be written (%s)" % (
        "file too large" if returncode < 0 else "exit status %d; the log could not say why" % returncode)


def _last_lines(path, count=3):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            lines = [line.rstrip() for line in handle if line.strip()]
    except OSError:
        return ""
    return " | ".join(lines[-count:])
