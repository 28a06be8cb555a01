"""Keyed by the replacement registry: every replacement has its parity cases (static_parity.CASES
and patch_cases.CASES), a graph-walk case (GRAPH_CASES, which test_replacements.py walks), a property strategy that a
test draws from (parity_strategies.py) and a benchmark (replacement_examples.py, which
benchmarks/bench_replacements.py times). A replacement added without one of them fails here, by name.
The benchmark's inputs are also run small against the stock op: what is timed computes what stock does."""

import glob
import importlib.util
import os

import numpy as np
import pytest

import tensorflow as tf

from tfdet.patching import registry

import parity_strategies as S
import patch_cases as C
import replacement_examples as E
import static_parity as P

HERE = os.path.dirname(os.path.abspath(__file__))
NAMES = sorted(registry.names())
SMALL = 2e3  # data elements: the benchmark's inputs at a size the default suite affords


def _family_members(names, family):
    return [name for name in names if name == family or name.startswith(family + "/")]


def _bench():
    path = os.path.join(HERE, "..", "..", "benchmarks", "bench_replacements.py")
    spec = importlib.util.spec_from_file_location("bench_replacements", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_replacement_has_a_family_and_no_family_is_left_over():
    assert sorted(E.FAMILIES) == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_every_replacement_has_parity_cases(name):
    assert name in P.CASES, "%s: no static-parity cases (static_parity.CASES)" % name
    assert _family_members(C.CASES, E.FAMILIES[name].cases), "%s: no parity cases (patch_cases.CASES)" % name


@pytest.mark.parametrize("name", NAMES)
def test_every_replacement_has_a_graph_walk_case(name):
    graph = E.FAMILIES[name].graph
    assert graph, "%s: no graph-walk case (replacement_examples.FAMILIES[...].graph)" % name
    assert set(graph) <= set(_family_members(C.CASES, E.FAMILIES[name].cases)), "%s: graph cases of another family" % name
    assert set(graph) <= set(E.GRAPH_CASES)


@pytest.mark.parametrize("name", NAMES)
def test_every_replacement_has_a_property_strategy_that_a_test_draws(name):
    strategy = E.FAMILIES[name].strategy
    assert callable(getattr(S, strategy, None)), "%s: parity_strategies has no %s" % (name, strategy)
    callers = [path for path in glob.glob(os.path.join(HERE, "*.py"))
               if os.path.basename(path) != "parity_strategies.py"
               and "S.%s(" % strategy in open(path, encoding="utf-8").read()]
    assert callers, "%s: nothing draws from parity_strategies.%s" % (name, strategy)


def test_every_replacement_has_a_benchmark_the_table_attributes_to_it():
    bench = _bench()
    found = bench.replacement_examples.examples(SMALL, np.random.default_rng(0))
    assert sorted({example.patch for example in found}) == NAMES
    assert [bench.patch_of(example.label) for example in found] == [example.patch for example in found]
    assert [row[0] for row in bench.benchmarks(SMALL, np.random.default_rng(0))] == [e.label for e in found]


def _value(fn, args, diff):
    tensors = [tf.constant(a) for a in args]
    if diff is None:
        return [np.asarray(fn(*tensors))]
    with tf.GradientTape() as tape:
        for i in diff:
            tape.watch(tensors[i])
        y = fn(*tensors)
    grads = tape.gradient(y, [tensors[i] for i in diff], output_gradients=tf.ones_like(y))
    return [np.asarray(y)] + [np.asarray(tf.convert_to_tensor(g)) for g in grads]


@pytest.mark.parametrize("example", E.examples(SMALL, np.random.default_rng(0)), ids=lambda e: e.label.split()[0])
def test_the_benchmarked_replacement_computes_what_stock_does(example):
    ours = _value(example.replacement, example.args, example.diff)
    stock = _value(example.reference or example.stock, example.args, example.diff)
    assert [o.shape for o in ours] == [s.shape for s in stock] and [o.dtype for o in ours] == [s.dtype for s in stock]
    for mine, theirs in zip(ours, stock):
        scale = max(1.0, float(np.max(np.abs(theirs)))) if theirs.size else 1.0
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4 * scale, err_msg=example.label)
