"""`tfdet catalog update`: probe results -> proposed catalogue edits.

Real inputs: the committed results files under reports/ (CPU, TF 1.15 to 2.21)
against the shipped catalogue, and "a user's GPU file" written by the probe's
own results writer from real record types. Every proposed copy is checked by
the catalogue's own validation.
"""

import glob
import json
import os
import shutil
import subprocess

import pytest

import records
from cli_runner import run_cli
from tfdet.catalog import COVERED_TF_VERSIONS, CatalogError, default_catalogue, evidence, load_catalogue, update, yaml_edit
from tfdet.catalog.load import catalogue_from_texts, read_texts
from tfdet.catalog.validate import parse_document
from tfdet.cli.exitcodes import FINDING, INVALID_INPUT, OK, WRITE_FAILED
from tfdet.results import Build, ProbeResultsWriter, load

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MEASURED = sorted(glob.glob(os.path.join(ROOT, "reports", "measured", "*.jsonl")))
GPU_ENV = {"TF_DETERMINISTIC_OPS": "1", "TF_CUDNN_DETERMINISTIC": "1"}


def relative(path):
    return os.path.relpath(path, ROOT)


@pytest.fixture()
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)  # results are cited by the path given, as from the repository's root


def shipped_texts():
    return dict(read_texts(default_catalogue_dir()))


def default_catalogue_dir():
    from tfdet.catalog import shipped_catalogue_dir

    return shipped_catalogue_dir()


def proposed(plan, catalogue=None):
    """The plan written into the shipped files, loaded back through full validation."""
    catalogue = catalogue or default_catalogue()
    texts = yaml_edit.apply(shipped_texts(), catalogue, plan)
    return texts, catalogue_from_texts(sorted(texts.items()))


@pytest.fixture(scope="module")
def measured_proposal(measured_plan):
    return proposed(measured_plan)


def by_key(plan):
    return {(c.entry_id, c.device, str(c.version)): c for c in plan.changes}


# --------------------------------------------------------------------------- the status table

def rec(mode, outcome, runs=60, processes=2, distinct=None, name="demo", **fields):
    if distinct is None and outcome in ("deterministic", "varies"):
        distinct = 1 if outcome == "deterministic" else 5
    if outcome == "raised":
        fields.setdefault("error_type", "UnimplementedError")
        fields.setdefault("error_message", "Determinism is not yet supported in GPU implementation of Demo.")
        runs = distinct = None
    return records.case(name, mode, outcome, runs=runs, distinct=distinct, processes=processes, **fields)


ON = {"baseline": frozenset(), "env": frozenset({"TF_DETERMINISTIC_OPS"}),
      "api": frozenset({"enable_op_determinism"}), "patched": frozenset({"TF_DETERMINISTIC_OPS"})}

# (baseline, {mode: outcome}, runs, switch exists) -> (status, weak)
TABLE = [
    ("varies", {"env": "deterministic"}, 60, True, ("deterministic_with_switch", False)),
    ("varies", {"env": "deterministic"}, 10, True, ("deterministic_with_switch", True)),
    ("varies", {"env": "varies"}, 10, True, ("nondeterministic", False)),
    ("varies", {"env": "deterministic", "api": "varies"}, 60, True, ("nondeterministic", False)),
    ("varies", {"env": "raised"}, 60, True, ("raises_under_determinism", False)),
    ("deterministic", {"env": "raised"}, 60, True, ("raises_under_determinism", False)),
    ("varies", {"env": "raised", "api": "deterministic"}, 60, True, (None, False)),
    ("deterministic", {"env": "deterministic"}, 60, True, ("deterministic", False)),
    ("deterministic", {"env": "deterministic"}, 28, True, ("deterministic", True)),
    ("deterministic", {}, 29, True, ("deterministic", False)),
    ("deterministic", {"env": "varies"}, 60, True, ("nondeterministic", False)),
    ("varies", {}, 60, True, (None, False)),
    ("varies", {}, 10, False, ("nondeterministic", False)),
    ("raised", {"env": "raised"}, 60, True, (None, False)),
    ("failed", {"env": "deterministic"}, 60, True, (None, False)),
    ("varies", {"patched": "deterministic"}, 60, True, (None, False)),  # tfdet.patch() is not TF
]


@pytest.mark.parametrize("base, others, runs, switch_exists, expected", TABLE)
def test_the_probes_outcomes_in_the_catalogues_words(base, others, runs, switch_exists, expected):
    by_mode = {"baseline": rec("baseline", base, runs=runs)}
    by_mode.update((mode, rec(mode, outcome, runs=runs)) for mode, outcome in others.items())
    inference = evidence.infer(by_mode, ON, switch_exists)
    assert (inference.status, inference.weak) == expected, inference.reason


