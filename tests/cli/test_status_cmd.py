"""`tfdet status`: the patch plan for this machine, or a previewed one, without writing Python."""

import json
import os

import fresh_python
import pytest

from cli_runner import run_cli
from tfdet.tfinfo import installed_tf_version


def status_json(*argv):
    code, out, err = run_cli("status", "--json", *argv)
    assert code == 0, err
    return json.loads(out)


def test_previewed_cpu_plan_names_switches_replacement_and_what_stays_uncovered():
    data = status_json("--device", "cpu", "--tf-version", "2.21")
    assert (data["device"], data["device_source"], data["tf_version_source"]) == ("cpu", "given", "given")
    switches = {s["name"] for s in data["switches"]}
    assert "TF_DETERMINISTIC_OPS" in switches and "tf.config.experimental.enable_op_determinism" in switches
    assert [r["api"] for r in data["replacements"]] == ["tf.math.bincount"]
    uncovered = {r["id"]: r for r in data["not_covered"]}
    assert uncovered["dense-bincount"]["watched"] is True and uncovered["dense-bincount"]["raw_ops"] == ["DenseBincount"]
    assert uncovered["executor-op-order"]["watched"] is False  # no op to see it by
    assert "unseeded-random-ops" in uncovered and data["silenced"] == []
    assert [(r["id"], r["raw_ops"]) for r in data["bypass_watched"]] == [("bincount", ["Bincount"])]


def test_seed_covers_the_unseeded_sources():
    unseeded = {r["id"] for r in status_json("--device", "cpu", "--tf-version", "2.21")["not_covered"]}
    seeded = {r["id"] for r in status_json("--device", "cpu", "--tf-version", "2.21", "--seed", "0")["not_covered"]}
    assert "unseeded-random-ops" in unseeded and "unseeded-random-ops" not in seeded
    assert seeded < unseeded


def test_old_gpu_preview_has_more_replacements_and_no_callbacks_before_2_2():
    gpu = status_json("--device", "gpu", "--tf-version", "2.6")
    assert {"tf.math.unsorted_segment_sum", "tf.math.bincount"} <= {r["api"] for r in gpu["replacements"]}
    assert "TF_CUDNN_USE_FRONTEND" in {s["name"] for s in gpu["switches"]}
    assert "TF_CUDNN_USE_AUTOTUNE" not in {s["name"] for s in gpu["switches"]}  # NVIDIA: never set it
    old = status_json("--device", "gpu", "--tf-version", "2.1")
    assert old["watching"].startswith("none") and not any(r["watched"] for r in old["not_covered"])


def test_error_silencing_switches_only_under_the_opt_in():
    default = status_json("--device", "gpu", "--tf-version", "2.9")
    opted = status_json("--device", "gpu", "--tf-version", "2.9", "--on-unsupported", "warn")
    assert default["silenced"] == []
    assert "TF_DISABLE_DEPTHWISE_CONV_DETERMINISM_EXCEPTIONS" in opted["silenced"]
    assert "TF_DISABLE_SEGMENT_REDUCTION_OP_DETERMINISM_EXCEPTIONS" in opted["silenced"]


def test_text_view_fits_the_width_and_says_what_patch_would_do(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, err = run_cli("status", "--device", "cpu", "--tf-version", "2.21")
    assert code == 0, err
    from tfdet.catalog import default_catalogue
    from tfdet.patching import registry
    from tfdet.patching.plan import plan_patch

    remaining = len(plan_patch(default_catalogue(), "2.21", "cpu", registry.names(), seeded=False).remaining)
    assert "switch on" in out and "tf.math.bincount" in out and "not covered (%d)" % remaining in out
    assert "dense-bincount [DenseBincount]" in out
    assert max(len(line.rstrip()) for line in out.splitlines()) <= 80


def test_bad_version_is_a_usage_error():
    code, _, err = run_cli("status", "--tf-version", "banana")
    assert code == 2 and "not a TensorFlow version" in err


def test_detects_this_machine_in_a_fresh_process():
    pytest.importorskip("tensorflow")
    # forked from a process that imported TF and made no runtime (tests/fresh_python.py)
    done = fresh_python.run(["-m", "tfdet", "status", "--json"], dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"),
                            os.getcwd(), 300)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(done.stdout)
    assert data["device_source"] == "detected" and data["tf_version"] == installed_tf_version()
    assert data["onednn"]["state"] in ("on", "off") and data["threads"]["cpu_count"] >= 1
