"""Hypothesis strategies for the parity property tests (tests/patching/test_properties.py):
inputs of the segment reductions and bincount, valid and invalid, as the upstream kernel
tests exercise them (segment_reduction_ops_test.py, bincount_op_test.py): zero-size dims,
sorted / unsorted / repeated / negative / out-of-range ids, num_segments below and above
the largest id, every dtype the stock CPU kernels accept, and the execution mode."""

import numpy as np
from hypothesis import strategies as st

MODES = ("eager", "function", "v1_graph_unknown_shape", "jit_compile")
SEGMENT_REDUCTIONS = ("sum", "prod", "max", "min", "mean", "sqrt_n")
# dtypes the stock CPU kernels take, per reduction (mean and sqrt_n divide: floats only)
SEGMENT_DTYPES = {
    "sum": ("float16", "bfloat16", "float32", "float64", "int32", "int64", "complex64"),
    "prod": ("float16", "float32", "float64", "int32", "int64"),
    "max": ("float16", "bfloat16", "float32", "float64", "int32", "int64"),
    "min": ("float16", "bfloat16", "float32", "float64", "int32", "int64"),
    "mean": ("float16", "float32", "float64"),
    "sqrt_n": ("float16", "float32", "float64"),
}
ID_LAYOUTS = ("sorted", "unsorted", "repeated", "with_negative", "out_of_range")


def values(draw, shape, dtype):
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    if dtype in ("int32", "int64"):
        return rng.integers(-4, 5, size=shape).astype(dtype)
    if dtype == "complex64":
        return (rng.uniform(-2, 2, size=shape) + 1j * rng.uniform(-2, 2, size=shape)).astype(np.complex64)
    data = rng.uniform(-2, 2, size=shape)
    if draw(st.booleans()):  # exact zeros and ties matter to prod and max/min
        data = np.round(data)
    return data.astype(np.float32 if dtype == "bfloat16" else dtype)


@st.composite
def segment_ids(draw, n, num_segments, layout):
    top = max(num_segments, 1)
    if layout == "repeated":
        ids = np.full(n, draw(st.integers(0, top - 1)))
    else:
        ids = np.array(draw(st.lists(st.integers(0, top - 1), min_size=n, max_size=n)), dtype=np.int64)
    if layout == "sorted":
        ids = np.sort(ids)
    if layout == "with_negative" and n:
        ids[draw(st.integers(0, n - 1))] = draw(st.sampled_from([-1, -3]))
    if layout == "out_of_range" and n:
        ids[draw(st.integers(0, n - 1))] = num_segments + draw(st.integers(0, 2))
    if num_segments == 0 and layout not in ("with_negative",):
        ids = np.full(n, -1) if layout != "out_of_range" else ids
    return ids


@st.composite
def unsorted_segment_problems(draw, reductions=SEGMENT_REDUCTIONS):
    """(reduction, data, ids, num_segments, ids dtype, data dtype, mode)."""
    reduction = draw(st.sampled_from(reductions))
    dtype = draw(st.sampled_from(SEGMENT_DTYPES[reduction]))
    ids_rank = draw(st.integers(1, 2))
    ids_shape = tuple(draw(st.lists(st.integers(0, 5), min_size=ids_rank, max_size=ids_rank)))
    inner = tuple(draw(st.lists(st.integers(0, 3), min_size=0, max_size=2)))
    num_segments = draw(st.integers(0, 7))
    layout = draw(st.sampled_from(ID_LAYOUTS))
    n = int(np.prod(ids_shape))
    ids = draw(segment_ids(n, num_segments, layout)).reshape(ids_shape)
    ids_dtype = draw(st.sampled_from(["int32", "int64"]))
    data = values(draw, ids_shape + inner, dtype)
    mode = draw(st.sampled_from(MODES))
    return reduction, data, ids.astype(ids_dtype), num_segments, dtype, mode


@st.composite
def sorted_segment_problems(draw):
    """(data, ids, dtype, mode) for tf.math.segment_sum: mostly sorted ids, sometimes not (stock raises)."""
    dtype = draw(st.sampled_from(SEGMENT_DTYPES["sum"]))
    n = draw(st.integers(0, 9))
    inner = tuple(draw(st.lists(st.integers(0, 3), min_size=0, max_size=2)))
    layout = draw(st.sampled_from(("sorted", "sorted", "sorted", "unsorted", "with_negative")))
    ids = draw(segment_ids(n, draw(st.integers(1, 6)), layout))
    if layout == "sorted":
        ids = np.sort(np.abs(ids))
    ids_dtype = draw(st.sampled_from(["int32", "int64"]))
    mode = draw(st.sampled_from(MODES[:3]))  # stock SegmentSum has no XLA kernel either way
    return values(draw, (n,) + inner, dtype), ids.astype(ids_dtype), dtype, mode


