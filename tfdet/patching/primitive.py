"""One deterministic segment reduction, the primitive every replacement is built on.

Nearly every GPU-nondeterministic TensorFlow op is a scatter-add done with
floating-point atomics underneath: the order in which values reach an output
element changes from run to run, and with it the rounding. More precision does
not fix that; a fixed order of operations does. `segment_reduce` computes what
`tf.math.unsorted_segment_{sum,prod,max,min}` compute, with an order of
operations that depends only on the segment ids:

1. stable-sort the ids (skipped when the caller promises sorted ids, and at
   run time when they turn out to be sorted) with a least-significant-digit
   radix sort: one DynamicPartition per 8 bits of the largest id, its parts
   concatenated in order (see `_stable_sort`; one top_k instead for ids beyond
   31 bits). One-element float32/int32 rows travel through the sort with their
   ids; wider rows are read through the sort permutation. Segments are then
   runs of equal ids;
2. rows of at most _NARROW elements (read once through the sort permutation
   when they do not travel with the ids): find the runs, by a binary search
   for every segment id when there are no more segments than rows, else from
   the changes of id; pad the runs, cut into chunks of at most K rows (K from
   the run lengths alone, see `_run_levels`), into a [chunks, K, ...] tensor
   (RaggedTensorToTensor) and reduce it over its second axis; wider rows: cut
   every run longer than one row into chunks of K consecutive rows (K a power
   of two <= 16 chosen from the ids alone, see `_chunk_width`) and combine each
   chunk in a fixed order, a pairwise tree of elementwise ops over K row
   gathers, short chunks padded with the reduction's identity;
3. repeat on the chunk results of the runs not yet down to one value
   (ceil(log_K(longest run)) levels in all, a tf.while_loop with
   parallel_iterations=1);
4. place the run values: in segment order already when the runs were found
   per segment id (a gather that picks the identity for empty segments), else
   by one SparseToDense of the values at the (sorted, unique) ids, each
   position written at most once (`_place`); absent segments get the
   identity, as in the stock ops (0 for sum, 1 for prod, the dtype's lowest
   value for max and highest for min), negative ids are dropped, ids >=
   num_segments raise InvalidArgumentError (the stock CPU kernels' behaviour).

The ops used are DynamicPartition and ConcatV2 (the sort; DynamicPartition's
GPU kernel is a stable CUB radix sort of the partition numbers followed by a
gather, its CPU kernel a serial loop), TopKV2 (the sort of very large ids),
bitwise ops, Bitcast, GatherV2, Where, LowerBound (tf.searchsorted: its GPU
kernel, tensorflow/core/kernels/searchsorted_op_gpu.cu.cc, runs one binary
search per value and writes each output once), RaggedRange,
RaggedTensorToTensor, Cumsum, InvertPermutation and SparseToDense (sorted
unique indices), elementwise Add/Mul/Maximum/Minimum, and Sum/Prod/Max/Min
over one axis of a dense tensor. None accumulates: every output element is
written once. The reductions over the K axis rely on TensorFlow's dense
reductions being run-to-run deterministic, which they are on CPU and GPU for
every TF release this project covers (the last atomics left the GPU reduction
kernels before 1.14).

Where TensorFlow's own segment op is already deterministic the "auto" method
calls it instead, but only when told so (`set_stock_deterministic`): patch()
tells it from the catalogue (CPU kernels walk the ids in order; GPU kernels are
deterministic once op determinism is on, from the TF version the catalogue
names); on a machine without a GPU, sums of scalar rows go through tfdet.patching.kernels
(TF's serial CPU bincount kernel over fixed pieces) instead of
UnsortedSegmentSum, whose CPU kernel is several times slower. Used directly,
outside patch(), "auto" takes the order-fixed path.
The order-fixed path stays selectable (`method="order_fixed"`, `set_method`,
`method_scope`) so it can be tested and benchmarked anywhere.
`set_order_fixed_sum("exact")` makes its sums of float16/bfloat16/float32
values sort-free (tfdet.patching.exact_sum: integers on a grid per segment,
added by int32 segment sums, which TF's GPU kernels run deterministically);
opt-in, as it measured slower than the sort on a CPU.
`set_order_fixed_sum("fixed_point")` does so with one grid for the whole call
(tfdet.patching.fixed_point) for unsorted ids and narrow rows: 3-4x faster
than the sort for weighted bincount on a CPU; opt-in, as its error bound is
relative to the call's largest value.

Python 3.7 / TensorFlow 1.15 compatible: written against tensorflow.compat.v2,
working eagerly, inside tf.function and in TF1 graph mode.
"""

import contextlib
import sys

from . import exact_sum, fixed_point

REDUCTIONS = ("sum", "prod", "max", "min")
METHODS = ("auto", "stock", "order_fixed")

