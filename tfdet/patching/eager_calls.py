"""A replacement called eagerly runs as one cached tf.function per signature.

A replacement is many small ops (input checks, casts, the kernels). Called
eagerly, each is dispatched from Python on its own: weighted bincount, 1e6 ids
into 1e4 bins, issued 47 eager ops per call and cost 3x the stock op, against
about 1x inside a tf.function (issue 30). Here the replacement's graph-mode
body is traced once per signature into a tf.function and called as one op.

The signature (the cache key): the replacement, each argument's dtype and
rank (every dimension left unknown, so a new shape does not trace again) or,
for a Python number or None, its value; the Python options; and everything
read while the replacement builds its ops (the primitive's path and sum, the
CPU kernels' machine answer, TF's op determinism switch).

The result is what eager execution gives, and so are the errors: where the
call raises (invalid input checked when the ops run, or an argument the
graph-mode body rejects while tracing), the eager body runs instead and
raises as it always did. Not used under a gradient tape (the function's
gradient would be built differently) nor for ragged and sparse input.
"""

import numbers

from . import kernels as _kernels
from . import primitive as _p

_functions = {}  # signature -> tf.function
_untraceable = set()  # signatures whose graph-mode body raised while tracing: the eager body is used


def _tf():
    import tensorflow.compat.v2 as tf  # noqa: PLC0415 - keeps the import TF-free

    return tf


def _recording():
    """Whether a gradient tape may record ops now (then the eager body runs)."""
    try:
        from tensorflow.python.eager import record  # noqa: PLC0415 - TF >= 2.13
    except ImportError:  # pragma: no cover - older TF
        try:
            from tensorflow.python.eager import tape as record  # noqa: PLC0415
        except ImportError:
            return True
    return bool(record.could_possibly_record())


def _settings():
    """What the replacements read while building their ops, besides their arguments."""
    tf = _tf()
    determinism = getattr(tf.config.experimental, "is_op_determinism_enabled", lambda: None)()
    return (_p.resolve_method(), _p.get_order_fixed_sum(), _kernels.cpu_only(), determinism)


def _split(args):
    """(tensors, signature parts) or None where the call is not for this path: each argument is
    converted to a tensor as the eager body would, except None and Python numbers (kept as values)."""
    tf = _tf()
    tensors, parts = [], []
    for value in args:
        if value is None or (isinstance(value, numbers.Number) and not hasattr(value, "dtype")):
            parts.append(("value", value))
            continue
        if isinstance(value, (tf.RaggedTensor, tf.SparseTensor)) or hasattr(value, "handle"):
            return None  # composite tensors and variables: the eager body's own handling
        try:
            tensor = tf.convert_to_tensor(value)
        except (TypeError, ValueError):
            return None
        if tensor.shape.rank is None:  # pragma: no cover - an eager tensor has a shape
            return None
        tensors.append(tensor)
        parts.append(("tensor", tensor.dtype.name, tensor.shape.rank))
    return tensors, parts


def call(name, body, args, options, eager_body):
    """body(*args, **options) through a cached tf.function when executing eagerly; eager_body()
    (the replacement as it ran eagerly before) where that path does not apply or raises."""
    tf = _tf()
    if not tf.executing_eagerly() or _recording():
        return eager_body()
    split = _split(args)
    if split is None:
        return eager_body()
    tensors, parts = split
    signature = (name, tuple(parts), tuple(sorted(options.items())), _settings())
    try:
        if signature in _untraceable:
            return eager_body()
    except TypeError:  # an option that cannot be a key (unhashable): nothing to cache it by
        return eager_body()
    function = _functions.get(signature)
    try:
        if function is None:
            function = _functions[signature] = _function(body, parts, options)
        return function(*tensors)
    except tf.errors.OpError:  # invalid input found when the ops ran: raise as the eager body does
        return eager_body()
    except Exception:  # noqa: BLE001 - the graph-mode body rejected the arguments while tracing
        _untraceable.add(signature)
        _functions.pop(signature, None)
        return eager_body()


def _function(body, parts, options):
    tf = _tf()
    specs = [tf.TensorSpec([None] * part[2], tf.as_dtype(part[1])) for part in parts if part[0] == "tensor"]

    def run(*tensors):
        values = iter(tensors)
        args = [next(values) if part[0] == "tensor" else part[1] for part in parts]
        return body(*args, **options)

    # The concrete function, traced now: calling it skips tf.function's per-call signature matching
    # and cache lookup (its input signature already fixes the one trace), about a third of the
    # Python-side cost of an eager call.
    return tf.function(run, input_signature=specs, autograph=False).get_concrete_function()
