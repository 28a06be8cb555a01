"""Deterministic drop-in replacements for TensorFlow ops that accumulate with atomics on GPUs.

Each public function has the signature and defaults of the stock API it
replaces, computes the same result up to rounding (see tests/patch for the
stated tolerances), and is built on `primitive.segment_reduce`, whose order of
operations depends only on the indices. Where the op is differentiable, the
gradient is defined here too (tf.custom_gradient) and uses only gathers, dense
reductions and the primitive, so the backward pass is as deterministic as the
forward pass.

Which replacement is installed where is decided by the catalogue and the
install layer (tfdet.patching.install); nothing here rebinds anything.

Python 3.7 / TF 1.15 compatible (tensorflow.compat.v2 API).
"""

import warnings

import tensorflow.compat.v2 as tf

from . import eager_calls as _eager_calls
from . import kernels as _kernels
from . import primitive as _p
from . import registry as _registry

_LARGE_SPARSE_NUM_ELEMENTS = 100000000  # as tensorflow/python/framework/indexed_slices.py


def _with_gradient(forward, backward, *inputs):
    """forward(*inputs) with gradient backward(dy, y, *inputs) -> one gradient (or None) per input."""

    @tf.custom_gradient
    def op(*xs):
        y = forward(*xs)

        def grad(dy):
            grads = backward(dy, y, *xs)
            return grads[0] if len(xs) == 1 else list(grads)

        return y, grad

    return op(*inputs)


def _nonnegative_mask(ids, like):
    """ids >= 0, reshaped with trailing 1s to broadcast against `like` (rows gathered by ids)."""
    keep = tf.greater_equal(ids, 0)
    return tf.reshape(
        keep,
        tf.concat([tf.shape(keep), tf.ones(tf.reshape(tf.rank(like) - tf.rank(keep), [1]), tf.int32)], 0),
    )


def _gather_drop_negatives(params, ids):
    """params[ids] with zeros where ids < 0 (TF's _GatherDropNegatives)."""
    gathered = tf.gather(params, tf.maximum(ids, tf.zeros_like(ids)))
    return tf.where(_nonnegative_mask(ids, gathered), gathered, tf.zeros_like(gathered))


# --------------------------------------------------------------------------- parity with the stock ops
#
# Invalid input is handed to the stock op, which raises exactly as it would
# unpatched (same class in every mode, same message). A mode a replacement
# cannot build for (XLA: the order-fixed path has dynamic shapes) falls back to
# the stock function with a TfdetWarning naming the op and the mode.


def _stock(api):
    """The stock function of a public API (as TF had it when this module was imported)."""
    function = _STOCK.get(api)
    if function is None:
        raise LookupError("tfdet: no stock function recorded for %s" % api)
    return function


def _capture_stock():
    found = {}
    for api, _ in _registry.drop_in_pairs():
        if not api.startswith("tf."):
            continue
        target = tf
        for part in api.split(".")[1:]:
            target = getattr(target, part, None)
            if target is None:
                break
        if target is not None and getattr(target, "__module__", "") != __name__:
            found[api] = target
    return found


def _in_xla():
    """Whether ops built now are compiled by XLA (tf.function(jit_compile=True) or an XLA context)."""
    if tf.executing_eagerly():
        return False
    try:
        from tensorflow.python.ops import control_flow_util
    except ImportError:  # pragma: no cover - every TF this project covers has it
        return False
    return bool(control_flow_util.GraphOrParentsInXlaContext(tf.compat.v1.get_default_graph()))


def _warn_stock(what, mode):
    from .errors import TfdetWarning

    warnings.warn("tfdet: %s runs the stock op under %s: tfdet's deterministic replacement cannot be built "
                  "there, so this use is not made reproducible by tfdet" % (what, mode), TfdetWarning, stacklevel=4)


def _fallback(api, mode, *args, **kwargs):
    """The stock function's result, announced by a TfdetWarning naming the op and the mode."""
    _warn_stock(api, mode)
    return _stock(api)(*args, **kwargs)


def _xla_needs_stock(always=False):
    """Under XLA, a replacement on the order-fixed path (dynamic shapes) cannot compile: use stock."""
    return _in_xla() and (always or _p.resolve_method() == "order_fixed")


def _raise_like_stock(build):
    """build() creates the stock op on input it rejects: it raises there, as unpatched (eager, and graph
    construction for dtype/static-shape errors); a graph op that fails only when run is returned."""
    return build()


def _no_values(data, segment_ids):
    """Whether data's rows are statically empty (a zero-size dimension after the ids' ones): the
    output holds no values then, and the order-fixed loop cannot keep a 0-wide static shape."""
    rank = segment_ids.shape.rank
    if rank is None or data.shape.rank is None or _p.resolve_method() != "order_fixed":
        return False
    inner = data.shape[rank:]
    return inner.is_fully_defined() and inner.num_elements() == 0


def _empty_rows(data, segment_ids, num_segments):
    """The [num_segments] + inner result of a segment reduction of data without values. The ids are not
    checked against num_segments: the stock kernels return early for data without elements (an id out
    of range does not raise there). Gradient: zeros (there is nothing to differentiate)."""
    shape = tf.concat([tf.reshape(tf.cast(num_segments, tf.int64), [1]),
                       tf.shape(data, out_type=tf.int64)[segment_ids.shape.rank:]], 0)
    out = tf.zeros(shape, data.dtype)
    return _with_gradient(lambda x: out, lambda dy, y, x: (tf.zeros_like(x),), data)


def _segment_inputs(data, segment_ids, num_segments=None):
    data = tf.convert_to_tensor(data, name="data")
    segment_ids = tf.convert_to_tensor(segment_ids, name="segment_ids")
    if segment_ids.dtype == tf.int16:  # the stock kernels take int16 ids: the primitive needs int32/int64
        segment_ids = tf.cast(segment_ids, tf.int32)
    stock_check = None
    if segment_ids.dtype not in (tf.int32, tf.int64):
        stock_check = "dtype"
    elif data.shape.rank is not None and segment_ids.shape.rank is not None and (
            segment_ids.shape.rank > data.shape.rank
            or not data.shape[:segment_ids.shape.rank].is_compatible_with(segment_ids.shape)):
        stock_check = "shape"
    if not stock_check and not (data.shape.is_fully_defined() and segment_ids.shape.is_fully_defined()) \
            and _p.resolve_method() == "order_fixed":  # checked when run, with the stock kernels' key phrases
        dshape, ishape = tf.shape(data, out_type=tf.int64), tf.shape(segment_ids, out_type=tf.int64)
        check = tf.debugging.Assert(_same_vector(dshape[:tf.size(ishape)], ishape), [
            "segment_ids should be the same size as dimension 0 of input" if num_segments is None
            else "data.shape does not start with segment_ids.shape", "data.shape =", dshape,
            "segment_ids.shape =", ishape])
        with tf.control_dependencies([check]):
            data = tf.identity(data)
    if num_segments is None:
        if stock_check:
            _raise_like_stock(lambda: tf.raw_ops.SegmentSum(data=data, segment_ids=segment_ids))
        return data, segment_ids
    num_segments = tf.convert_to_tensor(num_segments, name="num_segments")
    if num_segments.shape.rank not in (None, 0):
        stock_check = "num_segments"
    if stock_check:
        _raise_like_stock(lambda: tf.raw_ops.UnsortedSegmentSum(data=data, segment_ids=segment_ids,
                                                                num_segments=num_segments))
        raise ValueError("invalid %s for an unsorted segment reduction" % stock_check)  # not reached on TF 2.x
    if num_segments.shape.rank is None:  # v1 graphs: unknown rank; a scalar at run time, as the stock op checks
        check = tf.debugging.Assert(tf.equal(tf.rank(num_segments), 0), ["num_segments should be a scalar, not shape",
                                                                         tf.shape(num_segments)])
        with tf.control_dependencies([check]):
            num_segments = tf.reshape(num_segments, [])
    return data, segment_ids, num_segments


# --------------------------------------------------------------------------- segment reductions


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """Deterministic tf.math.unsorted_segment_sum (raw op UnsortedSegmentSum).

    Stock GPU kernel: one atomicAdd per input element, so the summation order
    (and the rounding) changes from run to run; 2.5-2.6 raise under op
    determinism. Here: the order-fixed segment reduction of the primitive.
    Negative ids are dropped; ids >= num_segments raise, as on CPU.
    Gradient: a gather of the output gradient (zero for negative ids), as TF's.
    """
    if _xla_needs_stock():
        return _fallback("tf.math.unsorted_segment_sum", "XLA (jit_compile=True)", data, segment_ids, num_segments,
                         name=name)
    with tf.name_scope(name or "UnsortedSegmentSum"):
        data, segment_ids, num_segments = _segment_inputs(data, segment_ids, num_segments)
        if _no_values(data, segment_ids):
            return _empty_rows(data, segment_ids, num_segments)
        return _with_gradient(
            lambda x: _p.segment_reduce(x, segment_ids, num_segments, "sum"),
            lambda dy, y, x: (_gather_drop_negatives(dy, segment_ids),),
            data,
        )


