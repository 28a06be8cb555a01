"""Package facades whose names load on first use (PEP 562 module __getattr__),
so that importing a package (the worker does, in other interpreters) loads
nothing else."""

import importlib


def facade(package, names, namespace):
    """A module __getattr__ for `package` that imports names[name] (a module path,
    relative to the package when it starts with '.') on first use and keeps the value."""
    def __getattr__(name):
        module = names.get(name)
        if module is None:
            raise AttributeError("module %r has no attribute %r" % (package, name))
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    return __getattr__
