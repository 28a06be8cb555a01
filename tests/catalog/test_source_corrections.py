"""Catalogue facts corrected against primary sources (issue 18, item 6).

Each test reads the shipped catalogue and checks one corrected fact; the
source of each fact is cited in the catalogue entry itself.
"""

import os

import pytest

from tfdet.catalog import default_catalogue
from tfdet.patching.plan import APPLIED_ROLES


@pytest.fixture(scope="module")
def cat():
    return default_catalogue()


def _switch_names(cat):
    return {s.name for s in cat.switches}


def test_segment_switch_is_the_one_tf_reads(cat):
    # segment_reduction_ops_gpu_0.cu.cc reads TF_USE_DETERMINISTIC_SEGMENT_REDUCTIONS;
    # the ATOMIC spelling comes from a PR description and is read by no release.
    assert "TF_USE_ATOMIC_SEGMENT_REDUCTIONS" not in _switch_names(cat)
    switch = cat.switch("TF_USE_DETERMINISTIC_SEGMENT_REDUCTIONS")
    assert switch.name == "TF_USE_DETERMINISTIC_SEGMENT_REDUCTIONS"
    assert switch.value == "1"
    assert tuple(switch.devices) == ("gpu",)
    assert switch.available_in("2.7") and not switch.available_in("2.6")
    # It turns deterministic kernels on: not a switch that restores nondeterminism,
    # and not one tfdet.patch() sets by default (op determinism already selects them).
    assert switch.role == "workaround"
    assert switch.role not in APPLIED_ROLES


def test_no_entry_mentions_the_unread_segment_switch_as_a_fix(cat):
    for entry in cat:
        for ranges in entry.devices.values():
            for r in ranges:
                assert "TF_USE_ATOMIC_SEGMENT_REDUCTIONS" not in (r.note or "")
                assert "TF_USE_ATOMIC_SEGMENT_REDUCTIONS" not in tuple(r.switches or ())


def test_scatter_opt_out_is_claimed_only_where_a_release_is_known_to_read_it(cat):
    # in no 2.7.4 or 2.8.4 wheel's library; in the 2.20.0 GPU wheel's (reports/measured/tf-wheel-strings.md)
    switch = cat.switch("TF_DISABLE_SCATTER_OP_DETERMINISM")
    assert switch.available_in("2.20") and switch.available_in("2.21")
    assert not switch.available_in("2.8") and not switch.available_in("2.19")
    assert "checked:reports/measured/tf-wheel-strings.md" in switch.sources


def test_scatter_determinism_opt_out_is_catalogued_and_never_applied(cat):
    switch = cat.switch("TF_DISABLE_SCATTER_OP_DETERMINISM")
    assert switch.role == "restores_nondeterminism"
    assert switch.role not in APPLIED_ROLES
    assert switch not in cat.switches_for("2.21", "gpu", roles=APPLIED_ROLES)


@pytest.mark.parametrize("version, status", [
    ("2.6", "nondeterministic"),
    ("2.7", "unknown"),
    ("2.8", "deterministic_with_switch"),
    ("2.21", "deterministic_with_switch"),
])
def test_resource_variable_scatter_on_gpu(cat, version, status):
    (verdict,) = [v for v in cat.lookup("ResourceScatterAdd", version, "gpu")
                  if v.entry.id == "resource-variable-scatter"]
    assert verdict.status == status
    if status == "deterministic_with_switch":
        assert "enable_op_determinism" in verdict.range.switches
        assert "TF_DISABLE_SCATTER_OP_DETERMINISM" in verdict.range.note


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("version", ["1.15", "2.8", "2.21"])
def test_fractional_avg_pool_varies_with_no_switch(cat, version, device):
    verdicts = cat.lookup("tf.nn.fractional_avg_pool", version, device)
    assert [v.entry.id for v in verdicts] == ["fractional-avg-pool"]
    assert verdicts[0].status == "nondeterministic"
    assert not verdicts[0].range.switches
    assert cat.get("fractional-avg-pool").fixed_by_seeding is False


@pytest.mark.parametrize("name, entry_ids", [
    ("keras.ops.bincount", {"dense-bincount", "count-sparse-output"}),  # sparse=True: DenseCountSparseOutput
    ("keras.ops.segment_sum", {"segment-sum", "unsorted-segment-sum"}),
    ("keras.ops.segment_prod", {"segment-prod", "unsorted-segment-prod"}),
    ("keras.ops.histogram", {"scatter-nd"}),
    ("keras.ops.scatter", {"scatter-nd"}),
    ("keras.ops.scatter_update", {"tensor-scatter-nd-update", "tensor-scatter-nd-add"}),
])
def test_keras3_names_reach_their_entries(cat, name, entry_ids):
    assert {e.id for e in cat.resolve(name)} == entry_ids


def test_dense_bincount_stays_in_one_entry(cat):
    # tf.math.bincount calls DenseBincount in 2.21; the kernel's facts live in one entry.
    assert {e.id for e in cat.resolve("DenseBincount")} == {"dense-bincount"}
    assert "tf.math.bincount" in cat.get("dense-bincount").apis


def test_xla_flags_are_named_where_xla_reductions_are(cat):
    text = cat.get("xla-reductions-gpu").description
    assert "--xla_gpu_deterministic_ops" in text
    assert "--xla_gpu_exclude_nondeterministic_ops" in text


