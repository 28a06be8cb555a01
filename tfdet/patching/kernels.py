"""Fast deterministic kernels for a CPU: TF's own kernels where they are
deterministic per call, applied to a fixed partition of the input.

The primitive's "stock" path calls TF's segment kernels where the catalogue says
they are deterministic; that is right but slow for bincount on a CPU, where
`UnsortedSegmentSum` (one pass over all ids per worker) costs 7-20x the stock
`Bincount`. Stock weighted `Bincount` itself varies run to run on a CPU from TF
2.21 (catalogue entries bincount and dense-bincount: per-thread partial sums over
shards that land on different threads from run to run). Two of TF's CPU
bincount kernels walk their input in index order on one thread:

- `RaggedBincount` (tensorflow/core/kernels/bincount_op.cc, RaggedBincountOp):
  one loop over the values, adding each weight into the bin of its row;
- `DenseBincount` over a 2-D input (`axis=-1`): rows are shared out between
  threads, each row counted by one thread in order (the catalogue's
  dense-bincount note: no variation in 60 runs on 2.21 CPU).

`bincount` with axis=0 therefore cuts the flattened input into CHUNKS
consecutive pieces (a number fixed here, never derived from the thread count),
sums each piece with one `RaggedBincount` whose row splits are the piece
boundaries, and adds the CHUNKS partial histograms in a fixed pairwise order.
Every output bin is then a fixed sum of fixed sums whatever the threads:
bitwise repeatable, and more accurate than the stock kernel's long sequential
sums. One serial pass costs about what the stock kernel costs on two threads
(it is memory-bound). With axis=-1 it is TF's 2-D `DenseBincount` as it is.

`segment_sum` is the same kernel for the primitive's stock path of sums of
scalar rows (unsorted_segment_sum and everything built on it, when the rows
are known to hold one element): 3-5x faster on a CPU than
`UnsortedSegmentSum`, with the stock op's gradient. Wider rows keep the stock
kernel, whose vectorised row additions are faster there.

`integer_segment_sum` and `small_integer_segment_max` do the int32 sums and
maxima of tfdet.patching.exact_sum on a CPU: exact integer results, so the
same bits as TF's UnsortedSegmentSum/UnsortedSegmentMax give on a GPU.

Not under XLA (tf.function(jit_compile=True)): RaggedBincount has no XLA
kernel, so the caller's fallback runs there.

These kernels are used only where every op runs on a CPU (TensorFlow sees no
GPU; they are also placed on the CPU explicitly) and only when the primitive's
dispatch resolves to the stock path (tfdet.patch() said TF's segment kernels are
deterministic here); elsewhere the caller's fallback runs (the order-fixed path
on GPU plans, which emits no bincount op at all).

Python 3.7 / TensorFlow 1.15 compatible (tensorflow.compat.v2); where TF has no
RaggedBincount (before 2.3) the fallback runs.
"""

# Pieces of a 1-D bincount: a constant, so the order of additions depends only
# on the input's length. 4 keeps the extra zeroing and adding of partial
# histograms small while cutting the longest sequential sum by 4.
CHUNKS = 4
# Ops the pieces are shared between (two pieces each): on two cores, two serial passes at once.
OPS = 2

_BINCOUNT_TYPES = ("int32", "int64", "float32", "float64")

_cache = {}


def _tf():
    import tensorflow.compat.v2 as tf  # noqa: PLC0415 - keeps `import tfdet.patching.kernels` TF-free

    return tf


def cpu_only():
    """True when TensorFlow sees no GPU, so every op runs on a CPU (asked once per process)."""
    if "cpu_only" not in _cache:
        from ..tfinfo import list_gpus  # noqa: PLC0415

        _cache["cpu_only"] = not list_gpus(_tf())
    return _cache["cpu_only"]


def assume_cpu_only(flag):
    """Make cpu_only() answer `flag` (None: ask TensorFlow again); return the previous answer.

    For measurements and tests that build what another machine would build:
    with False, the replacements dispatch as on a machine with a GPU (these
    kernels step aside). Read when an op is built, like the primitive's method.
    """
    previous = _cache.get("cpu_only")
    if flag is None:
        _cache.pop("cpu_only", None)
    else:
        _cache["cpu_only"] = bool(flag)
    return previous


