"""Order-independent segment sums of float16, bfloat16 and float32 values on one grid per call.

The order-fixed method's third way to sum (`primitive.set_order_fixed_sum("fixed_point")`),
after the sort (the default) and tfdet.patching.exact_sum (one grid per segment).
Integer additions give the same bits in any order; here every value is put on
one fixed-point grid chosen for the whole call, so that no per-segment pass
(no segment maximum, no gather of a per-segment scale) is needed:

1. the call's largest finite magnitude gives the biased float32 exponent e
   (one dense maximum over the bits of |x|; its value also says whether
   every value is finite), the longest segment gives c = bits(its rows) (an
   int32 count per segment);
2. limbs of L = min(31 - c, 30) bits, K of them, K the smallest of 2, 3, 4
   with K * L - 1 >= MIN_BITS (a segment of more than 2**20 - 1 rows: the
   per-segment sums of exact_sum instead); the grid is 2**(e - 126 - P) with
   P = min(K * L - 1, 62 - c) bits below 2**(e - 126) > |x|;
3. y = x scaled onto the grid (two exact power-of-two products, in float32),
   cut from the top into K int32 limbs: each limb but the last is the
   truncation of the rest (a float32 product and a cast, both exact: the rest
   is a bit slice of y with y's sign, at most 24 significant bits); the last
   is the rest rounded to an integer (half to even). A value's limbs add up to
   round(y) exactly, every limb is within 2**L, so K int32 segment sums
   (TF's integer UnsortedSegmentSum on a GPU, TF's serial CPU bincount kernel
   where TensorFlow sees no GPU, see tfdet.patching.kernels) cannot overflow;
4. the K limb sums are put back together in int64 (exact: below 2**62),
   converted to float64, scaled back (exact) and cast to the output dtype.

Error bound: every value moves by at most half a grid step, so the sum of a
segment of r rows is off by at most r * 2**-(P + 1) * 2**(e - 126) <=
r * 2**-MIN_BITS * (the call's largest finite magnitude), plus the one final
rounding to the output dtype. Against the stock float32 sum (its error grows
with r * 2**-24 * the segment's own sum of magnitudes) this is as accurate or
better for every segment whose values are not all far below the call's
largest value; a segment of values below 2**-MIN_BITS of it sums to zero. Any
order of additions, any thread count, either integer kernel: the same bits.
Non-finite values, empty segments, negative ids and ids >= num_segments as
exact_sum (and so as the stock sums); float64 and complex values are not
covered.

Why the integer segment ops are allowed on a GPU of the TF versions whose
plans take the order-fixed path: see tfdet.patching.exact_sum (int32
UnsortedSegmentSum only; no maximum is used here).

Python 3.7 / TensorFlow 1.15 compatible (tensorflow.compat.v2).
"""

from . import exact_sum

# The grid lies at least this many bits below the call's largest finite magnitude.
MIN_BITS = 40
# Limb counts built (a branch each); the smallest that reaches MIN_BITS for the longest segment runs.
LIMBS = (2, 3, 4)

# float32: bits of the mantissa field, and the bits of +inf (every larger |x| pattern is a NaN).
_MANTISSA_BITS = 23
_INF_BITS = 0x7F800000


def _tf():
    import tensorflow.compat.v2 as tf  # noqa: PLC0415 - keeps `import tfdet.patching.fixed_point` TF-free

    return tf


def covers(dtype):
    """Whether segment_sum takes values of this dtype."""
    return exact_sum.covers(dtype)


def _pow2_f32(k):
    """2.0**k in float32 for int32 k in [-126, 127] (the exponent field set directly)."""
    tf = _tf()
    return tf.bitcast(tf.bitwise.left_shift(k + 127, _MANTISSA_BITS), tf.float32)


def _limbs(y, limb, k):
    """K int32 limbs of the float32 integers-to-be y (|y| < 2**(K * limb - 1)), lowest first:
    sum_j limbs[j] * 2**(limb * j) == round(y) exactly, |limbs[j]| <= 2**limb."""
    tf = _tf()
    rest, top_down = y, []
    for j in range(k - 1, 0, -1):
        # trunc(rest / 2**(limb * j)): a float32 product (exact) and a cast toward zero; |.| < 2**limb
        part = tf.cast(rest * _pow2_f32(-limb * j), tf.int32)
        rest = rest - tf.cast(part, tf.float32) * _pow2_f32(limb * j)  # exact: a bit slice of y, y's sign
        top_down.append(part)
    top_down.append(tf.cast(tf.round(rest), tf.int32))
    return top_down[::-1]


