"""Test fixtures among the probe cases (not catalogue entries; planned only when
asked for). See cases.py for the contract."""

import os
import time

from .case_registry import Built, case, elements, varied


@case("fixture-random-order-sum", passes=("forward",), fixture=True)
def _random_order_sum(tf, np, rng, size):
    """Sums float32 values in a fresh random order each call, each weighted by its
    place in that order: varies in every mode. (A plain float32 sum of these values
    in two random orders came out the same in 1 pair of 10, so 3 runs all agreed in
    about 1 probe of 10; weighted by place, 0 of 1,500 pairs agreed.)"""
    data = varied(np, rng, (elements(size, 1e4),))

    def shuffled_sum(x):
        values = x.numpy()
        order = np.random.RandomState(int.from_bytes(os.urandom(4), "little")).permutation(values.size)
        weights = np.linspace(1.0, 2.0, values.size, dtype=np.float32)
        return np.array(np.dot(values[order], weights), np.float32)

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
