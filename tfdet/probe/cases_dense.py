"""The dense ops users' models are made of, as cases for `tfdet probe --vary`.

Beside the catalogue's cases (cases_ops.py): these ops are deterministic run
to run on a CPU, so the catalogue has no entry for most of them; what --vary
asks is whether their bits change with a setting (oneDNN, threads, tf.function,
XLA, the batch a row sits in, the replica count). Each case names the public
APIs and raw ops it stands for, so `tfdet catalog update` can file its facts
under names a user looks up.

Runs inside the vary worker: standard library, numpy and TensorFlow only,
Python 3.7 syntax. A builder gets (tf, np, rng) and returns a Dense: fixed
numpy inputs, a function of tensors, and, for a gradient case, which inputs
(and Keras layer weights) to differentiate with a fixed random upstream gradient.
"""

DENSE_CASES = {}


class DenseCase(object):
    def __init__(self, case_id, builder, title, names, gradient, batched, replicas, keras):
        self.id = case_id
        self.builder = builder
        self.title = title
        self.names = tuple(names)
        self.gradient = gradient  # the case is a gradient (else a forward pass)
        # The inputs with a batch dimension (axis 0): a forward case's row 0 can run
        # alone (the `batch` setting); a replicas case splits them across replicas.
        self.batched = (0,) if batched is True else tuple(batched or ())
        self.replicas = replicas  # a gradient over a global batch that MirroredStrategy can split
        self.keras = keras  # built from a Keras layer (its weights are differentiated too)


def dense_case(case_id, title, names=(), gradient=False, batched=False, replicas=False, keras=False):
    def register(builder):
        if case_id in DENSE_CASES:
            raise ValueError("vary case %r registered twice" % case_id)
        DENSE_CASES[case_id] = DenseCase(case_id, builder, title, names, gradient, batched, replicas, keras)
        return builder
    return register


class Dense(object):
    """inputs: numpy arrays (input 0 carries the batch when the case is batched);
    fn: a function of their tensors; wrt: inputs a gradient case differentiates;
    layer: a Keras layer whose trainable weights it differentiates too."""

    def __init__(self, inputs, fn, wrt=(), layer=None):
        self.inputs = list(inputs)
        self.fn = fn
        self.wrt = tuple(wrt)
        self.layer = layer


