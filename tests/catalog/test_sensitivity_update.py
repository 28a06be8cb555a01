"""`tfdet catalog update` turns --vary results into sensitive_to facts per TF version and device."""

import os
import shutil

from tfdet.catalog import default_catalogue, load_catalogue, shipped_catalogue_dir
from tfdet.catalog.sensitivity_update import SENSITIVITY_FILE, facts_of, merge, render
from tfdet.results import load

from cli_runner import run_cli
from vary_fixture import record, write


def facts(tmp_path, records=None, **header):
    path = write(tmp_path / "v.jsonl", **({"records": records} if records else {}), **header)
    return facts_of(load(path), "reports/v.jsonl")


def test_one_fact_per_case_and_setting_with_its_variants(tmp_path):
    by = {(op, row.setting): row for op, _, _, row in facts(tmp_path)}
    onednn = by[("matmul", "onednn")]
    assert (onednn.fact.changes, onednn.fact.stable_within, onednn.fact.max_ulp) == (True, True, 40)
    assert onednn.versions == "==2.21" and onednn.device == "cpu"
    assert onednn.fact.sources == ("measured:reports/v.jsonl",)
    assert by[("matmul", "threads")].fact.changes is False
    # varies run to run: no claim about the setting
    conv = by[("conv2d", "threads")].fact
    assert (conv.changes, conv.stable_within, conv.max_ulp) == (False, False, None)
    # replicas: one fact over 2, 3 and 4 replicas; the raised variant is said in the note, not counted
    replicas = by[("mlp-grad", "replicas")].fact
    assert replicas.changes is True and replicas.max_ulp == 2
    assert "3 replicas: differs (2 ulp)" in replicas.note and "4 replicas: raised" in replicas.note


def test_raised_everywhere_makes_no_fact(tmp_path):
    only = [record("matmul", "xla", "jit_compile=True", "raised", error="no kernel")]
    assert facts(tmp_path, only) == []


def test_a_new_measurement_replaces_the_row_of_its_version_only(tmp_path):
    first = facts(tmp_path)
    os.makedirs(tmp_path / "old")
    older = facts(tmp_path / "old", tf_version="2.20.1")
    items = merge(merge([], older), first)
    again = [record("matmul", "onednn", "TF_ENABLE_ONEDNN_OPTS=0", "same")]
    os.makedirs(tmp_path / "again")
    items = merge(items, facts(tmp_path / "again", again))
    matmul = next(i for i in items if i.op == "matmul")
    onednn = [(r.versions, r.fact.changes) for r in matmul.rows if r.setting == "onednn"]
    assert sorted(onednn) == [("==2.20", True), ("==2.21", False)]
    assert matmul.names == ("tf.linalg.matmul", "MatMul")


def test_rendered_file_is_a_valid_catalogue_answering_sensitive_to(tmp_path):
    text = render(merge([], facts(tmp_path)))
    path = tmp_path / SENSITIVITY_FILE
    path.write_text(text)
    catalogue = load_catalogue([str(path)])
    assert catalogue.sensitive_to("MatMul", "2.21.0", "cpu")["onednn"].changes is True
    assert catalogue.sensitive_to("tf.math.reduce_sum", "2.21", "cpu")["threads"].max_ulp == 7
    assert catalogue.sensitive_to("MatMul", "2.20", "cpu") == {}


def test_catalog_update_command_writes_the_facts(tmp_path):
    results = write(tmp_path / "v.jsonl")
    proposed = tmp_path / "proposed"
    code, out, err = run_cli("catalog", "update", "--from", results, "--out", str(proposed))
    assert code == 0, err
    assert "setting facts for 4 ops" in out and "onednn changes: matmul" in out
    catalogue = load_catalogue([str(proposed)])
    assert catalogue.sensitive_to("matmul", "2.21", "cpu")["onednn"].changes is True
    # every other file is as shipped
    shipped = default_catalogue()
    assert [e.id for e in catalogue] == [e.id for e in shipped]
    shutil.rmtree(proposed)
    assert os.path.isdir(shipped_catalogue_dir())


def test_merge_is_idempotent_and_keeps_one_row_per_setting_device_version():
    from hypothesis import given, settings, strategies as st

    from tfdet.catalog.sensitivity import SETTINGS, SensitivityRow, SettingFact
    from tfdet.catalog.versions import parse_specifier

    row = st.builds(
        lambda op, setting, minor, changes: (op, "", (), SensitivityRow(
            setting=setting, device="cpu", versions="==2.%d" % minor,
            fact=SettingFact(changes=changes, stable_within=True, max_ulp=1 if changes else 0, sources=("measured:x",)),
            specifier=parse_specifier("==2.%d" % minor))),
        st.sampled_from(["matmul", "conv2d", "reduce-sum"]), st.sampled_from(SETTINGS), st.integers(19, 21),
        st.booleans())

    @settings(max_examples=60, deadline=None)
    @given(st.lists(row, max_size=20))
    def check(facts):
        once = merge([], facts)
        assert merge(once, facts) == once
        for item in once:
            keys = [(r.setting, r.device, r.versions) for r in item.rows]
            assert len(keys) == len(set(keys))
        # the last measurement of a row is the one kept
        last = {}
        for op, _, _, r in facts:
            last[(op, r.setting, r.versions)] = r.fact
        assert {(i.op, r.setting, r.versions): r.fact for i in once for r in i.rows} == last

    check()
