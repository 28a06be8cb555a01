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
def unsorted_segment_problems(draw):
    """(reduction, data, ids, num_segments, ids dtype, data dtype, mode)."""
    reduction = draw(st.sampled_from(SEGMENT_REDUCTIONS))
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
    shape = tuple(draw(st.lists(st.integers(0, 6), min_size=2 if axis == -1 else 1, max_size=2)))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))
    arr = rng.integers(0, draw(st.integers(1, 9)), size=shape).astype(draw(st.sampled_from(["int32", "int64"])))
    if arr.size and draw(st.integers(0, 9)) == 0:
        arr.flat[0] = -1  # stock raises
    kwargs = {}
    if axis is not None:
        kwargs["axis"] = axis
    weighted = draw(st.booleans())
    if weighted:
        kwargs["weights"] = values(draw, shape, draw(st.sampled_from(["float32", "float64", "int32", "int64"])))
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
