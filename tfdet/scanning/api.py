"""tfdet.scan(): every catalogued source of nondeterminism a model's training will hit."""

import os
import re

from .. import __version__
from ..results.scan_records import KIND, SCHEMA_VERSION, ScanReport
from . import findings, trace
from .trace import ScanError

DEVICES = ("gpu", "cpu")


def patch_plan(catalogue, tf_version, device):
    from ..patching import registry
    from ..patching.plan import plan_patch

    return plan_patch(catalogue, tf_version, device, registry.names(), seeded=True)


class TracedModel(object):
    """What tracing a model found, before any TF version or device is judged:
    the op sites, the graphs' labels, the notes, whether XLA compiles a traced
    function, and the TF that traced them. judge() turns it into a ScanReport
    for one (version, device) without tracing again."""

    def __init__(self, model, sites, graphs, op_types, notes, jit, traced_with):
        self.model, self.sites, self.graphs, self.op_types = model, list(sites), list(graphs), op_types
        self.notes, self.jit, self.traced_with = list(notes), jit, traced_with


def trace_model(model_or_function, example_inputs=None, catalogue=None, example_targets=None, name=None,
                dataset=None, notes=(), fresh=True):
    """Trace a Keras model (inference and its whole training step), a function, a
    tf.Graph (a tf.compat.v1 program's, as built) or a loaded SavedModel, and the
    tf.data pipeline `dataset` if given, plus a Keras model's unseeded random layers
    and (`fresh`: the model will be built anew, not loaded) initializers. Returns a
    TracedModel for judge()."""
    import tensorflow as tf

    from ..catalog import default_catalogue

    catalogue = catalogue or default_catalogue()
    keras_model = trace.is_keras_model(model_or_function)
    label = name or getattr(model_or_function, "name", None) or type(model_or_function).__name__
    try:
        if keras_model:
            traced, trace_notes = trace.trace_keras(model_or_function, example_inputs, example_targets)
        elif getattr(model_or_function, "signatures", None):  # a loaded SavedModel (callable too, sometimes)
            traced, trace_notes = trace.trace_saved_model(model_or_function)
        elif isinstance(model_or_function, tf.Graph):  # a TF1-style program's graph, built as it runs in a Session
            traced, trace_notes = [trace.Traced("graph", model_or_function)], []
        elif callable(model_or_function):
            traced, trace_notes = trace.trace_function(model_or_function, example_inputs)
        else:
            raise ScanError("cannot scan a %s: pass a Keras model, a tf.function, a tf.Graph or a loaded SavedModel"
                            % type(model_or_function).__name__)
    except (ScanError, KeyboardInterrupt):
        raise
    except Exception as exc:  # the model's own code or names fail under tracing: its cause, in one line
        raise ScanError("%s: cannot trace the model: %s" % (label, trace.cause(exc))) from None
    if dataset is not None:
        traced = list(traced) + trace.trace_dataset(dataset)
    sites = trace.sites(traced, catalogue)
    if keras_model:
        from . import keras_sources

        sites = keras_sources.sites(model_or_function, catalogue, fresh) + sites
    from . import strategy

    distributed = strategy.note(model_or_function, [item.graph for item in traced if item.live], sites, catalogue)
    notes = list(notes) + list(trace_notes) + ([distributed] if distributed else []) + [
        "the scan sees the graphs as traced, before Grappler rewrites them (fusions can add or remove ops)"]
    return TracedModel(
        model=label,
        sites=sites, graphs=[item.label for item in traced],
        op_types=len({s.op_type for s in sites if s.entry is None}), notes=notes, jit=trace.jit_compiled(traced),
        traced_with=tf.__version__)


