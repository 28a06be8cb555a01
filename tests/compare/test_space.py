"""The hparams source's space: what it reads, what it refuses, and its draws."""

import math

import numpy as np
import pytest
from hypothesis import given, strategies as st

from tfdet.compare import space


@pytest.mark.parametrize("text, says", [
    ("lr", "not KEY=SPEC"), ("depth=1:2", "KEY one of"), ("lr=0.1", "not LOW:HIGH"), ("lr=a:b", "not a number"),
    ("lr=0.2:0.1", "must be below"), ("lr=0:0.1:log", "out of range"), ("momentum=0:0.9:sqrt", "not LOW:HIGH"),
    ("batch_size=16:64", "a choice of whole numbers"), ("batch_size=16|16", "two values or more"),
    ("epochs=2|x", "not a whole number"), ("lr=nan:1", "out of range"),
])
def test_refuses_a_space_it_cannot_read(text, says):
    with pytest.raises(space.SpaceError, match=says.replace("(", r"\(")):
        space.parse(text)


def test_a_key_given_twice_is_refused():
    with pytest.raises(space.SpaceError, match="given twice"):
        space.parse_all(["lr=0.1:0.2", "lr=0.3:0.4"])


@given(low=st.floats(1e-5, 1.0), ratio=st.floats(1.001, 1e3), seed=st.integers(0, 2 ** 32 - 1),
       log=st.booleans())
def test_a_draw_lies_in_its_range_and_repeats_with_its_seed(low, ratio, seed, log):
    key, spec = space.parse("lr=%r:%r%s" % (low, low * ratio, ":log" if log else ""))
    value = space.draw({key: spec}, seed)["lr"]
    assert low * (1 - 1e-12) <= value <= low * ratio * (1 + 1e-12)
    assert space.draw({key: spec}, seed) == {"lr": value}


def test_log_uniform_puts_half_its_draws_below_the_geometric_mean():
    spec = dict([space.parse("lr=0.001:1:log")])
    draws = np.array([space.draw(spec, seed)["lr"] for seed in range(2000)])
    below = np.mean(draws < math.sqrt(0.001 * 1.0))
    assert abs(below - 0.5) < 0.05  # uniform on [0.001, 1] would put 3% there
    spec = dict([space.parse("lr=0.001:1")])
    uniform = np.array([space.draw(spec, seed)["lr"] for seed in range(2000)])
    assert np.mean(uniform < math.sqrt(0.001)) < 0.06


def test_a_choice_draws_every_value_and_keeps_its_type():
    spec = dict([space.parse("batch_size=16|32|64")])
    drawn = [space.draw(spec, seed)["batch_size"] for seed in range(200)]
    assert set(drawn) == {16, 32, 64} and all(isinstance(v, int) for v in drawn)