def test_one_process_is_weak_however_many_runs():
    by_mode = {"baseline": rec("baseline", "deterministic", runs=200, processes=1)}
    assert evidence.infer(by_mode, ON).weak


def test_the_strength_threshold_is_the_rate_it_rules_out():
    from tfdet.results.stats import max_rate_ruled_out

    runs = evidence.strong_runs()
    assert max_rate_ruled_out(runs) <= evidence.MAX_RATE_LEFT_OPEN < max_rate_ruled_out(runs - 1)


def test_raised_carries_tfs_error():
    by_mode = {"baseline": rec("baseline", "varies"), "env": rec("env", "raised")}
    inference = evidence.infer(by_mode, ON)
    assert inference.error_type == "UnimplementedError" and "Demo" in inference.error_message


# --------------------------------------------------------------------------- the committed CPU results

@pytest.fixture(scope="module")
def measured_plan():
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        loaded = [(relative(p), load(p)) for p in MEASURED]
    finally:
        os.chdir(cwd)
    return update.plan(default_catalogue(), loaded)


def test_agreement_adds_the_measured_source_and_its_provenance(measured_plan, measured_proposal):
    change = by_key(measured_plan)[("unsorted-segment-sum", "cpu", "2.6")]
    assert change.kind == update.AGREE and change.applied
    cited = "reports/measured/bincount-segment-scatter-cpu-tf2.6.jsonl"
    assert change.add_sources == ("measured:" + cited,)
    _, catalogue = measured_proposal
    claim = catalogue.get("unsorted-segment-sum").range_for("2.6", "cpu")
    assert claim.status == "deterministic"
    assert claim.sources[0] == "tf-source:tensorflow/core/kernels/segment_reduction_ops_impl.h"  # kept, first
    assert "measured:" + cited in claim.sources
    item = next(e for e in claim.evidence if e.results == cited)
    assert (item.tf_version, item.device, item.runs, item.processes) == ("2.6.4", "cpu", 60, 2)
    assert item.date == load(os.path.join(ROOT, cited)).header.created and "AMD EPYC" in item.host


def _unsure_of_bincount_on_cpu():
    """The shipped catalogue with bincount's CPU rows as they were before any
    measurement: unknown before 2.15 (a document only), varying from 2.15."""
    texts = shipped_texts()
    path = default_catalogue().get("bincount").origin.path
    text = texts[path]
    start = text.index("  - id: bincount\n")
    end = text.index("\n  - id: ", start + 5)
    block = text[start:end]
    cpu = block.index("\n      cpu:\n")
    tail = block.index("\n    sources:", cpu)
    rows = ('\n      cpu:\n        - versions: "<2.15"\n          status: unknown\n'
            '          sources: [fwr13y-doc:tensorflow.md#cpu]\n        - versions: ">=2.15"\n'
            '          status: nondeterministic\n          sources: [fwr13y-doc:tensorflow.md#cpu]')
    texts[path] = text[:start] + block[:cpu] + rows + block[tail:] + text[end:]
    return texts, catalogue_from_texts(sorted(texts.items()))


def test_a_version_the_catalogue_is_unsure_of_gets_a_claim_and_the_rest_stays(at_root):
    texts, unsure = _unsure_of_bincount_on_cpu()
    plan = update.plan(unsure, [(relative(p), load(p)) for p in MEASURED])
    change = by_key(plan)[("bincount", "cpu", "2.6")]
    assert change.kind == update.NEW and change.proposal.status == "deterministic"
    catalogue = catalogue_from_texts(sorted(yaml_edit.apply(texts, unsure, plan).items()))
    entry = catalogue.get("bincount")
    assert entry.range_for("2.6", "cpu").status == "deterministic"
    assert entry.range_for("2.6", "cpu").sources == ("measured:reports/measured/bincount-segment-scatter-cpu-tf2.6.jsonl",)
    old = unsure.get("bincount").range_for("2.5", "cpu")
    kept = entry.range_for("2.5", "cpu")  # not measured: the old claim, in a range of its own
    assert (kept.status, kept.sources, kept.note) == (old.status, old.sources, old.note) == (
        "unknown", ("fwr13y-doc:tensorflow.md#cpu",), None)
    assert entry.range_for("2.21", "cpu").status == "nondeterministic"
    assert entry.devices["gpu"] == default_catalogue().get("bincount").devices["gpu"]


def test_devices_are_compared_one_by_one(measured_plan):
    """scatter-nd varies on GPUs before 2.7; CPU runs that did not vary agree with its CPU claim."""
    assert default_catalogue().get("scatter-nd").range_for("2.6", "gpu").status == "nondeterministic"
    changes = [c for c in measured_plan.changes if c.entry_id == "scatter-nd"]
    assert changes and {(c.kind, c.device) for c in changes} == {(update.AGREE, "cpu")}
    assert not measured_plan.conflicts


