"""tfdet.tfinfo: the one version parser, device detection and op-determinism flag."""

import subprocess
import sys

import pytest

from tfdet import tfinfo


@pytest.mark.parametrize("text,expected", [
    ("2.6.2", (2, 6)), ("2.6.0rc1", (2, 6)), ("v1.15", (1, 15)), ("2.21", (2, 21)), (" 2.10.1-dev", (2, 10)),
])
def test_release(text, expected):
    assert tfinfo.release(text) == expected


@pytest.mark.parametrize("text", ["", "two", "2", None])
def test_release_rejects(text):
    with pytest.raises(ValueError):
        tfinfo.release(text)


def test_release_agrees_with_the_catalogue_parser():
    from tfdet.catalog import COVERED_TF_VERSIONS, tf_minor

    for version in COVERED_TF_VERSIONS:
        text = "%s.3" % version
        assert tfinfo.release(text) == (tf_minor(text).major, tf_minor(text).minor)


def test_stdlib_only_and_does_not_import_tensorflow():
    code = ("import sys; import tfdet.tfinfo as t; t.release('2.4'); t.op_determinism_enabled({}); "
            "bad = [m for m in ('tensorflow', 'yaml', 'packaging', 'numpy') if m in sys.modules]; print(bad)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "[]", done.stderr


def test_op_determinism_from_environ_without_tensorflow():
    code = ("import tfdet.tfinfo as t; print(t.op_determinism_enabled({'TF_DETERMINISTIC_OPS': '1'}), "
            "t.op_determinism_enabled({'TF_DETERMINISTIC_OPS': '0'}), t.op_determinism_enabled({}))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "False", "None"], done.stderr


def test_detect_device_on_this_machine():
    tf = pytest.importorskip("tensorflow")
    assert tfinfo.detect_device(tf) == ("gpu" if tf.config.list_physical_devices("GPU") else "cpu")
    assert tfinfo.op_determinism_enabled() in (False, None)
