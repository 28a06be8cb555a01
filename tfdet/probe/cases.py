"""How each catalogue entry is exercised: the probe cases, keyed by catalogue id.

Runs inside the worker: standard library, numpy and TensorFlow only, Python 3.7
syntax, and only TF APIs that exist from 1.14 (or a case says `min_tf`).

A case builder gets (tf, np, rng, size) and returns a Built: fixed numpy inputs
drawn from `rng`, a function of tensors, and which inputs to differentiate. The
forward pass runs the function; the gradient pass injects a fixed random
upstream gradient (output_gradients) and differentiates with respect to each
listed float input. Sizes default to 1e5..1e6 elements, scaled by `size`.
Values span many orders of magnitude, so a change in summation order shows.

The full registry: the cases live in cases_fixtures.py (test fixtures),
cases_ops.py and cases_runtime.py, which register themselves with
case_registry.py; importing this module imports them all, in that order, so
CASES here is complete. The runner, the worker and the CLI import this module.
"""

from .case_registry import CASES, Built, CaseSpec, case, elements, varied  # noqa: F401  (re-exported)
from . import cases_fixtures, cases_ops, cases_runtime  # noqa: F401  (imported for their registrations)


def describe_cases(catalogue=None):
    """{id: {passes, min_tf, fixture}}: what the runner needs to plan, as JSON. An
    entry's passes are the catalogue's (`catalogue`, the shipped one by default):
    a case whose id the catalogue lacks raises KeyError, it is never left out.
    Runs in the parent process, which has the catalogue; the worker never calls it."""
    if catalogue is None:
        from ..catalog import default_catalogue

        catalogue = default_catalogue()
    return {
        spec.id: {"passes": list(spec.passes if spec.fixture else catalogue.get(spec.id).passes),
                  "min_tf": list(spec.min_tf) if spec.min_tf else None, "fixture": spec.fixture}
        for spec in CASES.values()
    }


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
        # No autograph: a case body is straight-line TF code (loops are tf.while_loop,
        # branches tf.cond), so its graph is the same without it, and converting it
        # was half of tracing, paid once per case in every worker (docs/topics/probe.md
        # "The time budget"; tests/probe/test_case_graphs.py holds the graphs equal).
        body = tf.function(body, autograph=False)
    return Prepared(body, tensors, np)