def test_nothing_but_the_changed_ranges_changes(measured_proposal):
    before = shipped_texts()
    after, _ = measured_proposal
    for path, text in before.items():
        removed = set(text.splitlines()) - set(after[path].splitlines())
        # only the lines of ranges rewritten: a closing source list, or a split range's versions
        assert all(line.strip().startswith(("sources:", "- versions:")) for line in removed), (path, removed)
    assert after[os.path.join(default_catalogue_dir(), "switches.yaml")] == before[
        os.path.join(default_catalogue_dir(), "switches.yaml")]


def test_the_proposed_copy_passes_catalog_check(tmp_path, at_root):
    out = tmp_path / "proposed"
    code, text, err = run_cli("catalog", "update", "--from", *map(relative, MEASURED), "--out", str(out))
    assert code == OK, err
    assert "Proposed:" in text and "written to %s" % out in text
    assert sorted(os.listdir(out)) == sorted(os.path.basename(p) for p in shipped_texts())
    code, text, err = run_cli("catalog", "check", str(out))
    assert code == OK, err
    # and a second run against the copy has nothing left to add
    code, text, _ = run_cli("catalog", "update", "--from", *map(relative, MEASURED), "--catalog", str(out), "--json")
    data = json.loads(text)
    assert code == OK and data["files_changed"] == [] and data["counts"]["new"] == 0
    assert all(not c["applied"] for c in data["changes"])


# --------------------------------------------------------------------------- a user's GPU file

def gpu_file(path, tf_version, cases, repeats=30):
    """A probe results file from a GPU machine, written by the probe's writer."""
    gpus = [{"device": "/physical_device:GPU:0", "name": "NVIDIA A100-SXM4-40GB", "compute_capability": "8.0"}]
    build = Build(cuda_build=True, cuda_version="11.2", cudnn_version="8.1")

    def environment(env):
        return records.environment(tf_version=tf_version, device="gpu", gpus=gpus, nvidia_driver="535.104.05",
                                   build=build, env=env, cpu_model="Intel Xeon", cpu_count=8)

    header = records.header(
        modes=("baseline", "env"), repeats=repeats, processes=2, created="2026-11-25T03:00:00+00:00",
        environment={"baseline": environment({}), "env": environment(GPU_ENV)},
        planned=[[name, pass_name] for name, pass_name, _ in cases])
    writer = ProbeResultsWriter(str(path))
    writer.start(header)
    runs = repeats * 2
    for name, pass_name, outcomes in cases:
        writer.write_cases([
            records.case(name, mode, outcome, pass_name=pass_name, runs=runs, processes=2,
                         distinct=(1 if outcome == "deterministic" else distinct))
            for mode, (outcome, distinct) in outcomes.items()])
    writer.write_end(records.end())
    writer.close()
    return str(path)


@pytest.fixture()
def users_gpu_file(tmp_path):
    return gpu_file(tmp_path / "gpu-tf2.6.jsonl", "2.6.2", [
        # cuDNN's backprop varies; TF_DETERMINISTIC_OPS fixes it: what the catalogue says for 2.6
        ("conv2d-backprop", "gradient", {"baseline": ("varies", 7), "env": ("deterministic", 1)}),
        # the documented claim: nondeterministic before 2.7, no switch; here the switch fixed it
        ("scatter-nd", "forward", {"baseline": ("varies", 40), "env": ("deterministic", 1)}),
    ])


def test_a_users_gpu_run_becomes_a_reviewed_change_with_one_command(users_gpu_file, tmp_path):
    patch = tmp_path / "gpu.diff"
    code, text, err = run_cli("catalog", "update", "--from", users_gpu_file, "--patch", str(patch))
    assert code == FINDING, err  # a conflict with a documented claim waits for a person
    assert "CONFLICT" in text and "scatter-nd gpu TF 2.6" in text and "not applied" in text
    diff = patch.read_text()
    cited = users_gpu_file  # outside the working directory: cited by its absolute path
    assert diff.startswith("--- a/") and "+++ b/" in diff
    assert "measured:%s" % cited in diff
    for fact in ("NVIDIA A100-SXM4-40GB (compute capability 8.0)", "535.104.05", '"11.2"', "8.1", "2.6.2"):
        assert fact in diff, fact
    assert "# tfdet catalog update: CONFLICT, not applied" in diff