def _in_xla_context():
    """True while building ops that XLA compiles (tf.function(jit_compile=True)):
    RaggedBincount has no XLA kernel, the stock ops do."""
    try:
        from tensorflow.python.ops import control_flow_util  # noqa: PLC0415 - TF internal, present 1.15-2.21
    except ImportError:  # pragma: no cover
        return False
    return control_flow_util.GraphOrParentsInXlaContext(_tf().compat.v1.get_default_graph())


def applies(stock_path):
    """Whether the CPU kernels may replace the primitive's stock path here.
    stock_path: the primitive's dispatch chose TF's own kernels (the caller asks it;
    this module does not import the primitive, which imports this one)."""
    tf = _tf()
    return (stock_path and cpu_only()
            and getattr(tf.raw_ops, "RaggedBincount", None) is not None and not _in_xla_context())


def bincount(arr, weights, size, axis, dtype, fallback, stock_path):
    """Deterministic sums of `weights` (or counts, when None) per value of `arr`.

    arr: int32/int64; values >= size are dropped. Negative values raise InvalidArgumentError; the
    caller checks them only for fallback(). With axis 0 the kernel does: RaggedBincount tests every
    value, those beyond `size` too ("Input must be non-negative", measured on TF 2.3-2.9 and 2.21),
    which saves the separate pass over the input a check costs; with axis -1 this function checks
    (2-D DenseBincount tests them only from TF 2.12).
    axis 0: any rank, counted over all elements; returns [size].
    axis -1: rank 2, counted per row; returns [rows, size].
    weights: None or of arr's shape; dtype: the output dtype when weights is None.
    Returns fallback() where these CPU kernels do not apply (see the module
    docstring) or the dtype has no kernel here.
    """
    tf = _tf()
    out_dtype = tf.as_dtype(weights.dtype if weights is not None else dtype)
    if not applies(stock_path) or out_dtype.name not in _BINCOUNT_TYPES or arr.dtype not in (tf.int32, tf.int64):
        return fallback()
    with tf.name_scope("DeterministicBincount"), tf.device("/device:CPU:0"):
        size = tf.cast(size, arr.dtype)
        empty = tf.zeros([0], out_dtype)
        if axis != 0:  # TF's kernel as it is: each row counted by one thread, in order
            # Its 2-D kernel tests values for < 0 only from TF 2.12 (tensorflow PR 59247): checked here.
            arr = after_non_negative_check(arr, arr)
            return tf.raw_ops.DenseBincount(input=arr, size=size, binary_output=False,
                                            weights=empty[tf.newaxis, :] if weights is None else weights)
        weights = None if weights is None else tf.reshape(tf.cast(weights, out_dtype), [-1])
        return _chunked_sums(tf, tf.reshape(arr, [-1]), weights, size, out_dtype)


def after_non_negative_check(arr, tensor):
    """`tensor`, once bincount's input `arr` is checked for values < 0 (stock's error message; one pass)."""
    tf = _tf()
    check = tf.debugging.Assert(tf.reduce_min(arr) >= 0, ["Input arr must be non-negative!"])
    with tf.control_dependencies([check]):
        return tf.identity(tensor)