def normal(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype("float32")


def wide(rng, shape):
    """Values of both signs over six orders of magnitude: a changed summation order shows."""
    return (rng.standard_normal(shape) * 10.0 ** rng.uniform(-3, 3, shape)).astype("float32")


def _keras(tf):
    return tf.keras


def _set_weights(layer, rng, shape):
    """Build a Keras layer for `shape` and give it weights drawn from rng (not its initialisers:
    the same bits in every process whatever Keras seeds)."""
    layer.build(shape)
    layer.set_weights([normal(rng, w.shape, 0.2) for w in layer.get_weights()])
    return layer


# --- linear algebra -----------------------------------------------------------

@dense_case("matmul", "MatMul 256x1024 . 1024x256", ("tf.linalg.matmul", "tf.matmul", "MatMul"), batched=True)
def _matmul(tf, np, rng):
    return Dense([normal(rng, (256, 1024)), normal(rng, (1024, 256))], lambda a, b: tf.linalg.matmul(a, b))


@dense_case("matmul-grad", "MatMul gradients (both operands)", (), gradient=True)
def _matmul_grad(tf, np, rng):
    return Dense([normal(rng, (128, 512)), normal(rng, (512, 128))], lambda a, b: tf.linalg.matmul(a, b), wrt=(0, 1))


@dense_case("batch-matmul", "BatchMatMul 16 x (64x128 . 128x64)", ("BatchMatMulV2", "BatchMatMulV3"),
            batched=(0, 1))
def _batch_matmul(tf, np, rng):
    return Dense([normal(rng, (16, 64, 128)), normal(rng, (16, 128, 64))], lambda a, b: tf.linalg.matmul(a, b))


@dense_case("einsum", "einsum bij,jk->bik", ("tf.einsum", "Einsum"), batched=True)
def _einsum(tf, np, rng):
    return Dense([normal(rng, (32, 64, 256)), normal(rng, (256, 128))], lambda a, b: tf.einsum("bij,jk->bik", a, b))


@dense_case("dense", "Dense layer forward (x.W + b, relu)", ("tf.keras.layers.Dense",), batched=True)
def _dense(tf, np, rng):
    return Dense([normal(rng, (64, 512)), normal(rng, (512, 256), 0.05), normal(rng, (256,))],
                 lambda x, w, b: tf.nn.relu(tf.matmul(x, w) + b))


@dense_case("dense-grad", "Dense layer gradients (W, b)", ("BiasAddGrad",), gradient=True,
            batched=True, replicas=True)
def _dense_grad(tf, np, rng):
    return Dense([normal(rng, (48, 512)), normal(rng, (512, 256), 0.05), normal(rng, (256,))],
                 lambda x, w, b: tf.nn.relu(tf.matmul(x, w) + b), wrt=(1, 2))


@dense_case("mlp-grad", "2-layer MLP gradients (all weights)", (), gradient=True, batched=True, replicas=True)
def _mlp_grad(tf, np, rng):
    def mlp(x, w1, b1, w2, b2):
        return tf.matmul(tf.nn.relu(tf.matmul(x, w1) + b1), w2) + b2
    return Dense([normal(rng, (48, 256)), normal(rng, (256, 512), 0.06), normal(rng, (512,), 0.1),
                  normal(rng, (512, 10), 0.05), normal(rng, (10,), 0.1)], mlp, wrt=(1, 2, 3, 4))


# --- convolution and pooling ---------------------------------------------------

def _images(rng):
    return normal(rng, (8, 32, 32, 16)), normal(rng, (3, 3, 16, 32), 0.1)


@dense_case("conv2d", "Conv2D 8x32x32x16, 3x3x16x32", ("tf.nn.conv2d", "tf.keras.layers.Conv2D", "Conv2D"), batched=True)
def _conv2d(tf, np, rng):
    x, f = _images(rng)
    return Dense([x, f], lambda x, f: tf.nn.conv2d(x, f, 1, "SAME"))


@dense_case("conv2d-input-grad", "Conv2D gradient w.r.t. its input", ("Conv2DBackpropInput",), gradient=True)
def _conv2d_input_grad(tf, np, rng):
    x, f = _images(rng)
    return Dense([x, f], lambda x, f: tf.nn.conv2d(x, f, 1, "SAME"), wrt=(0,))


@dense_case("conv2d-filter-grad", "Conv2D gradient w.r.t. its filter", ("Conv2DBackpropFilter",), gradient=True,
            batched=True, replicas=True)
def _conv2d_filter_grad(tf, np, rng):
    return Dense([normal(rng, (12, 16, 16, 16)), normal(rng, (3, 3, 16, 32), 0.1)],
                 lambda x, f: tf.nn.conv2d(x, f, 1, "SAME"), wrt=(1,))


@dense_case("depthwise-conv2d", "DepthwiseConv2D 8x32x32x16, 3x3", ("tf.nn.depthwise_conv2d", "DepthwiseConv2dNative"),
            batched=True)
def _depthwise(tf, np, rng):
    return Dense([normal(rng, (8, 32, 32, 16)), normal(rng, (3, 3, 16, 2), 0.2)],
                 lambda x, f: tf.nn.depthwise_conv2d(x, f, [1, 1, 1, 1], "SAME"))


@dense_case("conv1d", "Conv1D 16x256x64, width 5 to 64", ("tf.nn.conv1d", "tf.keras.layers.Conv1D"), batched=True)
def _conv1d(tf, np, rng):
    return Dense([normal(rng, (16, 256, 64)), normal(rng, (5, 64, 64), 0.1)],
                 lambda x, f: tf.nn.conv1d(x, f, 1, "SAME"))


@dense_case("max-pool", "MaxPool 3x3 stride 2", ("tf.nn.max_pool2d", "MaxPool"), batched=True)
def _max_pool(tf, np, rng):
    return Dense([normal(rng, (8, 64, 64, 16))], lambda x: tf.nn.max_pool2d(x, 3, 2, "SAME"))


@dense_case("avg-pool", "AvgPool 3x3 stride 2", ("tf.nn.avg_pool2d", "AvgPool"), batched=True)
def _avg_pool(tf, np, rng):
    return Dense([wide(rng, (8, 64, 64, 16))], lambda x: tf.nn.avg_pool2d(x, 3, 2, "SAME"))


@dense_case("global-avg-pool", "global average pooling (mean over H, W)", ("tf.keras.layers.GlobalAveragePooling2D",),
            batched=True)
def _global_avg_pool(tf, np, rng):
    return Dense([wide(rng, (8, 32, 32, 64))], lambda x: tf.reduce_mean(x, axis=[1, 2]))


# --- reductions and scans -------------------------------------------------------

@dense_case("reduce-sum", "reduce_sum of 1,000,003 floats", ("tf.math.reduce_sum", "tf.reduce_sum", "Sum"))
def _reduce_sum(tf, np, rng):
    return Dense([wide(rng, (1000003,))], lambda x: tf.reduce_sum(x))


@dense_case("reduce-sum-rows", "reduce_sum over each row (64 x 16384)", (), batched=True)
def _reduce_sum_rows(tf, np, rng):
    return Dense([wide(rng, (64, 16384))], lambda x: tf.reduce_sum(x, axis=1))


@dense_case("reduce-mean", "reduce_mean of 1,000,003 floats", ("tf.math.reduce_mean", "tf.reduce_mean", "Mean"))
def _reduce_mean(tf, np, rng):
    return Dense([wide(rng, (1000003,))], lambda x: tf.reduce_mean(x))


@dense_case("reduce-max", "reduce_max of 1,000,003 floats", ("tf.math.reduce_max", "tf.reduce_max", "Max"))
def _reduce_max(tf, np, rng):
    return Dense([wide(rng, (1000003,))], lambda x: tf.reduce_max(x))


@dense_case("cumsum", "cumsum along rows (64 x 4096)", ("tf.math.cumsum", "tf.cumsum", "Cumsum"), batched=True)
def _cumsum(tf, np, rng):
    return Dense([wide(rng, (64, 4096))], lambda x: tf.cumsum(x, axis=1))


@dense_case("l2-normalize", "l2_normalize rows (64 x 4096)", ("tf.math.l2_normalize", "tf.nn.l2_normalize"),
            batched=True)
def _l2_normalize(tf, np, rng):
    return Dense([wide(rng, (64, 4096))], lambda x: tf.math.l2_normalize(x, axis=1))


# --- softmax and losses -----------------------------------------------------------

def _logits(rng):
    return normal(rng, (64, 1000), 3.0)


@dense_case("softmax", "softmax over 1000 classes", ("tf.nn.softmax", "Softmax"), batched=True)
def _softmax(tf, np, rng):
    return Dense([_logits(rng)], lambda x: tf.nn.softmax(x))


@dense_case("log-softmax", "log_softmax over 1000 classes", ("tf.nn.log_softmax", "LogSoftmax"), batched=True)
def _log_softmax(tf, np, rng):
    return Dense([_logits(rng)], lambda x: tf.nn.log_softmax(x))


def _labels(np, rng):
    p = rng.uniform(0, 1, (64, 1000)).astype("float32")
    return p / p.sum(axis=1, keepdims=True)


@dense_case("softmax-xent", "softmax cross-entropy", ("tf.nn.softmax_cross_entropy_with_logits",
                                                       "SoftmaxCrossEntropyWithLogits"), batched=(0, 1))
def _xent(tf, np, rng):
    return Dense([_logits(rng), _labels(np, rng)],
                 lambda x, y: tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=x))


