"""Run a function right after a module is first imported (a post-import hook).

patch() must not import Keras (a third of a second) for a script that may
never use it; when the program imports keras or tf_keras later, this hook
rebinds and seeds it then. A sys.meta_path finder that wraps the real loader;
removed by unpatch().
"""

import importlib.util
import sys
import threading


class _Loader(object):
    def __init__(self, loader, callback):
        self._loader = loader
        self._callback = callback

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        self._callback(module)

    def __getattr__(self, name):  # get_source, is_package, ... for tools that ask
        return getattr(self._loader, name)


class PostImportHook(object):
    """Calls callback(module) once, after any of `names` is first imported."""

    def __init__(self, names, callback):
        self.names = frozenset(names)
        self._callback = callback
        self._local = threading.local()

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.names or getattr(self._local, "busy", False):
            return None
        self._local.busy = True  # let the other finders find the real module
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._local.busy = False
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return None
        spec.loader = _Loader(spec.loader, self._callback)
        return spec

    def install(self):
        if self not in sys.meta_path:
            sys.meta_path.insert(0, self)
        return self

    def remove(self):
        if self in sys.meta_path:
            sys.meta_path.remove(self)
