"""Which public TF function that tfdet.patch() rebinds made an op, from its creation stack.

A raw op the catalogue judges (DenseBincount) is often made by a public function
(tf.math.bincount) that a tfdet replacement rebinds: once patched, that call
runs tfdet's function and the raw op is not made at all. The creation stack
says so: the stock function's own frame is on it. Needs TensorFlow (to find
the stock functions' code); findings.py then judges with plain names.
"""

import inspect

from ..patching import registry


def _resolve(tf, api):
    """The function a dotted public name ('tf.math.bincount') is bound to, or None."""
    value = tf
    for part in api.split(".")[1:]:
        value = getattr(value, part, None)
        if value is None:
            return None
    return value


def stock_functions(tf):
    """{(file, function name): public API} of the stock functions tfdet's replacements rebind."""
    found = {}
    for replacement in registry.REGISTRY:
        if replacement.install != registry.REBIND:
            continue
        for api in (replacement.stock,) + tuple(stock for stock, _ in replacement.also):
            function = _resolve(tf, api)
            code = getattr(inspect.unwrap(function), "__code__", None) if callable(function) else None
            if code is not None and "/tfdet/" not in code.co_filename.replace("\\", "/"):  # not patched already
                found[(code.co_filename, code.co_name)] = api
    return found


def through(stack, functions):
    """The public APIs among `functions` whose stock function is on the creation `stack`."""
    return frozenset(functions[(frame.filename, frame.name)] for frame in stack
                     if (frame.filename, frame.name) in functions)


def patches_of(api):
    """The names of the replacements that rebind a public API (pure data)."""
    return frozenset(r.name for r in registry.REGISTRY if r.install == registry.REBIND
                     and (r.stock == api or any(stock == api for stock, _ in r.also)))