# Chunk widths tried at each level: powers of two up to _MAX_CHUNK. Wider chunks
# mean fewer levels; _chunk_width keeps the padding they cost below the data size.
_MAX_CHUNK = 16

# Longest run of one segment reduced in one step by the path for narrow rows (_run_levels).
_MAX_RUN = 256

# Rows of at most this many elements are read once through the sort permutation and reduced
# as padded runs (_runs); wider rows by chunk levels (_levels).
_NARROW = 4

# Dtypes whose SparseToDense kernel exists on CPU in every TF this project covers: _place writes
# their values directly (narrow rows); other dtypes through a dense map of rows and a gather.
_DENSE_WRITE_DTYPES = ("float16", "float32", "float64", "int32", "int64")

# Bits of the key sorted by one pass of the radix sort (see _stable_sort).
_RADIX_BITS = 8

_state = {"method": "auto", "stock_deterministic": False, "order_fixed_sum": "sort"}

# How the order-fixed method forms sums of float16/bfloat16/float32 (set_order_fixed_sum).
ORDER_FIXED_SUMS = ("sort", "exact", "fixed_point")

# Dtypes whose Add/Mul/Maximum/Minimum kernels exist on CPU in every TF this
# project covers (TF 1.15 and 2.4 lack them for the small and unsigned integer
# types); other dtypes take the gather-and-reduce form of a level.
_ELEMENTWISE_DTYPES = ("float16", "float32", "float64", "int32", "int64", "complex64", "complex128")


def _tf():
    import tensorflow.compat.v2 as tf  # noqa: PLC0415 - keeps `import tfdet.patching.primitive` TF-free

    return tf


# --------------------------------------------------------------------------- dispatch


def set_method(method):
    """Set the process-wide default method ("auto", "stock", "order_fixed"); return the old one.

    The choice is read when an op is built: a tf.function traced earlier keeps
    the path it was traced with.
    """
    if method not in METHODS:
        raise ValueError("unknown method %r (expected one of: %s)" % (method, ", ".join(METHODS)))
    previous = _state["method"]
    _state["method"] = method
    return previous


def get_method():
    """The process-wide default method."""
    return _state["method"]


@contextlib.contextmanager
def _setting_scope(setter, value):
    """`setter(value)` inside a with-block, the previous value restored after (not thread-safe)."""
    previous = setter(value)
    try:
        yield
    finally:
        setter(previous)


def method_scope(method):
    """Use `method` as the default inside a with-block (not thread-safe)."""
    return _setting_scope(set_method, method)


def set_order_fixed_sum(how):
    """How the order-fixed method sums float16/bfloat16/float32 values; return the previous choice.

    "sort" (the default): the stable sort and fixed trees described above.
    "fixed_point": tfdet.patching.fixed_point, no sort: the values rounded to
    integers on one grid per call (at least 40 bits below the call's largest
    value) and added exactly; for unsorted ids and rows of at most _NARROW
    values, the sort elsewhere (where it measured faster). Opt-in: its error
    bound is relative to the call's largest value, not to each segment's.
    "exact": tfdet.patching.exact_sum, no sort: the values rounded to integers on
    a grid fixed per segment and added with int32 segment sums (any order gives
    the same bits; TF's GPU kernels accept int32 sums and maxima under
    determinism, see that module). Not the default: on this project's 2-core
    CPU it measured slower than the sort (README, benchmark paragraph); on a
    GPU, where the integer sums are atomic additions, it is unmeasured.
    Read when an op is built, like set_method.
    """
    if how not in ORDER_FIXED_SUMS:
        raise ValueError("unknown order-fixed sum %r (expected one of: %s)" % (how, ", ".join(ORDER_FIXED_SUMS)))
    previous = _state["order_fixed_sum"]
    _state["order_fixed_sum"] = how
    return previous


def get_order_fixed_sum():
    """How order-fixed sums are done now ("sort", "exact" or "fixed_point")."""
    return _state["order_fixed_sum"]


def order_fixed_sum_scope(how):
    """Use `how` for order-fixed sums inside a with-block (not thread-safe)."""
    return _setting_scope(set_order_fixed_sum, how)


def set_stock_deterministic(flag):
    """Tell the primitive whether TensorFlow's own segment reductions are
    run-to-run deterministic here; return the previous answer.

    The primitive holds no TF-version or device knowledge: tfdet.patch() answers
    from the catalogue's verdict for UnsortedSegmentSum on the installed TF and
    device (and the switches it turned on), and unpatch() restores the answer.
    Until someone says so it is False, so the "auto" method of a replacement
    used directly, outside patch(), takes the order-fixed path: always safe.
    """
    previous = _state["stock_deterministic"]
    _state["stock_deterministic"] = bool(flag)
    return previous


def stock_is_deterministic():
    """What set_stock_deterministic() was last told (False by default)."""
    return _state["stock_deterministic"]