def segment_sum(data, segment_ids, name=None):
    """Deterministic tf.math.segment_sum (raw ops SegmentSum, SegmentSumV2).

    Stock GPU kernel before 2.7: atomicAdd into each output row, run-to-run
    different sums; 2.5-2.6 raise under op determinism. Here: the primitive
    with sorted_ids=True (no sort). Ids must be non-decreasing and >= 0
    (InvalidArgumentError otherwise, as the CPU kernel); the output has
    segment_ids[-1] + 1 rows. Gradient: gather of the output gradient.
    """
    with tf.name_scope(name or "SegmentSum"):
        data, segment_ids = _segment_inputs(data, segment_ids)
        if _p.resolve_method() == "stock":  # TF's kernel is deterministic here and validates the ids itself
            return _with_gradient(
                lambda x: tf.raw_ops.SegmentSum(data=x, segment_ids=segment_ids),
                lambda dy, y, x: (tf.gather(dy, segment_ids),),
                data,
            )
        if segment_ids.shape.rank not in (None, 1):  # the stock op: "segment_ids should be a vector"
            return _raise_like_stock(lambda: tf.raw_ops.SegmentSum(data=data, segment_ids=segment_ids))
        if _xla_needs_stock():
            return _fallback("tf.math.segment_sum", "XLA (jit_compile=True)", data, segment_ids)
        if segment_ids.shape.rank is None:
            vector = tf.debugging.Assert(tf.equal(tf.rank(segment_ids), 1), ["segment_ids should be a vector."])
            with tf.control_dependencies([vector]):
                segment_ids = tf.identity(segment_ids)
        ids = tf.reshape(segment_ids, [-1])
        idt = ids.dtype
        n = tf.size(ids, out_type=idt)
        checks = [
            tf.debugging.assert_non_negative(ids, message="segment ids must be >= 0"),
            tf.debugging.assert_greater_equal(ids[1:], ids[:-1], message="segment ids are not increasing"),
        ]
        with tf.control_dependencies(checks):
            num_segments = tf.where(n > 0, tf.concat([ids[-1:], tf.zeros([1], idt)], 0)[0] + 1, tf.zeros([], idt))
        if _no_values(data, segment_ids):
            return _empty_rows(data, segment_ids, num_segments)
        return _with_gradient(
            lambda x: _p.segment_reduce(x, segment_ids, num_segments, "sum", sorted_ids=True),
            lambda dy, y, x: (tf.gather(dy, segment_ids),),
            data,
        )


def _segment_counts(data, segment_ids, num_segments):
    """max(number of entries per segment, 1), shaped to broadcast against the output (TF's _unsorted_segment_N)."""
    ones = tf.ones(tf.shape(segment_ids), dtype=data.dtype)
    n = _p.segment_reduce(ones, segment_ids, num_segments, "sum")
    shape = tf.concat(
        [tf.reshape(tf.cast(num_segments, tf.int32), [1]),
         tf.ones(tf.reshape(tf.rank(data) - tf.rank(segment_ids), [1]), tf.int32)],
        0,
    )
    return tf.maximum(tf.reshape(n, shape), tf.ones([], data.dtype))


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """Deterministic tf.math.unsorted_segment_mean (a Python composite of UnsortedSegmentSum).

    Stock: two atomic segment sums (values and counts) on GPU. Here: both
    through the primitive (the counts are exact in any order); gradient via
    unsorted_segment_sum above.
    """
    if _xla_needs_stock():
        return _fallback("tf.math.unsorted_segment_mean", "XLA (jit_compile=True)", data, segment_ids, num_segments, name=name)
    with tf.name_scope(name or "UnsortedSegmentMean"):
        data, segment_ids, num_segments = _segment_inputs(data, segment_ids, num_segments)
        count = _segment_counts(data, segment_ids, num_segments)
        return unsorted_segment_sum(data, segment_ids, num_segments) / count


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """Deterministic tf.math.unsorted_segment_sqrt_n (a Python composite of UnsortedSegmentSum).

    Stock: atomic segment sums on GPU. Here: the primitive; sum / sqrt(count).
    """
    if _xla_needs_stock():
        return _fallback("tf.math.unsorted_segment_sqrt_n", "XLA (jit_compile=True)", data, segment_ids, num_segments, name=name)
    with tf.name_scope(name or "UnsortedSegmentSqrtN"):
        data, segment_ids, num_segments = _segment_inputs(data, segment_ids, num_segments)
        count = _segment_counts(data, segment_ids, num_segments)
        return unsorted_segment_sum(data, segment_ids, num_segments) / tf.sqrt(count)


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """Deterministic tf.math.unsorted_segment_prod (raw op UnsortedSegmentProd).

    Stock GPU kernel: atomic multiply (a CAS loop), so the order of the
    products varies; 2.5-2.6 raise under op determinism. Here: the primitive's
    order-fixed product. Gradient as TF's _UnsortedSegmentProdGrad (segments
    with one zero get the product of the others at the zero, segments with two
    or more zeros get zero), with every segment reduction in it order-fixed.
    """
    if _xla_needs_stock():
        return _fallback("tf.math.unsorted_segment_prod", "XLA (jit_compile=True)", data, segment_ids, num_segments, name=name)
    with tf.name_scope(name or "UnsortedSegmentProd"):
        data, segment_ids, num_segments = _segment_inputs(data, segment_ids, num_segments)
        if _no_values(data, segment_ids):
            return _empty_rows(data, segment_ids, num_segments)

        def backward(dy, y, x):
            is_zero = tf.equal(x, tf.zeros([], x.dtype))
            num_zeros = _p.segment_reduce(tf.cast(is_zero, tf.int32), segment_ids, num_segments, "sum")
            dy = tf.where(tf.greater(num_zeros, 1), tf.zeros_like(dy), dy)
            non_zero_data = tf.where(is_zero, tf.ones_like(x), x)
            non_zero_prod = _p.segment_reduce(non_zero_data, segment_ids, num_segments, "prod")
            clipped = tf.maximum(segment_ids, tf.zeros_like(segment_ids))
            gathered_prod = tf.gather(y, clipped)
            gathered_non_zero_prod = tf.gather(non_zero_prod, clipped)
            prod_divided_by_el = gathered_prod / x  # may hold nan/inf where x == 0: replaced below
            partial = tf.where(is_zero, gathered_non_zero_prod, prod_divided_by_el)
            return (_gather_drop_negatives(dy, segment_ids) * partial,)

        return _with_gradient(
            lambda x: _p.segment_reduce(x, segment_ids, num_segments, "prod"), backward, data
        )


def _unsorted_segment_min_or_max(reduction, data, segment_ids, num_segments):
    data, segment_ids, num_segments = _segment_inputs(data, segment_ids, num_segments)
    if _no_values(data, segment_ids):
        return _empty_rows(data, segment_ids, num_segments)

    def backward(dy, y, x):
        clipped = tf.maximum(segment_ids, tf.zeros_like(segment_ids))
        gathered_outputs = tf.gather(y, clipped)
        is_selected = tf.logical_and(tf.equal(x, gathered_outputs), _nonnegative_mask(segment_ids, x))
        num_selected = _p.segment_reduce(tf.cast(is_selected, dy.dtype), segment_ids, num_segments, "sum")
        weighted = dy / num_selected
        gathered = tf.gather(weighted, clipped)
        return (tf.where(is_selected, gathered, tf.zeros_like(gathered)),)

    return _with_gradient(lambda x: _p.segment_reduce(x, segment_ids, num_segments, reduction), backward, data)


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """Deterministic tf.math.unsorted_segment_max (raw op UnsortedSegmentMax).

    The stock GPU forward uses atomicMax (order-independent except for NaN and
    signed zeros); its gradient counts ties with an atomic float segment sum.
    Here: the primitive for both; gradient split evenly between ties as TF's.
    """
    if _xla_needs_stock():
        return _fallback("tf.math.unsorted_segment_max", "XLA (jit_compile=True)", data, segment_ids, num_segments, name=name)
    with tf.name_scope(name or "UnsortedSegmentMax"):
        return _unsorted_segment_min_or_max("max", data, segment_ids, num_segments)


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """Deterministic tf.math.unsorted_segment_min (raw op UnsortedSegmentMin); see unsorted_segment_max."""
    if _xla_needs_stock():
        return _fallback("tf.math.unsorted_segment_min", "XLA (jit_compile=True)", data, segment_ids, num_segments, name=name)
    with tf.name_scope(name or "UnsortedSegmentMin"):
        return _unsorted_segment_min_or_max("min", data, segment_ids, num_segments)


# --------------------------------------------------------------------------- gather backprop


def indexed_slices_to_dense(value, dtype=None, name=None, as_ref=False):
    """Deterministic conversion of tf.IndexedSlices to a dense tensor (TF's _indexed_slices_to_tensor).

    This is where gather's gradient (an IndexedSlices) becomes dense: TF calls
    UnsortedSegmentSum, whose GPU kernel adds rows with atomics. Here: the
    primitive; gradient with respect to the values is a gather.
    """
    del as_ref
    if dtype is not None and not tf.as_dtype(dtype).is_compatible_with(value.dtype):
        raise ValueError(
            "Incompatible tensor conversion requested to `dtype` %s for IndexedSlices (%s) with dtype %s"
            % (tf.as_dtype(dtype).name, value, value.dtype.name)
        )
    if value.dense_shape is None:
        raise ValueError(
            "Tensor conversion requested for IndexedSlices for argument `value` without dense_shape: %s" % (value,)
        )
    if not tf.executing_eagerly():
        dense_shape_value = tf.get_static_value(value.dense_shape)
        if dense_shape_value is not None:
            num_elements = 1
            for dim in dense_shape_value:
                num_elements *= int(dim)
            if num_elements >= _LARGE_SPARSE_NUM_ELEMENTS:
                warnings.warn(
                    "Converting sparse IndexedSlices to a dense Tensor with %d elements. "
                    "This may consume a large amount of memory." % num_elements,
                    stacklevel=2,
                )
    return unsorted_segment_sum(value.values, value.indices, value.dense_shape[0], name=name)


# --------------------------------------------------------------------------- bias_add


