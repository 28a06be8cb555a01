"""The `tfdet` command line. Thin: parse arguments, call the library, map
outcomes to the exit codes in tfdet.cli.exitcodes.

This module imports only signal, sys and the exit codes, so that Ctrl-C
while the command is still starting (importing the CLI, the catalogue,
rich, ...) ends it quietly with exit 130 instead of a traceback.
"""

import signal
import sys

from .exitcodes import INTERRUPTED


def main(argv=None, out=None, err=None):
    """Run `tfdet ARGV`; returns the exit code. out and err default to the
    process's streams, here and in run_main only: the commands write to these two."""
    out = out or sys.stdout
    err = err or sys.stderr

    def interrupted_while_starting(signum, frame):
        err.write("tfdet: interrupted\n")
        raise SystemExit(INTERRUPTED)

    try:
        previous = signal.signal(signal.SIGINT, interrupted_while_starting)
    except ValueError:  # not the main thread: no handler to set, nothing to restore
        previous = None
    try:
        from .app import run_main
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    return run_main(argv, out, err)
