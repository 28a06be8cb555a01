"""Probe cases for input-pipeline, runtime and compiler entries (see cases.py
for the contract).

The tf.data cases build their dataset once and iterate it eagerly on every
call (inside tf.py_function, so they also run under the worker's tf.function):
each call makes a new iterator, which applies the dataset options (op
determinism's make_deterministic rewrite among them) and restarts the random
streams, as a new training run would. (get_single_element on a captured
dataset instead continues its stateful random kernels from call to call, which
varies even for a serial, seeded map.)"""

from .case_registry import Built, case, elements, varied


def _dummy(np):
    return np.zeros((1,), np.float32)


def _pipeline_case(tf, np, dataset):
    """fn iterates the dataset in Python and returns its elements concatenated, in order."""
    batched = dataset.batch(256)

    def run(_):
        return tf.concat([tf.reshape(tf.cast(b, tf.float32), [-1]) for b in batched], 0)
    return Built([_dummy(np)], lambda x: tf.py_function(run, [x], tf.float32))


# -- tf.data -------------------------------------------------------------------------

@case("data-stateful-parallel-map")
def _data_stateful_map(tf, np, rng, size):
    count = elements(size, 1000)

    def noisy(i):  # a seeded stateful op: which element gets which draw depends on scheduling
        return tf.cast(i, tf.float32) + tf.random.uniform([64], seed=7)
    return _pipeline_case(tf, np, tf.data.Dataset.range(count).map(noisy, num_parallel_calls=4))