@dense_case("softmax-xent-grad", "softmax cross-entropy gradient w.r.t. logits",
            (), gradient=True)
def _xent_grad(tf, np, rng):
    return Dense([_logits(rng), _labels(np, rng)],
                 lambda x, y: tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=x), wrt=(0,))


@dense_case("sparse-xent", "sparse softmax cross-entropy", ("tf.nn.sparse_softmax_cross_entropy_with_logits",
                                                             "SparseSoftmaxCrossEntropyWithLogits"), batched=(0, 1))
def _sparse_xent(tf, np, rng):
    return Dense([_logits(rng), rng.randint(0, 1000, (64,)).astype("int32")],
                 lambda x, y: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=x))


# --- normalisation, attention, embeddings, recurrent ---------------------------------

@dense_case("layer-norm", "LayerNormalization (Keras)", ("tf.keras.layers.LayerNormalization",), batched=True,
            keras=True)
def _layer_norm(tf, np, rng):
    layer = _set_weights(_keras(tf).layers.LayerNormalization(), rng, (None, 1024))
    return Dense([wide(rng, (64, 1024))], lambda x: layer(x))


@dense_case("layer-norm-grad", "LayerNormalization gradients (input, gamma, beta)", (), gradient=True, keras=True)
def _layer_norm_grad(tf, np, rng):
    layer = _set_weights(_keras(tf).layers.LayerNormalization(), rng, (None, 1024))
    return Dense([normal(rng, (64, 1024))], lambda x: layer(x), wrt=(0,), layer=layer)


