"""Hypothesis strategies shared by the property tests: the one module for them.

Import as `from strategies import ...` (tests/ is on sys.path, as for
catalog_fixtures). Each strategy draws what tfdet's own functions take: timing
samples, float arrays with the values that break naive comparisons (NaN with
payloads, infinities, -0.0, subnormals), digests as tfdet.results.stats.digest
writes them, and typed results records (records_of) as their declarations allow.
"""

import dataclasses
import typing

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tfdet.results.typed import _args, _hints, _optional, _origin

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


# -- typed results records ------------------------------------------------------------

_TEXT = st.text(max_size=12)
_SCALARS = {
    str: _TEXT,
    int: st.integers(min_value=-(2 ** 53), max_value=2 ** 53),
    float: st.floats(allow_nan=False, width=64),  # NaN != NaN: round-trip equality needs it out
    bool: st.booleans(),
}


def value_of(tp):
    """Any JSON value a field declared as `tp` accepts."""
    if tp is typing.Any:
        return st.one_of(st.none(), st.booleans(), st.integers(), _TEXT)
    optional, inner = _optional(tp)
    if optional:
        return st.one_of(st.none(), value_of(inner))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return records_of(tp)
    origin = _origin(tp)
    if origin in (tuple, typing.Tuple):
        return st.tuples(*[value_of(a) for a in _args(tp)]).map(list)
    if origin in (list, typing.List):
        return st.lists(value_of(_args(tp)[0]), max_size=3)
    if origin in (dict, typing.Dict):
        return st.dictionaries(_TEXT, value_of(_args(tp)[1]), max_size=2)
    if origin is typing.Union:
        return st.one_of([value_of(a) for a in _args(tp)])
    return _SCALARS[tp]


def records_of(cls):
    """Any instance of a typed record class (tfdet.results.typed) its declaration allows."""
    hints = _hints(cls)
    fields = {}
    for f in dataclasses.fields(cls):
        choices = f.metadata.get("choices")
        strategy = st.sampled_from(choices) if choices else value_of(hints[f.name])
        if choices and _optional(hints[f.name])[0]:
            strategy = st.one_of(st.none(), strategy)
        fields[f.name] = strategy
    return st.builds(cls, **fields)


#: What one mode of a probe case can come to, as `tfdet catalog update` reads it.
PROBE_OUTCOMES = ("deterministic", "varies", "raised", "failed")


def probe_measurements(entry_ids, versions, devices=("cpu", "gpu")):
    """Lists of (entry id, device, TF version, baseline outcome, env outcome, runs): what
    a few results files could say about catalogue entries (tfdet.catalog.update's input)."""
    one = st.tuples(st.sampled_from(list(entry_ids)), st.sampled_from(list(devices)), st.sampled_from(list(versions)),
                    st.sampled_from(PROBE_OUTCOMES), st.sampled_from(PROBE_OUTCOMES), st.sampled_from([10, 60]))
    return st.lists(one, min_size=1, max_size=12, unique_by=lambda m: m[:3])
