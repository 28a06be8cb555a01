"""What patch() decides, from the catalogue alone (pure)."""

import pytest

from tfdet.catalog import COVERED_TF_VERSIONS, default_catalogue, load_user_catalogue
from tfdet.patching.plan import BYPASSED, NEEDS_SEED, plan_patch

from catalog_fixtures import document


@pytest.fixture()
def demo(tmp_path):
    path = tmp_path / "demo.yaml"
    path.write_text(document())
    return load_user_catalogue(str(path))


def test_old_gpu_tf_gets_the_replacement_and_the_determinism_switch(demo):
    plan = plan_patch(demo, "2.4", "gpu", {"demo"}, seeded=False)
    assert plan.supported and plan.replacements == {"demo": ["demo-op"]}
    # TF_DETERMINISTIC_OPS, a superset of TF_CUDNN_DETERMINISTIC from 2.1; never the autotune variable
    assert plan.env == {"TF_DETERMINISTIC_OPS": "1", "HOROVOD_FUSION_THRESHOLD": "0"}
    assert plan.api_switches == [] and plan.remaining == []


def test_missing_replacement_is_named(demo):
    (remaining,) = plan_patch(demo, "2.4", "gpu", set(), seeded=False).remaining
    assert remaining.verdict.entry.id == "demo-op" and remaining.reason == "tfdet has no demo replacement yet"


def test_raising_op_without_replacement_keeps_tf_error(demo):
    (remaining,) = plan_patch(demo, "2.6", "gpu", {"demo"}, seeded=False).remaining
    assert "raises UnimplementedError under determinism (TF's error is kept" in remaining.reason


def test_switch_covers_and_api_is_used_from_2_8(demo):
    plan = plan_patch(demo, "2.9", "gpu", set(), seeded=False)
    assert [c.entry_id for c in plan.covered] == ["demo-op"] and plan.remaining == []
    assert [s.id for s in plan.api_switches] == ["enable_op_determinism"]
    cpu = plan_patch(demo, "2.9", "cpu", set(), seeded=False)
    assert cpu.env == {"TF_DETERMINISTIC_OPS": "1"}


def test_tf1_gets_only_the_cudnn_switch(demo):
    assert plan_patch(demo, "1.15", "gpu", set(), seeded=False).env == {
        "TF_CUDNN_DETERMINISTIC": "1", "HOROVOD_FUSION_THRESHOLD": "0"}


def test_unsupported_and_newer_versions(demo):
    old = plan_patch(demo, "1.13", "gpu", {"demo"}, seeded=False)
    assert not old.supported and "older than any version tfdet knows" in old.note and old.env == {}
    new = plan_patch(demo, "2.30", "gpu", set(), seeded=False)
    assert new.supported and "newer than the catalogue" in new.note


@pytest.mark.parametrize("version", [str(v) for v in COVERED_TF_VERSIONS])
@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_never_sets_a_switch_that_silences_errors(version, device):
    catalogue = default_catalogue()
    forbidden = {s.name for s in catalogue.switches if s.role in ("silences_errors", "restores_nondeterminism")}
    plan = plan_patch(catalogue, version, device, set(), seeded=True)
    assert not forbidden & set(plan.env)


def test_seeding_covers_only_entries_it_fixes():
    catalogue = default_catalogue()
    seeded = {c.entry_id for c in plan_patch(catalogue, "2.21", "cpu", set(), seeded=True).covered}
    unseeded = plan_patch(catalogue, "2.21", "cpu", set(), seeded=False)
    assert "keras-unseeded-rng" in seeded
    reasons = {r.verdict.entry.id: r.reason for r in unseeded.remaining}
    assert reasons["keras-unseeded-rng"] == "unseeded: call tfdet.patch(seed=N)"
    assert "non-deterministic-ints" not in seeded


def test_error_silencing_switches_only_under_the_opt_in_and_still_named_as_not_covered():
    catalogue = default_catalogue()
    default = plan_patch(catalogue, "2.9", "gpu", set(), seeded=True)
    opted = plan_patch(catalogue, "2.9", "gpu", set(), seeded=True, on_unsupported="warn")
    silencing = {s.name for s in catalogue.switches_for("2.9", "gpu", roles=("silences_errors",))}
    assert silencing and not silencing & set(default.env)
    assert {s.name for s in opted.silenced} == silencing <= set(opted.env)
    # silencing an error does not make an op deterministic: the entries stay not covered, and watched
    assert [r.entry.id for r in opted.remaining] == [r.entry.id for r in default.remaining]
    assert set(opted.watched_ops()) == set(default.watched_ops())
    with pytest.raises(ValueError):
        plan_patch(catalogue, "2.9", "gpu", set(), seeded=True, on_unsupported="ignore")


