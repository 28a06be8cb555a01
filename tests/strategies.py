"""Hypothesis strategies shared by the property tests: the one module for them.

Import as `from strategies import ...` (tests/ is on sys.path, as for
catalog_fixtures). Each strategy draws what tfdet's own functions take: timing
samples, float arrays with the values that break naive comparisons (NaN with
payloads, infinities, -0.0, subnormals), digests as tfdet.results.stats.digest
writes them.
"""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

#: Bit widths of the IEEE float formats numpy has (float16, float32, float64).
FLOAT_WIDTHS = st.sampled_from([16, 32, 64])
FLOAT_DTYPES = {16: np.float16, 32: np.float32, 64: np.float64}

#: Values that tell bitwise from value equality, and order from NaN.
SPECIAL_FLOATS = [float("nan"), float("inf"), float("-inf"), -0.0, 0.0]


def samples(min_size=1, max_size=40, min_value=-1e6, max_value=1e6):
    """Lists of finite floats, often with ties (some values are drawn from a few
    small integers), as mann_whitney_u, median and iqr take them."""
    element = st.one_of(
        st.floats(min_value=min_value, max_value=max_value, allow_nan=False, allow_infinity=False),
        st.integers(min_value=max(-5, int(np.ceil(min_value))), max_value=min(5, int(np.floor(max_value)))).map(float),
    )
    return st.lists(element, min_size=min_size, max_size=max_size)


def timing_samples(min_size=1, max_size=40):
    """Latencies in seconds: positive, finite, 1 microsecond to 10 seconds, with ties."""
    element = st.one_of(
        st.floats(min_value=1e-6, max_value=10.0, allow_nan=False, allow_infinity=False),
        st.sampled_from([1e-3, 2e-3, 5e-3, 1e-2]),
    )
    return st.lists(element, min_size=min_size, max_size=max_size)


@st.composite
def float_arrays(draw, widths=FLOAT_WIDTHS, max_dims=2, max_side=6):
    """numpy arrays of float16/32/64, any shape up to max_dims x max_side (empty
    included), whose elements are often NaN, +-inf, -0.0 or 0.0."""
    width = draw(widths)
    elements = st.one_of(st.sampled_from(SPECIAL_FLOATS), st.floats(width=width))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=max_side))
    return draw(hnp.arrays(FLOAT_DTYPES[width], shape, elements=elements))


def digests():
    """Hex SHA-256 strings, the form tfdet.results.stats.digest returns (64 lowercase hex)."""
    return st.binary(min_size=32, max_size=32).map(lambda b: b.hex())


def digest_runs(max_runs=12, max_distinct=3):
    """Lists of digests from repeated runs: a few distinct values, repeated (as runs give them)."""
    return st.lists(digests(), min_size=1, max_size=max_distinct).flatmap(
        lambda pool: st.lists(st.sampled_from(pool), min_size=0, max_size=max_runs))
