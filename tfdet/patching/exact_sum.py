"""Order-independent segment sums of float16, bfloat16 and float32 values, without a sort.

A floating-point sum changes with the order of its additions; an integer sum
does not (integer addition is associative, so any order of atomic additions
gives the same bits). `segment_sum` therefore turns the values of each segment
into integers on a grid fixed per segment before adding them (reproducible
summation by pre-rounding, after Demmel and Nguyen's reproducible summation,
and the fixed-point accumulators it descends from):

1. e[s, d] = the largest biased float32 exponent of the finite values in
   segment s, column d: an int32 UnsortedSegmentMax of the exponent bits (a
   maximum is order-independent); m = the most rows any segment holds (an
   int32 segment sum of ones), c = bits(m);
2. every finite value x of segment s is rounded to the grid 2**g[s, d],
   g = e - 126 - P with P = 62 - c bits: |x| < 2**(e - 126), so the integer
   q = round(x / 2**g) has |q| <= 2**P, and a sum of at most 2**c of them fits
   in int64;
3. q is cut into K limbs of L = 31 - c bits (the last one signed), so that the
   limb sums of a segment fit in int32 whatever the order: one int32 segment
   sum over [rows, columns * K];
4. the limb sums are put back together in int64 (exact), converted to float64,
   scaled by 2**g (exact) and cast to the output dtype.

The result is the sum of the grid values, rounded once to float64 and once to
the output dtype: its error is at most (rows of the segment) * 2**(g - 1) plus
that rounding, g being at least 31 bits below the segment's largest value, and
does not depend on the order of the additions, the thread count or the device.
(Subnormal inputs are whatever the device's float arithmetic makes of them:
TF's CPU kernels flush them to zero.) Non-finite values as the stock sum: a
NaN, or +inf with -inf, gives NaN; +inf (-inf) alone gives +inf (-inf), from
int32 counts per segment (computed only when some value is not finite). Empty segments give 0, negative ids are
dropped, ids >= num_segments raise InvalidArgumentError when `validate`
(else are dropped). float64 and complex values are not covered (P would
have to exceed 62 bits): the caller keeps its other path for them.

Why the integer segment ops are allowed on a GPU (TensorFlow's source):
- Before 2.5: the GPU kernels of UnsortedSegmentSum and UnsortedSegmentMax
  are built for int32 data (tensorflow/core/kernels/segment_reduction_ops_gpu.cu.cc
  as stored at a pre-2.5 commit, 08a21974ed53a797952a6e5b0ebb810802b88adf:
  `TF_CALL_int32(DEFINE_SUM_GPU_SPECS)` and `TF_CALL_int32(DEFINE_REAL_GPU_SPECS)`;
  int64 data has no GPU kernel) and add with atomics, which for integers give
  the same bits in any order; there is no determinism check.
- TF 2.5-2.6: the GPU functor raises "Deterministic GPU implementation of
  unsorted segment reduction op not available" under TF_DETERMINISTIC_OPS only
  when `ReductionF::is_associative` is false (segment_reduction_ops_gpu.cu.cc,
  UnsortedSegmentFunctor<GPUDevice>), and tensorflow/core/kernels/segment_reduction_ops.h
  (as shipped in the 2.5.3 wheel, lines 79-84 and 97-102; 2.6.4, lines 81-86
  and 99-104) sets `is_associative = std::is_integral<T>::value` for
  AtomicSumOpGpu and `is_associative = true` for AtomicMaxOpGpu: int32 sums
  and maxima run, deterministically. The int32 GPU kernels are registered in
  segment_reduction_ops_impl_*.cc (`TF_CALL_int32(REGISTER_SUM_GPU_UNSORTED_KERNELS_ALL)`,
  `TF_CALL_int32(REGISTER_REAL_GPU_UNSORTED_KERNELS_ALL)`).
- TF >= 2.7: deterministic segment kernels whenever determinism is required.
Where TensorFlow sees no GPU the int32 sums run through
tfdet.patching.kernels.integer_segment_sum (TF's serial CPU bincount kernel):
integer sums are exact, so the bits are the same as UnsortedSegmentSum's.

Python 3.7 / TensorFlow 1.15 compatible (tensorflow.compat.v2).
"""