def resolve_method(method=None):
    """'stock' or 'order_fixed': what `method` (default: the process default) means here."""
    method = get_method() if method is None else method
    if method not in METHODS:
        raise ValueError("unknown method %r (expected one of: %s)" % (method, ", ".join(METHODS)))
    if method == "auto":
        return "stock" if stock_is_deterministic() else "order_fixed"
    return method


# --------------------------------------------------------------------------- helpers


def identity_value(dtype, reduction):
    """The value the stock unsorted segment ops give an empty segment."""
    tf = _tf()
    dtype = tf.as_dtype(dtype)
    if reduction == "sum":
        return 0
    if reduction == "prod":
        return 1
    if reduction == "max":
        return dtype.min  # Eigen::NumTraits<T>::lowest(): -max finite for floats
    if reduction == "min":
        return dtype.max
    raise ValueError("unknown reduction %r (expected one of: %s)" % (reduction, ", ".join(REDUCTIONS)))


def _reducer(reduction):
    tf = _tf()
    return {
        "sum": tf.reduce_sum,
        "prod": tf.reduce_prod,
        "max": tf.reduce_max,
        "min": tf.reduce_min,
    }[reduction]


def _stock_op(reduction):
    """TF's own kernel, through tf.raw_ops: immune to any rebinding of tf.math.* by tfdet.patch()."""
    tf = _tf()
    op = {
        "sum": tf.raw_ops.UnsortedSegmentSum,
        "prod": tf.raw_ops.UnsortedSegmentProd,
        "max": tf.raw_ops.UnsortedSegmentMax,
        "min": tf.raw_ops.UnsortedSegmentMin,
    }[reduction]
    return lambda data, ids, num: op(data=data, segment_ids=ids, num_segments=num)


def _with_checks(checks, tensor):
    tf = _tf()
    checks = [c for c in checks if c is not None]
    if not checks:
        return tensor
    with tf.control_dependencies(checks):
        return tf.identity(tensor)


def _chunk_widths():
    return [2 ** i for i in range(1, _MAX_CHUNK.bit_length())]


def _chunk_width(n, a, maxlen, dtype):
    """K for one level: the widest power of two in [2, _MAX_CHUNK] with a*(K-1) <= n
    (n rows in a segments: padding then stays below n) and no wider than the
    longest segment needs. A function of the ids only, so the order of
    operations is too."""
    tf = _tf()
    cands = tf.constant(_chunk_widths(), dtype=dtype)
    bound = n // tf.maximum(a, 1) + 1
    k_waste = tf.reduce_max(tf.where(cands <= bound, cands, tf.constant(2, dtype)))
    k_need = tf.reduce_min(tf.where(cands >= maxlen, cands, tf.constant(_MAX_CHUNK, dtype)))
    return tf.minimum(k_waste, k_need)


def _level(src, starts, lens, ords, reduction, index_map=None):
    """One reduction level over the active segments (every lens > 1).

    Segment g occupies rows starts[g] .. starts[g] + lens[g] - 1 of the grouped
    sequence, whose row i is src[i] (or src[index_map[i]] when given). Each
    segment is cut into chunks of K consecutive rows; each chunk becomes one
    row of `out` ([C, D], chunks in order). Returns out, the ordinals and rows
    (in out) of the segments that are now down to one row, and starts, lens
    and ordinals of those that are not.
    """
    tf = _tf()
    idt = lens.dtype
    k = _chunk_width(tf.reduce_sum(lens), tf.size(lens, out_type=idt), tf.reduce_max(lens), idt)
    heads = tf.ragged.range(starts, starts + lens, k).flat_values  # first row of each chunk
    rem = tf.ragged.range(lens, tf.zeros_like(lens), -k).flat_values  # rows left in its segment
    j = tf.range(k, dtype=idt)
    valid = j[tf.newaxis, :] < rem[:, tf.newaxis]
    # Padding slots point at the chunk's first row (always valid) and are masked.
    idx = tf.where(valid, heads[:, tf.newaxis] + j[tf.newaxis, :], heads[:, tf.newaxis])
    if index_map is not None:
        idx = tf.gather(index_map, idx)
    out = _combine(src, idx, valid, k, reduction)
    new_lens = (lens + k - 1) // k
    new_starts = tf.cumsum(new_lens, exclusive=True)
    done = tf.equal(new_lens, 1)
    going = tf.logical_not(done)
    return (
        out,
        tf.boolean_mask(ords, done),
        tf.boolean_mask(new_starts, done),
        tf.boolean_mask(new_starts, going),
        tf.boolean_mask(new_lens, going),
        tf.boolean_mask(ords, going),
    )


