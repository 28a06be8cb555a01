"""What can go wrong with a results file, as exceptions the CLI turns into
one line and an exit code (see tfdet/cli/exitcodes.py)."""

import errno


class ResultsError(ValueError):
    """A file that is not a tfdet results file, or one this tfdet cannot read."""


class ResultsInUse(ResultsError):
    """Another writer has the file, or it exists and was not to be replaced: a usage error."""


class ResultsMismatch(ResultsError):
    """--resume with parameters that would change what the file's records mean: a usage error."""


class ResultsWriteError(Exception):
    """The results file could not be written (disk full, permission, read-only, ...).
    The message is one line naming the path and the cause."""


def describe_os_error(exc, path, action="cannot write"):
    """'PATH: cannot write: No space left on device' from an OSError (its own
    file name, where it has one, is the more precise path)."""
    cause = exc.strerror or errno.errorcode.get(exc.errno or 0) or str(exc)
    return "%s: %s: %s" % (exc.filename or path, action, cause)
