"""argparse types shared by the commands: a bad value becomes a usage error
(exit 2) shown with the subcommand's own usage."""

import argparse

from .. import catalog


def tf_version(text):
    """A TensorFlow version such as 2.6 or 2.21.0; anything else is a usage error."""
    try:
        catalog.tf_minor(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def positive_int(text):
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a whole number, got %r" % text) from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1, got %d" % value)
    return value


def positive_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError("expected a number, got %r" % text) from None
    if not value > 0:
        raise argparse.ArgumentTypeError("must be greater than 0, got %s" % text)
    return value


def nothing_to_resume(what, path, hint):
    """The one line for --resume on a results file or directory that does not
    exist: nothing is started (a fresh full run in its place would be a surprise)."""
    from .exitcodes import USAGE, CommandError

    return CommandError("--resume: %s %s does not exist; %s" % (what, path, hint), USAGE)