@dense_case("batch-norm-train", "BatchNormalization in training (batch statistics)",
            ("tf.keras.layers.BatchNormalization", "tf.nn.moments"), keras=True)
def _batch_norm(tf, np, rng):
    layer = _set_weights(_keras(tf).layers.BatchNormalization(), rng, (None, 16, 16, 64))
    return Dense([wide(rng, (32, 16, 16, 64))], lambda x: layer(x, training=True))


@dense_case("attention", "MultiHeadAttention, 4 heads (Keras)", ("tf.keras.layers.MultiHeadAttention",), batched=True,
            keras=True)
def _attention(tf, np, rng):
    layer = _keras(tf).layers.MultiHeadAttention(num_heads=4, key_dim=32)
    x = normal(rng, (8, 64, 128))
    layer(tf.constant(x[:1]), tf.constant(x[:1]))  # builds it
    layer.set_weights([normal(rng, w.shape, 0.1) for w in layer.get_weights()])
    return Dense([x], lambda x: layer(x, x))


@dense_case("embedding", "Embedding lookup (gather), 50000x128 table", ("tf.nn.embedding_lookup", "tf.gather",
                                                                        "GatherV2", "ResourceGather"), batched=True)
def _embedding(tf, np, rng):
    return Dense([rng.randint(0, 50000, (64, 32)).astype("int32"), normal(rng, (50000, 128))],
                 lambda ids, table: tf.nn.embedding_lookup(table, ids))


@dense_case("embedding-grad", "Embedding gradient (repeated ids summed into the table)",
            ("UnsortedSegmentSum",), gradient=True, batched=True, replicas=True)
def _embedding_grad(tf, np, rng):
    return Dense([rng.randint(0, 500, (48, 32)).astype("int32"), normal(rng, (500, 64))],
                 lambda ids, table: tf.nn.embedding_lookup(table, ids), wrt=(1,))


def _lstm_step(tf, x, h, c, w, u, b):
    z = tf.matmul(x, w) + tf.matmul(h, u) + b
    i, f, g, o = tf.split(z, 4, axis=1)
    c = tf.sigmoid(f) * c + tf.sigmoid(i) * tf.tanh(g)
    return tf.sigmoid(o) * tf.tanh(c)


