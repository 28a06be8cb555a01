"""Op facts live only in the catalogue: code names no entry id but the probe's
case keys, every catalogue key code reads names something the code has, and
renaming an entry that code depends on fails loudly instead of turning a check off."""

import ast
import dataclasses
import os

import pytest

from tfdet.catalog import CatalogError, default_catalogue, load_catalogue, shipped_catalogue_dir
from tfdet.catalog.validate import schema_validator
from tfdet.patching import registry
from tfdet.probe.cases import CASES, describe_cases
from tfdet.scanning import keras_sources
from tfdet.scanning.conditions import CHECKS, CatalogueChecks

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The one place code may name an entry: the probe case registered under its id.
CASE_MODULES = ("tfdet/probe/cases_ops.py", "tfdet/probe/cases_runtime.py", "tfdet/probe/cases_dense.py")


def missing_references(catalogue):
    """What code depends on that `catalogue` lacks, one line each: the probe cases'
    entry ids, the scan checks and Keras kinds its entries name, the replacements
    its ranges name, and the entries the checks themselves need."""
    ids = {entry.id for entry in catalogue}
    problems = ["probe case %r: no catalogue entry with that id" % case_id
                for case_id, spec in sorted(CASES.items()) if not spec.fixture and case_id not in ids]
    for entry in catalogue:
        if entry.scan.check is not None and entry.scan.check not in CHECKS:
            problems.append("%s: scan check %r is not in tfdet.scanning.conditions.CHECKS" % (entry.id, entry.scan.check))
        for ranges in entry.devices.values():
            problems.extend("%s: patch %r is not in the replacement registry" % (entry.id, r.patch)
                            for r in ranges if r.patch and r.patch not in registry.names())
    used = {entry.scan.check for entry in catalogue}
    problems.extend("scan check %r: no entry names it, so it never runs" % name for name in sorted(set(CHECKS) - used))
    kinds = {entry.scan.keras for entry in catalogue}
    problems.extend("keras %s: no entry names it, so the scan reads no Keras %ss" % (kind, kind)
                    for kind in ("layer", "initializer") if kind not in kinds)
    return problems


def _string_constants(path):
    with open(path, encoding="utf-8") as handle:
        tree = ast.parse(handle.read(), path)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)]


def test_code_names_no_entry_id_outside_the_probe_cases():
    # ids of two words or more: a one-word id (bincount) is also a replacement's and a function's name
    ids = {entry.id for entry in default_catalogue() if "-" in entry.id}
    named = []
    for folder, _, files in os.walk(os.path.join(ROOT, "tfdet")):
        for name in files:
            path = os.path.join(folder, name)
            relative = os.path.relpath(path, ROOT).replace(os.sep, "/")
            if not name.endswith(".py") or relative in CASE_MODULES:
                continue
            named.extend("%s:%d %s" % (relative, line, value) for line, value in _string_constants(path)
                         if value in ids)
    assert named == [], "an op fact keyed by an entry id belongs in the catalogue (a `scan:` key, `requires`...)"


def test_everything_code_depends_on_is_in_the_shipped_catalogue():
    assert missing_references(default_catalogue()) == []


def _renamed_copy(tmp_path, old, new, files=None):
    """The shipped catalogue (or its `files`) copied with entry `old` renamed `new`, loaded and validated."""
    copy = tmp_path / "catalog"
    copy.mkdir(parents=True)
    for name in sorted(os.listdir(shipped_catalogue_dir())):
        if name.endswith(".yaml") and (files is None or name in files):
            with open(os.path.join(shipped_catalogue_dir(), name), encoding="utf-8") as handle:
                text = handle.read()
            (copy / name).write_text(text.replace("  - id: %s\n" % old, "  - id: %s\n" % new), encoding="utf-8")
    return load_catalogue(str(copy))


RANDOM = ("random.yaml", "switches.yaml")  # the renamed entry's file and the switches it names


def test_renaming_an_entry_code_depends_on_is_loud(tmp_path):
    renamed = _renamed_copy(tmp_path, "unseeded-random-ops", "unseeded-legacy-random-ops", RANDOM)
    assert "unseeded-legacy-random-ops" in {e.id for e in renamed}
    assert "probe case 'unseeded-random-ops': no catalogue entry with that id" in missing_references(renamed)
    # the whole catalogue with the entry renamed: that one problem, and the probe's plan stops on it
    shipped = default_catalogue()
    whole = type(shipped)([dataclasses.replace(e, id="unseeded-legacy-random-ops") if e.id == "unseeded-random-ops"
                           else e for e in shipped], shipped.switches)
    assert missing_references(whole) == ["probe case 'unseeded-random-ops': no catalogue entry with that id"]
    with pytest.raises(KeyError, match="unseeded-random-ops"):
        describe_cases(whole)  # what the probe plans with: it stops, it does not skip the case
    # the scan reads its facts from the entry's keys, so it follows the new name
    checks = CatalogueChecks(renamed)
    assert checks.rules["unseeded-legacy-random-ops"] is CHECKS["op_seed"]
    assert "RandomStandardNormal" in checks.stateful_random