def bias_add(value, bias, data_format=None, name=None):
    """Deterministic tf.nn.bias_add (backprop raw op BiasAddGrad).

    The stock BiasAddGrad GPU kernel (before TF 2.1, or without
    TF_DETERMINISTIC_OPS in 2.1-2.7) sums the gradient per channel with
    atomicAdd. Here: the stock BiasAdd forward (deterministic; its shape
    checks and errors are the stock ones in every mode) and, for the bias
    gradient, a dense tf.reduce_sum over every axis but the channel axis,
    which TF's reduction kernels compute in a fixed order (reshapes with
    static ranks, so it compiles under XLA too).
    """
    with tf.name_scope(name or "BiasAdd"):
        if data_format is not None:
            if data_format.startswith("NC"):
                data_format = "NCHW"
            elif data_format.startswith("N") and data_format.endswith("C"):
                data_format = "NHWC"
            else:
                raise ValueError(
                    "`data_format` must be of the form `N...C` or `NC...`. Received: data_format=%s" % data_format
                )
        value = tf.convert_to_tensor(value, name="input")
        bias = tf.convert_to_tensor(bias, dtype=value.dtype, name="bias")
        channels_first = data_format == "NCHW"

        def forward(v, b):  # the stock forward kernel (deterministic): its checks, shapes and errors
            return tf.raw_ops.BiasAdd(value=v, bias=b, data_format=data_format or "NHWC")

        def backward(dy, y, v, b):
            # Sum over every axis but the channel axis, through reshapes (static
            # ranks, so XLA compiles it): NHWC -> [-1, C]; NCHW -> [N, C, -1]
            # (rank 2 NCHW is N, C as in the stock kernel).
            channels, size = tf.shape(b)[0], tf.size(dy)
            if channels_first:
                batch = tf.shape(dy)[0]
                inner = size // tf.maximum(batch * channels, 1)  # no -1: reshape cannot infer it for empty dy
                grad = tf.reduce_sum(tf.reshape(dy, tf.stack([batch, channels, inner])), axis=[0, 2])
            else:
                grad = tf.reduce_sum(tf.reshape(dy, tf.stack([size // tf.maximum(channels, 1), channels])), axis=0)
            grad = tf.reshape(grad, tf.shape(b))
            channel = None if dy.shape.rank is None else dy.shape[1 if channels_first and dy.shape.rank > 1 else -1]
            grad.set_shape([channel])  # as TF's BiasAddGrad: a vector of the channels
            return dy, grad

        return _with_gradient(forward, backward, value, bias)


# --------------------------------------------------------------------------- bincount


def bincount(arr, weights=None, minlength=None, maxlength=None, dtype=tf.int32, name=None, axis=None,
             binary_output=False):
    """Deterministic tf.math.bincount (raw ops DenseBincount, Bincount).

    The stock GPU kernels count with atomics; with float weights the sums are
    run-to-run different, and 2.7+ raise under op determinism. Here: counts or
    weight sums through the primitive (the output length, minlength,
    maxlength, axis=-1 per-row counting and binary_output as the stock API;
    negative values raise InvalidArgumentError as on CPU). Not differentiable:
    asking for the gradient raises LookupError, as the stock op.
    RaggedTensor and SparseTensor input: the stock function (RaggedBincount and
    SparseBincount have CPU kernels only, which count in order). Weight dtypes
    the stock kernel rejects are handed to it, so it raises as unpatched.
    Called eagerly: one cached tf.function per signature (tfdet.patching.eager_calls).
    """
    stock_args = (arr, weights, minlength, maxlength, dtype, name, axis, binary_output)
    if tf.executing_eagerly():
        return _eager_calls.call("bincount", _bincount, (arr, weights, minlength, maxlength),
                                 {"dtype": dtype, "axis": axis, "binary_output": binary_output},
                                 lambda: _bincount(*stock_args))
    return _bincount(*stock_args)


def _bincount(arr, weights=None, minlength=None, maxlength=None, dtype=tf.int32, name=None, axis=None,
              binary_output=False):
    """tfdet's bincount as built in every mode (bincount's doc)."""
    stock_args = (arr, weights, minlength, maxlength, dtype, name, axis, binary_output)
    if any(isinstance(t, (tf.RaggedTensor, tf.SparseTensor)) for t in (arr, weights)):
        return _stock("tf.math.bincount")(*stock_args)
    if _xla_needs_stock(always=True):  # the output length is data-dependent: XLA needs stock's own handling
        return _fallback("tf.math.bincount", "XLA (jit_compile=True)", *stock_args)
    with tf.name_scope(name or "bincount"):
        arr = tf.convert_to_tensor(arr, name="arr")
        if weights is not None:
            weights = tf.convert_to_tensor(weights, name="weights")
            if weights.dtype not in (tf.int32, tf.int64, tf.float32, tf.float64):
                return _stock("tf.math.bincount")(*stock_args)  # raises: not a type the stock kernels take
        if weights is not None and binary_output:
            raise ValueError(
                "Arguments `binary_output` and `weights` are mutually exclusive. Please specify only one."
            )
        if not arr.dtype.is_integer:
            arr = tf.cast(arr, tf.int32)
        if axis is None:
            axis = 0
        if axis not in (0, -1):
            raise ValueError("Unsupported value for argument axis=%s. Only 0 and -1 are currently supported." % axis)
        if axis == -1 and arr.shape.rank is not None and arr.shape.rank <= 1:
            axis = 0  # as the stock op: counting a vector (or a scalar) per row is counting it
        if axis == -1 and arr.shape.rank is not None and arr.shape.rank > 2:
            return _stock("tf.math.bincount")(*stock_args)  # raises as unpatched (at most rank 2)
        idt = arr.dtype if arr.dtype in (tf.int32, tf.int64) else tf.int64
        arr = tf.cast(arr, idt)
        static = _stock_bincount_shape(arr, axis, minlength, maxlength)
        given_weights = weights
        if weights is not None:  # the stock kernel's weights check: a matrix by shape, else by number of elements
            by_shape = axis == -1 and (True if arr.shape.rank is not None else tf.rank(arr) >= 2)
            weights = _bincount_weights(arr, weights, by_shape)
        vector = None  # axis=-1 on input of unknown rank: whether it turns out to be a vector (or scalar)
        if axis == -1 and arr.shape.rank is None:
            rank = tf.rank(arr)
            check = tf.debugging.Assert(rank <= 2, ["Shape must be at most rank 2 but is rank", rank])
            vector = rank < 2
            rows2 = tf.concat([tf.shape(arr), [1]], 0)[0]  # rows of a matrix; 1 for a vector or scalar
            rows2 = tf.where(vector, tf.ones_like(rows2), rows2)
            with tf.control_dependencies([check]):
                arr = tf.reshape(arr, tf.stack([rows2, -1]))
            if weights is not None:
                weights = tf.reshape(weights, tf.shape(arr))
        nonempty = tf.size(arr) > 0
        output_size = tf.cast(nonempty, idt) * (tf.reduce_max(arr) + 1)  # as stock: no copy of arr; 0 when empty
        if minlength is not None:
            output_size = tf.maximum(tf.cast(tf.convert_to_tensor(minlength, name="minlength"), idt), output_size)
        if maxlength is not None:
            output_size = tf.minimum(tf.cast(tf.convert_to_tensor(maxlength, name="maxlength"), idt), output_size)
        out_dtype = weights.dtype if weights is not None else tf.as_dtype(dtype)
        values = weights if weights is not None else tf.ones(tf.shape(arr), out_dtype)
        if axis == 0:
            ids = tf.reshape(arr, [-1])
            values = tf.reshape(values, [-1])
            num_segments = output_size
        else:
            if arr.shape.rank is not None and arr.shape.rank != 2:
                raise ValueError("bincount with axis=-1 needs a rank-2 input, got rank %d" % arr.shape.rank)
            rows = tf.shape(arr, out_type=idt)[0]
            ids = tf.range(rows, dtype=idt)[:, tf.newaxis] * output_size + arr
            ids = tf.where(arr < output_size, ids, -tf.ones_like(ids))
            num_segments = rows * output_size
        stock_path = _p.resolve_method(None) == "stock"
        if axis == 0 and stock_path:  # values >= the output length are dropped; TF's segment kernels would raise
            ids = tf.where(ids < num_segments, ids, -tf.ones_like(ids))
        # (the order-fixed path drops ids >= num_segments itself when validate=False)

        def segment_sums():  # negative values raise here; this CPU's kernels raise on them themselves
            checked = _kernels.after_non_negative_check(arr, ids)
            return _p.segment_reduce(tf.stop_gradient(values), checked, num_segments, "sum", validate=False)

        out = _kernels.bincount(arr, weights, output_size, axis, out_dtype, segment_sums, stock_path=stock_path)
        if binary_output:
            out = tf.cast(out > 0, out_dtype)
        if axis == -1:
            leading = tf.reshape(rows, [1])
            if vector is not None:  # a vector's counts are one row, returned as a vector, as stock
                leading = leading[:tf.cast(tf.logical_not(vector), tf.int32)]
            out = tf.reshape(out, tf.concat([leading, tf.reshape(output_size, [1])], 0))
        out = _with_static_shape(tf.stop_gradient(out), static)
        if weights is not None and weights.dtype.is_floating:
            out = _with_gradient(lambda w: tf.identity(out), _no_gradient("DenseBincount"), given_weights)
            out = _with_static_shape(out, static)
        return out


def _bincount_weights(arr, weights, by_shape):
    """weights in arr's shape, checked when run as the stock kernel checks them: the same shape as arr
    (by_shape: a bool or a boolean tensor) or else the same number of elements, or no elements at all
    (then every value counts 1, in weights' dtype, as stock). Where the shapes are known now to break
    the rule, no reshape is built (it would raise while building, where stock raises when run)."""
    ashape = tf.shape(arr, out_type=tf.int64)
    wshape = tf.shape(weights, out_type=tf.int64)
    same_size = tf.equal(tf.reduce_prod(wshape), tf.reduce_prod(ashape))
    same = same_size if by_shape is False else tf.logical_and(same_size, _same_vector(wshape, ashape))
    if not isinstance(by_shape, bool):
        same = tf.where(by_shape, same, same_size)
    empty = tf.equal(tf.size(weights), 0)
    check = tf.debugging.Assert(tf.logical_or(same, empty), [
        "`weights` must be the same shape as `arr` or a length-0 `Tensor`, but got shapes", wshape, "and", ashape])
    with tf.control_dependencies([check]):
        def counts():
            return tf.ones(ashape, weights.dtype)

        if not (weights.shape.is_fully_defined() and arr.shape.is_fully_defined()):
            return tf.cond(empty, counts, lambda: tf.reshape(weights, ashape))
        if weights.shape.num_elements() == 0:
            return counts()
        if weights.shape.num_elements() == arr.shape.num_elements() and (
                by_shape is False or weights.shape == arr.shape):
            return tf.reshape(weights, ashape)
        return tf.zeros(ashape, weights.dtype)  # never used: the check fails when run


def _stock_bincount_shape(arr, axis, minlength, maxlength):
    """The static shape of stock tf.math.bincount's result (TF 2.21), or None for an unknown rank: its
    DenseBincount gets a vector (axis=0, or a vector with axis=-1) or arr's matrix (axis=-1), and its
    `size` input is known while building only where TF can evaluate it then (arr and the lengths
    constants): [size] or [rows, size], else [None] or [None, None]."""
    rank = arr.shape.rank
    if axis == -1 and rank is None:
        return None
    matrix = axis == -1 and rank == 2
    size = None
    value = tf.get_static_value(arr)
    lengths = [None if v is None else tf.get_static_value(tf.convert_to_tensor(v)) for v in (minlength, maxlength)]
    if value is not None and all(v is not None or given is None for v, given in zip(lengths, (minlength, maxlength))):
        size = int(value.max()) + 1 if value.size else 0
        if minlength is not None:
            size = max(int(lengths[0]), size)
        if maxlength is not None:
            size = min(int(lengths[1]), size)
        size = size if size >= 0 else None
    if matrix:
        return tf.TensorShape([arr.shape[0] if size is not None else None, size])
    return tf.TensorShape([size])


def _with_static_shape(tensor, shape):
    """tensor with the static shape `shape` (None: unknown rank) in graph mode, also where tfdet's
    computation knows more than the stock op does: then through an identity whose shape function gives
    exactly `shape` (PlaceholderWithDefault), so code written against stock sees what it sees unpatched."""
    if tf.executing_eagerly():
        return tensor
    shape = tf.TensorShape(shape)
    if not shape.is_compatible_with(tensor.shape):  # pragma: no cover - a bug in the caller's shape
        raise AssertionError("tfdet: static shape %s does not hold %s" % (shape, tensor.shape))
    known_more = tensor.shape.rank is not None and (shape.rank is None or any(
        mine is not None and theirs is None for mine, theirs in zip(tensor.shape.as_list(), shape.as_list())))
    if known_more:
        tensor = tf.compat.v1.placeholder_with_default(tensor, shape)
    tensor.set_shape(shape)
    return tensor


def _no_gradient(op_type):
    """A backward that raises as TF does for an op with no registered gradient."""
    def backward(dy, y, *inputs):
        raise LookupError("No gradient defined for operation '%s' (op type: %s): gradient registry has no entry "
                          "for: %s" % (op_type, op_type, op_type))

    return backward


# --------------------------------------------------------------------------- sparse x dense


def sparse_dense_matmul(sp_a, b, adjoint_a=False, adjoint_b=False, name=None):
    """Deterministic tf.sparse.sparse_dense_matmul (raw op SparseTensorDenseMatMul).

    The stock GPU kernel adds a_value * b[col, :] into out[row, :] with
    atomics (and raises in 2.6+ under op determinism). Here: the products are
    formed per nonzero, then summed per output row by the primitive. Gradient
    with respect to b is the same computation with A transposed; with respect
    to A's values, per-nonzero dot products (gathers and a batched matmul, as
    TF's gradient). A SparseTensor b is handled by transposition, as stock.
    """
    if isinstance(b, (tf.SparseTensor, getattr(tf.compat.v1, "SparseTensorValue", tf.SparseTensor))):
        if adjoint_a != adjoint_b:
            return tf.transpose(sparse_dense_matmul(b, sp_a, adjoint_a, adjoint_b))
        return tf.transpose(sparse_dense_matmul(b, sp_a, adjoint_a=not adjoint_a, adjoint_b=not adjoint_b))
    with tf.name_scope(name or "SparseTensorDenseMatMul"):
        if not isinstance(sp_a, tf.SparseTensor):
            sp_a = tf.SparseTensor.from_value(sp_a)
        indices, values, shape = sp_a.indices, sp_a.values, sp_a.dense_shape
        b = tf.convert_to_tensor(b, name="b")

        def stock():  # on input the stock kernel rejects: its own error, in every mode
            return tf.raw_ops.SparseTensorDenseMatMul(a_indices=indices, a_values=values, a_shape=shape, b=b,
                                                      adjoint_a=adjoint_a, adjoint_b=adjoint_b)

        if values.dtype not in _SDM_DTYPES or b.shape.rank not in (None, 2) or values.dtype != b.dtype:
            return _raise_like_stock(stock)
        static = _sdm_static_shapes(shape, b, adjoint_a, adjoint_b)
        if static is None:  # shapes the stock shape function rejects: its own error
            return _raise_like_stock(stock)
        if _xla_needs_stock(always=True):  # TF has no XLA kernel for it: stock's own error, as unpatched
            return _fallback("tf.sparse.sparse_dense_matmul", "XLA (jit_compile=True)", sp_a, b, adjoint_a,
                             adjoint_b)
        checks = []
        if b.shape.rank is None:
            checks.append(tf.debugging.Assert(tf.equal(tf.rank(b), 2), ["Tensor 'b' is not a matrix"]))
        if shape.shape.rank is None or tf.compat.dimension_value(shape.shape[0]) is None:
            checks.append(tf.debugging.Assert(tf.equal(tf.size(shape), 2), ["Tensor 'a_shape' is not a vector"]))
        with tf.control_dependencies(checks):
            shape = tf.reshape(shape, [2])
            b = tf.identity(b)
        b.set_shape(b.shape.merge_with(tf.TensorShape([None, None])) if b.shape.rank is not None
                    else tf.TensorShape([None, None]))
        # The stock kernel's bounds checks (it raises for any index outside the dense shape; the
        # primitive alone would drop a negative row and a gather may not check on GPU).
        lhs_rows, lhs_cols = (1, 0) if adjoint_a else (0, 1)
        # The stock kernel returns before checking when there is nothing to compute: an empty output,
        # no values, or an empty b (zeros then).
        nothing = tf.logical_or(tf.equal(tf.size(values), 0), tf.equal(tf.size(b), 0))
        nothing = tf.logical_or(nothing, tf.equal(tf.cast(shape[lhs_rows], tf.int64)
                                                  * tf.cast(tf.shape(b)[0 if adjoint_b else 1], tf.int64), 0))
        bounds = [
            tf.debugging.Assert(tf.logical_or(nothing, tf.reduce_all(tf.logical_and(
                indices[:, lhs_rows] >= 0, indices[:, lhs_rows] < shape[lhs_rows]))),
                ["m from index out of bounds (>=", shape[lhs_rows], ")"]),
            tf.debugging.Assert(tf.logical_or(nothing, tf.reduce_all(tf.logical_and(
                indices[:, lhs_cols] >= 0, indices[:, lhs_cols] < shape[lhs_cols]))),
                ["k from index out of bounds (>=", shape[lhs_cols], ")"]),
        ]
        with tf.control_dependencies(bounds):  # before anything reads the indices (a gather would fail first)
            # nothing to compute: no entry is used (its indices are not checked, as stock)
            used = tf.where(nothing, tf.zeros([], tf.int64), tf.shape(indices, out_type=tf.int64)[0])
            values = values[:used]
            indices = indices[:used]

        def product(vals, dense, adj_a, adj_b):
            rows, cols = indices[:, 0], indices[:, 1]
            out_rows = shape[0]
            if adj_a:
                rows, cols, out_rows = cols, rows, shape[1]
                vals = tf.math.conj(vals)
            if adj_b:
                dense = tf.math.conj(tf.transpose(dense))
            inner = tf.cast(shape[0] if adj_a else shape[1], tf.int64)
            check = tf.debugging.assert_equal(
                tf.cast(tf.shape(dense)[0], tf.int64), inner,
                message="Cannot multiply A and B because inner dimension does not match",
            )
            narrow = vals.dtype in (tf.float16, tf.bfloat16)  # products and sums in float32, rounded once
            with tf.control_dependencies([check]):
                terms = _widen(vals, narrow)[:, tf.newaxis] * tf.gather(_widen(dense, narrow), cols)
            out = _p.segment_reduce(terms, rows, out_rows, "sum")
            return tf.cast(out, vals.dtype) if narrow else out

        def backward(dy, y, vals, dense):
            # d/dB: A^T dy (or its adjoint form), itself order-fixed.
            b_grad = product(vals, dy, not adjoint_a, False)
            if adjoint_b:
                b_grad = tf.math.conj(tf.transpose(b_grad))
            b_grad = _with_static_shape(b_grad, static[1])
            rows, cols = indices[:, 0], indices[:, 1]
            parts_a = tf.gather(dy, cols if adjoint_a else rows)
            parts_b = tf.gather(tf.transpose(dense) if adjoint_b else dense, rows if adjoint_a else cols)
            if not adjoint_a and not adjoint_b:
                a_grad = tf.matmul(parts_a[:, tf.newaxis, :], parts_b[:, tf.newaxis, :], adjoint_b=True)
            elif adjoint_a and not adjoint_b:
                a_grad = tf.matmul(parts_a[:, :, tf.newaxis], parts_b[:, :, tf.newaxis], adjoint_a=True)
            elif not adjoint_a and adjoint_b:
                a_grad = tf.matmul(parts_a[:, tf.newaxis, :], parts_b[:, :, tf.newaxis])
            else:
                a_grad = tf.matmul(parts_a[:, :, tf.newaxis], parts_b[:, tf.newaxis, :], adjoint_a=True,
                                   adjoint_b=True)
            return tf.reshape(a_grad, [-1]), b_grad

        out = _with_gradient(lambda v, d: product(v, d, adjoint_a, adjoint_b), backward, values, b)
        out.set_shape(static[0])
        return out


def _widen(t, narrow):
    return tf.cast(t, tf.float32) if narrow else t


def _sdm_static_shapes(a_shape, b, adjoint_a, adjoint_b):
    """The static shapes the stock op gives its output, [rows of op(A), columns of op(B)], and its
    gradient to b (TF's gradient: op(A)^T times the output's gradient, transposed back for adjoint_b),
    as far as they are known now (A's dense shape where its value is known); None where the stock
    shape function raises (A's dense shape not of 2 dimensions, inner dimensions known to differ)."""
    a = _partial_shape(a_shape)
    if a.rank is None:
        a = tf.TensorShape([None, None])
    if a.rank != 2:
        return None
    bs = b.shape if b.shape.rank is not None else tf.TensorShape([None, None])
    a_outer, a_inner = (a[1], a[0]) if adjoint_a else (a[0], a[1])
    b_inner, b_outer = (bs[1], bs[0]) if adjoint_b else (bs[0], bs[1])
    if not tf.TensorShape([a_inner]).is_compatible_with(tf.TensorShape([b_inner])):
        return None
    b_grad = [b_outer, a_inner] if adjoint_b else [a_inner, b_outer]
    return tf.TensorShape([a_outer, b_outer]), tf.TensorShape(b_grad)


# The dtypes the stock SparseTensorDenseMatMul has kernels for (CPU and GPU alike here).
_SDM_DTYPES = (tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.int32, tf.complex64, tf.complex128)


# --------------------------------------------------------------------------- image resizing


def _round_half_away(v):
    """C roundf for v >= 0, exactly: floor, plus one if the fraction is >= 0.5."""
    f = tf.floor(v)
    return f + tf.cast(v - f >= 0.5, v.dtype)


def _nearest_source(out_size, in_size, align_corners, half_pixel_centers):
    """For each of out_size positions, the nearest source index in [0, in_size), as TF's CPU kernels.

    scale = (in - 1)/(out - 1) with align_corners (and out > 1), else in/out,
    in float32; source = floor(x * scale) (legacy), floor((x + 0.5) * scale)
    (half-pixel centers) or roundf(...) with align_corners; clipped to in - 1.
    """
    out_f = tf.cast(out_size, tf.float32)
    in_f = tf.cast(in_size, tf.float32)
    if align_corners:
        scale = tf.where(out_size > 1, (in_f - 1.0) / tf.maximum(out_f - 1.0, 1.0), in_f / out_f)
    else:
        scale = in_f / out_f
    x = tf.cast(tf.range(out_size), tf.float32)
    v = (x + 0.5) * scale if half_pixel_centers else x * scale
    src = _round_half_away(v) if align_corners else tf.floor(v)
    src = tf.minimum(tf.cast(src, tf.int32), tf.cast(in_size, tf.int32) - 1)
    return tf.maximum(src, 0)


def _check_resize_flags(align_corners, half_pixel_centers):
    if align_corners and half_pixel_centers:
            raise tf.errors.InvalidArgumentError(
            None, None, "If half_pixel_centers is True, align_corners must be False."
        )


def resize_nearest_neighbor_grad(grads, size, align_corners=False, half_pixel_centers=False, name=None):
    """Deterministic ResizeNearestNeighborGrad (tf.raw_ops signature): gradient of nearest resizing.

    grads: [batch, h, w, channels], the gradient of the resized images; size:
    the original [height, width]. The stock GPU kernel adds each gradient pixel
    into its source pixel with atomics (2.7+ raise under op determinism). Each
    output row/column receives a run of consecutive grads rows/columns (the
    nearest-source map is non-decreasing), so this is two sorted segment sums
    through the primitive, over rows then columns; no sort is needed.
    """
    _check_resize_flags(align_corners, half_pixel_centers)
    with tf.name_scope(name or "ResizeNearestNeighborGrad"):
        grads = tf.convert_to_tensor(grads, name="grads")
        size = tf.convert_to_tensor(size, dtype=tf.int32, name="size")
        shape = tf.shape(grads)
        h, w = shape[1], shape[2]
        height, width = size[0], size[1]
        src_y = _nearest_source(h, height, align_corners, half_pixel_centers)
        src_x = _nearest_source(w, width, align_corners, half_pixel_centers)
        # rows: [h, B, w, C] -> [H, B, w, C]
        g = tf.transpose(grads, [1, 0, 2, 3])
        g = _p.segment_reduce(g, src_y, height, "sum", sorted_ids=True)
        # columns: [w, H, B, C] -> [W, H, B, C]
        g = tf.transpose(g, [2, 0, 1, 3])
        g = _p.segment_reduce(g, src_x, width, "sum", sorted_ids=True)
        out = tf.transpose(g, [2, 1, 0, 3])
        out.set_shape([grads.shape[0], None, None, grads.shape[3]])
        return out


def resize_nearest_neighbor(images, size, align_corners=False, name=None, half_pixel_centers=False):
    """tf.compat.v1.image.resize_nearest_neighbor with a deterministic gradient.

    Forward: the stock ResizeNearestNeighbor op (deterministic). Gradient:
    resize_nearest_neighbor_grad above instead of ResizeNearestNeighborGrad,
    whose GPU kernel accumulates with atomics. tf.image.resize(method=NEAREST)
    is this with half_pixel_centers=True.
    """
    _check_resize_flags(align_corners, half_pixel_centers)
    with tf.name_scope(name or "ResizeNearestNeighbor"):
        images = tf.convert_to_tensor(images, name="images")
        size = tf.convert_to_tensor(size, dtype=tf.int32, name="size")

        def forward(x):
            return tf.raw_ops.ResizeNearestNeighbor(
                images=x, size=size, align_corners=align_corners, half_pixel_centers=half_pixel_centers
            )

        def backward(dy, y, x):
            return (resize_nearest_neighbor_grad(dy, tf.shape(x)[1:3], align_corners, half_pixel_centers),)

        return _with_gradient(forward, backward, images)


# --------------------------------------------------------------------------- crop_and_resize


def _crop_geometry(boxes, box_ind, crop_hw, image_hw, batch):
    """Sampling positions of crop_and_resize, computed as TF's CPU kernels do (float32).

    Returns a dict of [nb, ch] / [nb, cw] tensors: in_y, in_x, top/bottom/left/right
    indices, y_lerp/x_lerp, valid_y/valid_x, the box validity [nb], and the
    ratios used by the boxes gradient.
    """
    boxes = tf.cast(boxes, tf.float32)
    y1, x1, y2, x2 = boxes[:, 0:1], boxes[:, 1:2], boxes[:, 2:3], boxes[:, 3:4]
    ch, cw = crop_hw[0], crop_hw[1]
    height, width = image_hw[0], image_hw[1]

    def axis(a1, a2, crop, size):
        size_m1 = tf.cast(size - 1, tf.float32)
        crop_m1 = tf.cast(crop - 1, tf.float32)
        many = crop > 1
        scale = tf.where(many, (a2 - a1) * size_m1 / tf.maximum(crop_m1, 1.0), tf.zeros_like(a1))
        ratio = tf.where(many, size_m1 / tf.maximum(crop_m1, 1.0), 0.0)
        pos = tf.cast(tf.range(crop), tf.float32)[tf.newaxis, :]
        # crop == 1: 0.5 * (a1 + a2) * (size - 1) is evaluated in double by the kernel.
        single = tf.cast(0.5 * (tf.cast(a1 + a2, tf.float64)) * tf.cast(size - 1, tf.float64), tf.float32)
        inp = tf.where(many, a1 * size_m1 + pos * scale, single + 0.0 * pos)
        valid = tf.logical_and(inp >= 0.0, inp <= size_m1)
        lo = tf.floor(inp)
        hi = tf.math.ceil(inp)
        lerp = inp - lo
        last = tf.cast(size - 1, tf.int32)
        return {
            "in": inp,
            "lo": tf.clip_by_value(tf.cast(lo, tf.int32), 0, tf.maximum(last, 0)),
            "hi": tf.clip_by_value(tf.cast(hi, tf.int32), 0, tf.maximum(last, 0)),
            "near": tf.clip_by_value(tf.cast(_round_half_away(tf.maximum(inp, 0.0)), tf.int32), 0,
                                     tf.maximum(last, 0)),
            "lerp": lerp,
            "valid": valid,
            "ratio": ratio,
            "pos": pos,
            "size_m1": size_m1,
            "many": many,
        }

    box_ok = tf.logical_and(box_ind >= 0, box_ind < batch)
    return axis(y1, y2, ch, height), axis(x1, x2, cw, width), box_ok


def crop_and_resize_grad_image(grads, boxes, box_ind, image_size, T, method="bilinear", name=None):
    """Deterministic CropAndResizeGradImage (tf.raw_ops signature): crop_and_resize's gradient to the image.

    The stock kernels scatter-add every crop pixel's gradient into up to four
    image pixels; on GPU with atomics (2.6+ raise under op determinism), and on
    CPU before 2.6 from several threads at once. Here: the contributions are
    formed per (box, y, x, corner) exactly as the kernel forms them, then
    summed per image pixel by the primitive. method "bilinear" or "nearest".
    """
    if method not in ("bilinear", "nearest"):
        raise ValueError("method must be 'bilinear' or 'nearest', got %r" % (method,))
    with tf.name_scope(name or "CropAndResizeGradImage"):
        grads = tf.convert_to_tensor(grads, name="grads")
        boxes = tf.convert_to_tensor(boxes, name="boxes")
        box_ind = tf.convert_to_tensor(box_ind, name="box_ind")
        image_size = tf.convert_to_tensor(image_size, dtype=tf.int32, name="image_size")
        T = tf.as_dtype(T)
        batch, height, width, depth = image_size[0], image_size[1], image_size[2], image_size[3]
        gshape = tf.shape(grads)
        nb, ch, cw = gshape[0], gshape[1], gshape[2]
        ys, xs, box_ok = _crop_geometry(boxes, box_ind, gshape[1:3], image_size[1:3], batch)
        g = tf.cast(grads, tf.float32)
        ok = (box_ok[:, tf.newaxis, tf.newaxis]
              & ys["valid"][:, :, tf.newaxis] & xs["valid"][:, tf.newaxis, :])  # [nb, ch, cw]
        base = tf.cast(box_ind, tf.int64)[:, tf.newaxis, tf.newaxis] * tf.cast(height, tf.int64)

        def pixel(yy, xx):  # [nb, ch] and [nb, cw] -> linear pixel ids [nb, ch, cw], -1 where skipped
            lin = ((base + tf.cast(yy, tf.int64)[:, :, tf.newaxis]) * tf.cast(width, tf.int64)
                   + tf.cast(xx, tf.int64)[:, tf.newaxis, :])
            return tf.where(ok, lin, -tf.ones_like(lin))

        g = tf.reshape(g, tf.stack([-1, depth]))  # [nb * ch * cw, D]
        if method == "bilinear":
            def column(lerp):  # [nb, ch, cw] -> [nb * ch * cw, 1]: broadcast over the channels only
                return tf.reshape(tf.broadcast_to(lerp, tf.shape(ok)), [-1, 1])

            # As the kernel: dtop = (1 - y_lerp) * g, then (1 - x_lerp) * dtop, ...
            y_lerp = column(ys["lerp"][:, :, tf.newaxis])
            x_lerp = column(xs["lerp"][:, tf.newaxis, :])
            dtop = (1.0 - y_lerp) * g
            dbottom = y_lerp * g
            terms = [
                (pixel(ys["lo"], xs["lo"]), (1.0 - x_lerp) * dtop),
                (pixel(ys["lo"], xs["hi"]), x_lerp * dtop),
                (pixel(ys["hi"], xs["lo"]), (1.0 - x_lerp) * dbottom),
                (pixel(ys["hi"], xs["hi"]), x_lerp * dbottom),
            ]
        else:
            terms = [(pixel(ys["near"], xs["near"]), g)]
        ids = tf.concat([tf.reshape(i, [-1]) for i, _ in terms], 0)
        vals = tf.cast(tf.concat([v for _, v in terms], 0), T)
        num = tf.cast(batch, tf.int64) * tf.cast(height, tf.int64) * tf.cast(width, tf.int64)
        out = _p.segment_reduce(vals, ids, num, "sum")
        del nb, ch, cw
        return tf.reshape(out, image_size)


def crop_and_resize_grad_boxes(grads, image, boxes, box_ind, method="bilinear", name=None):
    """Deterministic CropAndResizeGradBoxes (tf.raw_ops signature): crop_and_resize's gradient to the boxes.

    The stock kernels sum, per box, terms from every crop pixel and channel;
    on GPU with atomics (2.6+ raise under op determinism). Here: the same
    terms, formed as the kernel forms them, summed per box by a dense
    tf.reduce_sum (fixed order). Only "bilinear" exists, as in the stock op.
    """
    if method != "bilinear":
        raise ValueError("method must be 'bilinear', got %r" % (method,))
    with tf.name_scope(name or "CropAndResizeGradBoxes"):
        grads = tf.convert_to_tensor(grads, name="grads")
        image = tf.convert_to_tensor(image, name="image")
        boxes = tf.convert_to_tensor(boxes, name="boxes")
        box_ind = tf.convert_to_tensor(box_ind, name="box_ind")
        ishape = tf.shape(image)
        batch = ishape[0]
        ys, xs, box_ok = _crop_geometry(boxes, box_ind, tf.shape(grads)[1:3], ishape[1:3], batch)
        b = tf.clip_by_value(box_ind, 0, tf.maximum(batch - 1, 0))
        img = tf.cast(image, tf.float32)

        # Corner values [nb, ch, cw, D]: rows of the image seen as [B * H * W, D], at linear
        # indices (b * H + y) * W + x (one gather each, no index tuples).
        flat = tf.reshape(img, tf.stack([-1, ishape[3]]))

        def corner(yy, xx):
            line = (b[:, tf.newaxis] * ishape[1] + yy) * ishape[2]  # [nb, ch]
            return tf.gather(flat, line[:, :, tf.newaxis] + xx[:, tf.newaxis, :])

        top_left = corner(ys["lo"], xs["lo"])
        top_right = corner(ys["lo"], xs["hi"])
        bottom_left = corner(ys["hi"], xs["lo"])
        bottom_right = corner(ys["hi"], xs["hi"])
        y_lerp = ys["lerp"][:, :, tf.newaxis]
        x_lerp = xs["lerp"][:, tf.newaxis, :]
        g = tf.cast(grads, tf.float32)

        def channel_sum(a, b):  # [nb, ch, cw]: sum over the channels of (a - b) * g, same-shape ops only
            return tf.reduce_sum((a - b) * g, axis=3)

        # The kernel's ((1 - x_lerp) * (bl - tl) + x_lerp * (br - tr)) * g summed over the channels,
        # with the lerp factors (constant over the channels) applied after the channel sums: the
        # elementwise work on [nb, ch, cw, D] has no broadcasting.
        image_grad_y = ((1.0 - x_lerp) * channel_sum(bottom_left, top_left)
                        + x_lerp * channel_sum(bottom_right, top_right))
        image_grad_x = ((1.0 - y_lerp) * channel_sum(top_right, top_left)
                        + y_lerp * channel_sum(bottom_right, bottom_left))
        ok = (box_ok[:, tf.newaxis, tf.newaxis]
              & ys["valid"][:, :, tf.newaxis] & xs["valid"][:, tf.newaxis, :])
        image_grad_y = tf.where(ok, image_grad_y, 0.0)
        image_grad_x = tf.where(ok, image_grad_x, 0.0)

        def coefficients(ax):  # [nb, n] factors for (d a1, d a2)
            pos_ratio = ax["pos"] * ax["ratio"]
            half = 0.5 * ax["size_m1"]
            c1 = tf.where(ax["many"], ax["size_m1"] - pos_ratio, half + 0.0 * pos_ratio)
            c2 = tf.where(ax["many"], pos_ratio, half + 0.0 * pos_ratio)
            return c1, c2

        cy1, cy2 = coefficients(ys)
        cx1, cx2 = coefficients(xs)
        sy = tf.reduce_sum(image_grad_y, axis=2)  # [nb, ch]
        sx = tf.reduce_sum(image_grad_x, axis=1)  # [nb, cw]
        dy1 = tf.reduce_sum(sy * tf.broadcast_to(cy1, tf.shape(sy)), axis=1)
        dy2 = tf.reduce_sum(sy * tf.broadcast_to(cy2, tf.shape(sy)), axis=1)
        dx1 = tf.reduce_sum(sx * tf.broadcast_to(cx1, tf.shape(sx)), axis=1)
        dx2 = tf.reduce_sum(sx * tf.broadcast_to(cx2, tf.shape(sx)), axis=1)
        return tf.stack([dy1, dx1, dy2, dx2], axis=1)


def crop_and_resize(image, boxes, box_indices, crop_size, method="bilinear", extrapolation_value=0.0, name=None):
    """tf.image.crop_and_resize (v2 signature) with deterministic gradients.

    Forward: the stock CropAndResize op (deterministic). Gradients:
    crop_and_resize_grad_image and crop_and_resize_grad_boxes above instead of
    CropAndResizeGradImage/CropAndResizeGradBoxes, which accumulate with
    atomics on GPU. As TF's gradient, the image gradient exists for float
    images only and the boxes gradient is the bilinear one for either method.
    """
    with tf.name_scope(name or "crop_and_resize"):
        image = tf.convert_to_tensor(image, name="image")
        boxes = tf.convert_to_tensor(boxes, name="boxes")
        box_indices = tf.convert_to_tensor(box_indices, name="box_indices")
        crop_size = tf.convert_to_tensor(crop_size, name="crop_size")

        def forward(img, bxs):
            return tf.raw_ops.CropAndResize(
                image=img, boxes=bxs, box_ind=box_indices, crop_size=crop_size, method=method,
                extrapolation_value=extrapolation_value,
            )

        def backward(dy, y, img, bxs):
            if img.dtype in (tf.float16, tf.float32, tf.float64):
                g_img = crop_and_resize_grad_image(dy, bxs, box_indices, tf.shape(img), img.dtype, method=method)
            else:
                g_img = None
            g_boxes = crop_and_resize_grad_boxes(dy, img, bxs, box_indices)
            return g_img, g_boxes

        return _with_gradient(forward, backward, image, boxes)


# --------------------------------------------------------------------------- scatter_nd


def _linear_indices(indices, shape, bad_indices_policy):
    """Row-major linear index of each index tuple into shape[:K].

    Out-of-range tuples raise InvalidArgumentError (the CPU kernels' default and
    "ERROR" policy) or, with bad_indices_policy="IGNORE", get -1 (dropped).
    """
    if bad_indices_policy not in ("", "DEFAULT", "ERROR", "IGNORE"):
        raise ValueError("bad_indices_policy must be '', 'DEFAULT', 'ERROR' or 'IGNORE', got %r"
                         % (bad_indices_policy,))
    indices = tf.cast(indices, tf.int64)
    shape = tf.cast(shape, tf.int64)
    k = tf.shape(indices)[-1]
    outer = shape[:k]
    flat = tf.reshape(indices, tf.stack([-1, k]))
    ok = tf.reduce_all(tf.logical_and(flat >= 0, flat < outer[tf.newaxis, :]), axis=1)
    strides = tf.math.cumprod(outer, exclusive=True, reverse=True)
    lin = tf.reduce_sum(flat * strides[tf.newaxis, :], axis=1)
    if bad_indices_policy == "IGNORE":
        lin = tf.where(ok, lin, -tf.ones_like(lin))
    else:
        check = tf.debugging.Assert(tf.reduce_all(ok), ["an index tuple does not index into shape", shape])
        with tf.control_dependencies([check]):
            lin = tf.identity(lin)
    return lin, tf.reduce_prod(outer), k


def scatter_nd(indices, updates, shape, bad_indices_policy="", name=None):
    """Deterministic tf.scatter_nd (raw op ScatterNd): duplicate indices summed in a fixed order.

    The stock GPU kernel adds duplicates with atomics (float sums vary run to
    run). Here: indices are linearised over shape[:K] and the update slices
    are summed by the primitive. Out-of-range indices raise
    InvalidArgumentError, as on CPU, unless bad_indices_policy="IGNORE"
    (then they are skipped). Gradient: gather_nd of the output gradient, as TF's
    (TF 2.21's _ScatterNdGrad ignores the policy: a bad index raises there on a CPU).
    """
    with tf.name_scope(name or "ScatterNd"):
        if tf.is_tensor(shape) and not tf.is_tensor(indices):  # the stock op takes the index type from the tensor
            indices = tf.cast(tf.convert_to_tensor(indices, name="indices"), shape.dtype)
        indices = tf.convert_to_tensor(indices, name="indices")
        updates = tf.convert_to_tensor(updates, name="updates")
        shape = tf.convert_to_tensor(shape, dtype=None if tf.is_tensor(shape) else indices.dtype, name="shape")
        if shape.dtype != indices.dtype or indices.dtype not in (tf.int32, tf.int64) or not (
                updates.dtype.is_floating or updates.dtype.is_complex or updates.dtype.is_integer):
            # stock raises (bool and string have no CPU kernel; index types), or runs its own kernel: let it
            return _raise_like_stock(lambda: tf.raw_ops.ScatterNd(indices=indices, updates=updates, shape=shape))
        mismatch = _scatter_nd_static_mismatch(indices, updates, shape)
        if mismatch == "updates_rank" and tf.executing_eagerly():  # the stock kernel aborts the process here
            raise tf.errors.InvalidArgumentError(None, None, "Dimensions [0,%d) of indices[shape=%s] must match "
                                                 "dimensions of updates[shape=%s]: updates must have rank at least %d"
                                                 % (indices.shape.rank - 1, indices.shape, updates.shape,
                                                    indices.shape.rank - 1))
        if mismatch:  # the stock op raises its own error (at graph construction where it can)
            return _raise_like_stock(lambda: tf.raw_ops.ScatterNd(indices=indices, updates=updates, shape=shape))
        if _xla_needs_stock():
            extra = {"bad_indices_policy": bad_indices_policy} if bad_indices_policy else {}
            return _fallback("tf.scatter_nd", "XLA (jit_compile=True)", indices, updates, shape, name=name, **extra)
        checks = _scatter_nd_runtime_checks(indices, updates, shape)
        if checks:  # before the indices are checked against the shape, as the stock kernel
            with tf.control_dependencies(checks):
                updates = tf.identity(updates)
                indices = tf.identity(indices)
        lin, num, k = _linear_indices(indices, shape, bad_indices_policy)

        def forward(u):
            slice_shape = tf.cast(shape[k:], tf.int32)
            # the number of index tuples, not -1: reshape cannot infer it when a slice is empty
            rows = tf.reshape(u, tf.concat([tf.shape(lin)[:1], slice_shape], 0))
            out = _p.segment_reduce(rows, lin, num, "sum")
            return tf.reshape(out, tf.cast(shape, tf.int32))

        def backward(dy, y, u):  # TF's own gradient, whatever the policy: a gather_nd with the default
            return (tf.gather_nd(dy, indices),)  # policy (raises for a bad index on CPU, zeros on GPU)

        return _with_gradient(forward, backward, updates)


def _scatter_nd_static_mismatch(indices, updates, shape):
    """Which of ScatterNd's shape rules the shapes known now break ("" if none is known to be broken):
    then the stock op is built instead, to raise its own error."""
    ishape, ushape = indices.shape, updates.shape
    if ishape.rank is None or ushape.rank is None:
        return ""
    if ishape.rank == 0:
        return "indices_rank"
    outer = ishape.rank - 1
    if ushape.rank < outer:
        return "updates_rank"
    if not ishape[:-1].is_compatible_with(ushape[:outer]):
        return "outer"
    k = tf.compat.dimension_value(ishape[-1])
    target = _partial_shape(shape)  # what the stock shape function knows of the output shape
    if k is None or target.rank is None:
        return ""
    if k > target.rank or not ushape[outer:].is_compatible_with(target[k:]):
        return "slice"
    if target.is_fully_defined() and ishape.is_fully_defined() and ushape.is_fully_defined():
        sizes = (target.num_elements(), ishape.num_elements(), ushape.num_elements())
        if 0 in sizes and sizes[1:] != (0, 0):  # the stock kernel's "empty output shape" rule
            return "empty_output"
    return ""


def _partial_shape(shape):
    """The TensorShape a shape tensor is known to hold now (unknown dims where its values are not known)."""
    try:
        from tensorflow.python.framework import tensor_util

        return tensor_util.constant_value_as_shape(shape)
    except (ImportError, ValueError, TypeError):  # pragma: no cover - every TF this project covers has it
        value = tf.get_static_value(shape)
        return tf.TensorShape(None if value is None else [int(d) for d in value.reshape(-1).tolist()])


def _same_vector(a, b):
    """a == b for int64 vectors whose lengths are known only when run."""
    longest = tf.maximum(tf.size(a), tf.size(b))
    return tf.logical_and(tf.equal(tf.size(a), tf.size(b)), tf.reduce_all(tf.equal(
        tf.pad(a, [[0, longest - tf.size(a)]], constant_values=-1),
        tf.pad(b, [[0, longest - tf.size(b)]], constant_values=-1))))


def _scatter_nd_runtime_checks(indices, updates, shape):
    """ScatterNd's shape rules as run-time assertions (in the stock kernel's order, with its key phrases),
    where the shapes are not all known now."""
    if indices.shape.is_fully_defined() and updates.shape.is_fully_defined() \
            and tf.get_static_value(shape) is not None:
        return []
    ishape = tf.shape(indices, out_type=tf.int64)
    ushape = tf.shape(updates, out_type=tf.int64)
    target = tf.cast(shape, tf.int64)
    outer = tf.size(ishape) - 1
    # The stock kernel: an empty output, indices or updates, unless indices and updates are both empty.
    no_indices, no_updates = tf.equal(tf.size(indices), 0), tf.equal(tf.size(updates), 0)
    empty = tf.logical_and(tf.logical_or(tf.equal(tf.reduce_prod(target), 0), tf.logical_or(no_indices, no_updates)),
                           tf.logical_not(tf.logical_and(no_indices, no_updates)))
    empty_check = tf.debugging.Assert(tf.logical_not(empty), [
        "Indices and updates specified for empty output. indices shape:", ishape])
    with tf.control_dependencies([empty_check]):
        outer_check = tf.debugging.Assert(_same_vector(ishape[:-1], ushape[:outer]), [
            "Dimensions [0,", outer, ") of indices[shape=", ishape, "] must match dimensions [0,", outer,
            ") of updates[shape=", ushape, "]"])
    with tf.control_dependencies([outer_check]):
        slice_check = tf.debugging.Assert(_same_vector(target[ishape[-1]:], ushape[outer:]), [
            "Dimensions [", ishape[-1], ",", tf.size(target), ") of input[shape=", target,
            "] must match dimensions [", outer, ",", tf.size(ushape), ") of updates[shape=", ushape, "]"])
    return [slice_check]


def tensor_scatter_nd_add(tensor, indices, updates, bad_indices_policy="", name=None):
    """Deterministic tf.tensor_scatter_nd_add (raw op TensorScatterAdd).

    The stock GPU kernel adds (possibly duplicate) updates into a copy of
    tensor with atomics. Here: tensor + scatter_nd(indices, updates) above
    (duplicates are summed first, in a fixed order). Gradient: identity for
    tensor, gather_nd for updates.
    """
    with tf.name_scope(name or "TensorScatterAdd"):
        tensor = tf.convert_to_tensor(tensor, name="tensor")
        indices = tf.convert_to_tensor(indices, name="indices")
        return tensor + scatter_nd(indices, updates, tf.shape(tensor, out_type=indices.dtype), bad_indices_policy)


# --------------------------------------------------------------------------- composites (no atomics at all)


def _move_axis_to_end(t, axis):
    rank = tf.rank(t)
    axis = axis % rank if isinstance(axis, int) and axis < 0 else axis
    perm = tf.concat([tf.range(axis), tf.range(axis + 1, rank), [axis]], 0)
    return tf.transpose(t, perm)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """Deterministic tf.nn.softmax_cross_entropy_with_logits (raw op SoftmaxCrossEntropyWithLogits).

    The fused GPU kernel (forward and its built-in backprop) is
    nondeterministic before TF 2.6 (2.7 for the raw op). Here: TF's own
    deterministic composite, -sum(labels * log_softmax(logits)), whose gradient
    (LogSoftmax's and a broadcast) has no accumulation across threads. float16
    and bfloat16 logits are computed in float32, as the stock op does.
    """
    with tf.name_scope(name or "softmax_cross_entropy_with_logits"):
        logits = tf.convert_to_tensor(logits, name="logits")
        labels = tf.convert_to_tensor(labels, name="labels")
        to_float32 = logits.dtype in (tf.float16, tf.bfloat16)
        precise = tf.cast(logits, tf.float32) if to_float32 else logits
        labels = tf.cast(labels, precise.dtype)
        static_shape = logits.shape
        if axis != -1:
            precise = _move_axis_to_end(precise, axis)
            labels = _move_axis_to_end(labels, axis)
        log_probs = tf.nn.log_softmax(precise, axis=-1)
        cost = -tf.reduce_sum(labels * log_probs, axis=-1)
        if static_shape.rank is not None:
            dims = static_shape.as_list()
            del dims[axis]
            cost.set_shape(dims)
        return tf.cast(cost, logits.dtype) if to_float32 else cost


def softmax_cross_entropy_with_logits_v1_v2(labels, logits, axis=None, name=None, dim=None):
    """Deterministic tf.compat.v1.nn.softmax_cross_entropy_with_logits_v2 (`dim`: the deprecated name of
    `axis`), which TF implements apart from tf.nn.softmax_cross_entropy_with_logits: the replacement above.
    (tf.compat.v1.nn.softmax_cross_entropy_with_logits calls tf.nn's, so it is covered by that.)"""
    from tensorflow.python.util.deprecation import deprecated_argument_lookup

    axis = deprecated_argument_lookup("axis", axis, "dim", dim)
    return softmax_cross_entropy_with_logits(labels, logits, axis=-1 if axis is None else axis, name=name)


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """Deterministic tf.nn.sparse_softmax_cross_entropy_with_logits (raw op SparseSoftmaxCrossEntropyWithLogits).

    The fused GPU kernel is nondeterministic (2.6 raises under op determinism).
    Here: -log_softmax(logits) at the label, picked with a one-hot product
    rather than a batched gather (whose gradient would be an atomic segment
    sum). Invalid labels: NaN on a GPU, InvalidArgumentError elsewhere, as the
    stock kernels; labels whose shape is not logits' without the last axis
    raise, as the stock function.
    """
    with tf.name_scope(name or "SparseSoftmaxCrossEntropyWithLogits"):
        labels = tf.convert_to_tensor(labels, name="labels")
        logits = tf.convert_to_tensor(logits, name="logits")
        to_float32 = logits.dtype in (tf.float16, tf.bfloat16)
        precise = tf.cast(logits, tf.float32) if to_float32 else logits
        labels_static = labels.shape
        logits_static = logits.shape
        if logits_static.rank == 0:
            raise ValueError("`logits` cannot be a scalar. Received logits=%s`" % (logits,))
        if logits_static.rank is not None and labels_static.rank is not None \
                and labels_static.rank != logits_static.rank - 1:
            raise ValueError("`labels.shape.rank` must equal `logits.shape.rank - 1`. Received: labels.shape=%s "
                             "of rank %d and logits.shape=%s of rank %d" % (labels_static, labels_static.rank,
                                                                            logits_static, logits_static.rank))
        fully_defined = labels_static.is_fully_defined() and logits_static.rank is not None \
            and logits_static[:-1].is_fully_defined()
        if fully_defined and labels_static != logits_static[:-1]:
            raise ValueError("`labels.shape` must equal `logits.shape` except for the last dimension. Received: "
                             "labels.shape=%s and logits.shape=%s" % (labels_static, logits_static))
        if labels.dtype not in (tf.int32, tf.int64):  # stock: a TypeError/InvalidArgumentError from the kernel
            return _raise_like_stock(lambda: tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(
                features=tf.reshape(precise, [-1, tf.shape(precise)[-1]]), labels=tf.reshape(labels, [-1]))[0])
        checks = []
        if labels_static.rank is None or logits_static.rank is None:  # checked when run, as the stock op
            checks.append(tf.debugging.Assert(tf.equal(tf.rank(labels), tf.rank(logits) - 1), [
                "labels must be 1-D (of rank logits' rank - 1), but got shape", tf.shape(labels)]))
        if not fully_defined:
            with tf.control_dependencies(checks):
                checks.append(tf.debugging.assert_equal(
                    tf.shape(labels), tf.shape(logits)[:-1],
                    message="logits and labels must have the same first dimension"))
        classes = tf.shape(precise)[-1]
        invalid = tf.logical_or(labels < 0, labels >= tf.cast(classes, labels.dtype))
        if not _on_gpu(labels):  # the CPU kernel raises; the GPU kernel gives NaN (below)
            with tf.control_dependencies(checks):
                checks.append(tf.debugging.Assert(tf.logical_not(tf.reduce_any(invalid)), [
                    "Received a label value of",
                    tf.gather(tf.reshape(labels, [-1]), tf.where(tf.reshape(invalid, [-1]))[:1, 0]),
                    "which is outside the valid range of [0, ", classes, ").  Label values: ", labels],
                    summarize=100))
        with tf.control_dependencies(checks):
            log_probs = tf.nn.log_softmax(precise, axis=-1)
        picked = tf.one_hot(labels, classes, dtype=precise.dtype)
        cost = -tf.reduce_sum(picked * log_probs, axis=-1)
        cost = tf.where(invalid, tf.constant(float("nan"), precise.dtype), cost)
        cost.set_shape(labels_static)
        return tf.cast(cost, logits.dtype) if to_float32 else cost


def _on_gpu(tensor):
    """Whether ops built next to `tensor` run on a GPU: its device in eager mode; in a graph, the
    device scope, else whether TensorFlow sees a GPU (where it would place the op)."""
    if tf.executing_eagerly():
        device = getattr(tensor, "device", "") or ""
        return "GPU" in device.upper()
    scope = tf.zeros([], name="device_probe").device or ""
    if scope:
        return "GPU" in scope.upper()
    return bool(tf.config.list_logical_devices("GPU"))


def adjust_contrast(images, contrast_factor):
    """Deterministic tf.image.adjust_contrast (raw op AdjustContrastv2).

    The GPU kernel computes the per-channel means with atomics (2.7+ raise
    under op determinism). Here: tf.reduce_mean over height and width (a dense
    reduction, fixed order) and x * factor + mean * (1 - factor), in float32
    for non-float inputs as the stock op, converted back with saturation.
    As stock: the factor is a float32 scalar (a tensor of another dtype raises
    as the stock op does), and there is no gradient (LookupError).
    """
    with tf.name_scope("adjust_contrast"):
        images = tf.convert_to_tensor(images, name="images")
        orig_dtype = images.dtype

        def stock():  # on input the stock op rejects: its own error, in every mode
            return _raise_like_stock(lambda: _stock("tf.image.adjust_contrast")(images, contrast_factor))

        if orig_dtype == tf.float16 and not _in_xla() and not _on_gpu(images):  # no float16 CPU kernel: stock raises
            return stock()
        if tf.is_tensor(contrast_factor) and contrast_factor.dtype != tf.float32:  # the op's input is float32
            return stock()
        factor = tf.convert_to_tensor(contrast_factor, dtype=tf.float32, name="contrast_factor")
        if factor.shape.rank is not None and factor.shape.rank != 0:  # the stock op raises its own error
            return stock()
        if factor.shape.rank is None:
            with tf.control_dependencies([tf.debugging.Assert(tf.equal(tf.rank(factor), 0), [
                    "contrast_factor must be scalar:", tf.shape(factor)])]):
                factor = tf.identity(factor)
        if not orig_dtype.is_floating:
            return _adjust_contrast(images, factor)
        return _with_gradient(lambda x: _adjust_contrast(x, factor), _no_gradient("AdjustContrastv2"), images)


def _adjust_contrast(images, factor):
    orig_dtype = images.dtype
    if orig_dtype in (tf.float16, tf.float32):
        flt = images
    else:
        flt = tf.image.convert_image_dtype(images, tf.float32)
    work = tf.cast(flt, tf.float32)
    # x * f + mean * (1 - f): the same value as (x - mean) * f + mean up to a few
    # ulps (within the stated tolerance), one pass over the image fewer. On [B, H, W*C]
    # views: the mean as two dense reductions with long inner rows, and the offset
    # tiled to one [W*C] row per image (a [B, 1, 1, C] broadcast is 3x slower on CPUs).
    shape = tf.shape(work)
    h, w, c = shape[-3], shape[-2], shape[-1]
    b = tf.reduce_prod(shape[:-3])
    rows = tf.reduce_sum(tf.reshape(work, tf.stack([b, h, w * c])), axis=1)  # [B, W*C]
    mean = tf.reduce_sum(tf.reshape(rows, tf.stack([b, w, c])), axis=1) / tf.cast(h * w, tf.float32)
    offset = tf.reshape(tf.tile((mean * (1.0 - factor))[:, tf.newaxis, :], tf.stack([1, w, 1])),
                        tf.stack([b, 1, w * c]))
    adjusted = tf.reshape(tf.reshape(work * factor, tf.stack([b, h, w * c])) + offset, shape)
    adjusted = tf.cast(tf.ensure_shape(adjusted, work.shape), flt.dtype)
    return tf.image.convert_image_dtype(adjusted, orig_dtype, saturate=True)


# --------------------------------------------------------------------------- gradient swaps


def _attr(op, name, default):
    try:
        value = op.get_attr(name)
    except (ValueError, TypeError):
        return default
    return value.decode() if isinstance(value, bytes) else value


def resize_nearest_neighbor_gradient(op, grad):
    """Deterministic gradient of the ResizeNearestNeighbor op (for TF's gradient registry)."""
    image = op.inputs[0]
    shape = image.get_shape()[1:3]
    shape = shape.as_list() if shape.is_fully_defined() else tf.shape(image)[1:3]
    both = _attr(op, "align_corners", False) and _attr(op, "half_pixel_centers", False)
    if both or _xla_needs_stock():  # TF's own gradient (announced under XLA); with both flags the forward op
        if not both:                # fails when run, so its gradient never runs: built as stock, not raised here
            _warn_stock("the gradient of ResizeNearestNeighbor", "XLA (jit_compile=True)")
        return [tf.raw_ops.ResizeNearestNeighborGrad(
            grads=grad, size=shape, align_corners=_attr(op, "align_corners", False),
            half_pixel_centers=_attr(op, "half_pixel_centers", False)), None]
    return [resize_nearest_neighbor_grad(grad, shape, align_corners=_attr(op, "align_corners", False),
                                         half_pixel_centers=_attr(op, "half_pixel_centers", False)), None]


def crop_and_resize_gradient(op, grad):
    """Deterministic gradient of the CropAndResize op (for TF's gradient registry)."""
    image, boxes, box_ind = op.inputs[0], op.inputs[1], op.inputs[2]
    image_shape = image.get_shape().as_list() if image.get_shape().is_fully_defined() else tf.shape(image)
    method = _attr(op, "method", "bilinear")
    if _xla_needs_stock():  # TF's own gradient ops, announced
        _warn_stock("the gradient of CropAndResize", "XLA (jit_compile=True)")
        grad_image = None
        if image.dtype in (tf.float16, tf.float32, tf.float64):
            grad_image = tf.raw_ops.CropAndResizeGradImage(grads=grad, boxes=boxes, box_ind=box_ind,
                                                           image_size=tf.shape(image), T=image.dtype, method=method)
        grad_boxes = tf.raw_ops.CropAndResizeGradBoxes(grads=grad, image=image, boxes=boxes, box_ind=box_ind)
        return [grad_image, grad_boxes, None, None]
    grad_image = None
    if image.dtype in (tf.float16, tf.float32, tf.float64):
        grad_image = crop_and_resize_grad_image(grad, boxes, box_ind, image_shape, T=image.dtype, method=method)
        # as TF's CropAndResizeGradImage: a 4-D image, known where the image's static shape is
        grad_image = _with_static_shape(grad_image, image.shape if image.shape.rank is not None else [None] * 4)
    grad_boxes = crop_and_resize_grad_boxes(grad, image, boxes, box_ind)  # bilinear for either method, as TF's
    return [grad_image, _with_static_shape(grad_boxes, boxes.shape), None, None]


# --------------------------------------------------------------------------- derived from the registry


def _not_autograph_converted():
    """Mark every drop-in and gradient function so that tf.function's AutoGraph calls it as it is
    (it is graph code already, TF1 graphs included): converting it only costs tracing time, and a
    full test run showed AutoGraph's conversion cache handing one replacement another's converted
    code (NameError / unexpected keyword inside tf.function)."""
    do_not_convert = getattr(getattr(tf, "autograph", None), "experimental", None)
    do_not_convert = getattr(do_not_convert, "do_not_convert", None)
    if do_not_convert is None:  # pragma: no cover - TF without AutoGraph
        return
    names = {implementation for _, implementation in _registry.drop_in_pairs()}
    names.update(r.implementation for r in _registry.REGISTRY)
    for name in sorted(names):
        function = globals()[name]
        if not hasattr(function, "__wrapped__"):
            globals()[name] = do_not_convert(function)


_not_autograph_converted()

# Stock API (or raw op) -> drop-in function; which of them patch() installs,
# and how, is tfdet.patching.registry's to say.
REPLACEMENTS = {stock: globals()[implementation] for stock, implementation in _registry.drop_in_pairs()}
GRADIENTS = {r.stock: globals()[r.implementation] for r in _registry.REGISTRY if r.install == _registry.GRADIENT}

__all__ = sorted({f.__name__ for f in list(REPLACEMENTS.values()) + list(GRADIENTS.values())}) + [
    "GRADIENTS", "REPLACEMENTS"]


_STOCK = _capture_stock()
