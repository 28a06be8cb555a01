"""tfdet probe: measure run-to-run variance of TensorFlow ops and the cost of determinism modes.

The facade the CLI uses; each name is loaded from its module on first use, so
that importing the package (the worker does, under the measured TF's Python)
loads nothing else.
"""

from .._lazy import facade

_LAZY = {
    "ProbeConfig": ".runner",
    "ProbeError": ".runner",
    "run_probe": ".runner",
    "catalogue_digest": ".runner",
    "patch_available": ".runner",
    "resolve_ops": ".plan",
    "fixture_ids": ".plan",
}

__all__ = sorted(_LAZY)

__getattr__ = facade(__name__, _LAZY, globals())