@pytest.mark.slow
def test_renaming_an_entry_in_the_whole_catalogue_is_one_problem(tmp_path):
    renamed = _renamed_copy(tmp_path, "unseeded-random-ops", "unseeded-legacy-random-ops")
    assert missing_references(renamed) == ["probe case 'unseeded-random-ops': no catalogue entry with that id"]


def test_a_check_the_code_does_not_have_raises():
    shipped = default_catalogue()
    entry = shipped.get("data-unseeded-random")
    broken = type(shipped)([type(entry)(**dict(vars(entry), scan=type(entry.scan)(check="shuffle_seeds")))],
                           shipped.switches)
    with pytest.raises(ValueError, match="'shuffle_seeds', which tfdet does not have"):
        CatalogueChecks(broken)
    assert "data-unseeded-random: scan check 'shuffle_seeds' is not in tfdet.scanning.conditions.CHECKS" in \
        missing_references(broken)


def test_schema_names_exactly_the_checks_the_code_has():
    entry = schema_validator().schema["$defs"]["entry"]["properties"]
    assert set(entry["scan"]["properties"]["check"]["enum"]) == set(CHECKS)
    assert set(entry["scan"]["properties"]["keras"]["enum"]) == {"layer", "initializer"}


def test_the_scan_facts_come_from_the_entries():
    shipped = default_catalogue()
    checks = CatalogueChecks(shipped)
    assert checks.xla == {e.id for e in shipped if "xla" in e.requires} and "xla-jit-cpu" in checks.xla
    assert checks.raw_ops_only == {"unseeded-random-raw-ops", "softmax-xent-raw-op", "sparse-softmax-xent-raw-op"}
    assert checks.stateful_random == set(shipped.get("unseeded-random-ops").raw_ops)
    assert keras_sources.named(shipped, "layer")["Dropout"] == "keras-unseeded-dropout"
    assert keras_sources.named(shipped, "initializer")["GlorotUniform"] == "keras-unseeded-rng"


def test_a_stateful_map_check_without_stateful_random_ops_is_a_catalogue_error(tmp_path):
    from catalog_fixtures import GOOD_ENTRY, document

    path = tmp_path / "mine.yaml"
    path.write_text(document(dict(GOOD_ENTRY, scan={"check": "stateful_map"})))
    with pytest.raises(CatalogError, match="stateful_map looks for the stateful random ops"):
        load_catalogue(str(path), known_switches=default_catalogue().switches)


def test_an_unknown_scan_key_is_a_catalogue_error(tmp_path):
    from catalog_fixtures import GOOD_ENTRY, document

    path = tmp_path / "mine.yaml"
    path.write_text(document(dict(GOOD_ENTRY, scan={"check": "seeds"})))
    with pytest.raises(CatalogError, match="scan"):
        load_catalogue(str(path), known_switches=default_catalogue().switches)


@pytest.mark.parametrize("direction, passes", [
    ("forward", ("forward",)), ("gradient", ("gradient",)), ("forward_and_gradient", ("forward", "gradient")),
    ("input_pipeline", ("forward",)), ("runtime", ("forward",))])
def test_an_entry_is_probed_in_the_passes_of_its_direction(tmp_path, direction, passes):
    from catalog_fixtures import GOOD_ENTRY, document

    entry = dict(GOOD_ENTRY, direction=direction)
    if "gradient" in direction:
        entry["gradient_wrt"] = ["x"]
    path = tmp_path / "mine.yaml"
    path.write_text(document(entry))
    assert load_catalogue(str(path), known_switches=default_catalogue().switches).get("demo-op").passes == passes
    path.write_text(document(dict(entry, probe_passes=["gradient"])))
    assert load_catalogue(str(path), known_switches=default_catalogue().switches).get("demo-op").passes == (
        "gradient",)


def test_a_case_does_not_restate_the_passes_of_its_entry():
    from tfdet.probe.case_registry import case

    with pytest.raises(ValueError, match="come from the catalogue"):
        case("demo-op", passes=("forward",))
    with pytest.raises(ValueError, match="a fixture names its passes"):
        case("fixture-demo", fixture=True)