def _combine(src, idx, valid, k, reduction):
    """out[c] = reduction over the valid j of src[idx[c, j]], in an order fixed by the shapes.

    Rows of one element (D == 1): one gather of [C, k] and a reduction over the
    inner axis. Wider rows: k row gathers combined by a pairwise tree of
    elementwise ops, one unrolled branch per chunk width (on CPU much faster
    than reducing the middle axis of a [C, k, D] tensor, with smaller buffers).
    Padding slots (valid False) hold a copy of the chunk's first row: harmless
    for max and min, replaced by the identity for sum and prod.
    """
    tf = _tf()
    depth = tf.compat.dimension_value(src.shape[1])
    ident = tf.constant(identity_value(src.dtype, reduction), src.dtype)
    mask = reduction in ("sum", "prod")
    if depth == 1 or depth is None or src.dtype.name not in _ELEMENTWISE_DTYPES:
        g = tf.gather(src, idx)  # [C, k, D]
        if mask:
            g = tf.where(valid[:, :, tf.newaxis], g, ident)
        return _reducer(reduction)(g, axis=1)
    op = {"sum": tf.add, "prod": tf.multiply, "max": tf.maximum, "min": tf.minimum}[reduction]

    def unrolled(width):
        def branch():
            parts = [tf.gather(src, idx[:, 0])]
            for i in range(1, width):
                part = tf.gather(src, idx[:, i])
                if mask:
                    part = tf.where(valid[:, i:i + 1], part, ident)
                parts.append(part)
            while len(parts) > 1:
                parts = [op(parts[i], parts[i + 1]) for i in range(0, len(parts), 2)]
            return parts[0]

        return branch

    static_k = tf.compat.dimension_value(idx.shape[1])
    if static_k is None:
        static_k = tf.get_static_value(k)
    if static_k is not None:  # known while building the graph (constant ids): one branch
        return unrolled(int(static_k))()
    widths = _chunk_widths()
    index = tf.cast(tf.argmax(tf.cast(tf.equal(tf.constant(widths, k.dtype), k), tf.int32)), tf.int32)
    return tf.switch_case(index, [unrolled(w) for w in widths])


def _order_fixed_2d(x, ids, num_segments, reduction, sorted_ids, validate):
    """The order-fixed reduction of x [n, D] by 1-D ids; returns [num_segments, D]."""
    if reduction == "sum" and _state["order_fixed_sum"] == "exact" and exact_sum.covers(x.dtype):
        # Sums of float16/bfloat16/float32 as integers on a grid per segment, added in any order
        # (tfdet.patching.exact_sum): no sort.
        return exact_sum.segment_sum(x, ids, num_segments, validate)
    if (reduction == "sum" and _state["order_fixed_sum"] == "fixed_point" and fixed_point.covers(x.dtype)
            and _fixed_point_pays(x, sorted_ids)):
        # The same on one grid for the whole call (tfdet.patching.fixed_point): no sort, no per-segment scale.
        return fixed_point.segment_sum(x, ids, num_segments, validate)
    return _sorted_2d(x, ids, num_segments, reduction, sorted_ids, validate)


def _fixed_point_pays(x, sorted_ids):
    """Whether fixed-point sums beat the sort here (measured, docs/topics/patch.md): for unsorted ids and
    rows of at most _NARROW values (known while building). Sorted ids need no sort, and wide rows cost
    the fixed-point sums a key and a limb per value where the sort moves whole rows."""
    tf = _tf()
    depth = tf.compat.dimension_value(x.shape[1])
    return not sorted_ids and depth is not None and depth <= _NARROW


def _sorted_2d(x, ids, num_segments, reduction, sorted_ids, validate):
    """_order_fixed_2d by a stable sort of the ids and fixed trees over the runs of equal ids."""
    tf = _tf()
    idt = ids.dtype
    num_segments = tf.cast(num_segments, idt)
    n = tf.shape(ids, out_type=idt)[0]
    depth = tf.compat.dimension_value(x.shape[1])

    # One-element rows of 32-bit (or 16-bit float, widened) values are carried through
    # the sort in place of their positions (_stable_sort): no gather through the
    # permutation afterwards.
    v = None
    if depth == 1:
        v = x[:, 0]
        if v.dtype in (tf.float16, tf.bfloat16):
            v = tf.cast(v, tf.float32)  # exact; sums and products are formed in float32
    carried = v is not None and v.dtype in (tf.float32, tf.int32)
    if sorted_ids:
        s = ids
        index_map = None
    else:
        # All negative ids are dropped; collapse them so the sort sees one of them.
        # A stable sort (see _stable_sort), skipped when the ids turn out to be sorted
        # already (one comparison pass).
        ids_c = tf.maximum(ids, tf.constant(-1, idt))
        already = tf.reduce_all(tf.greater_equal(ids_c[1:], ids_c[:-1]))
        if carried:
            s, v = tf.cond(already, lambda: (ids_c, v), lambda: _stable_sort(ids_c, num_segments, v))
            index_map = None
        else:
            s, index_map = tf.cond(already, lambda: (ids_c, tf.range(n, dtype=idt)),
                                   lambda: _stable_sort(ids_c, num_segments))

    checks = []
    if validate:
        if sorted_ids:
            last = tf.concat([s[-1:], tf.constant([-1], idt)], 0)[0]
        else:
            last = tf.maximum(tf.reduce_max(ids_c), -1)  # the lowest value when empty
        # As the stock kernels, which return early for data without elements: then no id is checked.
        ok = tf.logical_or(tf.less(last, num_segments), tf.equal(tf.size(x), 0))
        checks.append(tf.debugging.Assert(ok, ["segment_ids must be < num_segments (out of range): largest id",
                                               last, "num_segments", num_segments]))

    if depth == 1 or (depth is not None and depth <= _NARROW):
        # Rows of one element, or narrow rows (read once in sorted order): padded runs and dense
        # reductions (_runs).
        if depth == 1:
            xs = v if index_map is None else tf.gather(v, index_map)
        else:
            xs = x if index_map is None else tf.gather(x, index_map)
        out = tf.cast(_runs(xs, s, num_segments, reduction), x.dtype)
        return _with_checks(checks, out[:, tf.newaxis] if depth == 1 else out)
    starts = _run_starts(s)
    lens = tf.concat([starts, tf.reshape(n, [1])], 0)[1:] - starts
    uniq = tf.gather(s, starts)
    return _with_checks(checks, _levels(x, index_map, starts, lens, uniq, num_segments, reduction))


