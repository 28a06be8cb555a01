"""The one place the harness starts processes, through tfdet's own launcher
(tfdet.runtime.launch): each run leads its own process group and is stopped
whole on timeout or Ctrl-C (SIGTERM first, so a tfdet command cleans up, then
SIGKILL, to the group and to what runs below it in sessions of its own); a
crash or a hang is an outcome, never an exception."""

import os
import signal
import sys
from collections import namedtuple

from tfdet.runtime.launch import ChildSpec, launch

Outcome = namedtuple("Outcome", "returncode stdout stderr seconds timed_out")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STOP = ((signal.SIGTERM, 10.0), (signal.SIGKILL, 5.0))


def run(argv, timeout, env=None, cwd=ROOT):
    """Run `argv` (a list; "python" means this interpreter) in a new process group with
    cwd = the repo root and `env` added to the environment. Returns an Outcome."""
    argv = [sys.executable if a == "python" else a for a in argv]
    result = launch(ChildSpec(tool=tuple(argv), env=environ(env), cwd=cwd, timeout=timeout, own_group=True, stop=STOP,
                              stdout="capture"))
    return Outcome(result.returncode, result.stdout, result.stderr, result.seconds, result.timed_out)


def environ(env=None):
    """A run's environment: this one, with `env` added."""
    environ = dict(os.environ)
    # the checkout's corpus (and tfdet) on purpose: the corpus runs from the repository
    environ.update({"PYTHONPATH": ROOT + os.pathsep + environ.get("PYTHONPATH", ""), "TF_CPP_MIN_LOG_LEVEL": "2",
                    "PYTHONHASHSEED": "0"})
    environ.update(env or {})
    return environ