@dense_case("lstm-step", "LSTM cell step (as Keras computes it)", ("tf.keras.layers.LSTMCell",), batched=(0, 1, 2))
def _lstm(tf, np, rng):
    units = 256
    return Dense([normal(rng, (64, 128)), normal(rng, (64, units)), normal(rng, (64, units)),
                  normal(rng, (128, 4 * units), 0.1), normal(rng, (units, 4 * units), 0.1), normal(rng, (4 * units,))],
                 lambda x, h, c, w, u, b: _lstm_step(tf, x, h, c, w, u, b))


@dense_case("gru", "GRU layer over 16 steps (Keras)", ("tf.keras.layers.GRU",), batched=True, keras=True)
def _gru(tf, np, rng):
    layer = _set_weights(_keras(tf).layers.GRU(128), rng, (None, 16, 64))
    return Dense([normal(rng, (32, 16, 64))], lambda x: layer(x))


@dense_case("lstm-grad", "LSTM cell step gradients (weights)", (), gradient=True,
            batched=(0, 1, 2), replicas=True)
def _lstm_grad(tf, np, rng):
    units = 128
    return Dense([normal(rng, (48, 64)), normal(rng, (48, units)), normal(rng, (48, units)),
                  normal(rng, (64, 4 * units), 0.1), normal(rng, (units, 4 * units), 0.1), normal(rng, (4 * units,))],
                 lambda x, h, c, w, u, b: _lstm_step(tf, x, h, c, w, u, b), wrt=(3, 4, 5))


# --- elementwise --------------------------------------------------------------------

def _elementwise(case_id, title, names, make):
    @dense_case(case_id, title, names, batched=True)
    def build(tf, np, rng):
        return Dense([normal(rng, (256, 4096), 2.0)], make(tf))
    return build


_elementwise("exp", "exp, 1M elements", ("tf.math.exp", "tf.exp", "Exp"), lambda tf: tf.exp)
_elementwise("tanh", "tanh, 1M elements", ("tf.math.tanh", "tf.tanh", "Tanh"), lambda tf: tf.tanh)
_elementwise("sigmoid", "sigmoid, 1M elements", ("tf.math.sigmoid", "tf.sigmoid", "Sigmoid"), lambda tf: tf.sigmoid)
_elementwise("gelu", "gelu, 1M elements", ("tf.nn.gelu",), lambda tf: tf.nn.gelu)
_elementwise("erf", "erf, 1M elements", ("tf.math.erf", "Erf"), lambda tf: tf.math.erf)


# --- running a case -------------------------------------------------------------------

def combine(np, result):
    """One numpy array from an op's output or a list of gradients (dense, in order)."""
    if isinstance(result, (list, tuple)):
        parts = [np.asarray(r.numpy() if hasattr(r, "numpy") else r).ravel() for r in result if r is not None]
        return np.concatenate(parts) if parts else np.zeros((0,), np.float32)
    return np.asarray(result.numpy() if hasattr(result, "numpy") else result)


def upstream_for(tf, np, built, seed):
    """A fixed random upstream gradient of the case's output shape (the same in every process)."""
    out = built.fn(*[tf.constant(x) for x in built.inputs])
    rng = np.random.RandomState(seed + 7919)
    return normal(rng, tuple(out.shape.as_list()))


def gradient_body(tf, built, upstream):
    """fn's gradients w.r.t. the case's inputs (and layer weights), given the upstream gradient."""
    def body(*xs):
        with tf.GradientTape() as tape:
            for i in built.wrt:
                tape.watch(xs[i])
            y = built.fn(*xs)
        targets = [xs[i] for i in built.wrt] + (list(built.layer.trainable_weights) if built.layer is not None else [])
        grads = tape.gradient(y, targets, output_gradients=upstream)
        return [tf.convert_to_tensor(g) for g in grads if g is not None]
    return body
