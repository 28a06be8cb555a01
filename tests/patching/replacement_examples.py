"""Each replacement's example inputs, the one place for them: what the benchmark
(benchmarks/bench_replacements.py) times against the stock op at full size, and
what test_registry_completeness.py runs small against the stock op. FAMILIES
names, for every replacement in tfdet.patching.registry, its proofs elsewhere:
the prefix of its cases in patch_cases.CASES, the cases whose graphs are walked
(GRAPH_CASES, for test_replacements.py) and its property strategy in
parity_strategies.py; the completeness test holds every registry name to all
of them.

Here, beside patch_cases.py, because both can import it: tests/patching is on
the tests' path, and the benchmark, run as a script, puts it on its own.
"""

import collections

import numpy as np
import tensorflow as tf

from tfdet.patching import replacements as R

Family = collections.namedtuple("Family", "cases strategy graph")
Family.__doc__ = """cases: the family name patch_cases.CASES uses ("family/variant"); strategy: the
name of its hypothesis strategy in parity_strategies.py; graph: the patch_cases.CASES whose forward
and gradient graphs test_replacements walks for nondeterministic ops (GRAPH_CASES)."""

# registry name -> its family
FAMILIES = {
    "segment_sum": Family("segment_sum", "sorted_segment_problems", ("segment_sum/basic",)),
    "unsorted_segment_sum": Family("unsorted_segment_sum", "unsorted_segment_problems",
                                   ("unsorted_segment_sum/basic", "unsorted_segment_sum/ids2d")),
    "indexed_slices_to_dense": Family("indexed_slices_to_dense", "gather_problems", ("indexed_slices_to_dense",)),
    "unsorted_segment_mean": Family("unsorted_segment_mean", "unsorted_segment_problems",
                                    ("unsorted_segment_mean/basic",)),
    "unsorted_segment_sqrt_n": Family("unsorted_segment_sqrt_n", "unsorted_segment_problems",
                                      ("unsorted_segment_sqrt_n/basic",)),
    "unsorted_segment_prod": Family("unsorted_segment_prod", "unsorted_segment_problems",
                                    ("unsorted_segment_prod/zeros",)),
    "bias_add": Family("bias_add", "bias_add_problems", ("bias_add/NHWC", "bias_add/NCHW")),
    "bincount": Family("bincount", "bincount_problems", ("bincount/weights", "bincount/counts", "bincount/axis")),
    "sparse_dense_matmul": Family("sparse_dense_matmul", "sparse_dense_matmul_problems",
                                  ("sparse_dense_matmul/adj00", "sparse_dense_matmul/adj11")),
    "scatter_nd": Family("scatter_nd", "scatter_nd_problems", ("scatter_nd",)),
    "softmax_cross_entropy": Family("softmax_cross_entropy_with_logits", "softmax_xent_problems",
                                    ("softmax_cross_entropy_with_logits/axis0",)),
    "sparse_softmax_cross_entropy": Family("sparse_softmax_cross_entropy_with_logits", "sparse_softmax_xent_problems",
                                           ("sparse_softmax_cross_entropy_with_logits/rank3",)),
    "adjust_contrast": Family("adjust_contrast", "adjust_contrast_problems", ("adjust_contrast",)),
    "resize_nearest_neighbor_grad": Family("resize_nearest_neighbor", "resize_nearest_problems",
                                           ("resize_nearest_neighbor/11x13-ac1-hp0",)),
    "crop_and_resize_grad": Family("crop_and_resize", "crop_and_resize_problems",
                                   ("crop_and_resize/bilinear-4x5", "crop_and_resize/nearest-1x3")),
}
# The drop-ins no catalogue range installs (registry.DROP_INS), walked as well.
DROP_IN_GRAPH_CASES = ("unsorted_segment_max/basic", "unsorted_segment_min/basic", "tensor_scatter_nd_add")
GRAPH_CASES = [case for family in FAMILIES.values() for case in family.graph] + list(DROP_IN_GRAPH_CASES)

# reference: what the test compares the replacement with, where stock itself cannot be trusted to
# give one answer (None: stock). Benchmarks always time stock.
Example = collections.namedtuple("Example", "patch label args stock replacement diff reference", defaults=(None,))
Example.__doc__ = """patch: the registry name; label: what the benchmark's table calls it (its first
word says the replacement, benchmarks/bench_replacements.patch_of); args: numpy inputs; stock and
replacement: functions of their tensors; diff: the positions differentiated, or None (forward only)."""


