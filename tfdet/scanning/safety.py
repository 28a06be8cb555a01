"""What a model file would make Python run if Keras loaded it, read before it is.

A Keras model file can carry code: a Lambda layer's function is marshalled
bytecode (tf_keras writes function_type "lambda"; Keras 3 a "__lambda__"
object), and loading it runs that code. Keras 3 refuses it under its
`safe_mode` (the default, in keras.saving.load_model), but tf_keras reading
an .h5 file does not: its safe_mode applies only to the .keras format
(tf_keras/src/saving/saving_api.py, load_model's docstring). So the scan reads
the model's configuration itself (a .keras file's config.json, an .h5 file's
model_config and training_config attributes), without deserializing anything,
and refuses such a file unless the user opts in (safe_mode=False, --unsafe).
Pure over the JSON once read; h5py only to read the attributes.
"""

import builtins
import json
import zipfile

# class_name values whose config holds code loading would run: Keras 3's
# serialized Python lambda, and its PyTorch module wrapper (a pickled module).
_CODE_CLASSES = ("__lambda__", "TorchModuleWrapper")
# Packages a configuration's "module" may name. Keras before 3.9 imported any
# module a .keras file's config.json named and took any attribute of it
# (CVE-2025-1550, fixed in keras PR 20751), tf_keras's own loader still imports
# any module (tf_keras/src/saving/serialization_lib.py, _retrieve_class_or_fn):
# importing a module runs it, so any other module is refused unless the object
# is one the user defines (custom_objects). "builtins" names Keras functions by
# their name; Python's own builtins (exec, eval, open) are refused.
_KERAS_PACKAGES = ("keras", "tf_keras", "tensorflow", "keras_hub", "keras_cv", "keras_nlp")


class UnsafeModel(Exception):
    """The file carries code loading it would run; `layer` names where."""

    def __init__(self, layer, what):
        self.layer, self.what = layer, what
        super().__init__("layer %r (%s)" % (layer, what))


class UndefinedObject(UnsafeModel):
    """The file names an object from a module that is not Keras's and that the
    user did not define (custom_objects): loading would import that module."""

    def __init__(self, layer, name, module):
        self.name, self.module = name, module
        super().__init__(layer, "%r from module %r" % (name, module))


def _foreign(config, custom_names):
    """(name, module) when `config` names an object of a module loading would import, else None."""
    module = config.get("module")
    if not isinstance(module, str) or not module:
        return None
    names = {n for n in (config.get("class_name"), config.get("registered_name")) if isinstance(n, str)}
    names |= {n.rsplit(">", 1)[-1] for n in names}  # registered names are 'Package>Name'
    if names & set(custom_names):
        return None
    name = config.get("class_name") or config.get("registered_name") or "?"
    if name == "function" and isinstance(config.get("config"), str):  # a function, by its name
        name = config["config"]
    if module == "builtins":
        return (name, module) if hasattr(builtins, name) else None
    return None if module.split(".")[0] in _KERAS_PACKAGES else (name, module)


def configs(path):
    """The JSON configurations a model file keeps, as Python objects: a .keras
    file's config.json, an .h5 file's model_config and training_config. [] where
    the file has none (a weights-only .h5): the loader then says what is wrong."""
    texts = []
    if path.endswith(".keras"):
        with zipfile.ZipFile(path) as archive:
            if "config.json" in archive.namelist():
                texts.append(archive.read("config.json"))
    else:
        import h5py

        with h5py.File(path, "r") as handle:
            texts.extend(handle.attrs[key] for key in ("model_config", "training_config") if key in handle.attrs)
    found = []
    for text in texts:
        try:
            found.append(json.loads(text.decode() if isinstance(text, bytes) else text))
        except ValueError:  # not JSON: Keras's own loader will say the file is damaged
            continue
    return found


def find_code(config, layer=None, custom_names=()):
    """The first place in a configuration that holds code to run, as UnsafeModel
    (layer: the name of the innermost layer around it), or None. custom_names:
    the objects the user defines (custom_objects), whose modules are not imported."""
    if isinstance(config, list):
        for item in config:
            found = find_code(item, layer, custom_names)
            if found:
                return found
        return None
    if not isinstance(config, dict):
        return None
    inner = config.get("config") if isinstance(config.get("config"), dict) else {}
    name = inner.get("name") if isinstance(inner.get("name"), str) else config.get("name")
    kind = config.get("class_name")
    if kind == "Lambda":
        return UnsafeModel(name or layer or "?", "a Lambda layer's function, stored as bytecode")
    if kind in _CODE_CLASSES:
        return UnsafeModel(layer or name or "?", "a serialized Python %s" % (
            "lambda" if kind == "__lambda__" else "object, %s" % kind))
    if config.get("function_type") == "lambda":  # tf_keras's marshalled function, in any layer
        return UnsafeModel(name or layer or "?", "a function stored as bytecode")
    foreign = _foreign(config, custom_names)
    if foreign:
        return UndefinedObject(name or layer or "?", *foreign)
    here = name if isinstance(kind, str) and name else layer
    for value in config.values():
        found = find_code(value, here, custom_names)
        if found:
            return found
    return None


def check(path, custom_names=()):
    """Raise UnsafeModel if loading the .keras or .h5 file at `path` would run code it
    carries or import a module it names (other than Keras's, or one defining an
    object in `custom_names`)."""
    for config in configs(path):
        found = find_code(config, None, custom_names)
        if found:
            raise found
