"""Changing TensorFlow's state for one patch and restoring it exactly: the
Applied record of every change, seeding, and apply()/undo(). Who holds the
patch, and when it is undone, is tfdet.patching.install's to decide."""

import sys

from ..tfinfo import op_determinism_enabled, resolve_api
from . import bindings, watch
from .import_hook import PostImportHook

# Keras packages patch() rebinds and seeds; if not yet imported, on first import.
KERAS_PACKAGES = ("keras", "tf_keras")


class Applied(object):
    """Every change one patch made, so that undo() restores exactly those."""

    def __init__(self, plan, seed, strict=False, environ=None):
        self.plan = plan
        self.device_why = ""  # why the plan is for plan.device (install.choose_device)
        self.environ = environ  # the mapping patch() changed; unpatch() restores that one
        self.seed = seed
        self.strict = strict
        self.seeded = []
        self.replaced_apis = {}  # public name (or gradient) -> bindings changed
        self.watcher = None  # the op callback, while installed
        self.hook = None  # the post-import hook for Keras, while installed
        self.env_before = {}  # name -> previous value or None
        self.api_switches_on = []  # switch ids turned on here
        self.determinism_was_on = None
        self.changes = []  # Rebinding / GradientOverride
        self.replaced = {}  # patch name -> number of places changed
        self.stock_before = None  # what the primitive was told before patch()
        self.warnings = []
        self.batch_invariant = False  # patch(batch_invariant=True) asked for
        self.batch_invariant_apis = {}  # public name -> bindings changed for batch invariance

    @property
    def changed(self):
        """Whether patch() changed anything at all (status().patched)."""
        return bool(self.env_before or self.api_switches_on or self.changes or self.seeded or self.watcher
                    or self.hook or self.stock_before is not None)


def context_started():
    """True once TF has run an op in this process (eager context initialised):
    from then on TF may have cached its determinism setting."""
    try:
        from tensorflow.python.eager import context

        return bool(context.context()._initialized)
    except Exception:
        return False


def seed_all(tf, seed):
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
    for package in KERAS_PACKAGES:  # only those already imported: importing Keras costs ~0.3 s
        setter = getattr(getattr(sys.modules.get(package), "utils", None), "set_random_seed", None)
        if setter is not None:
            setter(seed)
            seeded.append(package)
    generator = getattr(tf.random, "Generator", None)
    if generator is not None and hasattr(tf.random, "set_global_generator"):
        tf.random.set_global_generator(generator.from_seed(seed))
        seeded.append("tf.random global generator")
    return seeded


def apply(tf, plan, applied, environ, late, on_keras_import):
    """Make the plan's changes, recording each in `applied`; on_keras_import(module)
    runs when keras/tf_keras is first imported afterwards."""
    applied.determinism_was_on = op_determinism_enabled(environ)  # before the env var below can change the answer
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

    applied.stock_before = primitive.set_stock_deterministic(plan.stock_segments_deterministic)
    for name in sorted(plan.replacements):
        installer = bindings.INSTALLERS[name]
        changes = installer(tf)
        applied.changes.extend(changes)
        applied.replaced[name] = len(changes)
        label = getattr(installer, "label", name)
        applied.replaced_apis[label] = applied.replaced_apis.get(label, 0) + len(changes)
    applied.replaced_apis = {k: v for k, v in applied.replaced_apis.items() if v}
    if applied.batch_invariant:
        install_batch_invariant(tf, plan, applied)
    if applied.seed is not None:
        applied.seeded = seed_all(tf, applied.seed)
    if any(p not in sys.modules for p in KERAS_PACKAGES) and (
            plan.replacements or applied.seed is not None or applied.batch_invariant_apis):
        applied.hook = PostImportHook(KERAS_PACKAGES, on_keras_import).install()


def install_batch_invariant(tf, plan, applied):
    """patch(batch_invariant=True): rebind the registry's batch-invariant replacements, on a CPU plan only
    (they were measured on CPUs; nothing is claimed for a GPU's kernels)."""
    if plan.device != "cpu":
        applied.warnings.append(
            "batch_invariant=True on a %s plan: nothing replaced for batch invariance (tfdet's batch-invariant "
            "replacements were measured on CPUs only; a GPU's matrix products were not)" % plan.device)
        return
    for name in sorted(bindings.BATCH_INVARIANT_INSTALLERS):
        installer = bindings.BATCH_INVARIANT_INSTALLERS[name]
        changes = installer(tf)
        applied.changes.extend(changes)
        if changes:
            applied.batch_invariant_apis[installer.label] = len(changes)


def undo(applied):
    """Restore everything one Applied record changed, in the mapping it changed."""
    environ = applied.environ
    if applied.watcher is not None:
        watch.remove(applied.watcher)
    if applied.hook is not None:
        applied.hook.remove()
    bindings.undo(applied.changes)
    applied.changes = []
    if applied.stock_before is not None:
        from . import primitive

        primitive.set_stock_deterministic(applied.stock_before)
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
