"""tfdet.patch(), unpatch(), status() and deterministic(): the one place that
changes TensorFlow's state, and records every change so it can be undone."""

import contextlib
import os
import threading
import warnings

from ..tfinfo import list_gpus, resolve_api
from . import bindings
from .plan import plan_patch
from .status import Status


class TfdetWarning(UserWarning):
    """Something tfdet.patch() could not make reproducible, or did too late."""


class TfdetError(RuntimeError):
    """Raised by patch(strict=True) when catalogued nondeterminism remains."""


_lock = threading.RLock()
_state = {"applied": None}  # the Applied record while patched


class Applied(object):
    def __init__(self, plan, seed):
        self.plan = plan
        self.seed = seed
        self.env_before = {}  # name -> previous value or None
        self.api_switches_on = []  # switch ids turned on here
        self.determinism_was_on = None
        self.changes = []  # Rebinding / GradientOverride
        self.replaced = {}  # patch name -> number of places changed
        self.method_before = None
        self.warnings = []


def _tf():
    import tensorflow as tf

    return tf


def detect_device(tf):
    return "gpu" if list_gpus(tf) else "cpu"


def _context_started():
    """True once TF has run an op in this process (eager context initialised):
    from then on TF may have cached its determinism setting."""
    try:
        from tensorflow.python.eager import context

        return bool(context.context()._initialized)
    except Exception:
        return False


def _determinism_enabled():
    try:
        from tensorflow.python.framework import config

        return bool(config.is_op_determinism_enabled())
    except Exception:
        return None


def _available_patches():
    return set(bindings.INSTALLERS)


def _seed(tf, seed):
    """Seed Python, NumPy, TensorFlow and Keras; say what was seeded."""
    import random

    import numpy as np

    seeded = ["random", "numpy"]
    random.seed(seed)
    np.random.seed(seed)
    if hasattr(tf.random, "set_seed"):
        tf.random.set_seed(seed)
    else:
        tf.compat.v1.set_random_seed(seed)
    seeded.append("tensorflow")
    keras_utils = getattr(getattr(tf, "keras", None), "utils", None)
    setter = getattr(keras_utils, "set_random_seed", None)
    if setter is None:
        try:
            import keras

            setter = getattr(keras.utils, "set_random_seed", None)
        except Exception:
            setter = None
    if setter is not None:
        setter(seed)
        seeded.append("keras")
    generator = getattr(tf.random, "Generator", None)
    if generator is not None and hasattr(tf.random, "set_global_generator"):
        tf.random.set_global_generator(generator.from_seed(seed))
        seeded.append("tf.random global generator")
    return seeded


def _segment_method(catalogue, plan):
    """Whether the replacements may use TF's own segment reduction kernel:
    only where the catalogue says it is deterministic with the switches on."""
    covered = {c.entry_id: c.how for c in plan.covered}
    for verdict in catalogue.lookup("UnsortedSegmentSum", plan.tf_version, plan.device):
        if verdict.status == "deterministic" or covered.get(verdict.entry.id, "").startswith("switch"):
            return "stock"
    return "order_fixed"


def patch(seed=None, strict=False, catalogue=None, environ=None, quiet=False):
    """Make this process's TensorFlow as reproducible as the catalogue knows how.

    Turns on every determinism switch the installed TF has, substitutes
    tfdet's deterministic replacements where the catalogue says the installed
    TF and device need them, and seeds everything when `seed` is given. Call it
    right after importing TensorFlow, before any op runs. Idempotent and
    thread-safe; undo with unpatch(). Catalogued nondeterminism that remains is
    named in one TfdetWarning, or raised as TfdetError with strict=True.
    TensorFlow's own determinism errors are never silenced. Returns status().
    """
    with _lock:
        if _state["applied"] is not None:
            applied = _state["applied"]
            if seed is not None and seed != applied.seed:
                _seed(_tf(), seed)
                applied.seed = seed
            return status()
        from ..catalog import default_catalogue

        catalogue = catalogue or default_catalogue()
        environ = os.environ if environ is None else environ
        tf = _tf()
        device = detect_device(tf)
        plan = plan_patch(catalogue, tf.__version__, device, _available_patches(), seeded=seed is not None)
        applied = Applied(plan, seed)
        if not plan.supported:
            applied.warnings.append(plan.note)
            warnings.warn("tfdet.patch(): " + plan.note, TfdetWarning, stacklevel=2)
            _state["applied"] = applied
            return status()
        if plan.note:
            applied.warnings.append(plan.note)
        late = _context_started()
        try:
            _apply(tf, catalogue, plan, applied, environ, late)
        except Exception:
            _undo(applied, environ)
            raise
        _state["applied"] = applied
        current = status()
        if plan.remaining:
            message = "tfdet.patch(): %d catalogued source%s of nondeterminism remain for TF %s on %s: %s" % (
                len(plan.remaining), "" if len(plan.remaining) == 1 else "s", plan.tf_version, plan.device,
                "; ".join("%s (%s)" % (r.verdict.entry.id, r.reason) for r in plan.remaining))
            if strict:
                _undo(applied, environ)
                _state["applied"] = None
                raise TfdetError(message)
            if not quiet:
                warnings.warn(message, TfdetWarning, stacklevel=2)
        for text in applied.warnings:
            if not quiet and text != plan.note:
                warnings.warn("tfdet.patch(): " + text, TfdetWarning, stacklevel=2)
        return current


