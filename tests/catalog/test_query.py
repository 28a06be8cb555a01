"""Resolving names to entries, and what the queries say about TF versions the
catalogue does not cover."""

import warnings

import pytest
import yaml

import tfdet.catalog as catalog
from tfdet.catalog import (
    StaleVersionWarning, UncoveredVersionError, UnknownName, answering_version, load_user_catalogue,
)

from catalog_fixtures import GOOD_ENTRY, document


@pytest.fixture()
def demo(tmp_path):
    other = dict(GOOD_ENTRY, id="demo-op-grad", title="Demo op gradient", apis=["tf.demo.op"],
                 raw_ops=["DemoOpGrad"], direction="gradient", gradient_wrt=["input"])
    data = yaml.safe_load(document())
    data["entries"].append(other)
    path = tmp_path / "demo.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return load_user_catalogue(str(path))


def ids(entries):
    return [e.id for e in entries]


@pytest.mark.parametrize("name, expected", [
    ("demo-op", ["demo-op"]),                      # an id
    ("tf.demo.op", ["demo-op", "demo-op-grad"]),   # an API both entries share
    ("tensorflow.demo.op", ["demo-op", "demo-op-grad"]),
    ("DemoOpGrad", ["demo-op-grad"]),              # a raw op
    ("demoopgrad", ["demo-op-grad"]),              # case does not matter ...
    ("DEMO_OP", ["demo-op"]),                      # ... nor _ versus -
    ("tf.compat.v1.Demo_Op", ["demo-op"]),
    ("  DemoOp ", ["demo-op"]),
])
def test_resolve_every_name_show_accepts(demo, name, expected):
    assert ids(demo.resolve(name)) == expected
    assert ids(demo.find(name)) == expected


def test_resolve_unknown_name_suggests_one_name_per_entry(demo):
    with pytest.raises(UnknownName) as caught:
        demo.resolve("DemoOpGrd")
    assert caught.value.name == "DemoOpGrd"
    assert caught.value.suggestions[0] == "DemoOpGrad"
    assert str(caught.value).startswith("nothing in the catalogue is called 'DemoOpGrd'; did you mean: DemoOpGrad")
    with pytest.raises(UnknownName) as caught:
        demo.resolve("zzz")
    assert caught.value.suggestions == () and str(caught.value) == "nothing in the catalogue is called 'zzz'"
    assert demo.find("zzz") == []


def test_module_lookup_raises_for_unknown_names_with_a_hint():
    with pytest.raises(UnknownName, match="did you mean: tf.math.bincount"):
        catalog.lookup("tf.math.bincout", "2.6", "gpu")
    assert isinstance(UnknownName("x"), LookupError)
    assert {v.entry.id for v in catalog.lookup("densebincount", "2.6", "gpu")} == {"dense-bincount"}


@pytest.mark.parametrize("version, expected, stale", [
    ("1.14", "1.14", False), ("2.21.3", "2.21", False), ("2.22", "2.21", True), ("3.1", "2.21", True),
])
def test_answering_version(version, expected, stale):
    answer, warning = answering_version(version)
    assert str(answer) == expected
    assert bool(warning) is stale
    if stale:
        assert "newer than the catalogue" in warning and "may be stale" in warning


@pytest.mark.parametrize("version", ["1.13", "1.10", "0.12"])
def test_versions_older_than_the_catalogue_are_refused(demo, version):
    with pytest.raises(UncoveredVersionError, match="older than any version the catalogue covers"):
        answering_version(version)
    with pytest.raises(UncoveredVersionError):
        demo.lookup("DemoOp", version, "gpu")
    with pytest.raises(UncoveredVersionError):
        demo.affecting(version, "gpu")
    assert issubclass(UncoveredVersionError, ValueError)  # callers catching ValueError keep working


def test_newer_versions_warn_and_answer_for_the_newest_covered(demo):
    with pytest.warns(StaleVersionWarning, match="TF 2.99 is newer than the catalogue"):
        (verdict,) = demo.lookup("DemoOp", "2.99", "gpu")
    assert verdict.range == demo.lookup("DemoOp", "2.21", "gpu")[0].range
    with pytest.warns(StaleVersionWarning):
        assert ids(v.entry for v in demo.affecting("2.99", "gpu")) == ids(
            v.entry for v in demo.affecting("2.21", "gpu"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        demo.lookup("DemoOp", "2.21", "gpu")  # a covered version does not warn
