"""tfdet probe: measure run-to-run variance of TensorFlow ops and the cost of determinism modes.

The facade the CLI uses; each name is loaded from its module on first use, so
that importing the package (the worker does, under the measured TF's Python)
loads nothing else.
"""

_LAZY = {
    "ProbeConfig": "runner",
    "ProbeError": "runner",
    "run_probe": "runner",
    "catalogue_digest": "runner",
    "patch_available": "runner",
    "Progress": "progress",
    "resolve_ops": "plan",
    "fixture_ids": "plan",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError("module 'tfdet.probe' has no attribute %r" % name)
    import importlib

    value = getattr(importlib.import_module("%s.%s" % (__name__, module)), name)
    globals()[name] = value
    return value
