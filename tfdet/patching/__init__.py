"""Deterministic replacements for TensorFlow ops that are nondeterministic on GPUs.

`primitive` holds the one order-fixed segment reduction everything is built on;
`replacements` holds the drop-in functions (same signatures as the stock APIs)
that tfdet.patch() installs where the catalogue says the installed TensorFlow
and device need them; `registry` is the one list of them.

The facade the CLI uses is below; each name is loaded on first use, so that
importing this package imports nothing (not even TensorFlow).
"""

from .._lazy import facade

_LAZY = {
    "preview": ".plan_preview",  # what patch() would do, without TensorFlow: `tfdet status`
}

__all__ = sorted(_LAZY)

__getattr__ = facade(__name__, _LAZY, globals())
