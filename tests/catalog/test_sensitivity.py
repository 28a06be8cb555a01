"""Measured setting facts (`sensitivities:`): the schema and rules check them, and
Catalogue.sensitive_to answers by op, API, raw op and version, never beyond what was measured."""

import textwrap

import pytest

from tfdet.catalog import CatalogError, SettingFact, default_catalogue, load_catalogue, load_user_catalogue

DOC = textwrap.dedent("""\
    schema_version: 1
    sensitivities:
      - op: matmul
        title: MatMul
        names: [tf.linalg.matmul, MatMul]
        facts:
          - setting: onednn
            device: cpu
            versions: "==2.21"
            changes: true
            stable_within: true
            max_ulp: 12
            sources: ["measured:reports/vary.jsonl"]
          - setting: threads
            device: cpu
            versions: ">=2.20,<2.22"
            changes: false
            stable_within: true
            max_ulp: 0
            note: same bits with 1 and 2 threads
            sources: ["measured:reports/vary.jsonl"]
    """)


def load(tmp_path, text):
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    return load_user_catalogue(str(path))


def problems_of(tmp_path, text):
    with pytest.raises(CatalogError) as info:
        load(tmp_path, text)
    return info.value.problems


def test_sensitive_to_answers_by_op_api_and_raw_op(tmp_path):
    catalogue = load(tmp_path, DOC)
    expected = {
        "onednn": SettingFact(changes=True, stable_within=True, max_ulp=12, sources=("measured:reports/vary.jsonl",)),
        "threads": SettingFact(changes=False, stable_within=True, max_ulp=0, sources=("measured:reports/vary.jsonl",),
                               note="same bits with 1 and 2 threads"),
    }
    for name in ("matmul", "tf.linalg.matmul", "tensorflow.linalg.matmul", "MatMul", "MATMUL", "TF.Linalg.Matmul"):
        assert catalogue.sensitive_to(name, "2.21.0", "cpu") == expected, name


def test_sensitive_to_keeps_to_the_versions_and_device_measured(tmp_path):
    catalogue = load(tmp_path, DOC)
    assert set(catalogue.sensitive_to("MatMul", "2.20.1", "cpu")) == {"threads"}
    assert catalogue.sensitive_to("MatMul", "2.19", "cpu") == {}
    assert catalogue.sensitive_to("MatMul", "2.21", "gpu") == {}
    assert catalogue.sensitive_to("Conv2D", "2.21", "cpu") == {}
    with pytest.raises(ValueError):
        catalogue.sensitive_to("MatMul", "2.21", "tpu")
    with pytest.raises(ValueError):
        catalogue.sensitive_to("MatMul", "latest", "cpu")


def test_fact_is_frozen():
    fact = SettingFact(changes=True, stable_within=True, max_ulp=None, sources=("x:y",))
    with pytest.raises(AttributeError):
        fact.changes = False


def test_unknown_setting_is_named_with_the_line(tmp_path):
    text = DOC.replace("setting: threads", "setting: thread")
    (problem,) = problems_of(tmp_path, text)
    assert "'thread' is not one of" in problem.message and "did you mean 'threads'" in problem.message
    assert problem.line == text.splitlines().index("      - setting: thread") + 1


def test_two_facts_for_one_setting_version_and_device_are_refused(tmp_path):
    text = DOC.replace("setting: threads", "setting: onednn")
    (problem,) = problems_of(tmp_path, text)
    assert "second onednn fact for cpu in TF 2.21" in problem.message
    assert problem.where == "sensitivities[0].facts[1]"


def test_a_change_needs_each_setting_stable(tmp_path):
    text = DOC.replace("changes: true\n        stable_within: true", "changes: true\n        stable_within: false")
    (problem,) = problems_of(tmp_path, text)
    assert "stable_within" in problem.message


def test_a_fact_needs_a_source(tmp_path):
    text = DOC.replace('        sources: ["measured:reports/vary.jsonl"]\n      - setting: threads',
                       "      - setting: threads")
    assert text != DOC
    messages = [p.message for p in problems_of(tmp_path, text)]
    assert any("'sources' is a required property" in m for m in messages)


def test_one_name_cannot_mean_two_ops(tmp_path):
    text = DOC + (
        "  - op: batch-matmul\n"
        "    names: [MatMul]\n"
        "    facts:\n"
        '      - {setting: xla, device: cpu, versions: "==2.21", changes: false, stable_within: true,\n'
        '         sources: ["measured:reports/vary.jsonl"]}\n')
    (problem,) = problems_of(tmp_path, text)
    assert "'MatMul' also names the facts of 'matmul'" in problem.message


def test_shipped_facts_fast_path_equals_full_validation():
    fast, full = default_catalogue(), load_catalogue()
    assert fast.sensitivities == full.sensitivities
    assert [r.origin for s in fast.sensitivities for r in s.rows] == [r.origin for s in full.sensitivities for r in s.rows]


def test_shipped_facts_cite_real_vary_results_and_answer_the_issue_table():
    import os

    from tfdet.results import load

    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    catalogue = default_catalogue()
    cited = {s.split(":", 1)[1] for item in catalogue.sensitivities for row in item.rows for s in row.fact.sources}
    assert cited
    for path in cited:
        assert load(os.path.join(root, path)).records, path
    # what issue 28's table says, as measured here (TF 2.21 CPU)
    matmul = catalogue.sensitive_to("tf.linalg.matmul", "2.21", "cpu")
    assert matmul["onednn"].changes and matmul["xla"].changes and not matmul["threads"].changes
    assert catalogue.sensitive_to("Sum", "2.21", "cpu")["threads"].changes
    assert not any(f.changes for f in catalogue.sensitive_to("Conv2D", "2.21", "cpu").values())