def test_watched_ops_come_from_the_catalogue_raw_ops_of_what_is_not_covered():
    plan = plan_patch(default_catalogue(), "2.21", "cpu", {"bincount"}, seeded=True)
    watched = plan.watched_ops()
    assert {r.entry.id for r in watched["DenseBincount"]} == {"dense-bincount"}
    assert [r.entry.id for r in watched["Bincount"]] == ["bincount"]  # covered, but only through tf.math.bincount
    assert watched["Bincount"][0].reason.startswith("created directly")
    assert watched["Bincount"][0].kind == BYPASSED
    assert "RandomStandardNormal" in watched  # seed=0 raw random ops stay uncovered even when seeded
    expected = {op for r in plan.remaining for op in r.entry.raw_ops} | {"Bincount"}
    assert set(watched) == expected


def test_switches_in_words_fold_an_env_var_into_the_api_that_is_the_same_switch():
    catalogue = default_catalogue()
    assert plan_patch(catalogue, "2.21", "cpu", set(), seeded=True).switches_in_words() == ["enable_op_determinism()"]
    assert plan_patch(catalogue, "2.6", "gpu", set(), seeded=True).switches_in_words() == [
        "TF_DETERMINISTIC_OPS=1", "TF_CUDNN_USE_FRONTEND=1", "HOROVOD_FUSION_THRESHOLD=0"]


@pytest.mark.parametrize("version, frontend", [("2.4", False), ("2.5", True), ("2.7", True), ("2.8", False)])
def test_workarounds_a_catalogued_fix_needs_are_applied_where_it_needs_them(version, frontend):
    # TF 2.5-2.7 choose among deterministic cuDNN convolution algorithms by timing
    # them unless the cuDNN frontend is on (TF issue 53771): the catalogue's fix
    # names both switches, so the plan sets both, and only on those versions.
    plan = plan_patch(default_catalogue(), version, "gpu", set(), seeded=True)
    assert ("TF_CUDNN_USE_FRONTEND" in plan.env) == frontend
    assert "cudnn-conv-autotuning" in {c.entry_id for c in plan.covered}
    assert "TF_CUDNN_USE_FRONTEND" not in plan_patch(default_catalogue(), version, "cpu", set(), seeded=True).env


def test_coverage_kinds_are_data_and_decide_the_segment_kernel():
    """patch() lets the replacements call TF's UnsortedSegmentSum only where the catalogue says it is
    deterministic as shipped or under the switches the plan turns on (a kind, not a display string)."""
    from tfdet.patching.plan import REPLACED, SEEDED, SWITCHED

    catalogue = default_catalogue()
    gpu_new = plan_patch(catalogue, "2.21", "gpu", set(), seeded=True)
    kinds = {c.kind for c in gpu_new.covered}
    assert kinds <= {REPLACED, SEEDED, SWITCHED} and SWITCHED in kinds and SEEDED in kinds
    assert any(c.kind == SWITCHED and c.how.startswith("switch ") for c in gpu_new.covered)
    assert gpu_new.stock_segments_deterministic is True  # deterministic_with_switch, switch on
    assert plan_patch(catalogue, "2.6", "gpu", set(), seeded=False).stock_segments_deterministic is False
    assert plan_patch(catalogue, "2.6", "cpu", set(), seeded=False).stock_segments_deterministic is True


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_the_kind_of_a_remaining_entry_agrees_with_its_reason(device):
    """fix_of and the watcher decide from .kind; people read .reason: they must tell the same story."""
    for version in COVERED_TF_VERSIONS:
        plan = plan_patch(default_catalogue(), str(version), device, {"bincount"}, seeded=False)
        for remaining in plan.remaining:
            assert (remaining.kind == NEEDS_SEED) == remaining.reason.startswith("unseeded"), remaining
        for remaining in plan.bypassable:
            assert remaining.kind == BYPASSED and remaining.reason.startswith("created directly"), remaining