DTYPES = ("float16", "bfloat16", "float32")

# float32's exponent field: bits 23..30.
_MANTISSA_BITS = 23
# q carries P = _TOTAL_BITS - c bits, so that a sum of 2**c of them fits int64 (63 bits and a sign).
_TOTAL_BITS = 62
# One limb sum of 2**c rows carries L = _LIMB_BITS - c bits and fits int32.
_LIMB_BITS = 31
# Rows at most: a segment of up to 2**30 - 1 rows leaves at least one bit per limb.
MAX_ROWS = (1 << 30) - 1


def _tf():
    import tensorflow.compat.v2 as tf  # noqa: PLC0415 - keeps `import tfdet.patching.exact_sum` TF-free

    return tf


def covers(dtype):
    """Whether segment_sum takes values of this dtype."""
    return _tf().as_dtype(dtype).name in DTYPES


def _int_sum(values, ids, num):
    """[num, W] int32: the sums of the int32 rows of values [n, W] per id (exact, so any kernel)."""
    tf = _tf()
    from . import kernels  # noqa: PLC0415 - imports TensorFlow's internals only when used

    return kernels.integer_segment_sum(
        values, ids, num, lambda: tf.raw_ops.UnsortedSegmentSum(data=values, segment_ids=ids, num_segments=num))


def _exponent_max(exps, ids, num):
    """[num, D] int32: the largest of the exponents exps [n, D] (0..254) per id, the lowest int32 where
    none (an exact maximum, so any kernel)."""
    tf = _tf()
    from . import kernels  # noqa: PLC0415

    return kernels.small_integer_segment_max(
        exps, ids, num, 256, lambda: tf.raw_ops.UnsortedSegmentMax(data=exps, segment_ids=ids, num_segments=num))


def _bits(m):
    """The number of bits of the non-negative int32 m (0 for 0): how many k have 2**k <= m."""
    tf = _tf()
    powers = tf.constant([1 << k for k in range(31)], tf.int32)
    return tf.reduce_sum(tf.cast(powers <= m, tf.int32))


def _pow2(k):
    """2.0**k in float64 for int64 k in [-1022, 1023], exactly (the exponent field set directly)."""
    tf = _tf()
    return tf.bitcast(tf.bitwise.left_shift(k + 1023, tf.constant(52, tf.int64)), tf.float64)