@case("data-nondeterministic-order", min_tf=(2, 2))
def _data_order(tf, np, rng, size):
    count = max(4, elements(size, 160) // 4 * 4)

    def uneven(i):  # uneven work, so elements finish out of order
        work = tf.reduce_sum(tf.cast(tf.range((i % 7) * 2000), tf.float32))
        return tf.stack([tf.cast(i, tf.float32), work])

    def inner(i):
        return tf.data.Dataset.range(i * 4, i * 4 + 4).map(uneven)

    mapped = tf.data.Dataset.range(count).map(uneven, num_parallel_calls=4, deterministic=False)
    interleaved = tf.data.Dataset.range(count // 4).interleave(
        inner, cycle_length=4, num_parallel_calls=4, deterministic=False)
    return _pipeline_case(tf, np, mapped.concatenate(interleaved))


@case("data-unseeded-random")
def _data_unseeded(tf, np, rng, size):
    count = elements(size, 10000)
    # No seed and no global seed: a fresh order each time (raises under op determinism from 2.7).
    return _pipeline_case(tf, np, tf.data.Dataset.range(count).shuffle(count))


# -- runtime -------------------------------------------------------------------------

@case("cpu-multithreading")
def _cpu_multithreading(tf, np, rng, size):
    """Kernels that split one reduction over the intra-op pool (sums, a segment sum, a matmul)."""
    n = elements(size, 1e6)
    x = varied(np, rng, (n,))
    ids = rng.randint(0, 1000, n).astype(np.int32)
    a = varied(np, rng, (64, 4096))

    def fn(x, ids, a):
        return tf.concat([tf.reshape(tf.reduce_sum(x), [1]),
                          tf.reduce_sum(tf.reshape(x, [-1, 1000]), axis=0),
                          tf.math.unsorted_segment_sum(x, ids, 1000),
                          tf.reshape(tf.matmul(a, a, transpose_b=True), [-1])], 0)
    return Built([x, ids, a], fn)


@case("grappler-timeout")
def _grappler_timeout(tf, np, rng, size):
    """A large function graph whose numerics depend on Grappler's rewrites (arithmetic
    optimizer: chains of adds become AddN, constants fold), traced once per process. If
    optimisation stopped early, as it could before 2.6, processes would disagree."""
    n = elements(size, 1e4)
    x = varied(np, rng, (n,))
    terms = 400

    def fn(x):
        total = x
        for k in range(terms):
            total = total + x * float(k % 13 + 1) / 7.0 + tf.constant(float(k)) * 1e-3
        return total
    return Built([x], fn)


@case("while-loop-parallel-iterations")
def _while_loop(tf, np, rng, size):
    """tf.compat.v1.while_loop with parallel_iterations, whose body reads and updates a variable."""
    n = elements(size, 1e4)
    steps = 32
    x = varied(np, rng, (steps, n))
    w = varied(np, rng, (n,))
    state = tf.Variable(np.zeros((n,), np.float32))

    def fn(x, w):
        state.assign(tf.zeros([n]))

        def body(i, acc):
            update = state.assign_add(x[i] * 1e-3)  # stateful op in the body
            return i + 1, acc * 0.5 + x[i] * w + update
        _, acc = tf.compat.v1.while_loop(lambda i, acc: i < steps, body, [tf.constant(0), tf.zeros([n])],
                                         parallel_iterations=16)
        return acc
    return Built([x, w], fn, differentiable=[0, 1])


@case("timestamp")
def _timestamp(tf, np, rng, size):
    # Genuinely different each run; from 2.7 it raises under op determinism.
    return Built([_dummy(np)], lambda x: tf.timestamp() + tf.cast(x[0], tf.float64))


def _session_graph(tf, np, rng, size, body):
    graph = tf.Graph()
    with graph.as_default():
        fetch, init = body()
    session = tf.compat.v1.Session(graph=graph)

    def run(_):
        if init is not None:
            session.run(init)
        return session.run(fetch)
    return Built([_dummy(np)], lambda x: tf.py_function(run, [x], tf.float32))


@case("executor-op-order")
def _executor_op_order(tf, np, rng, size):
    """Many assign_adds on one variable with no control dependency between them, in a
    Session graph: the executor runs them in ready order, and float addition does not
    commute under rounding."""
    n = elements(size, 1e4)
    values = varied(np, rng, (64, n))

    def body():
        var = tf.compat.v1.Variable(np.zeros((n,), np.float32), use_resource=True)
        updates = [var.assign_add(tf.constant(v), read_value=False) for v in values]
        with tf.control_dependencies(updates):
            fetch = tf.identity(var.read_value())
        return fetch, var.initializer
    return _session_graph(tf, np, rng, size, body)


@case("compat-v1-session")
def _compat_v1_session(tf, np, rng, size):
    """A small TF1-style model graph (matmul, bias, reductions) run through a Session, its
    inputs fed through placeholders. (No random ops: a stateful RNG kernel in a long-lived
    Session advances between runs, which says nothing about the Session.)"""
    n = elements(size, 256)
    inputs = [varied(np, rng, (n, 256)), varied(np, rng, (256, 256)), varied(np, rng, (256,)),
              rng.randint(0, 64, n).astype(np.int32)]
    graph = tf.Graph()
    with graph.as_default():
        feeds = [tf.compat.v1.placeholder(tf.as_dtype(x.dtype), x.shape) for x in inputs]
        a, w, b, ids = feeds
        h = tf.nn.bias_add(tf.matmul(a, w), b)
        fetch = tf.concat([tf.reshape(tf.math.unsorted_segment_sum(h, ids, 64), [-1]),
                           tf.reduce_sum(h, axis=0)], 0)
    session = tf.compat.v1.Session(graph=graph)

    def run(*xs):
        return session.run(fetch, dict(zip(feeds, [x.numpy() for x in xs])))
    return Built(inputs, lambda *xs: tf.py_function(run, list(xs), tf.float32))


# -- XLA on the CPU -------------------------------------------------------------------

@case("xla-jit-cpu", min_tf=(2, 5))
def _xla_jit_cpu(tf, np, rng, size):
    n = elements(size, 256)
    a = varied(np, rng, (n, 256))
    w = varied(np, rng, (256, 256))
    ids = rng.randint(0, 64, n).astype(np.int32)

    @tf.function(jit_compile=True)
    def compiled(a, w, ids):
        h = tf.matmul(a, w)
        return tf.concat([tf.reshape(tf.math.unsorted_segment_sum(h, ids, 64), [-1]), tf.reduce_sum(h, axis=0),
                          tf.reshape(tf.tensor_scatter_nd_add(tf.zeros([64, 256]), tf.expand_dims(ids, 1), h), [-1])],
                         0)
    return Built([a, w, ids], compiled, differentiable=[0, 1])