def test_agreement_on_a_gpu_records_the_gpu_driver_cuda_and_cudnn(users_gpu_file):
    plan = update.plan(default_catalogue(), [(users_gpu_file, load(users_gpu_file))])
    change = by_key(plan)[("conv2d-backprop", "gpu", "2.6")]
    assert change.kind == update.AGREE
    _, catalogue = proposed(plan)
    claim = catalogue.get("conv2d-backprop").range_for("2.6", "gpu")
    assert claim.status == "deterministic_with_switch" and claim.switches == ("TF_DETERMINISTIC_OPS",)
    (item,) = claim.evidence
    assert (item.gpu, item.driver, item.cuda, item.cudnn) == (
        "NVIDIA A100-SXM4-40GB (compute capability 8.0)", "535.104.05", "11.2", "8.1")
    # the CPU claims of the same entry are untouched
    assert catalogue.get("conv2d-backprop").devices["cpu"] == default_catalogue().get("conv2d-backprop").devices["cpu"]


def test_a_documented_claim_in_conflict_is_listed_and_not_applied(users_gpu_file):
    plan = update.plan(default_catalogue(), [(users_gpu_file, load(users_gpu_file))])
    (conflict,) = plan.conflicts
    assert (conflict.entry_id, conflict.device, str(conflict.version)) == ("scatter-nd", "gpu", "2.6")
    assert conflict.proposal.status == "deterministic_with_switch" and not conflict.applied
    texts, catalogue = proposed(plan)
    assert catalogue.get("scatter-nd").devices["gpu"] == default_catalogue().get("scatter-nd").devices["gpu"]
    path = default_catalogue().get("scatter-nd").origin.path
    assert "# tfdet catalog update: CONFLICT, not applied: measured deterministic_with_switch" in texts[path]


def test_an_accepted_conflict_splits_the_range_and_names_the_claim_it_replaces(users_gpu_file):
    plan = update.plan(default_catalogue(), [(users_gpu_file, load(users_gpu_file))], accept_conflicts=True)
    assert plan.conflicts and not plan.open_conflicts
    _, catalogue = proposed(plan)
    entry, old = catalogue.get("scatter-nd"), default_catalogue().get("scatter-nd")
    claim = entry.range_for("2.6", "gpu")
    # the env mode turned both variables on: the claim names what was measured to suffice
    assert (claim.status, claim.switches, claim.versions) == (
        "deterministic_with_switch", ("TF_CUDNN_DETERMINISTIC", "TF_DETERMINISTIC_OPS"), ">=2.6,<2.7")
    assert "Replaces, for TF 2.6, the claim nondeterministic (TF <2.7" in claim.note
    assert entry.range_for("2.5", "gpu").status == "nondeterministic"
    assert entry.range_for("2.5", "gpu").sources == old.range_for("2.5", "gpu").sources
    assert entry.range_for("2.7", "gpu") == old.range_for("2.7", "gpu")


def test_too_few_runs_never_turn_a_documented_nondeterministic_claim_around(tmp_path):
    path = gpu_file(tmp_path / "few.jsonl", "2.6.2", [
        ("scatter-nd", "forward", {"baseline": ("varies", 8), "env": ("deterministic", 1)})], repeats=5)
    plan = update.plan(default_catalogue(), [(path, load(path))], accept_conflicts=True)
    (change,) = plan.changes
    assert change.kind == update.WEAK and not change.applied and "10 runs" in change.reason
    code, text, _ = run_cli("catalog", "update", "--from", path, "--accept-conflicts")
    assert code == OK and "weak evidence, not written (1)" in text and "Nothing to change" in text


def test_a_measurement_splits_a_range_that_rests_only_on_measurements(tmp_path):
    """dense-bincount on CPU is nondeterministic from 2.4, on our measurements only; a run of
    2.12 where op determinism fixed it often-varying results splits that range."""
    path = gpu_file(tmp_path / "cpu212.jsonl", "2.12.0", [
        ("dense-bincount", "forward", {"baseline": ("varies", 40), "env": ("deterministic", 1)})])
    data = json.loads(open(path).readline())
    for env in data["environment"].values():
        env.update(device="cpu", gpus=[], nvidia_driver=None, env={"TF_DETERMINISTIC_OPS": "1"})
    data["environment"]["baseline"]["env"] = {}
    lines = open(path).read().splitlines()
    lines[0] = json.dumps(data, sort_keys=True)
    open(path, "w").write("\n".join(lines) + "\n")
    plan = update.plan(default_catalogue(), [(path, load(path))])
    (change,) = plan.changes
    assert change.kind == update.SUPERSEDE and change.applied
    _, catalogue = proposed(plan)
    entry, old = catalogue.get("dense-bincount"), default_catalogue().get("dense-bincount")
    claim = entry.range_for("2.12", "cpu")
    # TF_DETERMINISTIC_OPS is enable_op_determinism from 2.8: named as the catalogue names it there
    assert claim.status == "deterministic_with_switch" and claim.switches == ("enable_op_determinism",)
    assert claim.workaround == old.range_for("2.12", "cpu").workaround  # the tfdet advice stays
    for version in ("2.11", "2.13"):
        assert entry.range_for(version, "cpu").status == "nondeterministic"
        assert entry.range_for(version, "cpu").sources == old.range_for(version, "cpu").sources
    assert [r.versions for r in entry.devices["cpu"]] == ["<2.3", ">=2.3,<2.4", ">=2.4,<2.12", ">=2.12,<2.13", ">=2.13"]


