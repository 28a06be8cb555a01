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


def rebind(function, replacement, modules=None):
    """Point every alias of `function` at `replacement`; return the Rebindings."""
    done = []
    for module, name in find_aliases(function, modules):
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


# -- the replacements, by the name the catalogue uses in `patch:` ------------

def _replacements():
    from . import replacements

    return replacements


def _rebinder(canonical_api, replacement_name):
    """A replacement that stands in for the stock function at `canonical_api`."""
    def install(tf):
        stock = resolve_api(tf, canonical_api)
        if stock is None:
            return []
        return rebind(stock, getattr(_replacements(), replacement_name))
    install.label = canonical_api  # what the patch-time line names
    return install


def _attr(op, name, default):
    try:
        value = op.get_attr(name)
    except (ValueError, TypeError):
        return default
    return value.decode() if isinstance(value, bytes) else value


def _resize_nearest_grad(op, grad):
    image = op.inputs[0]
    shape = image.get_shape()[1:3]
    if not shape.is_fully_defined():
        import tensorflow as tf

        shape = tf.shape(image)[1:3]
    else:
        shape = shape.as_list()
    return [_replacements().resize_nearest_neighbor_grad(
        grad, shape, align_corners=_attr(op, "align_corners", False),
        half_pixel_centers=_attr(op, "half_pixel_centers", False)), None]


def _crop_and_resize_grad(op, grad):
    import tensorflow as tf

    image, boxes, box_ind = op.inputs[0], op.inputs[1], op.inputs[2]
    image_shape = image.get_shape().as_list() if image.get_shape().is_fully_defined() else tf.shape(image)
    method = _attr(op, "method", "bilinear")
    grad_image = None
    if image.dtype in (tf.float16, tf.float32, tf.float64):
        grad_image = _replacements().crop_and_resize_grad_image(
            grad, boxes, box_ind, image_shape, T=image.dtype, method=method)
    grad_boxes = _replacements().crop_and_resize_grad_boxes(grad, image, boxes, box_ind, method=method)
    return [grad_image, grad_boxes, None, None]


def _gradient(op_type, function):
    def install(tf):
        return [override_gradient(op_type, function)]
    install.label = "gradient of " + op_type
    return install


INSTALLERS = {
    "segment_sum": _rebinder("tf.math.segment_sum", "segment_sum"),
    "unsorted_segment_sum": _rebinder("tf.math.unsorted_segment_sum", "unsorted_segment_sum"),
    # gather's gradient and tf.convert_to_tensor(IndexedSlices) densify through
    # the same stock unsorted_segment_sum, so one rebinding covers them.
    "indexed_slices_to_dense": _rebinder("tf.math.unsorted_segment_sum", "unsorted_segment_sum"),
    "unsorted_segment_mean": _rebinder("tf.math.unsorted_segment_mean", "unsorted_segment_mean"),
    "unsorted_segment_sqrt_n": _rebinder("tf.math.unsorted_segment_sqrt_n", "unsorted_segment_sqrt_n"),
    "unsorted_segment_prod": _rebinder("tf.math.unsorted_segment_prod", "unsorted_segment_prod"),
    "bias_add": _rebinder("tf.nn.bias_add", "bias_add"),
    "bincount": _rebinder("tf.math.bincount", "bincount"),
    "sparse_dense_matmul": _rebinder("tf.sparse.sparse_dense_matmul", "sparse_dense_matmul"),
    "scatter_nd": _rebinder("tf.scatter_nd", "scatter_nd"),
    "softmax_cross_entropy": _rebinder("tf.nn.softmax_cross_entropy_with_logits",
                                       "softmax_cross_entropy_with_logits"),
    "sparse_softmax_cross_entropy": _rebinder("tf.nn.sparse_softmax_cross_entropy_with_logits",
                                              "sparse_softmax_cross_entropy_with_logits"),
    "adjust_contrast": _rebinder("tf.image.adjust_contrast", "adjust_contrast"),
    "resize_nearest_neighbor_grad": _gradient("ResizeNearestNeighbor", _resize_nearest_grad),
    "crop_and_resize_grad": _gradient("CropAndResize", _crop_and_resize_grad),
}