def judge(traced, tf_version=None, device="gpu", assume_patched=True, catalogue=None):
    """The ScanReport of a TracedModel for `tf_version` (default: the TF that traced
    it) on `device`; with assume_patched, what tfdet.patch() would fix on that plan
    counts as fixed. Pure over the traced sites: no TensorFlow call, so one trace
    can be judged for many versions and devices."""
    from ..catalog import default_catalogue

    if device not in DEVICES:
        raise ValueError("device must be one of %s, not %r" % (", ".join(DEVICES), device))
    catalogue = catalogue or default_catalogue()
    judged_version = str(tf_version or traced.traced_with)
    plan = patch_plan(catalogue, judged_version, device)
    hits = findings.hits(traced.sites, catalogue, judged_version, device, plan, assume_patched)
    notes = list(traced.notes)
    if plan.note:
        notes.append(plan.note)
    if traced.jit:
        notes.append("a traced function is jit_compile=True: XLA rules apply to it, not the op kernels'")
    return ScanReport(
        kind=KIND, schema_version=SCHEMA_VERSION, tfdet_version=__version__, model=traced.model,
        tf_version=judged_version, traced_with=traced.traced_with, device=device, assume_patched=assume_patched,
        verdict=findings.verdict_line(hits, judged_version, device, assume_patched), hits=hits,
        graphs=traced.graphs, op_types=traced.op_types, notes=notes, worst=findings.worst_outcome(hits))


def scan(model_or_function, example_inputs=None, tf_version=None, device="gpu", assume_patched=True,
         catalogue=None, example_targets=None, name=None, dataset=None, notes=(), fresh=True):
    """Trace a Keras model (inference and its whole training step) or a function,
    and the tf.data pipeline `dataset` if given, plus a Keras model's unseeded random
    layers and (`fresh`: the model will be built anew, not loaded) initializers, and judge every raw op against the catalogue for `tf_version` (default: the
    installed TF) on `device` ("gpu" by default: where training varies). With
    assume_patched, what tfdet.patch() would fix on that plan counts as fixed.
    Returns a ScanReport (its to_json() is `tfdet scan --json`). trace_model() and
    judge() are its two halves: trace once, judge per (version, device)."""
    if device not in DEVICES:  # before the trace: a typo answers at once
        raise ValueError("device must be one of %s, not %r" % (", ".join(DEVICES), device))
    from ..catalog import default_catalogue

    catalogue = catalogue or default_catalogue()
    traced = trace_model(model_or_function, example_inputs, catalogue, example_targets, name, dataset, notes, fresh)
    return judge(traced, tf_version, device, assume_patched, catalogue)


def load_model(path, custom_objects=None, notes=None, safe_mode=True):
    """A Keras model (.keras, .h5) or a loaded SavedModel (a directory) from a file.
    Raises ScanError with one line for what cannot be read; what could only be
    read in part is said in `notes` (a list) when given.

    safe_mode (Keras's own name for it): a .keras or .h5 file whose configuration
    holds Python code (a Lambda layer's bytecode, a serialized lambda) is refused
    before anything is deserialized, since loading would run that code; False
    loads it anyway, for a file you trust. `custom_objects` is your own code,
    run as given. A SavedModel holds TF graphs, no Python: loading one runs none."""
    if not os.path.exists(path):
        raise ScanError("%s: no such file or directory" % path)
    if os.path.isdir(path):
        if not os.path.exists(os.path.join(path, "saved_model.pb")):
            raise ScanError("%s: a directory, but not a SavedModel (no saved_model.pb)" % path)
        import tensorflow as tf

        try:
            return tf.saved_model.load(path)
        except Exception as exc:
            raise ScanError("%s: cannot load the SavedModel: %s" % (path, _first_line(exc))) from None
    if not path.endswith((".keras", ".h5", ".hdf5")):
        raise ScanError("%s: unknown model format (expected a .keras or .h5 file or a SavedModel directory)" % path)
    _check_container(path)
    if safe_mode:
        _refuse_code(path, custom_objects)
    import warnings

    load_with = _keras_for(path, notes)

    def load(compile_it):
        with warnings.catch_warnings():  # Keras's notes on optimizer state it skips are not the scan's business
            warnings.simplefilter("ignore")
            return load_with(path, custom_objects=custom_objects, compile=compile_it, safe_mode=safe_mode)

    try:
        return load(True)
    except Exception as exc:
        error = exc
    missing = re.search(r"Could not locate (?:class|function) '([^']+)'|Unknown [a-z ]+: '([^']+)'", str(error))
    if missing:
        raise ScanError("%s: cannot load the model: it uses %r, which is not defined here (pass the Python file "
                        "that defines it: --custom-objects module.py)" % (path, missing.group(1) or missing.group(2)))
    try:  # the architecture may load where the training configuration (optimizer, loss, metrics) does not
        model = load(False)
    except Exception:
        raise ScanError("%s: cannot load the model: %s" % (path, _first_line(error))) from None
    if notes is not None:
        notes.append("the file's training configuration could not be restored (%s): the optimizer, loss and "
                     "metrics were not scanned" % _first_line(error))
    return model