def segment_sum(x, ids, num_segments, validate=True):
    """[num_segments, D]: the sums of the rows of x [n, D] (float16/bfloat16/float32) per id (ids [n],
    int32/int64), each value rounded to one grid fixed per call (see the module docstring); x's dtype."""
    tf = _tf()
    if not covers(x.dtype):
        raise TypeError("fixed_point covers %s, not %s" % (", ".join(exact_sum.DTYPES), x.dtype.name))
    from . import kernels  # noqa: PLC0415 - imports TensorFlow's internals only when used

    idt = ids.dtype
    num = tf.cast(num_segments, idt)
    with tf.control_dependencies(exact_sum.id_range_checks(tf, x, ids, num, validate)):
        ids = tf.identity(ids)
    depth = tf.compat.dimension_value(x.shape[1])
    keyed = kernels.segment_keys(ids, num)  # the CPU kernels' keys (ids >= num_segments dropped by them), or None
    if keyed is None:  # TF's int32 UnsortedSegmentSum (negative ids dropped); unchecked ids >= num_segments too
        if not validate:
            ids = tf.where(ids < num, ids, tf.constant(-1, idt))

        def int_sums(parts):
            return [tf.raw_ops.UnsortedSegmentSum(data=part, segment_ids=ids, num_segments=num) for part in parts]

        counts = tf.raw_ops.UnsortedSegmentSum(data=tf.ones(tf.shape(ids), tf.int32), segment_ids=ids,
                                               num_segments=num)
    else:
        keys, size = keyed if depth == 1 else kernels.segment_keys(ids, num, tf.shape(x)[1])
        out_shape = tf.stack([tf.cast(num, tf.int32), tf.shape(x)[1]])

        def int_sums(parts):
            return [tf.reshape(kernels.keyed_sums(keys, part, size, tf.int32), out_shape) for part in parts]

        counts = kernels.keyed_sums(keyed[0], None, keyed[1], tf.int32)
    v = tf.cast(x, tf.float32)  # exact for float16 and bfloat16
    c = exact_sum._bits(tf.maximum(tf.reduce_max(counts), 0))  # the lowest int32 when there are no segments
    limb = tf.minimum(31 - c, 30)
    # Bits of the grid: at most 53 - c where that leaves MIN_BITS (every partial sum of a segment then
    # stays below 2**53, exact in float64: a CPU sums in one pass), else 62 - c (int64).
    cap = tf.where(53 - c >= MIN_BITS, 53 - c, 62 - c)

    def largest_bits(values):  # the bits of the largest |value| (float32 order is int32 order for |x|)
        return tf.maximum(tf.reduce_max(tf.bitcast(tf.abs(values), tf.int32)), 0)  # 0 when empty

    def summed(values, top_bits):
        """The sums of `values` (finite float32) as the docstring's steps 1-4."""
        e = tf.maximum(tf.bitwise.right_shift(top_bits, _MANTISSA_BITS), 1)

        def with_limbs(k):
            def run():
                p = tf.minimum(k * limb - 1, cap)
                s = 126 + p - e  # y = values * 2**s: |y| < 2**p; s in [p - 128, p + 125]
                half = tf.math.floordiv(s, 2)
                y = tf.cond(tf.abs(s) <= 126, lambda: values * _pow2_f32(s),  # one exact product, else two
                            lambda: values * _pow2_f32(half) * _pow2_f32(s - half))

                def by_limbs():
                    sums = int_sums(_limbs(y, limb, k))
                    return tf.add_n([tf.bitwise.left_shift(tf.cast(t, tf.int64), tf.cast(limb * j, tf.int64))
                                     for j, t in enumerate(sums)])  # exact: |total| < 2**62

                if keyed is None:
                    total = tf.cast(by_limbs(), tf.float64)
                else:
                    # On a CPU, round(y) summed in float64 where no partial sum can pass 2**53: the same exact
                    # integers as the limb sums, in one pass.
                    total = tf.cond(p + c <= 53, lambda: tf.reshape(kernels.keyed_sums(
                        keys, tf.cast(tf.round(y), tf.float64), size, tf.float64), out_shape),
                        lambda: tf.cast(by_limbs(), tf.float64))
                return tf.cast(total * exact_sum._pow2(-tf.cast(s, tf.int64)), x.dtype)

            return run

        def per_segment():  # a segment too long for 4 limbs: exact_sum's grid per segment
            return exact_sum.segment_sum(x, ids, num_segments, validate=False)

        fits = tf.stack([k * limb - 1 >= MIN_BITS for k in LIMBS])
        index = tf.reduce_sum(tf.cast(tf.logical_not(fits), tf.int32))  # fits is monotone in k
        return tf.switch_case(index, [with_limbs(k) for k in LIMBS] + [per_segment])

    top = largest_bits(v)

    def non_finite():
        finite = tf.where(tf.math.is_finite(v), v, tf.zeros_like(v))
        return exact_sum.with_non_finite(x, ids, num, summed(finite, largest_bits(finite)))

    return tf.cond(tf.less(top, _INF_BITS), lambda: summed(v, top), non_finite)
