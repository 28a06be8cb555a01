"""The GPU plan, TF version by TF version, against the sourced table it comes from.

The table is the set_by_patch rows of the catalogue's switches.yaml: each row says
on which TF versions tfdet.patch(device="gpu") sets one switch, and cites the
primary source (NVIDIA's framework-reproducibility status page, TF's source,
release notes and PRs) that says to set it there. No GPU runs here, so the rows
are what the plan rests on; these tests hold the plan to them, and the rows to
what the sources say (issue 25, item 4).
"""

import pytest

from tfdet.catalog import COVERED_TF_VERSIONS, default_catalogue, describe_source, tf_minor
from tfdet.patching.plan import ON_WARN, plan_patch

VERSIONS = [str(v) for v in COVERED_TF_VERSIONS]


@pytest.fixture(scope="module")
def cat():
    return default_catalogue()


def _rows(cat, version, when="always"):
    """{switch id: switch} whose GPU rows cover this version."""
    return {s.id: s for s in cat.switches if s.set_by_patch_in(version, "gpu", when) is not None}


@pytest.mark.parametrize("version", VERSIONS)
def test_gpu_plan_sets_exactly_the_rows_that_cover_its_version(cat, version):
    plan = plan_patch(cat, version, "gpu", set(), seeded=True)
    rows = _rows(cat, version)
    assert plan.env == {s.name: s.value for s in rows.values() if s.kind == "env"}
    assert sorted(s.id for s in plan.api_switches) == sorted(i for i, s in rows.items() if s.kind == "api")
    # patch() reports what it changed from these same objects
    assert {s.id for s in plan.env_switches} == {i for i, s in rows.items() if s.kind == "env"}


@pytest.mark.parametrize("version", VERSIONS)
def test_silencing_rows_apply_only_under_on_unsupported_warn(cat, version):
    default = plan_patch(cat, version, "gpu", set(), seeded=True)
    warned = plan_patch(cat, version, "gpu", set(), seeded=True, on_unsupported="warn")
    silencing = _rows(cat, version, ON_WARN)
    assert {s.id for s in warned.silenced} == set(silencing)
    assert not {s.name for s in silencing.values()} & set(default.env)
    assert set(warned.env) == set(default.env) | {s.name for s in silencing.values()}


# What the sources say, version by version (NVIDIA framework-reproducibility
# doc/d9m/tensorflow_status.md at 39c076b, lines 78-89 and 118-127; TF 2.1 and
# 2.8 release notes; TF issue 53771): the plan must follow it.
def _expected(version):
    v = tf_minor(version)
    env = {"HOROVOD_FUSION_THRESHOLD": "0"}  # NVIDIA tensorflow.md lines 451-457, any TF
    if v < tf_minor("2.1"):
        env["TF_CUDNN_DETERMINISTIC"] = "1"
    else:
        env["TF_DETERMINISTIC_OPS"] = "1"
    if tf_minor("2.5") <= v < tf_minor("2.8"):
        env["TF_CUDNN_USE_FRONTEND"] = "1"
    api = ["enable_op_determinism"] if v >= tf_minor("2.8") else []
    return env, api


@pytest.mark.parametrize("version", VERSIONS)
def test_gpu_plan_follows_nvidia_status_page_per_version(cat, version):
    plan = plan_patch(cat, version, "gpu", set(), seeded=True)
    env, api = _expected(version)
    assert plan.env == env
    assert [s.id for s in plan.api_switches] == api


@pytest.mark.parametrize("on_unsupported", ["raise", "warn"])
@pytest.mark.parametrize("version", VERSIONS)
def test_gpu_plan_never_sets_the_cudnn_autotune_variable(cat, version, on_unsupported):
    # NVIDIA: with TF_DETERMINISTIC_OPS or TF_CUDNN_DETERMINISTIC, do not set it at all, particularly not to 0
    plan = plan_patch(cat, version, "gpu", set(), seeded=True, on_unsupported=on_unsupported)
    assert "TF_CUDNN_USE_AUTOTUNE" not in plan.env
    assert cat.switch("TF_CUDNN_USE_AUTOTUNE").set_by_patch == ()


def _pinned(citation):
    """A citation that names a file and lines at a commit, or a PR, issue or commit."""
    kind, _, ref = citation.partition(":")
    if kind in ("tf-pr", "tf-issue", "tf-commit", "horovod-pr", "fwr13y-pr"):
        return True
    return kind in ("tf-source", "fwr13y-doc") and "@" in ref and "#L" in ref


def _all_rows(cat):
    return [(s.id, row) for s in cat.switches for row in s.set_by_patch]


def test_every_row_cites_a_source_with_a_link_and_a_line_or_a_pr(cat):
    rows = _all_rows(cat)
    assert rows
    for switch_id, row in rows:
        assert any(_pinned(c) for c in row.sources), (switch_id, row.versions, row.sources)
        for citation in row.sources:
            label, url = describe_source(citation)
            assert url and url.startswith("https://github.com/"), (switch_id, citation)


def test_pinned_line_citations_link_to_the_commit_and_lines():
    label, url = describe_source(
        "fwr13y-doc:tensorflow_status.md@39c076b8d32ec871b60d720a0516ce04f84ba7d5#L82-L89")
    assert url == ("https://github.com/NVIDIA/framework-reproducibility/blob/39c076b8d32ec871b60d720a0516ce04f84ba7d5"
                   "/doc/d9m/tensorflow_status.md?plain=1#L82-L89")
    assert describe_source("tf-source:a/b.cc@abc#L3")[1] == "https://github.com/tensorflow/tensorflow/blob/abc/a/b.cc#L3"
    assert describe_source("fwr13y-doc:tensorflow.md#cpu")[1].endswith("/blob/master/doc/d9m/tensorflow.md#cpu")


def test_every_gpu_version_gets_a_determinism_switch_and_no_row_overlaps_another_of_its_switch(cat):
    for version in VERSIONS:
        ids = set(_rows(cat, version))
        assert ids & {"TF_CUDNN_DETERMINISTIC", "TF_DETERMINISTIC_OPS", "enable_op_determinism"}, version
    for switch in cat.switches:
        for version in VERSIONS:
            hits = [r for r in switch.set_by_patch if r.covers(version, "gpu")]
            assert len({r.when for r in hits}) == len(hits), (switch.id, version)
