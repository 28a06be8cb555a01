"""Probe cases for catalogued ops (see cases.py for the contract).

Each builder is keyed by the catalogue id it exercises. Shapes are chosen so
the default size gives 1e5..1e6 elements, enough for TF's CPU kernels to
shard work across threads.
"""

from .case_registry import Built, case, elements, varied


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


@case("gather-backprop")
def _gather(tf, np, rng, size):
    rows = elements(size, 2e4)
    params = varied(np, rng, (rows, 32))
    ids = rng.randint(0, rows // 10, size=rows).astype(np.int32)  # many repeats
    return Built([params, ids], lambda p, i: tf.gather(p, i), differentiable=[0])


@case("convert-to-tensor-indexed-slices")
def _indexed_slices(tf, np, rng, size):
    rows = elements(size, 2e4)
    values = varied(np, rng, (rows, 32))
    indices = rng.randint(0, rows // 10, size=rows).astype(np.int32)

    def densify(v, i):
        return tf.convert_to_tensor(tf.IndexedSlices(v, i, tf.constant([rows // 10, 32])))
    return Built([values, indices], densify)


# -- bias, convolution, pooling ----------------------------------------------

@case("bias-add-backprop")
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


@case("depthwise-conv-backprop-filter")
def _depthwise(tf, np, rng, size):
    batch = elements(size, 16)
    x = varied(np, rng, (batch, 64, 64, 8))
    f = varied(np, rng, (3, 3, 8, 2))
    return Built([x, f], lambda x, f: tf.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "SAME"), differentiable=[1])


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


def _crop_and_resize(differentiable):
    def build(tf, np, rng, size):
        batch = 4
        boxes_n = elements(size, 2000)
        images = varied(np, rng, (batch, 64, 64, 4))
        corners = rng.uniform(0, 1, (boxes_n, 2, 2))
        boxes = np.concatenate([corners.min(axis=1), corners.max(axis=1)], axis=1).astype(np.float32)
        box_ind = rng.randint(0, batch, boxes_n).astype(np.int32)
        return Built([images, boxes, box_ind],
                     lambda im, bx, bi: tf.image.crop_and_resize(im, bx, bi, [8, 8]), differentiable=differentiable)
    return build


case("crop-and-resize-backprop-image")(_crop_and_resize([0]))  # CropAndResizeGradImage
case("crop-and-resize-backprop-boxes")(_crop_and_resize([1]))  # CropAndResizeGradBoxes


@case("adjust-contrast")
def _adjust_contrast(tf, np, rng, size):
    images = varied(np, rng, (elements(size, 64), 64, 64, 3))
    return Built([images], lambda x: tf.image.adjust_contrast(x, 1.7))


# -- counting, sparse, scatter -------------------------------------------------

# Weighted bincount on CPU splits its input into 8 shards over the intra-op pool
# and gives each thread its own partial histogram; the calling thread always takes
# the first shard, the pool threads share the other seven as they come free, and
# the partials are summed in a fixed order. The result changes only when both pool
# threads take part and split the shards differently. With short shards (1e6
# elements in all) one pool thread often does everything, especially on a busy
# machine, and the result repeats: the default 10-run probe missed it about half
# the time. With 8e6 elements (1e6 per shard, a few ms) both pool threads join even
# with two other busy processes on two cores: about half the runs differ.
def _bincount_inputs(np, rng, size):
    """8e6 ids and weights, the same for the four bincount cases; drawn once per
    worker (half a second of numpy each time) and shared, read-only (tf.constant
    copies them), leaving `rng` where drawing them would."""
    state = rng.get_state()  # ("MT19937", keys, position, has_gauss, cached_gaussian)
    key = (size, state[1].tobytes()) + tuple(state[2:])
    if _BINCOUNT_INPUTS.get("key") != key:
        n = elements(size, 8e6)
        drawn = rng.randint(0, 1000, n).astype(np.int32), varied(np, rng, (n,))
        _BINCOUNT_INPUTS.update(key=key, inputs=drawn, state=rng.get_state())
    rng.set_state(_BINCOUNT_INPUTS["state"])
    return _BINCOUNT_INPUTS["inputs"]


_BINCOUNT_INPUTS = {}  # the last inputs drawn: key (size, rng state before), inputs, rng state after


@case("bincount")
def _bincount(tf, np, rng, size):
    values, weights = _bincount_inputs(np, rng, size)
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

@case("softmax-xent")
def _softmax_xent(tf, np, rng, size):
    batch = elements(size, 2000)
    logits = varied(np, rng, (batch, 100))
    labels = rng.dirichlet(np.ones(100), batch).astype(np.float32)
    return Built([labels, logits], lambda y, z: tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=z),
                 differentiable=[1])


@case("sparse-softmax-xent")
def _sparse_softmax_xent(tf, np, rng, size):
    batch = elements(size, 2000)
    logits = varied(np, rng, (batch, 100))
    labels = rng.randint(0, 100, batch).astype(np.int32)
    return Built([labels, logits], lambda y, z: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=z),
                 differentiable=[1])


# -- numerics ------------------------------------------------------------------

@case("reduce-sum-mean-gpu")
def _reduce_sum_mean(tf, np, rng, size):
    x = varied(np, rng, (elements(size, 1e3), 1000))
    return Built([x], lambda x: tf.concat([tf.reshape(tf.reduce_sum(x), [1]), tf.reduce_mean(x, axis=0)], 0))


def _arg_ties(op_name):
    def build(tf, np, rng, size):
        x = rng.randint(0, 3, (elements(size, 1e3), 1000)).astype(np.float32)  # many ties
        op = getattr(tf.math, op_name)
        return Built([x], lambda x: op(x, axis=1))
    return build


case("argmax-ties")(_arg_ties("argmax"))
case("argmin-ties")(_arg_ties("argmin"))


@case("onednn-cpu-numerics")
def _onednn(tf, np, rng, size):
    """matmul and conv2d, the kernels oneDNN replaces (TF_ENABLE_ONEDNN_OPTS)."""
    n = elements(size, 256)
    a = varied(np, rng, (n, 256))
    b = varied(np, rng, (256, 256))
    x = varied(np, rng, (max(1, n // 64), 32, 32, 8))
    f = varied(np, rng, (3, 3, 8, 16))

    def fn(a, b, x, f):
        y = tf.reshape(tf.nn.conv2d(x, f, [1, 1, 1, 1], "SAME"), [-1])
        return tf.concat([tf.reshape(tf.linalg.matmul(a, b), [-1]), y], 0)
    return Built([a, b, x, f], fn, differentiable=[0, 1, 2, 3])


# -- more convolution and pooling ----------------------------------------------

@case("conv2d-transpose")
def _conv2d_transpose(tf, np, rng, size):
    batch = elements(size, 8)
    x = varied(np, rng, (batch, 32, 32, 16))
    f = varied(np, rng, (3, 3, 8, 16))  # [h, w, out, in]
    out = [batch, 64, 64, 8]
    return Built([x, f], lambda x, f: tf.nn.conv2d_transpose(x, f, out, [1, 2, 2, 1], "SAME"), differentiable=[0, 1])


@case("conv3d-transpose")
def _conv3d_transpose(tf, np, rng, size):
    batch = elements(size, 4)
    x = varied(np, rng, (batch, 8, 8, 8, 16))
    f = varied(np, rng, (3, 3, 3, 8, 16))
    out = [batch, 16, 16, 16, 8]
    return Built([x, f], lambda x, f: tf.nn.conv3d_transpose(x, f, out, [1, 2, 2, 2, 1], "SAME"),
                 differentiable=[0, 1])


@case("max-pool3d-backprop")
def _max_pool3d(tf, np, rng, size):
    batch = elements(size, 8)
    x = varied(np, rng, (batch, 16, 16, 16, 8))
    return Built([x], lambda x: tf.nn.max_pool3d(x, [1, 3, 3, 3, 1], [1, 2, 2, 2, 1], "SAME"), differentiable=[0])


@case("max-pool-with-argmax-backprop")
def _max_pool_argmax(tf, np, rng, size):
    batch = elements(size, 32)
    x = varied(np, rng, (batch, 64, 64, 8))
    # 3x3 windows with stride 2 overlap: the gradient (MaxPoolGradWithArgmax) adds into shared inputs.
    return Built([x], lambda x: tf.nn.max_pool_with_argmax(x, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")[0],
                 differentiable=[0])


def _dilation(differentiable):
    def build(tf, np, rng, size):
        batch = elements(size, 16)
        x = varied(np, rng, (batch, 32, 32, 8))
        f = varied(np, rng, (3, 3, 8))
        return Built([x, f], lambda x, f: tf.compat.v1.nn.dilation2d(
            x, filter=f, strides=[1, 1, 1, 1], rates=[1, 1, 1, 1], padding="SAME"), differentiable=differentiable)
    return build


case("dilation2d-backprop-input")(_dilation([0]))  # Dilation2DBackpropInput
case("dilation2d-backprop-filter")(_dilation([1]))  # Dilation2DBackpropFilter


@case("fused-batch-norm-inference-backprop")
def _fused_batch_norm(tf, np, rng, size):
    batch = elements(size, 32)
    x = varied(np, rng, (batch, 32, 32, 16))
    scale = rng.uniform(0.5, 2, 16).astype(np.float32)
    offset = varied(np, rng, (16,))
    mean = varied(np, rng, (16,))
    variance = rng.uniform(0.5, 2, 16).astype(np.float32)

    def fn(x, scale, offset, mean, variance):
        # Inference mode: running statistics frozen, offset (and scale, input) still differentiated.
        return tf.compat.v1.nn.fused_batch_norm(x, scale, offset, mean=mean, variance=variance, is_training=False)[0]
    return Built([x, scale, offset, mean, variance], fn, differentiable=[0, 1, 2])


# -- more losses -----------------------------------------------------------------

@case("softmax-xent-raw-op")
def _softmax_xent_raw(tf, np, rng, size):
    batch = elements(size, 2000)
    logits = varied(np, rng, (batch, 100))
    labels = rng.dirichlet(np.ones(100), batch).astype(np.float32)
    return Built([labels, logits],
                 lambda y, z: tf.raw_ops.SoftmaxCrossEntropyWithLogits(features=z, labels=y)[0], differentiable=[1])


@case("sparse-softmax-xent-raw-op")
def _sparse_softmax_xent_raw(tf, np, rng, size):
    batch = elements(size, 2000)
    logits = varied(np, rng, (batch, 100))
    labels = rng.randint(0, 100, batch).astype(np.int32)
    return Built([labels, logits],
                 lambda y, z: tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits(features=z, labels=y)[0],
                 differentiable=[1])


@case("ctc-loss-backprop")
def _ctc_loss(tf, np, rng, size):
    batch, steps, classes, label_len = elements(size, 32), 50, 30, 10
    logits = (3.0 * rng.standard_normal((steps, batch, classes))).astype(np.float32)  # time major
    labels = rng.randint(1, classes, (batch, label_len)).astype(np.int32)  # blank is class 0
    label_length = np.full((batch,), label_len, np.int32)
    logit_length = np.full((batch,), steps, np.int32)

    def fn(logits, labels, label_length, logit_length):
        return tf.compat.v1.nn.ctc_loss_v2(labels, logits, label_length, logit_length, logits_time_major=True,
                                           blank_index=0)
    return Built([logits, labels, label_length, logit_length], fn, differentiable=[0])


# -- random numbers ----------------------------------------------------------------
# These take a dummy input (the contract runs fn on tensors) and draw fresh numbers
# each call. Under op determinism (2.7+) the unseeded APIs raise: that is the result.

def _dummy(np):
    return np.zeros((1,), np.float32)


@case("unseeded-random-ops")
def _unseeded_random(tf, np, rng, size):
    n = elements(size, 1e5)

    def fn(_):
        parts = [tf.random.normal([n]), tf.random.uniform([n]), tf.random.truncated_normal([n]),
                 tf.random.shuffle(tf.range(n, dtype=tf.float32)),
                 tf.nn.dropout(tf.ones([n]), rate=0.5)]
        return tf.concat(parts, 0)
    return Built([_dummy(np)], fn)


@case("unseeded-random-raw-ops")
def _unseeded_random_raw(tf, np, rng, size):
    n = elements(size, 1e5)

    def fn(_):
        shape = tf.constant([n])
        parts = [tf.raw_ops.RandomStandardNormal(shape=shape, dtype=tf.float32),
                 tf.raw_ops.RandomUniform(shape=shape, dtype=tf.float32),
                 tf.cast(tf.raw_ops.RandomUniformInt(shape=shape, minval=0, maxval=1000), tf.float32)]
        return tf.concat(parts, 0)
    return Built([_dummy(np)], fn)


@case("random-generator-non-deterministic-state", min_tf=(2, 3))
def _generator_nondeterministic(tf, np, rng, size):
    n = elements(size, 1e5)

    def draw(_):  # a fresh generator each call, as a program starting up would make
        return tf.random.Generator.from_non_deterministic_state().normal([n])
    return Built([_dummy(np)], lambda x: tf.py_function(draw, [x], tf.float32))


@case("random-global-generator-unset", min_tf=(2, 3))
def _global_generator(tf, np, rng, size):
    n = elements(size, 1e5)

    def draw(_):  # set_global_generator is never called: the first call creates it unseeded
        return tf.random.get_global_generator().normal([n])
    return Built([_dummy(np)], lambda x: tf.py_function(draw, [x], tf.float32))


@case("non-deterministic-ints", min_tf=(2, 3))
def _non_deterministic_ints(tf, np, rng, size):
    n = elements(size, 1e5)
    return Built([_dummy(np)], lambda _: tf.raw_ops.NonDeterministicInts(shape=tf.constant([n]), dtype=tf.int64))


def _box_inputs(np, rng):
    corners = rng.uniform(0, 1, (1, 8, 2, 2))
    boxes = np.concatenate([corners.min(axis=2), corners.max(axis=2)], axis=2).astype(np.float32)
    return np.array([480, 640, 3], np.int32), boxes


@case("sample-distorted-bounding-box", min_tf=(2, 0))
def _sample_box(tf, np, rng, size):
    image_size, boxes = _box_inputs(np, rng)

    def fn(s, b):  # seed=0, the default: a fresh seed for each op
        return tf.concat([tf.image.sample_distorted_bounding_box(s, b, seed=0, min_object_covered=0.1)[2]
                          for _ in range(16)], 0)
    return Built([image_size, boxes], fn)


@case("sample-distorted-bounding-box-v1")
def _sample_box_v1(tf, np, rng, size):
    image_size, boxes = _box_inputs(np, rng)

    def fn(s, b):
        return tf.concat([tf.compat.v1.image.sample_distorted_bounding_box(
            s, b, seed=0, seed2=0, min_object_covered=0.1)[2] for _ in range(16)], 0)
    return Built([image_size, boxes], fn)


@case("fractional-max-pool", min_tf=(2, 0))
def _fractional_max_pool(tf, np, rng, size):
    x = varied(np, rng, (elements(size, 16), 64, 64, 8))
    return Built([x], lambda x: tf.nn.fractional_max_pool(x, [1.0, 1.44, 1.73, 1.0], seed=0)[0])


@case("fractional-max-pool-v1")
def _fractional_max_pool_v1(tf, np, rng, size):
    x = varied(np, rng, (elements(size, 16), 64, 64, 8))
    return Built([x], lambda x: tf.compat.v1.nn.fractional_max_pool(
        x, [1.0, 1.44, 1.73, 1.0], deterministic=False, seed=0, seed2=0)[0])


@case("fractional-avg-pool", min_tf=(2, 0))
def _fractional_avg_pool(tf, np, rng, size):
    x = varied(np, rng, (elements(size, 16), 64, 64, 8))
    return Built([x], lambda x: tf.nn.fractional_avg_pool(x, [1.0, 1.44, 1.73, 1.0], seed=0)[0])


@case("stateless-random-image-ops", min_tf=(2, 4))
def _stateless_image(tf, np, rng, size):
    images = rng.uniform(0, 1, (elements(size, 8), 64, 64, 3)).astype(np.float32)

    def fn(x):
        seed = tf.constant([1, 2], tf.int32)
        parts = [tf.image.stateless_random_brightness(x, 0.2, seed),
                 tf.image.stateless_random_contrast(x, 0.5, 1.5, seed),
                 tf.image.stateless_random_flip_left_right(x, seed),
                 tf.image.stateless_random_saturation(x, 0.5, 1.5, seed),
                 tf.image.stateless_random_hue(x, 0.2, seed),
                 tf.image.stateless_random_crop(x, [tf.shape(x)[0], 48, 48, 3], seed)]
        box = tf.image.stateless_sample_distorted_bounding_box(
            [64, 64, 3], tf.constant([[[0.1, 0.1, 0.9, 0.9]]]), seed, min_object_covered=0.1)[2]
        return tf.concat([tf.reshape(p, [-1]) for p in parts + [box]], 0)
    return Built([images], fn)


@case("keras-unseeded-rng", min_tf=(2, 0))
def _keras_unseeded_initializers(tf, np, rng, size):
    n = elements(size, 256)

    def draw(_):  # fresh, unseeded initializers each call, as a new model would get
        inits = [tf.keras.initializers.GlorotUniform(), tf.keras.initializers.GlorotNormal(),
                 tf.keras.initializers.RandomNormal(), tf.keras.initializers.TruncatedNormal()]
        return tf.concat([tf.reshape(tf.cast(init((n, 256)), tf.float32), [-1]) for init in inits], 0)
    # py_function: Keras objects are built in Python, as in a user's program
    return Built([_dummy(np)], lambda x: tf.py_function(draw, [x], tf.float32))


@case("keras-unseeded-dropout", min_tf=(2, 0))
def _keras_unseeded_dropout(tf, np, rng, size):
    n = elements(size, 256)

    def draw(_):
        ones = tf.ones((n, 256))
        layers = [tf.keras.layers.Dropout(0.5), tf.keras.layers.GaussianNoise(0.5)]
        return tf.concat([tf.reshape(tf.cast(layer(ones, training=True), tf.float32), [-1]) for layer in layers], 0)
    return Built([_dummy(np)], lambda x: tf.py_function(draw, [x], tf.float32))


def _random_layer(tf, name):
    """tf.keras.layers.NAME, or its experimental.preprocessing home before 2.6."""
    found = getattr(tf.keras.layers, name, None)
    return found or getattr(tf.keras.layers.experimental.preprocessing, name)


@case("keras-unseeded-random-layers", min_tf=(2, 3))
def _keras_unseeded_random_layers(tf, np, rng, size):
    batch = max(2, elements(size, 16))
    images = np.arange(batch * 16 * 16 * 3, dtype=np.float32).reshape(batch, 16, 16, 3)

    def draw(x):
        layers = [_random_layer(tf, "RandomFlip")("horizontal"), _random_layer(tf, "RandomCrop")(8, 8),
                  _random_layer(tf, "RandomTranslation")(0.2, 0.2)]
        return tf.concat([tf.reshape(tf.cast(layer(x, training=True), tf.float32), [-1]) for layer in layers], 0)
    return Built([images], lambda x: tf.py_function(draw, [x], tf.float32))


# -- sparse and variable updates ---------------------------------------------------

@case("sparse-segment-reductions")
def _sparse_segment(tf, np, rng, size):
    n = elements(size, 2e5)
    rows = max(1, n // 10)
    data = varied(np, rng, (rows, 8))
    indices = rng.randint(0, rows, n).astype(np.int32)
    segment_ids = np.sort(rng.randint(0, max(1, n // 100), n)).astype(np.int32)

    def fn(d, i, s):
        parts = [tf.sparse.segment_sum(d, i, s), tf.sparse.segment_mean(d, i, s), tf.sparse.segment_sqrt_n(d, i, s)]
        return tf.concat([tf.reshape(p, [-1]) for p in parts], 0)
    return Built([data, indices, segment_ids], fn)


@case("gather-nd-backprop")
def _gather_nd(tf, np, rng, size):
    rows = elements(size, 2e4)
    params = varied(np, rng, (rows, 32))
    ids = rng.randint(0, rows // 10, size=(rows, 1)).astype(np.int32)  # many repeats
    return Built([params, ids], lambda p, i: tf.gather_nd(p, i), differentiable=[0])


def _variable_scatter_inputs(np, rng, size):
    n = elements(size, 2e5)
    rows = max(1, n // 50)
    indices = rng.randint(0, rows, n).astype(np.int32)  # duplicates on purpose
    return rows, indices, varied(np, rng, (n, 8)), varied(np, rng, (rows, 8))


@case("scatter-nd-update-variable")
def _scatter_nd_update_variable(tf, np, rng, size):
    rows, indices, updates, base = _variable_scatter_inputs(np, rng, size)
    var = tf.Variable(np.zeros_like(base))

    def fn(b, i, u):  # duplicate indices: which update lands last decides the value
        var.assign(b)
        var.scatter_nd_update(tf.expand_dims(i, 1), u)
        return var.read_value()
    return Built([base, indices, updates], fn)


@case("resource-variable-scatter")
def _resource_variable_scatter(tf, np, rng, size):
    rows, indices, updates, base = _variable_scatter_inputs(np, rng, size)
    factors = (1.0 + 0.01 * rng.standard_normal(updates.shape)).astype(np.float32)
    added = tf.Variable(np.zeros_like(base))
    multiplied = tf.Variable(np.zeros_like(base))

    def fn(b, i, u, m):
        added.assign(b)
        added.scatter_add(tf.IndexedSlices(u, i))
        added.scatter_sub(tf.IndexedSlices(u[::-1], i))
        multiplied.assign(b)
        multiplied.scatter_mul(tf.IndexedSlices(m, i))
        return tf.concat([added.read_value(), multiplied.read_value()], 0)
    return Built([base, indices, updates, factors], fn)


@case("ref-variable-scatter")
def _ref_variable_scatter(tf, np, rng, size):
    """tf.compat.v1.scatter_* on a RefVariable in a TF1 graph, run through a Session."""
    rows, indices, updates, base = _variable_scatter_inputs(np, rng, size)
    graph = tf.Graph()
    with graph.as_default():
        var = tf.compat.v1.Variable(base, use_resource=False)
        i_in = tf.compat.v1.placeholder(tf.int32, indices.shape)
        u_in = tf.compat.v1.placeholder(tf.float32, updates.shape)
        add = tf.compat.v1.scatter_add(var, i_in, u_in)
        with tf.control_dependencies([add]):
            sub = tf.compat.v1.scatter_sub(var, i_in, u_in[::-1])
        init = var.initializer
    session = tf.compat.v1.Session(graph=graph)

    def run(i, u):
        session.run(init)
        return session.run(sub, {i_in: i.numpy(), u_in: u.numpy()})
    return Built([indices, updates], lambda i, u: tf.py_function(run, [i, u], tf.float32))


@case("dense-bincount", min_tf=(2, 3))
def _dense_bincount(tf, np, rng, size):
    values, weights = _bincount_inputs(np, rng, size)  # the same kernel as bincount above, so the same size
    return Built([values, weights], lambda v, w: tf.raw_ops.DenseBincount(
        input=v, size=tf.constant(1000), weights=w, binary_output=False))


@case("sparse-bincount", min_tf=(2, 3))
def _sparse_bincount(tf, np, rng, size):
    # A 1-D SparseTensor reaches the same sharded CPU functor as DenseBincount
    # (bincount_op.cc, SparseBincountOp), so the same size.
    values, weights = _bincount_inputs(np, rng, size)

    def count(v, w):
        n = tf.shape(v, out_type=tf.int64)
        indices = tf.reshape(tf.range(n[0]), [-1, 1])
        return tf.raw_ops.SparseBincount(indices=indices, values=v, dense_shape=n, size=tf.constant(1000),
                                         weights=w, binary_output=False)
    return Built([values, weights], count)


@case("count-sparse-output", min_tf=(2, 3))
def _count_sparse_output(tf, np, rng, size):
    # tf.sparse.bincount on a dense tensor, the op keras.ops.bincount(sparse=True) builds
    values, weights = _bincount_inputs(np, rng, size)
    return Built([values, weights], lambda v, w: tf.sparse.to_dense(
        tf.sparse.bincount(v, weights=w, minlength=1000, axis=0)))


# -- debugging, quantisation, linear algebra ---------------------------------------

def _with_specials(np, rng, shape):
    x = varied(np, rng, shape)
    flat = x.reshape(-1)
    picks = rng.randint(0, flat.size, (3, max(1, flat.size // 1000)))
    flat[picks[0]], flat[picks[1]], flat[picks[2]] = np.inf, -np.inf, np.nan
    flat[rng.randint(0, flat.size, max(1, flat.size // 100))] = 0.0
    return x


def _debug_summary_v2(mode):
    def build(tf, np, rng, size):
        x = _with_specials(np, rng, (elements(size, 1e6),))
        return Built([x], lambda x: tf.raw_ops.DebugNumericSummaryV2(
            input=x, output_dtype=tf.float32, tensor_debug_mode=mode, tensor_id=7))
    return build


case("debug-numeric-summary-v2-concise-health", min_tf=(2, 3))(_debug_summary_v2(3))
case("debug-numeric-summary-v2-full-health", min_tf=(2, 3))(_debug_summary_v2(4))


# tf.raw_ops has no DebugNumericSummary before 2.1 (AttributeError in 1.15 and 2.0).
@case("debug-numeric-summary-v1", min_tf=(2, 1))
def _debug_summary_v1(tf, np, rng, size):
    x = _with_specials(np, rng, (elements(size, 1e6),))
    return Built([x], lambda x: tf.raw_ops.DebugNumericSummary(input=x, tensor_name="probe_input:0"))


@case("fake-quant-vars-gradient")
def _fake_quant(tf, np, rng, size):
    x = (4.0 * rng.standard_normal(elements(size, 1e6))).astype(np.float32)  # many values clamp to min or max
    lo, hi = np.array(-2.5, np.float32), np.array(3.0, np.float32)
    return Built([x, lo, hi], lambda x, lo, hi: tf.quantization.fake_quant_with_min_max_vars(x, lo, hi, num_bits=8),
                 differentiable=[0, 1, 2])


@case("fake-quant-vars-per-channel-gradient")
def _fake_quant_per_channel(tf, np, rng, size):
    channels = 16
    x = (4.0 * rng.standard_normal((elements(size, 6e4), channels))).astype(np.float32)
    lo = rng.uniform(-3, -1, channels).astype(np.float32)
    hi = rng.uniform(1, 3, channels).astype(np.float32)
    return Built([x, lo, hi], lambda x, lo, hi: tf.quantization.fake_quant_with_min_max_vars_per_channel(
        x, lo, hi, num_bits=8), differentiable=[0, 1, 2])


@case("svd-one-column")
def _svd_one_column(tf, np, rng, size):
    x = varied(np, rng, (elements(size, 1000), 256, 1))  # matrices with a single column

    def fn(x):
        s, u, v = tf.linalg.svd(x, full_matrices=False, compute_uv=True)
        return tf.concat([tf.reshape(s, [-1]), tf.reshape(u, [-1]), tf.reshape(v, [-1])], 0)
    return Built([x], fn)