def _place(table, rows, uniq, num_segments, reduction, identity_row=False):
    """[num_segments, ...]: row k is table[rows[r]] (table[r] when rows is None) for the run r whose
    id is k (uniq[r] == k), else the reduction's identity. uniq is sorted and unique, so the output
    is written with each position written at most once (SparseToDense; validate_indices re-checks
    sorted/unique/in range): the values themselves for rows of at most _NARROW elements whose
    dtype has a SparseToDense kernel in every TF this project covers (one index per element),
    else a dense map of rows, then a gather (one index per row). Negative ids (dropped)
    and, with validate=False, ids >= num_segments are left out. identity_row: table's last row
    is the identity already (the caller built it in, saving a copy of table for the gather)."""
    tf = _tf()
    idt = uniq.dtype
    i64 = tf.int64
    keep = tf.logical_and(uniq >= 0, uniq < num_segments)
    kept = tf.boolean_mask(uniq, keep)
    ident = tf.constant(identity_value(table.dtype, reduction), table.dtype)
    inner = tf.shape(table, out_type=i64)[1:]
    depth_static = table.shape[1:].num_elements() if table.shape.rank is not None else None
    if table.dtype.name not in _DENSE_WRITE_DTYPES or depth_static is None or depth_static > _NARROW:
        if rows is None:
            rows = tf.range(tf.size(uniq, out_type=idt), dtype=idt)
        if not identity_row:
            table = tf.concat([table, tf.fill(tf.concat([[1], inner], 0), ident)], 0)  # + the identity row
        index = tf.raw_ops.SparseToDense(
            sparse_indices=kept, output_shape=tf.reshape(num_segments, [1]), sparse_values=tf.boolean_mask(rows, keep),
            default_value=tf.shape(table, out_type=idt)[0] - 1, validate_indices=True)
        return tf.gather(table, index)
    if identity_row:
        table = table[:-1]
    values = tf.boolean_mask(table, keep) if rows is None else tf.gather(table, tf.boolean_mask(rows, keep))
    depth = tf.reduce_prod(inner)
    # Element (k, j) of the output is element k * depth + j of a flat vector: indices stay sorted and unique.
    flat = tf.reshape(tf.cast(kept, i64)[:, tf.newaxis] * depth + tf.range(depth, dtype=i64)[tf.newaxis, :], [-1])
    num = tf.cast(num_segments, i64)
    out = tf.raw_ops.SparseToDense(sparse_indices=flat, output_shape=tf.reshape(num * depth, [1]),
                                   sparse_values=tf.reshape(values, [-1]), default_value=ident, validate_indices=True)
    return tf.reshape(out, tf.concat([tf.reshape(num, [1]), inner], 0))