@pytest.mark.parametrize("name, version, device, status", [
    ("xla-reductions-gpu", "2.7", "gpu", "deterministic_with_switch"),  # no source for "by default"
    ("tf.nn.ctc_loss", "2.2", "gpu", "unknown"),
])
def test_claims_without_a_primary_source_are_not_asserted(cat, name, version, device, status):
    (verdict,) = cat.lookup(name, version, device)
    assert verdict.status == status


@pytest.mark.parametrize("entry_id, version, device, cited", [
    ("grappler-timeout", "2.5", "cpu", "tf-source:tensorflow/core/grappler/optimizers/meta_optimizer.cc"),
    ("softmax-xent-raw-op", "2.7", "gpu", "tf-source:tensorflow/core/kernels/xent_op.cc"),
    ("sparse-softmax-xent-raw-op", "2.6", "gpu", "tf-source:tensorflow/core/kernels/sparse_xent_op.cc"),
    ("tf32-matmul-conv", "2.4", "gpu", "doc:https://docs.nvidia.com/cuda/cublas/"),
])
def test_corrected_entries_cite_tf_code(cat, entry_id, version, device, cited):
    entry = cat.get(entry_id)
    cites = set(entry.sources) | set(entry.range_for(version, device).sources)
    assert any(c.startswith(cited) for c in cites), cites


def test_tf_data_debug_mode_date_cites_the_r25_api_page(cat):
    switch = cat.switch("tf_data_debug_mode")
    assert switch.available_in("2.5") and not switch.available_in("2.4")
    assert any("versions/r2.5/api_docs" in s for s in switch.sources)


@pytest.mark.parametrize("name, entry_id, status", [
    ("SparseBincount", "sparse-bincount", "nondeterministic"),  # measured: varies with and without determinism
    ("tf.raw_ops.SparseBincount", "sparse-bincount", "nondeterministic"),
    ("DenseCountSparseOutput", "count-sparse-output", "deterministic"),  # keras.ops.bincount(sparse=True)
    ("tf.sparse.bincount", "count-sparse-output", "deterministic"),
])
def test_sparse_bincount_ops_have_measured_entries(cat, name, entry_id, status):
    (verdict,) = cat.lookup(name, "2.21", "cpu")
    assert verdict.entry.id == entry_id and verdict.status == status
    assert any(s.startswith("measured:reports/measured/sparse-bincount-cpu-tf2.21") for s in verdict.range.sources)


def test_pr_51392_is_no_longer_cited_for_what_shipped(cat):
    # PR 51392 was closed unmerged; what shipped in 2.7 is PR 51861 (NVIDIA tensorflow.md lines 676-679)
    for entry_id in ("segment-sum", "segment-mean"):
        cites = cat.get(entry_id).range_for("2.7", "gpu").sources
        assert "tf-pr:51861" in cites and "tf-pr:51392" not in cites, (entry_id, cites)


def test_bincount_cpu_1_14_stays_unknown_without_a_later_measurement(cat):
    row = cat.get("bincount").range_for("1.14", "cpu")
    assert row.status == "unknown"
    assert not [s for s in row.sources if s.startswith("measured:")]


def test_xla_maxpool_check_names_only_the_2d_gradients_and_starts_in_2_8(cat):
    entry = cat.get("xla-maxpool-gradient-gpu")
    assert "MaxPool3DGrad" not in entry.raw_ops and {"MaxPoolGrad", "MaxPoolGradV2"} <= set(entry.raw_ops)
    assert entry.range_for("2.7", "gpu").status == "unknown"
    assert entry.range_for("2.8", "gpu").status == "raises_under_determinism"
    assert "tf-release:2.8" not in entry.range_for("2.8", "gpu").sources  # no release note says so


def test_checked_citations_name_files_in_the_repository(cat):
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    cited = {c.split(":", 1)[1] for e in cat for rs in e.devices.values() for r in rs for c in r.sources
             if c.startswith("checked:")}
    cited |= {c.split(":", 1)[1] for s in cat.switches for c in s.sources if c.startswith("checked:")}
    assert cited
    for path in cited:
        assert os.path.isfile(os.path.join(root, path)), path


XLA_MAXPOOL = """
import json, tensorflow as tf
tf.config.experimental.enable_op_determinism()
out = {}
for name, pool, shape in [("2d", tf.nn.max_pool2d, [1, 4, 4, 1]), ("3d", tf.nn.max_pool3d, [1, 4, 4, 4, 1])]:
    def grad(t, pool=pool):
        with tf.GradientTape() as tape:
            tape.watch(t)
            y = pool(t, 2, 2, "VALID")
        return tape.gradient(y, t)
    try:
        tf.function(grad, jit_compile=True, autograph=False)(tf.ones(shape))
        out[name] = "ran"
    except tf.errors.UnimplementedError as exc:
        out[name] = exc.message.splitlines()[0]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_xla_maxpool_check_is_the_catalogued_one_on_this_tf(cat):
    """The catalogue's message and op list, against this TF (the check tests no device: it raises on a CPU)."""
    import json
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", XLA_MAXPOOL], capture_output=True, text=True, timeout=600)
    found = json.loads(done.stdout.strip().splitlines()[-1])
    row = cat.get("xla-maxpool-gradient-gpu").range_for("2.21", "gpu")
    assert found["2d"] == row.error.message
    assert found["3d"] == "ran"