# --------------------------------------------------------------------------- the schema's evidence list

def test_evidence_for_a_file_the_range_does_not_cite_is_refused():
    import copy

    from catalog_fixtures import GOOD_ENTRY, document

    entry = copy.deepcopy(GOOD_ENTRY)
    item = {"results": "reports/x.jsonl", "tf_version": "2.9.0", "device": "gpu", "runs": 60, "processes": 2,
            "date": "2026-11-25"}
    entry["devices"]["gpu"][2]["evidence"] = [item]
    with pytest.raises(CatalogError) as caught:
        parse_document(document(entry), "demo.yaml")
    (problem,) = caught.value.problems
    assert "evidence for 'reports/x.jsonl', which this range does not cite" in problem.message and problem.line > 0
    entry["devices"]["gpu"][2]["sources"].append("measured:reports/x.jsonl")
    (parsed,), _ = parse_document(document(entry), "demo.yaml")
    assert parsed.devices["gpu"][2].evidence[0].runs == 60


# --------------------------------------------------------------------------- bad input

def test_a_missing_results_file_is_one_line_and_exit_3(tmp_path):
    code, out, err = run_cli("catalog", "update", "--from", str(tmp_path / "nope.jsonl"))
    assert code == INVALID_INPUT and out == ""
    assert err.strip().count("\n") == 0 and "nope.jsonl: cannot read" in err and "Traceback" not in err


def test_a_file_that_is_not_a_probe_file_is_refused(tmp_path):
    path = tmp_path / "notes.jsonl"
    path.write_text('{"hello": 1}\n')
    code, _, err = run_cli("catalog", "update", "--from", str(path))
    assert code == INVALID_INPUT and "notes.jsonl: not a tfdet results file" in err


def test_a_malformed_line_names_the_file_and_line(users_gpu_file):
    lines = open(users_gpu_file).read().splitlines()
    lines.insert(2, "{not json")
    open(users_gpu_file, "w").write("\n".join(lines) + "\n")
    code, _, err = run_cli("catalog", "update", "--from", users_gpu_file)
    assert code == INVALID_INPUT and "%s:3:" % users_gpu_file in err and err.strip().count("\n") == 0


