"""What tfdet.patch() warns and raises: a module of its own, so that the
replacements (which warn when they fall back to a stock op) need not import
the installer."""


class TfdetWarning(UserWarning):
    """Something tfdet.patch() could not make reproducible, or did too late."""


class TfdetError(RuntimeError):
    """Raised under patch(strict=True) where the program uses a catalogued op the patch does not cover,
    and by patch() for a catalogue it cannot read (the message names each problem by file:line)."""


TfdetWarning.__module__ = TfdetError.__module__ = "tfdet"  # their public home, as tracebacks show it