def _refuse_code(path, custom_objects):
    from . import safety

    try:
        safety.check(path, list(custom_objects or ()) + _registered_names())
    except safety.UndefinedObject as found:
        raise ScanError("%s: not loaded: layer %r names %r from module %r, which loading would import (and run); "
                        "if it is your own, pass the Python file that defines it: --custom-objects module.py"
                        % (path, found.layer, found.name, found.module)) from None
    except safety.UnsafeModel as found:
        raise ScanError("%s: not loaded: layer %r carries Python code (%s) that loading would run; --unsafe "
                        "(safe_mode=False from Python) loads it, for a file you trust" % (path, found.layer, found.what)
                        ) from None
    except Exception:  # h5py or zipfile cannot read it: neither can Keras, whose loader says why
        return


def _registered_names():
    """The names of the objects this process registered with Keras or tf_keras
    (register_keras_serializable): code already running here, not the file's. A
    Keras not imported yet has none registered, and is not imported for this."""
    import sys

    names = []
    for module, path in (("keras", "saving"), ("tf_keras", "utils")):
        loaded = sys.modules.get(module)
        registry = getattr(getattr(loaded, path, None), "get_custom_objects", None)
        if registry is not None:
            names.extend(registry())
    return names


def _keras_for(path, notes):
    """The load_model of the Keras that will train the file's model: tf_keras for an
    .h5 file Keras 2 wrote (when tf_keras is installed), Keras 3 otherwise. Keras 3
    rebuilds a Keras 2 model with its own layers, which can make other ops (its
    UpSampling2D(nearest) tiles where Keras 2's resizes): said in `notes`."""
    writer = _h5_keras_version(path) if path.endswith((".h5", ".hdf5")) else None
    if writer and writer.split(".")[0] == "2":
        try:
            import tf_keras
        except ImportError:
            if notes is not None:
                notes.append("the file was written by Keras %s (tf_keras); tf_keras is not installed, so Keras 3 "
                             "rebuilt it, and its layers can make other ops than tf_keras's (UpSampling2D(nearest): "
                             "Tile, not ResizeNearestNeighbor): pip install tf_keras to scan it as it trains" % writer)
        else:
            return tf_keras.models.load_model
    import keras

    return keras.saving.load_model


def _h5_keras_version(path):
    """The Keras version an .h5 model file records (its keras_version attribute), or None."""
    try:
        import h5py

        with h5py.File(path, "r") as handle:
            value = handle.attrs.get("keras_version")
    except Exception:  # not readable here: Keras's own loader says why
        return None
    return value.decode() if isinstance(value, bytes) else (str(value) if value is not None else None)


_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def _check_container(path):
    """A .keras file is a zip archive and an .h5 file an HDF5 one: say so before Keras
    gives a misleading message ('File not found') about a damaged file."""
    import zipfile

    try:
        with open(path, "rb") as handle:
            head = handle.read(8)
    except OSError as exc:
        raise ScanError("%s: cannot read: %s" % (path, exc.strerror or exc)) from None
    if path.endswith(".keras") and not zipfile.is_zipfile(path):
        raise ScanError("%s: not a .keras file (not a zip archive; damaged or another format?)" % path)
    if path.endswith((".h5", ".hdf5")) and head != _HDF5_SIGNATURE:
        raise ScanError("%s: not an HDF5 file (damaged or another format?)" % path)


def _first_line(exc):
    text = str(exc).strip().splitlines()
    return "%s: %s" % (type(exc).__name__, text[0][:300] if text else "")