def test_an_output_that_cannot_be_written_is_exit_5(users_gpu_file, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, _, err = run_cli("catalog", "update", "--from", users_gpu_file, "--out", str(blocker))
    assert code == WRITE_FAILED and str(blocker) in err and err.strip().count("\n") == 0


def test_the_shipped_catalogue_is_never_edited_without_out(users_gpu_file):
    before = shipped_texts()
    code, _, _ = run_cli("catalog", "update", "--from", users_gpu_file, "--accept-conflicts")
    assert code == OK
    assert shipped_texts() == before
    assert load_catalogue() is not None


# --------------------------------------------------------------------------- edges

def test_a_device_with_no_claims_gets_them_from_the_measured_versions(tmp_path):
    """cpu-multithreading has CPU claims only; a GPU machine's run of it proposes GPU claims:
    the measured version as measured, every other version unknown, citing the file."""
    assert "gpu" not in default_catalogue().get("cpu-multithreading").devices
    path = gpu_file(tmp_path / "gpu.jsonl", "2.6.2", [
        ("cpu-multithreading", "forward", {"baseline": ("varies", 9), "env": ("varies", 6)})])
    plan = update.plan(default_catalogue(), [(path, load(path))])
    (change,) = plan.changes
    assert change.kind == update.NEW and change.claim is None
    _, catalogue = proposed(plan)
    ranges = catalogue.get("cpu-multithreading").devices["gpu"]
    assert [(r.versions, r.status) for r in ranges] == [
        ("<2.6", "unknown"), (">=2.6,<2.7", "nondeterministic"), (">=2.7", "unknown")]
    assert all(r.sources == ("measured:" + path,) for r in ranges)


def test_a_tf_outside_the_catalogue_and_cases_it_does_not_know_are_noted(tmp_path):
    newer = gpu_file(tmp_path / "newer.jsonl", "2.22.0", [
        ("conv2d-backprop", "gradient", {"baseline": ("varies", 7), "env": ("deterministic", 1)})])
    fixture = gpu_file(tmp_path / "fixture.jsonl", "2.6.2", [
        ("fixture-op", "forward", {"baseline": ("varies", 7), "env": ("deterministic", 1)})])
    plan = update.plan(default_catalogue(), [(newer, load(newer)), (fixture, load(fixture))])
    assert plan.changes == []
    assert "TF 2.22.0 is outside the catalogue's versions" in plan.notes[0]
    assert "not in the catalogue, not compared: fixture-op" in plan.notes[1]


def test_where_measurements_disagree_the_one_that_saw_more_variance_wins():
    fixed = evidence.Inference("deterministic_with_switch", "a", modes=("env",), runs=60)
    varied = evidence.Inference("nondeterministic", "b", modes=("env",), runs=60)
    weak_varied_less = evidence.Inference("deterministic", "c", weak=True, runs=10)
    assert evidence.combine([fixed, varied]) is varied
    assert evidence.combine([weak_varied_less, fixed]) is fixed  # strong evidence first
    assert evidence.combine([weak_varied_less]) is weak_varied_less


def test_catalog_show_lists_the_evidence(measured_proposal):
    from tfdet.cli.catalog_cmd import render_entry

    _, catalogue = measured_proposal
    text = render_entry(catalogue.get("unsorted-segment-sum"))
    assert ("measured: reports/measured/bincount-segment-scatter-cpu-tf2.6.jsonl (TF 2.6.4, cpu, AMD EPYC, 2 cores"
            in text)
    assert "60 runs in 2 processes, 2026-11-21T20:44:02+00:00)" in text


def test_the_readmes_example_output_is_what_the_command_prints(at_root, monkeypatch):
    """The docs' catalogue page shows a real run on reports/measured/; re-run on the files it names, it prints
    the same."""
    with open(os.path.join(ROOT, "docs", "topics", "catalogue.md"), encoding="utf-8") as handle:
        readme = handle.read()
    command = "$ tfdet catalog update --from reports/measured/*.jsonl\n"
    shown = readme.split(command, 1)[1].split("\n$ ", 1)[0]
    files = [line.split(":", 1)[0].strip() for line in shown.splitlines() if line.startswith("  reports/")]
    assert len(files) == 5
    monkeypatch.setenv("COLUMNS", "100")
    code, out, _ = run_cli("catalog", "update", "--from", *files)
    assert code == OK and out.rstrip("\n") == shown.rstrip("\n")


def test_runs_that_did_not_vary_never_replace_a_claim_that_it_varies(tmp_path):
    """unsorted-segment-sum on GPUs in 2.6 raises once determinism is on (documented); a run where
    it neither varied nor raised is a conflict for a person, never applied, even when accepted."""
    path = gpu_file(tmp_path / "quiet.jsonl", "2.6.2", [
        ("unsorted-segment-sum", "forward", {"baseline": ("deterministic", 1), "env": ("deterministic", 1)})])
    plan = update.plan(default_catalogue(), [(path, load(path))], accept_conflicts=True)
    (change,) = plan.changes
    assert change.kind == update.CONFLICT and change.proposal.status == "deterministic"
    assert not change.applied and not change.acceptable and plan.open_conflicts
    texts, catalogue = proposed(plan)
    path = default_catalogue().get("unsorted-segment-sum").origin.path
    assert "never replaced by runs that did not vary" in " ".join(texts[path].replace("#", " ").split())
    assert catalogue.get("unsorted-segment-sum").devices == default_catalogue().get("unsorted-segment-sum").devices


def test_json_says_what_changes_and_why(users_gpu_file):
    code, out, _ = run_cli("catalog", "update", "--from", users_gpu_file, "--json")
    data = json.loads(out)
    assert code == FINDING and data["exit_code"] == FINDING and data["open_conflicts"] == 1
    kinds = {(c["id"], c["kind"], c["applied"]) for c in data["changes"]}
    assert kinds == {("conv2d-backprop", "agree", True), ("scatter-nd", "conflict", False)}
    conflict = next(c for c in data["changes"] if c["kind"] == "conflict")
    assert conflict["claim"]["status"] == "nondeterministic" and conflict["measured_status"] == "deterministic_with_switch"
    assert conflict["proposal"]["evidence"][0]["gpu"].startswith("NVIDIA A100")
    assert "The catalogue says nondeterministic" in conflict["reason"]
    assert data["written"] is None and data["files_changed"]  # proposed, not written


def test_flow_style_ranges_of_a_users_catalogue_are_refused_clearly(tmp_path, users_gpu_file):
    path = tmp_path / "mine.yaml"
    path.write_text("""schema_version: 1
entries:
  - id: conv2d-backprop
    title: Mine
    description: A user's own entry, its ranges written in flow style.
    apis: [tf.nn.conv2d]
    raw_ops: [Conv2DBackpropFilter]
    direction: gradient
    gradient_wrt: [filter]
    root_cause: algorithm_selection
    devices:
      gpu: [{versions: ">=1.14", status: deterministic, sources: ["tf-issue:1"]}]
    sources: ["tf-issue:1"]
""")
    code, _, err = run_cli("catalog", "update", "--from", users_gpu_file, "--catalog", str(path))
    assert code == INVALID_INPUT and "flow style" in err and err.strip().count("\n") == 0


# --------------------------------------------------------------------------- any measurements

def _results_of(measurements):
    """In-memory ProbeResults, one per (device, TF version), for probe_measurements' tuples."""
    files = {}
    for entry_id, device, version, base, env, runs in measurements:
        files.setdefault((device, version), []).append((entry_id, base, env, runs))
    loaded = []
    for (device, version), cases in sorted(files.items()):
        environments = {mode: records.environment(tf_version=version + ".0", device=device, env=env)
                        for mode, env in (("baseline", {}), ("env", dict(GPU_ENV)))}
        header = records.header(modes=("baseline", "env"), environment=environments,
                                planned=[[c[0], "forward"] for c in cases])
        found = []
        for entry_id, base, env, runs in cases:
            found.extend(rec(mode, outcome, runs=runs, name=entry_id) for mode, outcome in (("baseline", base), ("env", env)))
        loaded.append(("reports/measured/%s-tf%s.jsonl" % (device, version), records.results(header, found)))
    return loaded


@pytest.mark.slow
def test_any_measurements_give_a_valid_catalogue_that_says_what_was_applied():
    from hypothesis import HealthCheck, given, settings

    from strategies import probe_measurements

    catalogue = default_catalogue()
    ids = [e.id for e in catalogue][::4] + ["bincount", "dense-bincount", "scatter-nd", "cpu-multithreading"]
    versions = ["1.15", "2.0", "2.4", "2.5", "2.6", "2.7", "2.8", "2.12", "2.20", "2.21"]
    texts = shipped_texts()

    @settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(probe_measurements(ids, versions))
    def check(measurements):
        plan = update.plan(catalogue, _results_of(measurements), accept_conflicts=True)
        after = yaml_edit.apply(texts, catalogue, plan)
        edited = catalogue_from_texts(sorted(after.items()))  # valid: schema, coverage, switches
        changed = {(c.entry_id, c.device, c.version): c for c in plan.changes if c.applied}
        for entry in catalogue:
            for device in ("cpu", "gpu"):
                for version in COVERED_TF_VERSIONS:
                    old, new = entry.range_for(version, device), edited.get(entry.id).range_for(version, device)
                    change = changed.get((entry.id, device, version))
                    if change is not None and change.proposal is not None:
                        assert new.status == change.proposal.status
                        assert set(change.proposal.sources) <= set(new.sources)
                    elif old is not None:  # untouched: the same claim, perhaps with more measured sources
                        assert (new.status, new.switches, new.note) == (old.status, old.switches, old.note)
                        assert set(old.sources) <= set(new.sources)
                        assert all(s.startswith("measured:") for s in set(new.sources) - set(old.sources))
                    else:
                        assert new is None or new.status in ("unknown",)

    check()



def test_out_may_be_the_catalogues_own_directory_when_asked(tmp_path, users_gpu_file):
    import shutil

    mine = tmp_path / "catalogue"
    shutil.copytree(default_catalogue_dir(), mine, ignore=shutil.ignore_patterns("*.py", "__pycache__"))
    before = {name: (mine / name).read_text() for name in os.listdir(mine)}
    code, _, err = run_cli("catalog", "update", "--from", users_gpu_file, "--catalog", str(mine), "--out", str(mine))
    assert code == FINDING, err
    changed = sorted(name for name in before if (mine / name).read_text() != before[name])
    assert changed == ["convolution_pooling.yaml", "sparse_scatter.yaml"]
    assert not [n for n in os.listdir(mine) if n.endswith(".tmp-tfdet")]
    assert run_cli("catalog", "check", str(mine))[0] == OK


def test_what_the_patched_mode_did_is_a_note_not_an_edit():
    """bincount on CPU in 2.21: nondeterministic, and tfdet.patch() replaces it. A patched run
    that still varied says something about tfdet, not about TensorFlow's claim."""
    header = records.header(modes=("baseline", "api", "patched"), environment={
        mode: records.environment(env={"TF_DETERMINISTIC_OPS": "1"} if mode == "patched" else {})
        for mode in ("baseline", "api", "patched")}, repeats=30)
    cases = [rec("baseline", "varies", name="bincount"), rec("api", "varies", name="bincount"),
             rec("patched", "varies", name="bincount")]
    plan = update.plan(default_catalogue(), [("run.jsonl", records.results(header, cases))])
    (change,) = plan.changes
    assert change.kind == update.AGREE and change.add_sources == ("measured:run.jsonl",)
    assert any("about tfdet.patch()" in note and "bincount cpu TF 2.21" in note for note in plan.notes)


def test_a_second_run_states_a_conflict_once_and_an_accepted_one_leaves_no_comment(users_gpu_file):
    catalogue = default_catalogue()
    plan = update.plan(catalogue, [(users_gpu_file, load(users_gpu_file))])
    path = catalogue.get("scatter-nd").origin.path
    once = yaml_edit.apply(shipped_texts(), catalogue, plan)
    again = yaml_edit.apply(once, catalogue_from_texts(sorted(once.items())), plan)
    assert once[path].count("CONFLICT, not applied") == 1 and again[path] == once[path]
    accepted = update.plan(catalogue, [(users_gpu_file, load(users_gpu_file))], accept_conflicts=True)
    settled = yaml_edit.apply(once, catalogue_from_texts(sorted(once.items())), accepted)
    assert "CONFLICT" not in settled[path]
    assert yaml_edit.without_conflict_comments(once[path]) == shipped_texts()[path]


def test_neighbouring_versions_with_one_outcome_say_it_once():
    first = update.Observation(version=update.Version("2.10"), where="TF 2.10.1, cpu", reason="It raised.",
                               replaced="nondeterministic (TF >=2.10,<2.16; tf-release:2.10)")
    second = update.Observation(version=update.Version("2.11"), where="TF 2.11.1, cpu", reason="It raised.",
                                replaced=first.replaced)
    proposal = update.Proposal(status="raises_under_determinism", sources=("measured:a",), evidence=(),
                               observations=(first,))
    merged = proposal.merged([update.Proposal(status=proposal.status, sources=("measured:b",), evidence=(),
                                              observations=(second,))])
    assert merged.sources == ("measured:a", "measured:b")
    assert merged.note == ("Measured by tfdet probe (TF 2.10.1, cpu; TF 2.11.1, cpu): It raised. Replaces, for "
                           "TF 2.10-2.11, the claim nondeterministic (TF >=2.10,<2.16; tf-release:2.10).")


def _copy_of_the_shipped_catalogue(directory):
    directory.mkdir(parents=True)
    for name in os.listdir(default_catalogue_dir()):
        if name.endswith((".yaml", ".json")):
            shutil.copy(os.path.join(default_catalogue_dir(), name), str(directory / name))
    return directory


def _git_apply_check(repo, patch):
    return subprocess.run(["git", "apply", "--check", str(patch)], cwd=str(repo), capture_output=True, text=True)


def test_patch_of_an_installed_catalogue_names_repository_paths_and_says_it_is_no_checkout(users_gpu_file, tmp_path):
    # A non-editable install: the catalogue sits in site-packages/tfdet/catalog_data, in no git checkout.
    installed = _copy_of_the_shipped_catalogue(tmp_path / "site-packages" / "tfdet" / "catalog_data")
    patch = tmp_path / "gpu.diff"
    code, text, err = run_cli("catalog", "update", "--from", users_gpu_file, "--catalog", str(installed),
                              "--patch", str(patch))
    assert code == FINDING, err
    diff = patch.read_text()
    assert "site-packages" not in diff and diff.startswith("--- a/tfdet/catalog_data/")
    copy = tmp_path / "gpu-catalog"
    assert "is not a git checkout" in text and "edited catalogue files were written to %s" % copy in text
    edited = [n for n in os.listdir(str(copy)) if (copy / n).read_text() != (installed / n).read_text()]
    assert edited  # the edited files are there to use as they are
    # and the diff applies, as it is, in a checkout of tfdet's repository
    repo = tmp_path / "checkout"
    _copy_of_the_shipped_catalogue(repo / "tfdet" / "catalog_data")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    result = _git_apply_check(repo, patch)
    assert result.returncode == 0, result.stderr


def test_patch_of_a_checkouts_catalogue_names_paths_from_the_checkout_root(users_gpu_file, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    catalogue = _copy_of_the_shipped_catalogue(repo / "my" / "catalogue")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(str(elsewhere))  # run from outside the checkout
    patch = tmp_path / "mine.diff"
    code, text, err = run_cli("catalog", "update", "--from", users_gpu_file, "--catalog", str(catalogue),
                              "--patch", str(patch), "--json")
    assert code == FINDING, err
    written = json.loads(text)["written"]
    assert written["checkout"] == str(repo) and written["edited_copy"] is None
    assert patch.read_text().startswith("--- a/my/catalogue/")
    result = _git_apply_check(repo, patch)
    assert result.returncode == 0, result.stderr
