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
