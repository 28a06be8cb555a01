"""The catalogue schema and rules reject each class of bad input, saying where."""

import copy
import textwrap

import pytest

from tfdet.catalog import CatalogError, load_catalogue, load_user_catalogue
from tfdet.catalog.validate import parse_document

from catalog_fixtures import GOOD_ENTRY, document

def write(tmp_path, text, name="mine.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def problems_of(tmp_path, text):
    with pytest.raises(CatalogError) as info:
        load_user_catalogue(write(tmp_path, text))
    return info.value.problems


def line_of(text, needle):
    """1-based line of the first line containing needle."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def mutated(change):
    entry = copy.deepcopy(GOOD_ENTRY)
    change(entry)
    return document(entry)


def test_good_document_loads(tmp_path):
    cat = load_user_catalogue(write(tmp_path, document()))
    assert [e.id for e in cat] == ["demo-op"]
    assert cat.get("demo-op").origin.path.endswith("mine.yaml")


def test_unknown_key_names_file_line_and_key(tmp_path):
    text = mutated(lambda e: e.update(colour="red"))
    (problem,) = problems_of(tmp_path, text)
    assert problem.path.endswith("mine.yaml")
    assert problem.line == line_of(text, "colour:")
    assert "unknown key 'colour'" in problem.message
    assert problem.where == "entries[0].colour"
    assert "mine.yaml:%d" % problem.line in str(problem)


def test_misspelt_key_gets_a_suggestion(tmp_path):
    text = mutated(lambda e: e.update(root_casue=e.pop("root_cause")))
    messages = [p.message for p in problems_of(tmp_path, text)]
    assert any("did you mean 'root_cause'" in m for m in messages)
    assert any("'root_cause' is a required property" in m for m in messages)


def test_unknown_status_word(tmp_path):
    text = mutated(lambda e: e["devices"]["gpu"][0].update(status="flaky"))
    (problem,) = problems_of(tmp_path, text)
    assert problem.where == "entries[0].devices.gpu[0].status"
    assert "'flaky' is not one of" in problem.message
    assert problem.line == line_of(text, "status: flaky")


def test_overlapping_ranges(tmp_path):
    text = mutated(lambda e: e["devices"]["gpu"][1].update(versions=">=2.4,<2.8"))
    (problem,) = problems_of(tmp_path, text)
    assert "overlap" in problem.message and "2.4" in problem.message
    assert problem.where == "entries[0].devices.gpu"
    assert problem.line == line_of(text, ">=2.4,<2.8")


def test_gapped_ranges(tmp_path):
    text = mutated(lambda e: e["devices"]["gpu"][2].update(versions=">=2.10"))
    (problem,) = problems_of(tmp_path, text)
    assert "gap" in problem.message and "2.8-2.9" in problem.message


def test_range_not_covering_all_versions(tmp_path):
    text = mutated(lambda e: e["devices"]["cpu"][0].update(versions=">=2.0"))
    (problem,) = problems_of(tmp_path, text)
    assert "gap" in problem.message and "1.14-1.15" in problem.message


def test_entry_without_source(tmp_path):
    text = mutated(lambda e: e.pop("sources"))
    (problem,) = problems_of(tmp_path, text)
    assert "'sources' is a required property" in problem.message


def test_range_with_empty_sources(tmp_path):
    text = mutated(lambda e: e["devices"]["cpu"][0].update(sources=[]))
    (problem,) = problems_of(tmp_path, text)
    assert "every claim needs at least one source" in problem.message
    assert problem.where == "entries[0].devices.cpu[0].sources"


def test_malformed_citation(tmp_path):
    text = mutated(lambda e: e["devices"]["cpu"][0].update(sources=["someone said so"]))
    (problem,) = problems_of(tmp_path, text)
    assert "does not match" in problem.message


def test_raises_needs_error_and_switch(tmp_path):
    def drop(entry):
        del entry["devices"]["gpu"][1]["error"]
        del entry["devices"]["gpu"][1]["switches"]
    messages = sorted(p.message for p in problems_of(tmp_path, mutated(drop)))
    assert messages == ["'error' is a required property", "'switches' is a required property"]


def test_unknown_switch_is_named_with_suggestion(tmp_path):
    text = mutated(lambda e: e["devices"]["gpu"][2].update(switches=["enable_op_determinsm"]))
    (problem,) = problems_of(tmp_path, text)
    assert "unknown switch 'enable_op_determinsm'" in problem.message
    assert "did you mean 'enable_op_determinism'" in problem.message
    assert problem.line == line_of(text, ">=2.8")


def test_bad_specifier(tmp_path):
    text = mutated(lambda e: e["devices"]["cpu"][0].update(versions="from 1.14"))
    (problem,) = problems_of(tmp_path, text)
    assert "not a PEP 440 version specifier: 'from 1.14'" in problem.message


def test_duplicate_yaml_key(tmp_path):
    text = document().replace("  title: Demo op\n", "  title: Demo op\n  title: Again\n")
    (problem,) = problems_of(tmp_path, text)
    assert "duplicate key 'title'" in problem.message
    assert problem.line == line_of(text, "title: Again")


def test_not_yaml(tmp_path):
    (problem,) = problems_of(tmp_path, "schema_version: 1\nentries: [\n")
    assert "not valid YAML" in problem.message and problem.line >= 2


def test_unsafe_yaml_tags_are_refused(tmp_path):
    text = "schema_version: 1\nentries: !!python/object/apply:os.system ['echo pwned']\n"
    (problem,) = problems_of(tmp_path, text)
    assert "not valid YAML" in problem.message


def test_duplicate_ids_across_files(tmp_path):
    write(tmp_path, document(), "a.yaml")
    write(tmp_path, document(), "b.yaml")
    with pytest.raises(CatalogError) as info:
        load_catalogue([str(tmp_path)], known_switches=load_catalogue().switches)
    (problem,) = info.value.problems
    assert "entry id 'demo-op' is also used at" in problem.message and "a.yaml" in problem.message


def test_every_problem_is_reported_not_only_the_first(tmp_path):
    def break_twice(entry):
        entry["direction"] = "sideways"
        entry["devices"]["cpu"][0]["status"] = "fine"
    assert len(problems_of(tmp_path, mutated(break_twice))) == 2


def test_wrong_schema_version(tmp_path):
    (problem,) = problems_of(tmp_path, document(schema_version=2))
    assert problem.where == "schema_version"


def test_gradient_direction_needs_wrt(tmp_path):
    (problem,) = problems_of(tmp_path, mutated(lambda e: e.update(direction="gradient")))
    assert "'gradient_wrt' is a required property" in problem.message


def test_parse_document_is_pure_text_in_objects_out():
    entries, switches = parse_document(document(), "<memory>")
    assert entries[0].devices["gpu"][1].error.message == "no."
    assert switches == []


def test_switch_file_rules(tmp_path):
    text = textwrap.dedent("""\
        schema_version: 1
        switches:
          - id: MY_SWITCH
            kind: env
            name: MY_SWITCH
            role: enables_determinism
            versions: ">=2.1"
            devices: [gpu]
            description: A switch without a value.
            sources: [doc:https://example.org]
        """)
    (problem,) = problems_of(tmp_path, text)
    assert "'value' is a required property" in problem.message


def _switch_with_rows(rows):
    return textwrap.dedent("""\
        schema_version: 1
        switches:
          - id: MY_SWITCH
            kind: env
            name: MY_SWITCH
            value: "1"
            role: enables_determinism
            versions: ">=2.1"
            devices: [gpu]
            description: A switch.
            sources: [doc:https://example.org]
            set_by_patch:
        """) + textwrap.indent(rows, "      ")


def test_set_by_patch_rows_load_with_their_condition(tmp_path):
    rows = '- {devices: [gpu], versions: ">=2.5", sources: ["tf-pr:1"]}\n' \
           '- {devices: [gpu], versions: ">=2.6", when: on_unsupported_warn, sources: ["tf-pr:2"]}\n'
    (switch,) = load_catalogue(write(tmp_path, _switch_with_rows(rows))).switches
    assert [(r.versions, r.when) for r in switch.set_by_patch] == [(">=2.5", "always"), (">=2.6", "on_unsupported_warn")]
    assert switch.set_by_patch_in("2.5", "gpu") is switch.set_by_patch[0]
    assert switch.set_by_patch_in("2.4", "gpu") is None and switch.set_by_patch_in("2.5", "cpu") is None


@pytest.mark.parametrize("row, words", [
    ('- {devices: [cpu], versions: ">=2.5", sources: ["tf-pr:1"]}', "set on cpu, which the switch does not list"),
    ('- {devices: [gpu], versions: ">=2.0", sources: ["tf-pr:1"]}', "set in TF 2.0, where the switch does not exist"),
    ('- {devices: [gpu], versions: ">=2.5", sources: []}', "every claim needs at least one source"),
    ('- {devices: [gpu], versions: ">=2.5", when: sometimes, sources: ["tf-pr:1"]}', "'sometimes' is not one of"),
])
def test_set_by_patch_row_problems_name_the_line(tmp_path, row, words):
    text = _switch_with_rows(row + "\n")
    (problem,) = problems_of(tmp_path, text)
    assert words in problem.message
    assert problem.line == len(text.splitlines())  # the row's own line


def test_autotune_role_is_no_longer_a_role(tmp_path):
    text = _switch_with_rows('- {devices: [gpu], versions: ">=2.5", sources: ["tf-pr:1"]}\n').replace(
        "role: enables_determinism", "role: disables_autotune")
    (problem,) = problems_of(tmp_path, text)
    assert "'disables_autotune' is not one of" in problem.message