def _levels(x, index_map, starts, lens, uniq, num_segments, reduction):
    """The order-fixed reduction of the rows of x (read through index_map, when given) over the
    runs starts[g] .. starts[g] + lens[g] - 1 of the sorted sequence: chunk levels (_level)."""
    tf = _tf()
    idt = starts.dtype
    depth = tf.compat.dimension_value(x.shape[1])
    u = tf.size(starts, out_type=idt)
    ords = tf.range(u, dtype=idt)

    # One-row segments are final already: their value is a row of x.
    single = tf.equal(lens, 1)
    single_rows = tf.boolean_mask(starts, single)
    if index_map is not None:
        single_rows = tf.gather(index_map, single_rows)
    x_single = tf.gather(x, single_rows)
    n_single = tf.size(single_rows, out_type=idt)
    fin_ords = [tf.boolean_mask(ords, single)]
    fin_addr = [tf.range(n_single, dtype=idt)]
    multi = tf.logical_not(single)
    starts, lens, ords = tf.boolean_mask(starts, multi), tf.boolean_mask(lens, multi), tf.boolean_mask(ords, multi)

    # Level 1 reads x through the sort permutation; later levels read the previous level's output.
    out1, d_ords, d_rows, starts, lens, ords = _level(x, starts, lens, ords, reduction, index_map)
    fin_ords.append(d_ords)
    fin_addr.append(d_rows + n_single)
    offset = n_single + tf.shape(out1, out_type=idt)[0]

    def cond(src, starts, lens, ords, offset, acc, acc_ords, acc_addr):
        return tf.size(lens) > 0

    def body(src, starts, lens, ords, offset, acc, acc_ords, acc_addr):
        out, d_ords, d_rows, starts, lens, ords = _level(src, starts, lens, ords, reduction)
        return (
            out, starts, lens, ords, offset + tf.shape(out, out_type=idt)[0],
            tf.concat([acc, out], 0), tf.concat([acc_ords, d_ords], 0), tf.concat([acc_addr, d_rows + offset], 0),
        )

    empty_ids = tf.zeros([0], idt)
    loop_vars = [out1, starts, lens, ords, offset, tf.zeros_like(x[:0]), empty_ids,
                 empty_ids]
    vec = tf.TensorShape([None])
    row_shape = tf.TensorShape([None, depth])
    result = tf.while_loop(
        cond, body, loop_vars,
        shape_invariants=[row_shape, vec, vec, vec, tf.TensorShape([]), row_shape, vec, vec],
        parallel_iterations=1,
    )
    acc, acc_ords, acc_addr = result[5], result[6], result[7]
    fin_ords.append(acc_ords)
    fin_addr.append(acc_addr)

    # Every segment finished exactly once: fin_ords is a permutation of range(u).
    addr = tf.gather(tf.concat(fin_addr, 0), tf.math.invert_permutation(tf.concat(fin_ords, 0)))
    ident = tf.fill(tf.stack([1, tf.shape(x)[1]]), tf.constant(identity_value(x.dtype, reduction), x.dtype))
    return _place(tf.concat([x_single, out1, acc, ident], 0), addr, uniq, num_segments, reduction, identity_row=True)


def _run_starts(s):
    """The first position of each run of equal ids in s (s sorted)."""
    tf = _tf()
    n = tf.size(s, out_type=s.dtype)
    is_start = tf.concat([tf.ones(tf.minimum(n, 1)[tf.newaxis], tf.bool), tf.not_equal(s[1:], s[:-1])], 0)
    return tf.cast(tf.where(is_start)[:, 0], s.dtype)


def _run_levels(v, splits, reduction):
    """Reduce the rows of v over runs, run r being rows splits[r] .. splits[r + 1] - 1 (runs may be
    empty), until every run holds at most one row; returns (those rows, their run splits).

    Each level pads the runs, cut into chunks of at most K rows, into a
    [chunks, K, ...] tensor (RaggedTensorToTensor, padding with the reduction's
    identity; every position written once) and reduces it over its second axis
    (a dense reduction). K is the longest run, but at most _MAX_RUN and at most
    2 * n / (runs not empty) + 1, n the rows of the first level (so the padding
    stays below twice the data);
    runs longer than K take ceil(log_K(length)) levels, a tf.while_loop with
    parallel_iterations=1. K depends on the ids only, so the order of
    operations does too.
    """
    tf = _tf()
    idt = splits.dtype
    ident = tf.constant(identity_value(v.dtype, reduction), v.dtype)
    runs = tf.math.count_nonzero(splits[1:] > splits[:-1], dtype=idt)  # runs that hold a row
    # The bound on K comes from the rows of the first level at every level: padding stays below
    # twice the data (plus one row per run), and later levels, on fewer rows, finish sooner.
    widest = 2 * tf.shape(v, out_type=idt)[0] // tf.maximum(runs, 1) + 1

    def level(v, splits):
        total = tf.shape(v, out_type=idt)[0]
        lens = splits[1:] - splits[:-1]
        k = tf.minimum(tf.reduce_max(lens), tf.minimum(tf.constant(_MAX_RUN, idt), widest))
        # The first row of each chunk; the row splits of this ragged range are the next level's
        # run splits (chunk c of the output is chunk c here).
        chunks = tf.ragged.range(splits[:-1], splits[1:], k)
        heads = tf.concat([chunks.flat_values, tf.reshape(total, [1])], 0)
        # [chunks, K, ...]: the longest chunk has K elements (K <= the longest run); no `shape`
        # argument, which TF before 2.2 lacks.
        padded = tf.RaggedTensor.from_row_splits(v, heads, validate=False).to_tensor(ident)
        return _reducer(reduction)(padded, axis=1), tf.cast(chunks.row_splits, idt)

    return tf.while_loop(lambda v, splits: tf.shape(v, out_type=idt)[0] > runs, level, [v, splits],
                         shape_invariants=[tf.TensorShape([None]).concatenate(v.shape[1:]),
                                           tf.TensorShape([None])], parallel_iterations=1)