def segment_sum(x, ids, num_segments, validate=True):
    """[num_segments, D]: the sums of the rows of x [n, D] (float16/bfloat16/float32) per id (ids [n],
    int32/int64), exactly up to the per-element rounding to a grid fixed by the segment's largest value
    and the row count (see the module docstring); x's dtype."""
    tf = _tf()
    if not covers(x.dtype):
        raise TypeError("exact_sum covers %s, not %s" % (", ".join(DTYPES), x.dtype.name))
    idt = ids.dtype
    num = tf.cast(num_segments, idt)
    checks = id_range_checks(tf, x, ids, num, validate)
    checks.append(tf.debugging.Assert(tf.size(ids, out_type=tf.int64) <= MAX_ROWS,
                                      ["exact_sum sums at most 2**30 - 1 rows, got", tf.size(ids, out_type=tf.int64)]))
    with tf.control_dependencies(checks):
        ids = tf.where(tf.logical_and(ids >= 0, ids < num), ids, -tf.ones_like(ids))  # dropped by the kernels
    n = tf.shape(x, out_type=tf.int64)[0]
    depth = tf.shape(x, out_type=tf.int64)[1]
    v = tf.cast(x, tf.float32)  # exact for float16 and bfloat16
    finite = tf.math.is_finite(v)
    v = tf.where(finite, v, tf.zeros_like(v))  # non-finite values: counted apart (special)
    exps = tf.bitwise.right_shift(tf.bitcast(tf.abs(v), tf.int32), _MANTISSA_BITS)  # 0 (zero, subnormal) .. 254
    e = tf.maximum(_exponent_max(exps, ids, num), 0)  # [S, D]

    counts = _int_sum(tf.ones(tf.stack([n, 1]), tf.int32), ids, num)
    c = tf.cast(_bits(tf.reduce_max(tf.concat([tf.reshape(counts, [-1]), [0]], 0))), tf.int64)
    p = _TOTAL_BITS - c  # bits of q below the segment's bound
    limb = _LIMB_BITS - c  # bits per limb
    k = (p + limb) // limb  # limbs: K * L >= P + 1

    g = tf.cast(e, tf.int64) - 126 - p  # [S, D]: the grid exponent; |x| < 2**(e - 126)
    # 1 / 2**g per row, read by id from a table whose last row, 0, serves the dropped ids (their values
    # need not fit any grid, and are not added).
    inverse = tf.concat([_pow2(-g), tf.zeros(tf.stack([1, depth]), tf.float64)], 0)
    rows = tf.where(ids >= 0, ids, tf.fill(tf.shape(ids), num))
    q = tf.cast(tf.round(tf.cast(v, tf.float64) * tf.gather(inverse, rows)), tf.int64)  # exact: |q| <= 2**P
    shifts = limb * tf.range(k, dtype=tf.int64)  # [K]
    # Limb j: bits L*j .. L*j + L - 1 of q; the last one takes the rest, with the sign (arithmetic shift).
    low = tf.bitwise.left_shift(tf.constant(1, tf.int64), limb) - 1
    masks = tf.concat([tf.fill(tf.reshape(k - 1, [1]), low), tf.constant([-1], tf.int64)], 0)
    parts = tf.bitwise.bitwise_and(tf.bitwise.right_shift(q[:, :, tf.newaxis], shifts), masks)  # [n, D, K]
    sums = _int_sum(tf.reshape(tf.cast(parts, tf.int32), tf.stack([n, depth * k])), ids, num)
    sums = tf.reshape(tf.cast(sums, tf.int64), tf.stack([-1, depth, k]))
    total = tf.reduce_sum(tf.bitwise.left_shift(sums, shifts), axis=2)  # int64, exact: |total| < 2**62
    out = tf.cast(tf.cast(total, tf.float64) * _pow2(g), x.dtype)

    return tf.cond(tf.reduce_all(finite), lambda: out, lambda: with_non_finite(x, ids, num, out))


def with_non_finite(x, ids, num, out):
    """out [S, D] (the sums of the finite values of x [n, D] per id) with the non-finite values of x
    as the stock sum gives them: NaN anywhere, or +inf with -inf, gives NaN; +inf (-inf) alone gives
    +inf (-inf). From int32 counts per id (exact, so any kernel); ids < 0 dropped."""
    tf = _tf()
    n = tf.shape(x, out_type=tf.int64)[0]
    depth = tf.shape(x, out_type=tf.int64)[1]
    raw = tf.cast(x, tf.float32)
    flags = tf.stack([tf.math.is_nan(raw), tf.equal(raw, float("inf")), tf.equal(raw, float("-inf"))], 2)
    got = _int_sum(tf.reshape(tf.cast(flags, tf.int32), tf.stack([n, depth * 3])), ids, num) > 0
    got = tf.reshape(got, tf.stack([-1, depth, 3]))
    nan = tf.logical_or(got[:, :, 0], tf.logical_and(got[:, :, 1], got[:, :, 2]))
    inf = tf.constant(float("inf"), out.dtype)
    res = tf.where(got[:, :, 1], tf.fill(tf.shape(out), inf), out)
    res = tf.where(got[:, :, 2], tf.fill(tf.shape(out), -inf), res)
    return tf.where(nan, tf.fill(tf.shape(out), tf.constant(float("nan"), out.dtype)), res)


def id_range_checks(tf, x, ids, num, validate):
    """[the stock kernels' error for an id >= num_segments] when validate, else []."""
    if not validate:
        return []
    last = tf.maximum(tf.reduce_max(ids), tf.constant(-1, ids.dtype))  # the lowest value when empty
    ok = tf.logical_or(tf.less(last, num), tf.equal(tf.size(x), 0))  # as the stock kernels
    return [tf.debugging.Assert(ok, ["segment_ids must be < num_segments (out of range): largest id", last,
                                     "num_segments", num])]
