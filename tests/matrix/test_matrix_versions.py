"""The versions table: every TF from 1.15 to 2.21, each with a Python pyenv has
and exactly one tensorflow pin on its own minor."""

import re

from tfdet.matrix.versions import REPRESENTATIVE, VERSIONS, by_tf, env_name, tf_requirement, version_key


def test_every_minor_from_1_15_to_2_21_once_in_order():
    assert [v.tf for v in VERSIONS] == ["1.15"] + ["2.%d" % minor for minor in range(22)]


def test_each_row_pins_its_own_tf_minor_once():
    for v in VERSIONS:
        pins = [r for r in v.requirements if re.match(r"tensorflow(-cpu)?==", r)]
        assert len(pins) == 1, v
        package = "tensorflow" if v.tf == "2.0" else "tensorflow-cpu"  # no tensorflow-cpu wheel for 2.0
        assert tf_requirement(v) == "%s==%s.*" % (package, v.tf)


def test_pythons_are_minors_and_never_get_older_with_tf():
    pythons = [version_key(v.python) for v in VERSIONS]
    assert all(re.match(r"^3\.\d+$", v.python) for v in VERSIONS)
    assert min(pythons) == (3, 7) and max(pythons) == (3, 13)
    # 2.4 keeps the Python 3.7 environment the multiversion tests verified first
    assert [p for v, p in zip(VERSIONS, pythons) if v.tf != "2.4"] == sorted(
        p for v, p in zip(VERSIONS, pythons) if v.tf != "2.4")


def test_every_other_requirement_is_an_exact_pin():
    for v in VERSIONS:
        for r in v.requirements:
            if r != tf_requirement(v):
                assert re.match(r"^[a-z0-9_-]+==\d+(\.\d+)*$", r), (v.tf, r)


def test_names_and_lookup():
    assert env_name(by_tf("2.6")) == "tf2.6-py3.9"
    assert by_tf("3.0") is None
    assert version_key("2.10") > version_key("2.9")


def test_representative_versions_cover_every_python():
    assert {by_tf(tf).python for tf in REPRESENTATIVE} == {v.python for v in VERSIONS}