def _chunked_sums(tf, values, weights, size, dtype):
    """[size]: the sums of weights (or counts) per value, values >= size dropped; values >= 0.

    When n >= CHUNKS * size: CHUNKS consecutive pieces, each summed in index
    order by one RaggedBincount row (OPS ops, each over its consecutive pieces),
    then the partial histograms added in a fixed pairwise order. Otherwise (few values per bin: short sums, and
    CHUNKS partial histograms would cost more than the input) one row."""
    n = tf.size(values, out_type=tf.int64)
    weighted = weights is not None
    weights = tf.zeros([0], dtype) if weights is None else weights

    def pieces():
        piece = (n + (CHUNKS - 1)) // CHUNKS
        parts = []
        # OPS ops of CHUNKS // OPS pieces each, which TF's executor may run on different threads;
        # each row still sums one fixed piece in index order, so the bits do not depend on it
        for first in range(0, CHUNKS, CHUNKS // OPS):
            start = tf.minimum(first * piece, n)
            end = tf.minimum((first + CHUNKS // OPS) * piece, n) if first + CHUNKS // OPS < CHUNKS else n
            bounds = tf.minimum(tf.range(CHUNKS // OPS, dtype=tf.int64) * piece, end - start)
            partial = tf.raw_ops.RaggedBincount(  # row c = the sums over piece first + c, in index order
                splits=tf.concat([bounds, tf.reshape(end - start, [1])], 0), values=values[start:end], size=size,
                binary_output=False, weights=weights[start:end] if weighted else weights)
            parts.extend(partial[c] for c in range(CHUNKS // OPS))
        while len(parts) > 1:  # a fixed pairwise order: (p0 + p1) + (p2 + p3)
            parts = [parts[i] + parts[i + 1] for i in range(0, len(parts), 2)]
        return parts[0]

    def whole():
        return tf.raw_ops.RaggedBincount(splits=tf.stack([tf.zeros([], tf.int64), n]), values=values, size=size,
                                         binary_output=False, weights=weights)[0]

    # Pieces only where their partial histograms are small next to the input:
    # a choice made from the sizes alone, so the order of additions still is.
    return tf.cond(n >= CHUNKS * tf.cast(size, tf.int64), pieces, whole)


def integer_segment_sum(data, segment_ids, num_segments, fallback):
    """[num_segments, W] int32: the sums of the int32 rows of data [n, W] per id, negative ids dropped
    (the caller drops ids >= num_segments). Integer sums are exact in any order, so every kernel gives
    the same bits: where these CPU kernels apply (TensorFlow sees no GPU, not under XLA) _chunked_sums,
    several times faster on a CPU than UnsortedSegmentSum; elsewhere fallback() (tfdet.patching.exact_sum
    passes TF's int32 UnsortedSegmentSum, whose GPU kernel adds integers with atomics)."""
    tf = _tf()
    if not applies(True) or data.dtype != tf.int32:
        return fallback()
    with tf.name_scope("IntegerSegmentSum"), tf.device("/device:CPU:0"):
        ids = tf.cast(tf.reshape(segment_ids, [-1]), tf.int64)
        num = tf.cast(num_segments, tf.int64)
        width = tf.shape(data, out_type=tf.int64)[1]
        out = _chunked_sums(tf, _keys(tf, ids, num, width), tf.reshape(data, [-1]), num * width, tf.int32)
        return tf.reshape(out, tf.stack([num, width]))


def _keys(tf, ids, num, width):
    """[n * width] int64: id * width + column, row-major; negative ids get keys >= num * width (dropped)."""
    rows = tf.where(ids >= 0, ids, num)  # the scalar broadcast: no filled copy
    return tf.reshape(rows[:, tf.newaxis] * width + tf.range(width, dtype=tf.int64)[tf.newaxis, :], [-1])


def small_integer_segment_max(data, segment_ids, num_segments, levels, fallback):
    """[num_segments, W] int32: the largest of the int32 values data [n, W] (all in [0, levels)) per id,
    the lowest int32 where an id has no row (as UnsortedSegmentMax); negative ids dropped (the caller
    drops ids >= num_segments). An exact maximum, so every kernel gives the same bits: where these CPU
    kernels apply and the table below is no bigger than the input (num_segments * W * levels <=
    4 * n * W + 2**16), one RaggedBincount with binary output marks which values each (id, column)
    holds and a dense reduction picks the largest (several times faster on a CPU than
    UnsortedSegmentMax); elsewhere fallback()."""
    tf = _tf()
    if not applies(True) or data.dtype != tf.int32:
        return fallback()
    with tf.name_scope("SmallIntegerSegmentMax"):
        ids = tf.cast(tf.reshape(segment_ids, [-1]), tf.int64)
        num = tf.cast(num_segments, tf.int64)
        n = tf.size(ids, out_type=tf.int64)
        width = tf.shape(data, out_type=tf.int64)[1]
        small = num * width * levels <= 4 * n * width + (1 << 16)

        def table():
            with tf.device("/device:CPU:0"):
                keys = _keys(tf, ids, num, width) * levels + tf.cast(tf.reshape(data, [-1]), tf.int64)
                marks = tf.raw_ops.RaggedBincount(splits=tf.stack([tf.zeros([], tf.int64), n * width]), values=keys,
                                                  size=num * width * levels, weights=tf.zeros([0], tf.int32),
                                                  binary_output=True)
                marks = tf.reshape(marks, tf.stack([num, width, levels]))
                top = tf.reduce_max(marks * tf.range(1, levels + 1, dtype=tf.int32), axis=2) - 1
                return tf.where(top >= 0, top, tf.fill(tf.shape(top), tf.int32.min))

        return tf.cond(small, table, fallback)


def segment_sum(data, segment_ids, num_segments, fallback, stock_path=True):
    """Deterministic unsorted_segment_sum(data, segment_ids, num_segments) on a CPU.

    Rows of `data` (the dims after segment_ids') are flattened into one bincount
    over the keys id * depth + column, summed by _chunked_sums; negative ids are
    dropped and ids >= num_segments raise InvalidArgumentError, as the stock CPU
    kernel. The gradient is the stock op's (a gather of the output gradient,
    zero for negative ids). Returns fallback() where these kernels do not apply.
    """
    tf = _tf()
    scalar_rows = (segment_ids.shape.rank is not None and data.shape.rank is not None
                   and data.shape[segment_ids.shape.rank:].num_elements() == 1)
    # Only for rows of one element (known while building): for wider rows the stock
    # CPU kernel's vectorised row additions beat one scalar addition per element.
    if (not scalar_rows or not applies(stock_path) or data.dtype.name not in _BINCOUNT_TYPES
            or segment_ids.dtype not in (tf.int32, tf.int64)):
        return fallback()
    with tf.name_scope("DeterministicSegmentSum"), tf.device("/device:CPU:0"):
        ids = tf.cast(tf.reshape(segment_ids, [-1]), tf.int64)
        num = tf.cast(num_segments, tf.int64)
        ids_rank = segment_ids.shape.rank if segment_ids.shape.rank is not None else tf.rank(segment_ids)
        inner = tf.shape(data, out_type=tf.int64)[ids_rank:]
        depth = tf.reduce_prod(inner)
        out_shape = tf.concat([tf.reshape(num, [1]), inner], 0)
        check = tf.debugging.Assert(tf.reduce_max(ids) < num,  # int64 lowest when empty
                                    ["segment_ids must be < num_segments (out of range)"])
        with tf.control_dependencies([check]):
            keys = _keys(tf, ids, num, depth)

        @tf.custom_gradient
        def summed(x):
            flat = tf.reshape(x, [-1])
            y = tf.reshape(_chunked_sums(tf, keys, flat, num * depth, x.dtype), out_shape)

            def grad(dy):
                g = tf.gather(dy, tf.maximum(ids, 0))
                keep = tf.reshape(ids >= 0, tf.concat([tf.shape(ids), tf.ones_like(tf.shape(g)[1:])], 0))
                return tf.reshape(tf.where(keep, g, tf.zeros_like(g)), tf.shape(x))

            return y, grad

        out = summed(data)
        if segment_ids.shape.rank is not None and data.shape.rank is not None:
            num_static = tf.get_static_value(num_segments)
            out.set_shape(tf.TensorShape([None if num_static is None else int(num_static)])
                          .concatenate(data.shape[segment_ids.shape.rank:]))
        return out



def segment_keys(segment_ids, num_segments, width=None):
    """(keys, size) for keyed_sums: the bincount keys of the rows' columns where these CPU kernels apply
    (TensorFlow sees no GPU, not under XLA), else None. One column (width None): the ids themselves,
    negative ones moved to num_segments; else id * width + column in int64 (_keys). Keys >= size are
    dropped by the kernel, so ids >= num_segments need no mapping."""
    tf = _tf()
    if not applies(True):
        return None
    with tf.name_scope("SegmentKeys"), tf.device("/device:CPU:0"):
        ids = tf.reshape(segment_ids, [-1])
        if width is None:
            num = tf.cast(num_segments, ids.dtype)
            return tf.where(ids >= 0, ids, num), num  # the scalar broadcast: no filled copy
        num = tf.cast(num_segments, tf.int64)
        columns = tf.cast(width, tf.int64)
        return _keys(tf, tf.cast(ids, tf.int64), num, columns), num * columns


def keyed_sums(keys, values, size, dtype):
    """[size]: the sums of values (flat, keys' length; None: counts) per key of segment_keys, in dtype.
    For exact sums only (integers, or float64 integers whose partial sums stay below 2**53): those are
    the same in any order, so TF's multi-threaded DenseBincount kernel serves where the keys are many
    for the bins (it zeroes and adds one histogram per thread); else _chunked_sums (keys >= size dropped)."""
    tf = _tf()
    with tf.device("/device:CPU:0"):
        flat = None if values is None else tf.reshape(values, [-1])
        weights = tf.zeros([0], dtype) if values is None else flat

        def threaded():
            return tf.raw_ops.DenseBincount(input=keys, size=size, weights=weights, binary_output=False)

        def serial():
            return _chunked_sums(tf, keys, flat, size, dtype)

        many = tf.size(keys, out_type=tf.int64) >= CHUNKS * tf.cast(size, tf.int64)
        return tf.cond(many, threaded, serial)