def examples(size, rng):
    """[Example] at `size` data elements (1e6: the benchmark's default), drawn from `rng` (numpy's Generator)."""
    n = int(size)
    segs = max(n // 100, 1)
    out = []

    data = rng.standard_normal(n).astype(np.float32)
    ids = rng.integers(0, segs, n).astype(np.int32)
    out.append(Example("unsorted_segment_sum", "unsorted_segment_sum %d->%d" % (n, segs), (data, ids),
                lambda x, i: tf.math.unsorted_segment_sum(x, i, segs),
                lambda x, i: R.unsorted_segment_sum(x, i, segs), (0,)))
    rows = max(n // 64, 1)
    data64 = rng.standard_normal((rows, 64)).astype(np.float32)
    ids64 = rng.integers(0, max(rows // 100, 1), rows).astype(np.int32)
    out.append(Example("unsorted_segment_sum", "unsorted_segment_sum [%d,64]->%d" % (rows, max(rows // 100, 1)), (data64, ids64),
                lambda x, i: tf.math.unsorted_segment_sum(x, i, max(rows // 100, 1)),
                lambda x, i: R.unsorted_segment_sum(x, i, max(rows // 100, 1)), (0,)))
    sids = np.sort(ids)
    out.append(Example("segment_sum", "segment_sum sorted %d->%d" % (n, segs), (data, sids),
                lambda x, i: tf.math.segment_sum(x, i), lambda x, i: R.segment_sum(x, i), (0,)))
    small = max(n // 4, 1)
    pdata = (1 + 1e-3 * rng.standard_normal(small)).astype(np.float32)
    pids = rng.integers(0, max(small // 100, 1), small).astype(np.int32)
    out.append(Example("unsorted_segment_prod", "unsorted_segment_prod %d" % small, (pdata, pids),
                lambda x, i: tf.math.unsorted_segment_prod(x, i, max(small // 100, 1)),
                lambda x, i: R.unsorted_segment_prod(x, i, max(small // 100, 1)), (0,)))
    out.append(Example("unsorted_segment_mean", "unsorted_segment_mean %d" % small, (pdata, pids),
                lambda x, i: tf.math.unsorted_segment_mean(x, i, max(small // 100, 1)),
                lambda x, i: R.unsorted_segment_mean(x, i, max(small // 100, 1)), (0,)))
    out.append(Example("unsorted_segment_sqrt_n", "unsorted_segment_sqrt_n %d" % small, (pdata, pids),
                       lambda x, i: tf.math.unsorted_segment_sqrt_n(x, i, max(small // 100, 1)),
                       lambda x, i: R.unsorted_segment_sqrt_n(x, i, max(small // 100, 1)), (0,)))

    # Gather backprop: a [V, 64] table, V ids; the gradient (IndexedSlices) made dense.
    vocab = max(n // 10, 1)
    table = rng.standard_normal((vocab, 64)).astype(np.float32)
    gids = rng.integers(0, vocab, vocab).astype(np.int32)
    upstream = rng.standard_normal((vocab, 64)).astype(np.float32)

    def gather_backprop(densify):
        def run(t, i, dy):
            with tf.GradientTape() as tape:
                tape.watch(t)
                y = tf.gather(t, i)
            g = tape.gradient(y, t, output_gradients=dy)
            return densify(g)

        return run

    out.append(Example("indexed_slices_to_dense", "gather backprop [%d,64], %d ids" % (vocab, vocab), (table, gids, upstream),
                gather_backprop(tf.convert_to_tensor), gather_backprop(R.indexed_slices_to_dense), None))

    # bias_add: the bias gradient is the reduction.
    batch = max(n // (32 * 32 * 64), 1)
    value = rng.standard_normal((batch, 32, 32, 64)).astype(np.float32)
    bias = rng.standard_normal(64).astype(np.float32)
    out.append(Example("bias_add", "bias_add [%d,32,32,64]" % batch, (value, bias), tf.nn.bias_add, R.bias_add, (0, 1)))

    # bincount with weights.
    warr = rng.integers(0, segs, n).astype(np.int32)
    out.append(Example("bincount", "bincount weighted %d->%d" % (n, segs), (warr, data),
                lambda a, w: tf.math.bincount(a, weights=w, minlength=segs),
                lambda a, w: R.bincount(a, weights=w, minlength=segs), None))

    # sparse x dense.
    nnz = max(n // 10, 1)
    dim = max(n // 100, 2)
    sp_idx = np.stack([rng.integers(0, dim, nnz), rng.integers(0, dim, nnz)], 1).astype(np.int64)
    sp_val = rng.standard_normal(nnz).astype(np.float32)
    dense = rng.standard_normal((dim, 64)).astype(np.float32)
    out.append(Example("sparse_dense_matmul", "sparse_dense_matmul nnz=%d [%d,64]" % (nnz, dim), (sp_val, dense),
                lambda v, b: tf.sparse.sparse_dense_matmul(tf.SparseTensor(sp_idx, v, [dim, dim]), b),
                lambda v, b: R.sparse_dense_matmul(tf.SparseTensor(sp_idx, v, [dim, dim]), b), (0, 1)))

    # Nearest-neighbour upsampling x2 (Keras UpSampling2D) and its gradient.
    nb = max(n // (64 * 64 * 32), 1)
    images = rng.standard_normal((nb, 64, 64, 32)).astype(np.float32)
    out.append(Example("resize_nearest_neighbor_grad", "resize_nearest x2 [%d,64,64,32]" % nb, (images,),
                lambda x: tf.compat.v1.image.resize_nearest_neighbor(x, [128, 128], half_pixel_centers=True),
                lambda x: R.resize_nearest_neighbor(x, [128, 128], half_pixel_centers=True), (0,)))

    # crop_and_resize: 256 boxes of 32x32 from [32, 256, 256, 3] images (at the default size).
    nimg = max(int(32 * size / 1e6), 1)
    crop_img = rng.standard_normal((nimg, 256, 256, 3)).astype(np.float32)
    y1x1 = rng.uniform(0, 0.7, (256, 2))
    boxes = np.concatenate([y1x1, y1x1 + rng.uniform(0.05, 0.3, (256, 2))], 1).astype(np.float32)
    box_ind = rng.integers(0, nimg, 256).astype(np.int32)
    def one_box_at_a_time(im, b):
        # stock's CPU image gradient adds boxes into shared pixels from several threads and can lose an
        # update (seen here: 576 of 196,608 values off by up to 0.35 under load); one box per call cannot race
        return tf.concat([tf.image.crop_and_resize(im, b[i:i + 1], box_ind[i:i + 1], [32, 32])
                          for i in range(len(box_ind))], 0)

    out.append(Example("crop_and_resize_grad", "crop_and_resize 256x32x32 of [%d,256,256,3]" % nimg, (crop_img, boxes),
                lambda im, b: tf.image.crop_and_resize(im, b, box_ind, [32, 32]),
                lambda im, b: R.crop_and_resize(im, b, box_ind, [32, 32]), (0, 1), one_box_at_a_time))

    # scatter_nd with duplicate indices.
    sidx = rng.integers(0, segs, (n // 64, 1)).astype(np.int32)
    supd = rng.standard_normal((n // 64, 64)).astype(np.float32)
    out.append(Example("scatter_nd", "scatter_nd %d rows of 64 -> %d" % (n // 64, segs), (supd,),
                lambda u: tf.scatter_nd(sidx, u, [segs, 64]), lambda u: R.scatter_nd(sidx, u, [segs, 64]), (0,)))
    # Composites with no segment reduction (auto and order-fixed are the same graph).
    batch = max(n // 250, 1)
    logits = rng.standard_normal((batch, 1000)).astype(np.float32)
    labels = rng.integers(0, 1000, batch).astype(np.int32)
    soft = np.exp(rng.standard_normal((batch, 1000))).astype(np.float32)
    soft /= soft.sum(1, keepdims=True)
    out.append(Example("softmax_cross_entropy", "softmax_cross_entropy [%d,1000]" % batch, (soft, logits),
                lambda y, x: tf.nn.softmax_cross_entropy_with_logits(y, x),
                lambda y, x: R.softmax_cross_entropy_with_logits(y, x), (1,)))
    out.append(Example("sparse_softmax_cross_entropy", "sparse_softmax_cross_entropy [%d,1000]" % batch, (logits,),
                lambda x: tf.nn.sparse_softmax_cross_entropy_with_logits(labels, x),
                lambda x: R.sparse_softmax_cross_entropy_with_logits(labels, x), (0,)))
    imgs = rng.uniform(0, 1, (nimg, 256, 256, 3)).astype(np.float32)
    out.append(Example("adjust_contrast", "adjust_contrast [%d,256,256,3]" % nimg, (imgs,),
                lambda x: tf.image.adjust_contrast(x, 1.5), lambda x: R.adjust_contrast(x, 1.5), None))
    return out