@st.composite
def bincount_problems(draw):
    """(arr, kwargs, mode) for tf.math.bincount."""
    axis = draw(st.sampled_from([None, 0, -1]))
    # mostly rank 1 and 2; rank 0 and 3 as bincount_op_test.py (axis=-1 on a vector counts it; rank 3: "at most
    # rank 2"), and what Keras 3 calls (tf.math.bincount(x, axis=-1) whatever x's rank)
    rank = draw(st.sampled_from([1, 2, 2, 1, 0, 3]))
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=rank, max_size=rank)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    arr = rng.integers(0, draw(st.integers(1, 9)), size=shape).astype(draw(st.sampled_from(["int32", "int64"])))
    if arr.size and draw(st.integers(0, 9)) == 0:
        arr.flat[0] = -1  # stock raises
    kwargs = {}
    if axis is not None:
        kwargs["axis"] = axis
    weighted = draw(st.booleans())
    if weighted:
        kwargs["weights"] = values(draw, shape, draw(st.sampled_from(["float32", "float64", "int32", "int64",
                                                                      "float16"])))  # float16: stock rejects
        if draw(st.integers(0, 7)) == 0:  # weights of another shape than arr: stock raises
            kwargs["weights"] = np.concatenate([kwargs["weights"].reshape(-1), kwargs["weights"].reshape(-1)[:1]])
    elif draw(st.booleans()):
        kwargs["binary_output"] = True
    if not weighted:
        kwargs["dtype"] = draw(st.sampled_from(["int32", "int64", "float32", "float64"]))
    if draw(st.booleans()):
        kwargs["minlength"] = draw(st.integers(0, 10))
    if draw(st.booleans()):
        kwargs["maxlength"] = draw(st.integers(0, 10))
    mode = draw(st.sampled_from(MODES))
    return arr, kwargs, mode


# --------------------------------------------------------------------------- scatter_nd, sparse x dense, images
# Inputs as scatter_nd_ops_test.py, sparse_tensor_dense_matmul_op_test.py, image_grad_test_base.py and
# image_ops_test.py's AdjustContrastTest exercise them (tests/patching/UPSTREAM_CASES.md).

SCATTER_DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128", "int32", "int64", "bool")
SCATTER_LAYOUTS = ("valid", "valid", "repeated", "negative", "out_of_range", "empty_output", "flat_indices",
                   "updates_mismatch")


@st.composite
def scatter_nd_problems(draw):
    """(indices, updates, shape, dtype, layout, mode) for tf.scatter_nd."""
    k = draw(st.integers(1, 3))
    outer = [draw(st.integers(1, 4)) for _ in range(k)]
    inner = [draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2)))]
    batch = [draw(st.integers(0, 4)) for _ in range(draw(st.integers(1, 2)))]
    layout = draw(st.sampled_from(SCATTER_LAYOUTS))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    indices = np.stack([rng.integers(0, d, size=batch) for d in outer], axis=-1).reshape(batch + [k])
    n = int(np.prod(batch))
    if layout == "repeated" and n:
        indices[...] = indices.reshape(-1, k)[0]
    if layout == "negative" and n:
        indices.reshape(-1, k)[rng.integers(0, n), rng.integers(0, k)] = -1
    if layout == "out_of_range" and n:
        j = rng.integers(0, k)
        indices.reshape(-1, k)[rng.integers(0, n), j] = outer[j] + rng.integers(0, 2)
    shape = outer + inner
    if layout == "empty_output":
        shape[draw(st.integers(0, len(shape) - 1))] = 0
    dtype = draw(st.sampled_from(SCATTER_DTYPES))
    updates_shape = batch + inner
    if layout == "flat_indices":  # upstream testInvalidShape: indices=[0] where [[0]] was meant
        indices = indices.reshape(-1)[:1] if indices.size else np.zeros([1], np.int64)
        updates_shape = [1] + inner
    if layout == "updates_mismatch":
        updates_shape = batch[:-1] + [batch[-1] + 1] + inner
    updates = values(draw, tuple(updates_shape), dtype if dtype not in ("bool", "complex128") else "float64")
    if dtype == "bool":
        updates = updates > 0
    elif dtype == "complex128":
        updates = updates.astype(np.complex128) * (1 - 1j)
    index_dtype = draw(st.sampled_from(["int32", "int64"]))
    mode = draw(st.sampled_from(MODES))
    return (indices.astype(index_dtype), updates, np.array(shape, index_dtype), dtype, layout, mode)


