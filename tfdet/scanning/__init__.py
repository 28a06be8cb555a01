"""tfdet scan: every catalogued source of nondeterminism a model's training will hit.

The facade; names load on first use (TensorFlow only when a scan runs).
"""

_LAZY = {"scan": "api", "load_model": "api", "ScanError": "trace"}

__all__ = sorted(_LAZY)


def __getattr__(name):
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError("module 'tfdet.scanning' has no attribute %r" % name)
    import importlib

    value = getattr(importlib.import_module("%s.%s" % (__name__, module)), name)
    globals()[name] = value
    return value
