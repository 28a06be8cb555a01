"""How each tfdet replacement is put in place, and taken out again exactly.

Two mechanisms, both undoable:
- rebinding: every module attribute that holds the stock function (the public
  tf.* aliases, tf.compat.v1.*, and internal modules such as gen_math_ops that
  TF's own gradient and IndexedSlices code call) is pointed at the replacement.
  Aliases are found by identity, so no list of internal names can go stale.
- gradient overrides: for ops whose nondeterminism is in their backprop, the
  function registered for the op type in TF's gradient registry is swapped.
"""

import sys
from collections import namedtuple

from ..tfinfo import resolve_api
from . import registry

Rebinding = namedtuple("Rebinding", "module name original replacement")
GradientOverride = namedtuple("GradientOverride", "op_type original replacement")

# Module prefixes searched for aliases of a stock function.
_ALIAS_MODULES = ("tensorflow", "keras", "tf_keras")


def find_aliases(function, modules=None):
    """(module, name) of every loaded module attribute that is `function`.

    Reads module __dict__s directly, so TF's lazy loaders are not triggered.
    """
    if modules is None:
        modules = [m for n, m in list(sys.modules.items()) if m is not None and n.split(".")[0] in _ALIAS_MODULES]
    found = []
    for module in modules:
        try:
            namespace = vars(module)
        except TypeError:
            continue
        for name, value in list(namespace.items()):
            if value is function:
                found.append((module, name))
    return found


# TF's generated op wrappers, when graph construction raises TypeError/ValueError, look this
# attribute up on the module-global name of the op function (dispatch.dispatch(scatter_nd, ...)):
# once that name holds a replacement, the replacement needs it too, or the stock op's own error
# turns into an AttributeError.
_FALLBACK_DISPATCH_ATTR = "_tf_fallback_dispatchers"


def rebind(function, replacement, modules=None):
    """Point every alias of `function` at `replacement`; return the Rebindings."""
    done = []
    for module, name in find_aliases(function, modules):
        if hasattr(function, _FALLBACK_DISPATCH_ATTR) and not hasattr(replacement, _FALLBACK_DISPATCH_ATTR):
            setattr(replacement, _FALLBACK_DISPATCH_ATTR, getattr(function, _FALLBACK_DISPATCH_ATTR))
        setattr(module, name, replacement)
        done.append(Rebinding(module, name, function, replacement))
    return done


def modules_of(packages):
    """The loaded modules of these top-level packages (e.g. ("keras",))."""
    return [m for n, m in list(sys.modules.items()) if m is not None and n.split(".")[0] in packages]


def rebind_again(changes, packages):
    """Repeat earlier rebindings in packages imported since (Keras after patch())."""
    modules = modules_of(packages)
    done = []
    for original, replacement in {(c.original, c.replacement) for c in changes if isinstance(c, Rebinding)}:
        done.extend(rebind(original, replacement, modules))
    return done


def _gradient_registry():
    from tensorflow.python.framework import ops

    return ops._gradient_registry._registry  # {op type: {"type": fn, "location": ...}}


def override_gradient(op_type, replacement):
    registry = _gradient_registry()
    original = registry[op_type]["type"]
    registry[op_type]["type"] = replacement
    return GradientOverride(op_type, original, replacement)


def undo(changes):
    """Restore what rebind/override_gradient changed, newest first."""
    registry = None
    for change in reversed(changes):
        if isinstance(change, Rebinding):
            if getattr(change.module, change.name, None) is change.replacement:
                setattr(change.module, change.name, change.original)
        else:
            registry = registry or _gradient_registry()
            registry[change.op_type]["type"] = change.original


# -- one installer per registry entry, by the catalogue's `patch:` name -------

def _replacements():
    from . import replacements  # imports TensorFlow: only when something is installed

    return replacements


def _batch_invariant():
    from . import batch_invariant  # imports TensorFlow: only when batch_invariant=True

    return batch_invariant


def installer(replacement, implementations=_replacements):
    """install(tf) -> the changes made, for one registry.Replacement; `.label` names it.
    implementations() is the module holding the replacement's implementation."""
    if replacement.install == registry.REBIND:
        def install(tf):
            changes = []
            for api, implementation in ((replacement.stock, replacement.implementation),) + replacement.also:
                stock = resolve_api(tf, api)
                if stock is not None:  # else not in this TF
                    changes.extend(rebind(stock, getattr(implementations(), implementation)))
            return changes
    else:
        def install(tf):
            return [override_gradient(replacement.stock, getattr(_replacements(), replacement.implementation))]
    install.label = registry.label(replacement)
    return install


INSTALLERS = {r.name: installer(r) for r in registry.REGISTRY}
BATCH_INVARIANT_INSTALLERS = {r.name: installer(r, _batch_invariant) for r in registry.BATCH_INVARIANT}
