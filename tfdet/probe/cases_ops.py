"""Probe cases for catalogued ops (see cases.py for the contract).

Each builder is keyed by the catalogue id it exercises. Shapes are chosen so
the default size gives 1e5..1e6 elements, enough for TF's CPU kernels to
shard work across threads.
"""

from .cases import Built, case, elements, varied


def _ids(np, rng, n, segments, sort=False):
    ids = rng.randint(0, segments, size=n).astype(np.int32)
    return np.sort(ids) if sort else ids


# -- segment reductions --------------------------------------------------------

def _segment_case(op_name, sort, positive=False):
    def build(tf, np, rng, size):
        n = elements(size, 4e5)
        segments = max(1, n // 100)
        data = varied(np, rng, (n, 4))
        if positive:  # products of values far from 1 overflow: keep them near 1
            data = (1.0 + 0.01 * rng.standard_normal((n, 4))).astype(np.float32)
        ids = _ids(np, rng, n, segments, sort)
        op = getattr(tf.math, op_name)
        if sort:
            return Built([data, ids], lambda d, i: op(d, i), differentiable=[0])
        return Built([data, ids], lambda d, i: op(d, i, num_segments=segments), differentiable=[0])
    return build


for _id, _op, _sorted, _positive in [
    ("segment-sum", "segment_sum", True, False),
    ("segment-mean", "segment_mean", True, False),
    ("segment-prod", "segment_prod", True, True),
    ("unsorted-segment-sum", "unsorted_segment_sum", False, False),
    ("unsorted-segment-mean", "unsorted_segment_mean", False, False),
    ("unsorted-segment-sqrt-n", "unsorted_segment_sqrt_n", False, False),
    ("unsorted-segment-prod", "unsorted_segment_prod", False, True),
]:
    case(_id)(_segment_case(_op, _sorted, _positive))


@case("gather-backprop", passes=("gradient",))
def _gather(tf, np, rng, size):
    rows = elements(size, 2e4)
    params = varied(np, rng, (rows, 32))
    ids = rng.randint(0, rows // 10, size=rows).astype(np.int32)  # many repeats
    return Built([params, ids], lambda p, i: tf.gather(p, i), differentiable=[0])


@case("indexed-slices-to-dense", passes=("forward",))
def _indexed_slices(tf, np, rng, size):
    rows = elements(size, 2e4)
    values = varied(np, rng, (rows, 32))
    indices = rng.randint(0, rows // 10, size=rows).astype(np.int32)

    def densify(v, i):
        return tf.convert_to_tensor(tf.IndexedSlices(v, i, tf.constant([rows // 10, 32])))
    return Built([values, indices], densify)


# -- bias, convolution, pooling ----------------------------------------------

@case("bias-add-backprop", passes=("gradient",))
def _bias_add(tf, np, rng, size):
    batch = elements(size, 64)
    x = varied(np, rng, (batch, 32, 32, 16))
    b = varied(np, rng, (16,))
    return Built([x, b], lambda x, b: tf.nn.bias_add(x, b), differentiable=[1])


def _conv(rank):
    def build(tf, np, rng, size):
        spatial = {1: (4096,), 2: (64, 64), 3: (16, 16, 16)}[rank]
        batch = elements(size, 16)
        x = varied(np, rng, (batch,) + spatial + (8,))
        f = varied(np, rng, (3,) * rank + (8, 16))
        op = {1: tf.nn.conv1d, 2: tf.nn.conv2d, 3: tf.nn.conv3d}[rank]
        strides = 1 if rank == 1 else [1] * (rank + 2)
        return Built([x, f], lambda x, f: op(x, f, strides, "SAME"), differentiable=[0, 1])
    return build


case("conv1d-backprop")(_conv(1))
case("conv2d-backprop")(_conv(2))
case("conv3d-backprop")(_conv(3))


@case("depthwise-conv2d-backprop-filter")
def _depthwise(tf, np, rng, size):
    batch = elements(size, 16)
    x = varied(np, rng, (batch, 64, 64, 8))
    f = varied(np, rng, (3, 3, 8, 2))
    return Built([x, f], lambda x, f: tf.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "SAME"), differentiable=[0, 1])


@case("max-pool-backprop")
def _max_pool(tf, np, rng, size):
    batch = elements(size, 32)
    x = varied(np, rng, (batch, 64, 64, 8))
    return Built([x], lambda x: tf.nn.max_pool2d(x, 3, 2, "SAME"), differentiable=[0])


# -- image ---------------------------------------------------------------------

def _resize(method):
    def build(tf, np, rng, size):
        batch = elements(size, 16)
        images = varied(np, rng, (batch, 32, 32, 8))
        if method == "nearest":
            fn = lambda x: tf.compat.v1.image.resize_nearest_neighbor(x, [77, 77])  # noqa: E731
        else:
            fn = lambda x: tf.compat.v1.image.resize_bilinear(x, [77, 77])  # noqa: E731
        return Built([images], fn, differentiable=[0])
    return build


case("resize-nearest-backprop")(_resize("nearest"))
case("resize-bilinear-backprop")(_resize("bilinear"))


@case("crop-and-resize-backprop")
def _crop_and_resize(tf, np, rng, size):
    batch = 4
    boxes_n = elements(size, 2000)
    images = varied(np, rng, (batch, 64, 64, 4))
    corners = rng.uniform(0, 1, (boxes_n, 2, 2))
    boxes = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1).astype(np.float32)
    box_ind = rng.randint(0, batch, boxes_n).astype(np.int32)
    return Built([images, boxes, box_ind],
                 lambda im, bx, bi: tf.image.crop_and_resize(im, bx, bi, [8, 8]), differentiable=[0, 1])


@case("adjust-contrast", passes=("forward",))
def _adjust_contrast(tf, np, rng, size):
    images = varied(np, rng, (elements(size, 64), 64, 64, 3))
    return Built([images], lambda x: tf.image.adjust_contrast(x, 1.7))


# -- counting, sparse, scatter -------------------------------------------------

@case("bincount", passes=("forward",))
def _bincount(tf, np, rng, size):
    n = elements(size, 1e6)
    values = rng.randint(0, 1000, n).astype(np.int32)
    weights = varied(np, rng, (n,))
    return Built([values, weights], lambda v, w: tf.math.bincount(v, weights=w, minlength=1000))


@case("sparse-dense-matmul")
def _sparse_dense_matmul(tf, np, rng, size):
    nnz = elements(size, 2e5)
    rows, inner = 2000, 2000
    indices = np.stack([rng.randint(0, rows, nnz), rng.randint(0, inner, nnz)], axis=1).astype(np.int64)
    values = varied(np, rng, (nnz,))
    dense = varied(np, rng, (inner, 16))

    def matmul(v, d):
        sparse = tf.sparse.reorder(tf.SparseTensor(indices, v, [rows, inner]))
        return tf.sparse.sparse_dense_matmul(sparse, d)
    return Built([values, dense], matmul, differentiable=[0, 1])


def _scatter(op_name):
    def build(tf, np, rng, size):
        n = elements(size, 2e5)
        rows = max(1, n // 50)
        indices = rng.randint(0, rows, (n, 1)).astype(np.int32)  # duplicates on purpose
        updates = varied(np, rng, (n, 8))
        base = varied(np, rng, (rows, 8))
        if op_name == "scatter_nd":
            return Built([indices, updates], lambda i, u: tf.scatter_nd(i, u, [rows, 8]), differentiable=[1])
        op = getattr(tf, op_name)
        return Built([base, indices, updates], lambda b, i, u: op(b, i, u), differentiable=[0, 2])
    return build


case("scatter-nd")(_scatter("scatter_nd"))
case("tensor-scatter-nd-add")(_scatter("tensor_scatter_nd_add"))
case("tensor-scatter-nd-sub")(_scatter("tensor_scatter_nd_sub"))
case("tensor-scatter-nd-update")(_scatter("tensor_scatter_nd_update"))


# -- losses --------------------------------------------------------------------

@case("softmax-cross-entropy")
def _softmax_xent(tf, np, rng, size):
    batch = elements(size, 2000)
    logits = varied(np, rng, (batch, 100))
    labels = rng.dirichlet(np.ones(100), batch).astype(np.float32)
    return Built([labels, logits], lambda y, z: tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=z),
                 differentiable=[1])


@case("sparse-softmax-cross-entropy")
def _sparse_softmax_xent(tf, np, rng, size):
    batch = elements(size, 2000)
    logits = varied(np, rng, (batch, 100))
    labels = rng.randint(0, 100, batch).astype(np.int32)
    return Built([labels, logits], lambda y, z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=z),
                 differentiable=[1])


# -- reductions and dense math -------------------------------------------------

@case("reduce-sum")
def _reduce_sum(tf, np, rng, size):
    x = varied(np, rng, (elements(size, 1e6),))
    return Built([x], lambda x: tf.reduce_sum(x), differentiable=[0])


@case("reduce-mean")
def _reduce_mean(tf, np, rng, size):
    x = varied(np, rng, (elements(size, 1e3), 1000))
    return Built([x], lambda x: tf.reduce_mean(x, axis=0), differentiable=[0])


@case("argmax-ties", passes=("forward",))
def _argmax(tf, np, rng, size):
    x = rng.randint(0, 3, (elements(size, 1e3), 1000)).astype(np.float32)  # many ties
    return Built([x], lambda x: tf.argmax(x, axis=1))


@case("matmul")
def _matmul(tf, np, rng, size):
    n = elements(size, 512)
    a = varied(np, rng, (n, 512))
    b = varied(np, rng, (512, 512))
    return Built([a, b], lambda a, b: tf.matmul(a, b), differentiable=[0, 1])
