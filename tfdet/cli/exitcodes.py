"""The exit codes every tfdet subcommand shares.

0  OK            the command did what was asked
1  FINDING       it ran, and a gate the user asked for failed (for example
                 --fail-on-nondeterminism found variance)
2  USAGE         bad command-line arguments (argparse's own convention)
3  INVALID_INPUT an input is wrong: a malformed catalogue, a results file
                 that is not one, an unknown op id or name
4  ENVIRONMENT   something outside the input is missing: no TensorFlow
                 where one is needed, an interpreter that does not run
5  WRITE_FAILED  output could not be written: disk full, no permission, a
                 read-only file system, a directory where a file should be
                 (one line names the path and the cause)
130 INTERRUPTED  stopped by Ctrl-C (128 + SIGINT); finished work is kept
141 BROKEN_PIPE  the reader of the output went away (`tfdet ... | head`);
                 128 + SIGPIPE, what other Unix tools exit with there
"""

OK = 0
FINDING = 1
USAGE = 2
INVALID_INPUT = 3
ENVIRONMENT = 4
WRITE_FAILED = 5
INTERRUPTED = 130
BROKEN_PIPE = 141


class CommandError(Exception):
    """An error a command reports to the user as one message and an exit code."""

    def __init__(self, message, code=INVALID_INPUT):
        super().__init__(message)
        self.code = code
