"""Queries on a catalogue: lookups by alias and raw op, version ranges, export."""

import pytest
import yaml

from tfdet.catalog import COVERED_TF_VERSIONS, UnknownName, load_user_catalogue, tf_minor
from tfdet.catalog.versions import format_versions

from catalog_fixtures import GOOD_ENTRY, document


@pytest.fixture()
def demo(tmp_path):
    path = tmp_path / "demo.yaml"
    path.write_text(document())
    return load_user_catalogue(str(path))


@pytest.mark.parametrize("text, expected", [
    ("2.6", "2.6"), ("2.6.2", "2.6"), ("2.21.0rc1", "2.21"), ("v2.7.0", "2.7"), ("1.15.5", "1.15"),
])
def test_tf_minor(text, expected):
    assert str(tf_minor(text)) == expected


@pytest.mark.parametrize("text", ["", "two", "2", "latest"])
def test_tf_minor_rejects(text):
    with pytest.raises(ValueError, match="not a TensorFlow version"):
        tf_minor(text)


def test_covered_versions_span_1_14_to_2_21():
    assert str(COVERED_TF_VERSIONS[0]) == "1.14" and str(COVERED_TF_VERSIONS[-1]) == "2.21"
    assert len(COVERED_TF_VERSIONS) == 24
    assert format_versions(list(COVERED_TF_VERSIONS[:3]) + [COVERED_TF_VERSIONS[5]]) == "1.14-2.0, 2.3"


@pytest.mark.parametrize("name", ["tf.demo.op", "tf.compat.v1.demo_op", "DemoOp", "demo-op", "tensorflow.demo.op"])
@pytest.mark.parametrize("version, device, status", [
    ("1.14", "gpu", "nondeterministic"),
    ("2.4.3", "gpu", "nondeterministic"),
    ("2.5", "gpu", "raises_under_determinism"),
    ("2.7", "gpu", "raises_under_determinism"),
    ("2.8", "gpu", "deterministic_with_switch"),
    ("2.6", "cpu", "deterministic"),
])
def test_lookup_by_any_name(demo, name, version, device, status):
    (verdict,) = demo.lookup(name, version, device)
    assert verdict.status == status
    assert verdict.entry.id == "demo-op"


def test_lookup_fix_text(demo):
    assert demo.lookup("DemoOp", "2.3", "gpu")[0].fix == "tfdet.patch() (demo)"
    assert demo.lookup("DemoOp", "2.9", "gpu")[0].fix == "switch: enable_op_determinism"
    assert demo.lookup("DemoOp", "2.9", "cpu")[0].fix == ""


def test_lookup_unknown_name_is_empty_only_when_asked(demo):
    assert demo.lookup("tf.nothing", "2.6", "gpu", missing_ok=True) == []
    with pytest.raises(UnknownName, match="nothing in the catalogue is called 'tf.nothing'"):
        demo.lookup("tf.nothing", "2.6", "gpu")


def test_lookup_rejects_bad_device_and_version(demo):
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        demo.lookup("DemoOp", "2.6", "tpu")
    with pytest.raises(ValueError, match="not a TensorFlow version"):
        demo.lookup("DemoOp", "x", "gpu")


def test_device_without_ranges_has_no_verdict(tmp_path):
    entry = dict(GOOD_ENTRY, devices={"gpu": GOOD_ENTRY["devices"]["gpu"]})
    path = tmp_path / "gpu_only.yaml"
    path.write_text(document(entry))
    (verdict,) = load_user_catalogue(str(path)).lookup("DemoOp", "2.6", "cpu")
    assert verdict.range is None and verdict.status == "unknown"


def test_affecting_filters_by_status(demo):
    assert [v.entry.id for v in demo.affecting("2.6", "gpu")] == ["demo-op"]
    assert demo.affecting("2.6", "cpu") == []
    assert [v.status for v in demo.affecting("2.6", "cpu", statuses=("deterministic",))] == ["deterministic"]


def test_switches_for_version_and_role(demo):
    ids = {s.id for s in demo.switches_for("2.6", "gpu", roles=("enables_determinism",))}
    assert ids == {"TF_CUDNN_DETERMINISTIC", "TF_DETERMINISTIC_OPS"}
    ids = {s.id for s in demo.switches_for("2.8", "cpu", roles=("enables_determinism",))}
    assert ids == {"TF_DETERMINISTIC_OPS", "enable_op_determinism"}


def test_dataframe_has_a_row_per_range(demo):
    frame = demo.to_dataframe()
    assert len(frame) == 4
    row = frame[(frame.device == "gpu") & (frame.status == "raises_under_determinism")].iloc[0]
    assert row.error_type == "UnimplementedError" and row.switches == ["TF_DETERMINISTIC_OPS"]


def test_get_unknown_id(demo):
    with pytest.raises(KeyError, match="no catalogue entry with id 'nope'"):
        demo.get("nope")


def test_document_round_trips_through_yaml():
    assert yaml.safe_load(document())["entries"][0]["id"] == "demo-op"
