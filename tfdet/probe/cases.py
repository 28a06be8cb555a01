"""How each catalogue entry is exercised: the probe cases, keyed by catalogue id.

Runs inside the worker: standard library, numpy and TensorFlow only, Python 3.7
syntax, and only TF APIs that exist from 1.14 (or a case says `min_tf`).

A case builder gets (tf, np, rng, size) and returns a Built: fixed numpy inputs
drawn from `rng`, a function of tensors, and which inputs to differentiate. The
forward pass runs the function; the gradient pass injects a fixed random
upstream gradient (output_gradients) and differentiates with respect to each
listed float input. Sizes default to 1e5..1e6 elements, scaled by `size`.
Values span many orders of magnitude, so a change in summation order shows.
"""

import os
import time

CASES = {}


class CaseSpec(object):
    def __init__(self, case_id, builder, passes, min_tf, fixture):
        self.id = case_id
        self.builder = builder
        self.passes = passes
        self.min_tf = min_tf  # (major, minor) or None
        self.fixture = fixture


def case(case_id, passes=("forward", "gradient"), min_tf=None, fixture=False):
    """Register a case builder under a catalogue id (or a test fixture id)."""
    def register(builder):
        if case_id in CASES:
            raise ValueError("probe case %r registered twice" % case_id)
        CASES[case_id] = CaseSpec(case_id, builder, tuple(passes), min_tf, fixture)
        return builder
    return register


def describe_cases():
    """{id: {passes, min_tf, fixture}}: what the runner needs to plan, as JSON."""
    return {
        spec.id: {"passes": list(spec.passes), "min_tf": list(spec.min_tf) if spec.min_tf else None,
                  "fixture": spec.fixture}
        for spec in CASES.values()
    }


class Built(object):
    def __init__(self, inputs, fn, differentiable=()):
        self.inputs = list(inputs)
        self.fn = fn
        self.differentiable = tuple(differentiable)


class Prepared(object):
    """A case ready to run repeatedly: inputs placed, function traced once."""

    def __init__(self, body, tensors, np):
        self.body = body
        self.tensors = tensors
        self.np = np

    def run(self):
        return combine(self.np, self.body(*self.tensors))


def combine(np, result):
    """One numpy array from an op's output or a list of gradients."""
    if isinstance(result, (list, tuple)):
        parts = [np.asarray(_numpy(r)).ravel() for r in result if r is not None]
        if not parts:
            return np.zeros((0,), np.float32)
        dtype = np.result_type(*parts)
        return np.concatenate([p.astype(dtype, copy=False) for p in parts])
    return np.asarray(_numpy(result))


def _numpy(value):
    return value.numpy() if hasattr(value, "numpy") else value


def prepare(tf, np, case_id, pass_name, size, seed, execution):
    spec = CASES[case_id]
    rng = np.random.RandomState(seed)
    built = spec.builder(tf, np, rng, size)
    tensors = [tf.constant(x) for x in built.inputs]
    if pass_name == "forward":
        def body(*xs):
            return built.fn(*xs)
    elif pass_name == "gradient":
        probe = built.fn(*tensors)  # eager, once: the upstream gradient's shape and dtype
        upstream = tf.constant(varied(np, rng, tuple(probe.shape.as_list()), probe.dtype.as_numpy_dtype))

        def body(*xs):
            with tf.GradientTape() as tape:
                for i in built.differentiable:
                    tape.watch(xs[i])
                y = built.fn(*xs)
            grads = tape.gradient(y, [xs[i] for i in built.differentiable], output_gradients=upstream)
            # IndexedSlices (gather's gradient) become dense here, as an optimizer's apply would.
            return [tf.convert_to_tensor(g) if g is not None else None for g in grads]
    else:
        raise ValueError("unknown pass %r" % pass_name)
    if execution == "function":
        body = tf.function(body)
    return Prepared(body, tensors, np)


# -- input helpers -----------------------------------------------------------

def elements(size, base):
    return max(1, int(base * size))


def varied(np, rng, shape, dtype="float32"):
    """Random values of both signs over eight orders of magnitude."""
    values = rng.standard_normal(shape) * 10.0 ** rng.uniform(-4, 4, shape)
    return values.astype(dtype)


# -- test fixtures (not catalogue entries; planned only when asked for) ------

@case("fixture-random-order-sum", passes=("forward",), fixture=True)
def _random_order_sum(tf, np, rng, size):
    """Sums float32 values in a fresh random order each call: varies in every mode."""
    data = varied(np, rng, (elements(size, 1e4),))

    def shuffled_sum(x):
        values = x.numpy()
        order = np.random.RandomState(int.from_bytes(os.urandom(4), "little")).permutation(values.size)
        total = np.float32(0)
        for chunk in np.array_split(values[order], 64):
            total = np.float32(total + chunk.sum(dtype=np.float32))
        return np.array(total, np.float32)

    return Built([data], lambda x: tf.py_function(shuffled_sum, [x], tf.float32))


@case("fixture-fixed-order-sum", passes=("forward",), fixture=True)
def _fixed_order_sum(tf, np, rng, size):
    """The same sum in a fixed order: never varies."""
    data = varied(np, rng, (elements(size, 1e4),))
    return Built([data], lambda x: tf.py_function(lambda v: np.array(v.numpy().sum(dtype=np.float32)), [x], tf.float32))


@case("fixture-rare-variance", passes=("forward",), fixture=True)
def _rare_variance(tf, np, rng, size):
    """Varies rarely: each run, with probability 1/10 (1/2 without TF_DETERMINISTIC_OPS),
    adds its rounding error in a different place. A few runs usually miss it."""
    data = varied(np, rng, (elements(size, 1e3),))
    rate = 0.1 if os.environ.get("TF_DETERMINISTIC_OPS") == "1" else 0.5

    def maybe_reordered(x):
        values = x.numpy()
        if int.from_bytes(os.urandom(4), "little") < rate * 2 ** 32:
            values = values[::-1]
        return np.array(values.cumsum(dtype=np.float32)[-1], np.float32)  # cumsum: strictly in order

    return Built([data], lambda x: tf.py_function(maybe_reordered, [x], tf.float32))


@case("fixture-crash", passes=("forward",), fixture=True)
def _crash(tf, np, rng, size):
    """Kills its process (SIGABRT), as a faulty kernel would."""
    def abort(x):
        os.abort()
    return Built([np.zeros(4, np.float32)], lambda x: tf.py_function(abort, [x], tf.float32))


@case("fixture-hang", passes=("forward",), fixture=True)
def _hang(tf, np, rng, size):
    """Never returns, as a deadlocked kernel would."""
    def hang(x):
        time.sleep(3600)
        return x
    return Built([np.zeros(4, np.float32)], lambda x: tf.py_function(hang, [x], tf.float32))


@case("fixture-raises", passes=("forward",), fixture=True)
def _raises(tf, np, rng, size):
    """Raises a TF error, as an op does under determinism."""
    def fail(x):
        raise tf.errors.UnimplementedError(None, None, "fixture: no deterministic implementation")
    return Built([np.zeros(4, np.float32)], lambda x: tf.py_function(fail, [x], tf.float32))


# Catalogue cases live in cases_*.py modules, imported for their registrations.
from . import cases_ops  # noqa: E402,F401
from . import cases_runtime  # noqa: E402,F401