SDM_DTYPES = ("float16", "float32", "float64", "int32", "complex64", "complex128", "int64")
SDM_LAYOUTS = ("valid", "valid", "unordered", "duplicate", "negative", "out_of_range", "inner_mismatch",
               "rank1_b")


@st.composite
def sparse_dense_matmul_problems(draw):
    """(indices, values, dense_shape, b, adjoint_a, adjoint_b, dtype, layout, mode) for
    tf.sparse.sparse_dense_matmul."""
    m, k, n = (draw(st.integers(0, 5)) for _ in range(3))
    adjoint_a, adjoint_b = draw(st.booleans()), draw(st.booleans())
    dtype = draw(st.sampled_from(SDM_DTYPES))
    layout = draw(st.sampled_from(SDM_LAYOUTS))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    a_shape = [k, m] if adjoint_a else [m, k]
    dense = rng.uniform(-2, 2, size=a_shape)
    dense[rng.uniform(size=a_shape) < draw(st.sampled_from([0.0, 0.5, 0.8, 1.0]))] = 0
    indices = np.argwhere(dense != 0).astype(np.int64).reshape(-1, 2)
    vals = dense[dense != 0]
    if layout == "unordered" and len(indices):
        order = rng.permutation(len(indices))
        indices, vals = indices[order], vals[order]
    if layout == "duplicate" and len(indices):
        indices, vals = np.concatenate([indices, indices[:1]]), np.concatenate([vals, vals[:1]])
    if layout in ("negative", "out_of_range"):
        if not len(indices):
            indices, vals = np.zeros([1, 2], np.int64), np.ones([1])
        axis = rng.integers(0, 2)
        indices[rng.integers(0, len(indices)), axis] = -1 if layout == "negative" else max(a_shape[axis], 1) + 9
    inner = k + (1 if layout == "inner_mismatch" else 0)
    b = rng.uniform(-2, 2, size=[n, inner] if adjoint_b else [inner, n])
    if layout == "rank1_b":
        b = b.reshape(-1)
    if dtype.startswith("complex"):
        vals, b = vals * (1 + 0.5j), b * (1 - 0.25j)
    elif dtype.startswith("int"):
        vals, b = np.round(vals * 2), np.round(b * 2)
    mode = draw(st.sampled_from(MODES))
    return (indices, vals.astype(dtype), np.array(a_shape, np.int64), b.astype(dtype), adjoint_a, adjoint_b,
            dtype, layout, mode)


@st.composite
def crop_and_resize_problems(draw):
    """(image, boxes, box_ind, crop_size, method, dtype, mode) for the gradients of tf.image.crop_and_resize:
    boxes in [-0.5, 1.5] (extrapolation too), box indices sometimes outside [0, batch) (stock raises)."""
    batch, height, width, depth = (draw(st.integers(1, 2)), draw(st.integers(1, 4)), draw(st.integers(1, 4)),
                                   draw(st.integers(1, 2)))
    num_boxes = draw(st.integers(0, 3))
    crop = np.array([draw(st.integers(1, 3)), draw(st.integers(1, 3))], np.int32)
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    boxes = rng.uniform(-0.5, 1.5, size=[num_boxes, 4]).astype(np.float32)
    if draw(st.booleans()):
        boxes = np.round(boxes * 4) / 4  # on the pixel grid: the kernels' floor/ceil ties
    box_ind = rng.integers(0, batch, size=[num_boxes]).astype(np.int32)
    if num_boxes and draw(st.integers(0, 7)) == 0:
        box_ind[0] = draw(st.sampled_from([-1, batch]))
    dtype = draw(st.sampled_from(["float16", "float32", "float64", "int32", "uint8"]))
    image = rng.uniform(0, 9, size=[batch, height, width, depth]).round().astype(dtype)
    method = draw(st.sampled_from(["bilinear", "nearest"]))
    mode = draw(st.sampled_from(MODES))
    return image, boxes, box_ind, crop, method, dtype, mode


@st.composite
def resize_nearest_problems(draw):
    """(images, size, align_corners, half_pixel_centers, dtype, mode) for the gradient of
    ResizeNearestNeighbor: larger and smaller sizes in each dimension, both flags (both True: stock raises)."""
    shape = (draw(st.integers(1, 2)), draw(st.integers(1, 5)), draw(st.integers(1, 5)), draw(st.integers(1, 3)))
    size = np.array([draw(st.integers(1, 7)), draw(st.integers(1, 7))], np.int32)
    dtype = draw(st.sampled_from(["float16", "bfloat16", "float32", "float64"]))
    images = values(draw, shape, dtype)
    align_corners, half_pixel_centers = draw(st.booleans()), draw(st.booleans())
    mode = draw(st.sampled_from(MODES))
    return images, size, align_corners, half_pixel_centers, dtype, mode