def _runs(v, s, num_segments, reduction):
    """[num_segments] + v.shape[1:]: the reduction of the rows of v over each run of equal ids in the
    sorted s (_run_levels), negative ids and ids >= num_segments left out.

    Where there are no more segments than rows, the rows of segment k are found
    by a binary search (LowerBound: one search per value, each output written
    once) for k and k + 1 in s, empty segments included, so the runs come out
    in segment order and need no placing; otherwise the runs are the changes of
    id (_run_starts) and their values are placed by id (_place). (One loop
    outside the two conds: TF's graph optimizer fails to order a cond whose
    branches both hold a loop.)
    """
    tf = _tf()
    idt = s.dtype
    n = tf.size(s, out_type=idt)
    dense = tf.cast(num_segments, idt) <= n

    def searched():
        bounds = tf.searchsorted(s, tf.range(tf.cast(num_segments, idt) + 1, dtype=idt), side="left",
                                 out_type=idt)
        return bounds[0], bounds[-1], bounds - bounds[0]

    def changes():
        return tf.zeros([], idt), n, tf.concat([_run_starts(s), tf.reshape(n, [1])], 0)

    lo, hi, splits = tf.cond(dense, searched, changes)
    runs, splits_out = _run_levels(v[lo:hi], splits, reduction)

    def in_order():  # segment k's value is row splits_out[k] when the segment holds one, else the identity
        table = tf.concat([runs, tf.fill(tf.concat([[1], tf.shape(runs)[1:]], 0),
                                         tf.constant(identity_value(runs.dtype, reduction), runs.dtype))], 0)
        return tf.gather(table, tf.where(splits_out[1:] > splits_out[:-1], splits_out[:-1],
                                         tf.fill(tf.shape(splits_out[1:]), tf.shape(runs, out_type=idt)[0])))

    def placed():
        return _place(runs, None, tf.gather(s, splits[:-1]), num_segments, reduction)

    return tf.cond(dense, in_order, placed)


def _stable_sort(ids, num_segments, values=None):
    """(ids sorted, the permutation that sorts them), a stable sort; ids >= -1.
    With `values` (float32 or int32, ids' length): (ids sorted, values in that order).

    A least-significant-digit radix sort: each pass is one DynamicPartition of
    64-bit words (key in the high half, the position or the bits of the value in
    the low half) by _RADIX_BITS bits of the key, its parts concatenated in order
    (DynamicPartition keeps the input order within a part: on CPU by a serial
    loop, on GPU by a stable radix sort of the partition numbers), so after the
    passes that cover the largest key the sequence is sorted by key and, within
    a key, by position. The number of passes depends on the largest key only.
    Keys are ids + 1, with ids clipped to num_segments (ids >= num_segments are
    either rejected or dropped, so their order does not matter). The first
    pass reads its digit from the 32-bit keys, the sorted words are taken
    apart by a Bitcast to int32 pairs. Where keys or positions do not fit 31
    bits, one top_k of the negated ids (a stable sort, many times slower on a
    CPU) instead.
    """
    tf = _tf()
    idt = ids.dtype
    i64 = tf.int64
    n = tf.size(ids, out_type=i64)
    ids = tf.minimum(ids, tf.cast(num_segments, idt))
    top = tf.maximum(tf.cast(tf.reduce_max(ids), i64) + 1, 0)  # the largest key; 0 when empty
    mask = (1 << _RADIX_BITS) - 1
    parts = 1 << _RADIX_BITS
    # Which int32 of a 64-bit word is its high half (the key): the second on little-endian hosts.
    high = 1 if sys.byteorder == "little" else 0

    def radix():
        keys = tf.cast(ids, tf.int32) + 1  # in [0, 2**31): this branch runs for top < 2**31 only
        if values is None:
            payload = tf.range(tf.cast(n, tf.int32), dtype=tf.int32)
        else:
            payload = values if values.dtype == tf.int32 else tf.bitcast(values, tf.int32)
        # key * 2**32 + the payload's bits (Pack and Transpose interleave the halves far slower on a CPU)
        packed = tf.cast(keys, i64) * (1 << 32) + tf.bitwise.bitwise_and(tf.cast(payload, i64), (1 << 32) - 1)
        # The first pass reads its digit from the keys as given; later ones from the words.
        packed = tf.concat(tf.dynamic_partition(packed, tf.bitwise.bitwise_and(keys, mask), parts), 0)

        def body(packed, shift):
            digit = tf.bitwise.bitwise_and(tf.cast(tf.bitwise.right_shift(packed, shift + 32), tf.int32), mask)
            return tf.concat(tf.dynamic_partition(packed, digit, parts), 0), shift + _RADIX_BITS

        packed, _ = tf.while_loop(lambda packed, shift: tf.bitwise.right_shift(top, shift) > 0, body,
                                  [packed, tf.constant(_RADIX_BITS, i64)],
                                  shape_invariants=[tf.TensorShape([None]), tf.TensorShape([])],
                                  parallel_iterations=1)
        halves = tf.bitcast(packed, tf.int32)  # [n, 2]
        payload = halves[:, 1 - high]
        if values is None:
            payload = tf.cast(payload, idt)
        elif values.dtype != tf.int32:
            payload = tf.bitcast(payload, values.dtype)
        return tf.cast(halves[:, high] - 1, idt), payload

    def top_k():
        neg_sorted, perm = tf.math.top_k(-ids, k=tf.cast(n, tf.int32))
        return -neg_sorted, tf.cast(perm, idt) if values is None else tf.gather(values, perm)

    return tf.cond(tf.logical_and(top < (1 << 31), n < (1 << 31)), radix, top_k)