def _apply(tf, catalogue, plan, applied, environ, late):
    applied.determinism_was_on = _determinism_enabled()  # before the env var below can change the answer
    for name, value in plan.env.items():
        applied.env_before[name] = environ.get(name)
        environ[name] = value
    if late and plan.env and not plan.api_switches:
        applied.warnings.append(
            "called after TensorFlow ran its first op: TF may already have read %s as unset. "
            "Call tfdet.patch() right after `import tensorflow`, before building any model or tensor."
            % ", ".join(sorted(plan.env)))
    for switch in plan.api_switches:
        target = resolve_api(tf, switch.name)
        if target is not None:
            target()
            applied.api_switches_on.append(switch.id)
    if late and plan.api_switches:
        applied.warnings.append(
            "called after TensorFlow ran its first op: tf.functions and Keras models traced before this call "
            "keep running without determinism; build them after tfdet.patch().")
    from . import primitive

    applied.method_before = primitive.set_method(_segment_method(catalogue, plan))
    for name in sorted(plan.replacements):
        changes = bindings.INSTALLERS[name](tf)
        applied.changes.extend(changes)
        applied.replaced[name] = len(changes)
    if applied.seed is not None:
        applied.seeded = _seed(tf, applied.seed)


def _undo(applied, environ):
    bindings.undo(applied.changes)
    applied.changes = []
    if applied.method_before is not None:
        from . import primitive

        primitive.set_method(applied.method_before)
    for name, value in applied.env_before.items():
        if value is None:
            environ.pop(name, None)
        else:
            environ[name] = value
    if applied.api_switches_on and applied.determinism_was_on is False:
        try:
            from tensorflow.python.framework import config

            config.disable_op_determinism()
        except Exception:
            pass


def unpatch(environ=None):
    """Undo patch(): restore every rebound function, gradient and environment
    variable, and turn op determinism back off if patch() turned it on.
    Seeds cannot be un-set. Returns the status after undoing."""
    with _lock:
        applied = _state["applied"]
        if applied is not None:
            _undo(applied, os.environ if environ is None else environ)
            _state["applied"] = None
        return status()


def status():
    """What tfdet.patch() has done in this process, and what remains. Printing
    it gives a readable summary."""
    with _lock:
        applied = _state["applied"]
        if applied is None:
            return Status(patched=False)
        plan = applied.plan
        return Status(
            patched=True, tf_version=plan.tf_version, device=plan.device, supported=plan.supported,
            env=dict(plan.env), api_switches=list(applied.api_switches_on), seed=applied.seed,
            seeded=list(getattr(applied, "seeded", [])), replacements=dict(plan.replacements),
            replaced_places=dict(applied.replaced), covered=list(plan.covered),
            remaining=[(r.verdict.entry.id, r.verdict.status, r.reason) for r in plan.remaining],
            warnings=list(applied.warnings))


@contextlib.contextmanager
def deterministic(seed=None, strict=False):
    """Patch for the duration of a with-block (no-op if already patched)."""
    with _lock:
        owner = _state["applied"] is None
        current = patch(seed=seed, strict=strict)
    try:
        yield current
    finally:
        if owner:
            unpatch()