@st.composite
def adjust_contrast_problems(draw):
    """(images, contrast_factor, dtype, mode) for tf.image.adjust_contrast: rank 3 and 4, every dtype the
    upstream tests use, a factor that is sometimes not a scalar (stock raises)."""
    shape = tuple([draw(st.integers(0, 2))] * draw(st.integers(0, 1))) + (
        draw(st.integers(1, 5)), draw(st.integers(1, 5)), draw(st.integers(1, 3)))
    dtype = draw(st.sampled_from(["uint8", "int8", "int16", "int32", "float16", "float32", "float64"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    if dtype.startswith("float"):
        images = rng.uniform(0, 1, size=shape).astype(dtype)
    else:
        info = np.iinfo(dtype)
        images = rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape, endpoint=True).astype(dtype)
    factor = np.float32(draw(st.sampled_from([0.5, 2.0, 1.0, 0.0])) if draw(st.booleans())
                        else rng.uniform(0.1, 2.1))
    if draw(st.integers(0, 7)) == 0:  # a float64 factor of a float16/float32 image: stock raises
        factor = np.float64(factor)
    if draw(st.integers(0, 7)) == 0:
        factor = np.array([factor], np.float32)  # upstream testContrastFactorShape
    mode = draw(st.sampled_from(MODES))
    return images, factor, dtype, mode


# --------------------------------------------------------------------------- bias_add and the cross-entropies
# For the registry-wide parity (static_parity.py): bias_add_op_test.py and xent_op_test_base.py's shapes.


@st.composite
def bias_add_problems(draw):
    """(value, bias, data_format, dtype): rank 2-4 values; sometimes a bias of the wrong length or rank
    (stock raises)."""
    rank = draw(st.integers(2, 4))
    shape = [draw(st.integers(0, 3)) for _ in range(rank)]
    data_format = draw(st.sampled_from([None, "NHWC", "NCHW"]))
    channels = shape[1] if data_format == "NCHW" else shape[-1]
    dtype = draw(st.sampled_from(["float16", "float32", "float64", "int32"]))
    bias_shape = [channels]
    bad = draw(st.integers(0, 7))
    if bad == 0:
        bias_shape = [channels + 1]
    elif bad == 1:
        bias_shape = [1, channels]
    return values(draw, tuple(shape), dtype), values(draw, tuple(bias_shape), dtype), data_format, dtype


@st.composite
def softmax_xent_problems(draw):
    """(labels, logits, axis, dtype): rank 1-3 logits, the class axis last or first; labels sometimes of
    another shape (stock raises)."""
    rank = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 4)) for _ in range(rank)]
    axis = draw(st.sampled_from([-1, 0]))
    dtype = draw(st.sampled_from(["float16", "float32", "float64"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    logits = rng.normal(size=shape).astype(dtype)
    probs = rng.uniform(0.1, 1.0, size=shape)
    labels = (probs / probs.sum(axis=axis, keepdims=True)).astype(dtype)
    if draw(st.integers(0, 7)) == 0:
        labels = labels[..., :0] if labels.shape[-1] > 1 else np.concatenate([labels, labels], -1)
    return labels, logits, axis, dtype


@st.composite
def sparse_softmax_xent_problems(draw):
    """(labels, logits, dtype): rank 1-3 logits; labels sometimes out of [0, classes) or of the wrong
    shape (stock raises on a CPU)."""
    rank = draw(st.integers(1, 3))
    shape = [draw(st.integers(1, 4)) for _ in range(rank)]
    dtype = draw(st.sampled_from(["float16", "float32", "float64"]))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    logits = rng.normal(size=shape).astype(dtype)
    labels = rng.integers(0, shape[-1], size=shape[:-1]).astype(draw(st.sampled_from(["int32", "int64"])))
    bad = draw(st.integers(0, 9))
    if bad == 0 and labels.size:
        labels.flat[0] = shape[-1]
    elif bad == 1:
        labels = np.zeros(shape[:-1] + [2], labels.dtype)
    return labels, logits, dtype


@st.composite
def gather_problems(draw):
    """(params, ids, dtype) for the densified gradient of tf.gather: repeated ids, ids sometimes out of
    range (stock raises)."""
    rows, width = draw(st.integers(1, 5)), draw(st.integers(0, 3))
    dtype = draw(st.sampled_from(["float16", "float32", "float64"]))
    params = values(draw, (rows, width), dtype)
    ids = np.array(draw(st.lists(st.integers(0, rows - 1), min_size=0, max_size=6)), np.int64)
    if ids.size and draw(st.integers(0, 7)) == 0:
        ids[0] = rows
    return params, ids.astype(draw(st.sampled_from(["int32", "int64"]))), dtype