# --------------------------------------------------------------------------- public


def segment_reduce(data, segment_ids, num_segments, reduction="sum", sorted_ids=False, method=None, validate=True,
                   name=None):
    """Deterministic `tf.math.unsorted_segment_<reduction>(data, segment_ids, num_segments)`.

    data: a tensor of rank >= 1; segment_ids: an int32/int64 tensor whose shape
    is a prefix of data's shape; output: [num_segments] + data.shape[rank(ids):].
    Empty segments get the reduction's identity (as the stock unsorted ops:
    0, 1, dtype lowest for max, dtype highest for min); negative ids are dropped;
    ids >= num_segments raise InvalidArgumentError when `validate`.
    sorted_ids=True promises non-decreasing ids (skips the sort).
    method: "auto" (the stock op where set_stock_deterministic(True) says it is
    deterministic, as patch() does from the catalogue; else order-fixed),
    "stock" or "order_fixed"; None means the process default (get_method()).
    The order-fixed path emits no scatter, segment or bincount op; its gradient
    is not defined here (the replacements define theirs).
    """
    tf = _tf()
    if reduction not in REDUCTIONS:
        raise ValueError("unknown reduction %r (expected one of: %s)" % (reduction, ", ".join(REDUCTIONS)))
    with tf.name_scope(name or "DeterministicSegmentReduce"):
        data = tf.convert_to_tensor(data)
        segment_ids = tf.convert_to_tensor(segment_ids)
        if segment_ids.dtype not in (tf.int32, tf.int64):
            raise TypeError("segment_ids must be int32 or int64, got %s" % segment_ids.dtype.name)
        num_segments = tf.convert_to_tensor(num_segments)
        if resolve_method(method) == "stock":
            stock = lambda: _stock_op(reduction)(data, segment_ids, num_segments)  # noqa: E731
            if reduction == "sum":  # on a CPU, TF's serial bincount kernel over fixed pieces: 5x faster
                from . import kernels  # noqa: PLC0415 - imports TensorFlow's internals only when used

                return kernels.segment_sum(data, segment_ids, num_segments, stock, stock_path=True)
            return stock()
        return _order_fixed(data, segment_ids, num_segments, reduction, sorted_ids, validate)


def _order_fixed(data, segment_ids, num_segments, reduction, sorted_ids, validate):
    tf = _tf()
    idt = segment_ids.dtype
    ids_rank = segment_ids.shape.rank
    data_shape = tf.shape(data, out_type=idt)
    if ids_rank is None:
        ids_rank_t = tf.rank(segment_ids)
    else:
        ids_rank_t = ids_rank
    inner_shape = data_shape[ids_rank_t:]
    flat_ids = tf.reshape(segment_ids, [-1])
    n = tf.shape(flat_ids, out_type=idt)[0]
    depth = tf.reduce_prod(inner_shape)
    x = tf.reshape(data, tf.stack([n, depth]))
    static_inner = None
    if ids_rank is not None and data.shape.rank is not None:
        static_inner = data.shape[ids_rank:]
        depth_static = static_inner.num_elements()
        x.set_shape([None, depth_static])
    out_shape = tf.concat([tf.reshape(tf.cast(num_segments, idt), [1]), inner_shape], 0)
    if static_inner is not None and static_inner.num_elements() == 0:
        # No values (the loop cannot keep a 0-wide static shape): the empty result, ids unchecked, as the
        # stock kernels return early for data without elements.
        out = tf.zeros(out_shape, data.dtype)
    else:
        out = tf.reshape(_order_fixed_2d(x, flat_ids, num_segments, reduction, sorted_ids, validate), out_shape)
    if static_inner is not None:
        num_static = tf.get_static_value(num_segments)
        out.set_shape(tf.TensorShape([None if num_static is None else int(num_static)]).concatenate(static_inner))
    return out
