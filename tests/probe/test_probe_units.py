"""Pure parts of the probe: planning, modes, records, summary, results file,
environment description (GPU paths through fakes)."""

import os
import types

import numpy as np
import pytest
import yaml

from tfdet.catalog import load_user_catalogue
from tfdet.probe import cases, environment, measure
from tfdet.runtime.modes import mode_setups, process_environment
from tfdet.probe.plan import machine_capabilities, plan_cases

from catalog_fixtures import GOOD_ENTRY, document


@pytest.fixture()
def catalogue(tmp_path):
    gpu_only = dict(GOOD_ENTRY, id="gpu-thing", raw_ops=["GpuThing"], apis=["tf.gpu.thing"], requires=["gpu", "cudnn"])
    absent = dict(GOOD_ENTRY, id="absent-op", raw_ops=["AbsentOp"], apis=["tf.absent.op"])
    absent["devices"] = {"cpu": [
        {"versions": "<2.4", "status": "not_applicable", "sources": ["tf-release:2.4"]},
        {"versions": ">=2.4", "status": "deterministic", "sources": ["tf-release:2.4"]}]}
    no_case = dict(GOOD_ENTRY, id="no-case", raw_ops=["NoCase"], apis=["tf.no.case"])
    path = tmp_path / "c.yaml"
    data = yaml.safe_load(document(GOOD_ENTRY))
    data["entries"] += [gpu_only, absent, no_case]
    path.write_text(yaml.safe_dump(data))
    return load_user_catalogue(str(path))


SPECS = {
    "demo-op": {"passes": ["forward", "gradient"], "min_tf": None, "fixture": False},
    "gpu-thing": {"passes": ["forward"], "min_tf": None, "fixture": False},
    "absent-op": {"passes": ["forward"], "min_tf": [2, 9], "fixture": False},
    "fixture-x": {"passes": ["forward"], "min_tf": None, "fixture": True},
}


def test_plan_runs_what_exists_and_says_why_not(catalogue):
    planned, skipped = plan_cases(catalogue, SPECS, "2.6", "cpu", machine_capabilities("cpu"))
    assert [tuple(p) for p in planned] == [("demo-op", "forward"), ("demo-op", "gradient")]
    reasons = dict(skipped)
    assert "needs a GPU" in reasons["gpu-thing"] and "cpu only" in reasons["gpu-thing"]
    assert "needs TF 2.9" in reasons["absent-op"]
    assert reasons["no-case"] == "no probe case for this entry yet"


def test_plan_not_applicable_and_gpu_machine(catalogue):
    planned, skipped = plan_cases(catalogue, SPECS, "2.3", "gpu", machine_capabilities("gpu", 1))
    assert ("gpu-thing", "forward") in [tuple(p) for p in planned]
    _, skipped = plan_cases(catalogue, SPECS, "2.3", "cpu", machine_capabilities("cpu"))
    assert "not_applicable" in dict(skipped)["absent-op"]


def test_plan_only_and_fixtures(catalogue):
    planned, skipped = plan_cases(catalogue, SPECS, "2.6", "cpu", set(), only=["demo-op", "fixture-x"])
    assert [p.case_id for p in planned] == ["demo-op", "demo-op", "fixture-x"] and skipped == []
    with pytest.raises(ValueError, match="unknown probe case or catalogue id: nope"):
        plan_cases(catalogue, SPECS, "2.6", "cpu", set(), only=["nope"])


def test_modes_follow_the_catalogue_switches(catalogue):
    setups = mode_setups(catalogue, "2.6", patch_available=False)
    assert setups["env"].env == {"TF_DETERMINISTIC_OPS": "1", "TF_CUDNN_DETERMINISTIC": "1"}
    assert not setups["api"].available and "2.8" in setups["api"].reason
    assert not setups["patched"].available
    setups = mode_setups(catalogue, "1.15", patch_available=True)
    assert setups["env"].env == {"TF_CUDNN_DETERMINISTIC": "1"} and setups["patched"].available
    setups = mode_setups(catalogue, "2.21", patch_available=False)
    assert setups["api"].api_calls == [{"name": "tf.config.experimental.enable_op_determinism"}]


def test_process_environment_clears_inherited_switches(catalogue):
    setups = mode_setups(catalogue, "2.21", patch_available=False)
    base = {"PATH": "/bin", "TF_DETERMINISTIC_OPS": "1", "TF_CUDNN_USE_AUTOTUNE": "0"}
    assert process_environment(base, setups["baseline"]) == {"PATH": "/bin"}
    env = process_environment(base, setups["env"], {"TF_ENABLE_ONEDNN_OPTS": "0"})
    assert env["TF_DETERMINISTIC_OPS"] == "1" and env["TF_ENABLE_ONEDNN_OPTS"] == "0"


def _arrays(tmp_path, *arrays):
    saved = {}
    for i, array in enumerate(arrays):
        path = str(tmp_path / ("a%d.npy" % i))
        np.save(path, array)
        saved["d%d" % i] = path
    return saved


def test_case_records_varies_raised_failed_and_cost(tmp_path):
    a = np.array([1.0, 2.0], np.float32)
    b = np.array([1.0, np.nextafter(np.float32(2.0), np.float32(3.0))], np.float32)
    saved = _arrays(tmp_path, a, b)
    variance = {
        "baseline": [{"digests": ["d0", "d0"], "saved": {"d0": saved["d0"]}, "raised": None},
                     {"digests": ["d1", "d0"], "saved": {"d1": saved["d1"]}, "raised": None}],
        "env": [{"digests": [], "saved": {}, "raised": {"type": "UnimplementedError", "message": "no"}}],
        "api": [{"failed": {"message": "api#0 died (killed by SIGABRT)", "stderr_tail": "boom"}}],
    }
    samples = {"baseline": [1.0, 1.0, 1.0], "env": [], "api": []}
    records = {r.mode: r for r in measure.case_records("c", "forward", variance, samples, np.load)}
    assert records["baseline"].outcome == "varies" and records["baseline"].distinct == 2
    assert records["baseline"].max_ulp_diff == 1 and records["baseline"].frac_elements_differ == 0.5
    assert records["baseline"].distinct_across_processes == 2
    assert records["env"].outcome == "raised" and records["env"].error_type == "UnimplementedError"
    assert records["api"].outcome == "failed" and records["api"].stderr_tail == "boom"
    cost = measure.cost_fields([2.0, 2.0, 2.0], [1.0, 1.0, 1.0])
    assert cost["ratio"] == 2.0 and cost["ratio_low"] == 2.0 and cost["median_s"] == 2.0


class _FakeDevice(object):
    name = "/physical_device:GPU:0"


def _fake_tf(gpus):
    experimental = types.SimpleNamespace(
        list_physical_devices=lambda kind: gpus,
        get_device_details=lambda device: {"device_name": "NVIDIA A100-SXM4-40GB", "compute_capability": (8, 0)})
    threading = types.SimpleNamespace(get_intra_op_parallelism_threads=lambda: 4,
                                      get_inter_op_parallelism_threads=lambda: 2)
    return types.SimpleNamespace(
        __version__="2.9.1", version=types.SimpleNamespace(GIT_VERSION="v2.9.1"),
        config=types.SimpleNamespace(experimental=experimental, threading=threading,
                                     list_physical_devices=lambda kind: gpus),
        test=types.SimpleNamespace(is_built_with_cuda=lambda: bool(gpus)),
        sysconfig=types.SimpleNamespace(get_build_info=lambda: {"cuda_version": "11.2", "cudnn_version": "8"}))


def test_environment_on_a_gpu_machine_through_a_fake_tf(tmp_path):
    described = environment.describe(_fake_tf([_FakeDevice()]), np, environ={
        "TF_DETERMINISTIC_OPS": "1", "TF_CUDNN_USE_AUTOTUNE": "0", "HOME": "/root", "XLA_FLAGS": "--x"})
    assert described["device"] == "gpu"
    assert described["gpus"] == [{"device": "/physical_device:GPU:0", "name": "NVIDIA A100-SXM4-40GB",
                                  "compute_capability": "8.0"}]
    assert described["build"] == {"cuda_build": True, "cuda_version": "11.2", "cudnn_version": "8"}
    assert described["env"] == {"TF_CUDNN_USE_AUTOTUNE": "0", "TF_DETERMINISTIC_OPS": "1", "XLA_FLAGS": "--x"}
    assert described["threads"] == {"intra_op": 4, "inter_op": 2}


def test_environment_on_a_cpu_machine_through_a_fake_tf():
    described = environment.describe(_fake_tf([]), np, environ={})
    assert described["device"] == "cpu" and described["gpus"] == [] and described["nvidia_driver"] is None


def test_nvidia_driver_parsing(tmp_path):
    path = tmp_path / "version"
    path.write_text("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 01:15:15 UTC 2023\n")
    assert environment.nvidia_driver(str(path)) == "535.104.05"
    assert environment.nvidia_driver(str(tmp_path / "none")) is None


def test_case_registry_has_fixtures_and_no_tf_import():
    described = cases.describe_cases()
    assert described["fixture-crash"]["fixture"] is True
    assert all(spec["passes"] for spec in described.values())


# -- what the catalogue expects, modes that did not run, names, cost words ----------

def test_expected_to_vary_follows_the_status_and_the_mode_switches():
    from tfdet.catalog import default_catalogue
    from tfdet.catalog import expected_to_vary
    from tfdet.runtime.modes import mode_setups, mode_switch_ids

    shipped = default_catalogue()
    switches = mode_switch_ids(shipped, mode_setups(shipped, "2.21.0", True), "2.21.0", "cpu")
    assert switches["baseline"] == frozenset() and "enable_op_determinism" in switches["api"]
    bincount = shipped.get("bincount").range_for("2.21.0", "cpu")  # nondeterministic, patched by tfdet
    assert bincount.status == "nondeterministic"
    for mode in ("baseline", "env", "api"):
        assert "nondeterministic" in expected_to_vary(bincount, switches[mode])
    assert expected_to_vary(bincount, switches["patched"], patched=True) is None
    with_switch = shipped.get("data-stateful-parallel-map").range_for("2.21.0", "cpu")
    assert with_switch.status == "deterministic_with_switch"
    assert "lacks enable_op_determinism" in expected_to_vary(with_switch, switches["baseline"])
    assert expected_to_vary(with_switch, switches["api"]) is None
    assert expected_to_vary(shipped.get("segment-sum").range_for("2.21.0", "cpu"), frozenset()) is None
    assert expected_to_vary(None, frozenset()) is None


def test_a_mode_tf_lacks_fails_only_when_asked_for():
    from tfdet.catalog import default_catalogue
    from tfdet.runtime.modes import classify_modes

    setups = mode_setups(default_catalogue(), "1.15.5", True)
    modes = ("baseline", "env", "api")
    active, failures, not_applicable = classify_modes(modes, setups, requested=True)
    assert active == ["baseline", "env"] and list(failures) == ["api"] and not not_applicable
    assert "no determinism API in TF 1.15.5" in failures["api"]
    active, failures, not_applicable = classify_modes(modes, setups, requested=False)
    assert active == ["baseline", "env"] and not failures and list(not_applicable) == ["api"]


def test_ops_accepts_every_name_catalog_show_takes():
    from tfdet.catalog import default_catalogue
    from tfdet.probe.plan import resolve_ops

    ids, unknown = resolve_ops(default_catalogue(), [
        "tf.math.bincount", "DenseBincount", "bincount", "tensorflow.math.unsorted_segment_sum", "fixture-crash",
        "densebincount", "tf.math.bincountt"], fixture_ids={"fixture-crash"})
    assert ids == ["bincount", "dense-bincount", "unsorted-segment-sum", "fixture-crash"]
    assert [name for name, _ in unknown] == ["tf.math.bincountt"] and "tf.math.bincount" in unknown[0][1]


# -- scratch space ---------------------------------------------------------------

def test_stale_scratch_is_removed_only_when_its_owner_is_dead(tmp_path):
    import subprocess
    import sys

    from tfdet.probe import scratch

    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        names = ["tfdet-probe-%d-abc_12" % alive.pid, "tfdet-probe-%d-xyz" % dead.pid, "tfdet-probe-k3j2h1",
                 "other-%d-x" % dead.pid]
        for name in names:
            (tmp_path / name).mkdir()
            (tmp_path / name / "a.npy").write_bytes(b"x")
        own = scratch.create(str(tmp_path))
        assert scratch.remove_stale(str(tmp_path)) == [str(tmp_path / names[1])]
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names[:1] + names[2:] + [os.path.basename(own)])
    finally:
        alive.kill()
        alive.wait()


def test_an_autograph_error_of_tf_1_15_is_described_by_its_last_line():
    from tfdet.probe.worker import _describe_error

    # str() of the error TF 1.15's tf.function raised for a raw op it lacks
    text = ("in converted code:\n\n    <string>:4 <lambda>\n        \n    /venv/lib/python3.7/site-packages/"
            "tensorflow_core/python/util/module_wrapper.py:193 __getattr__\n        attr = getattr(self."
            "_tfmw_wrapped_module, name)\n\n    AttributeError: module 'tensorflow._api.v1.raw_ops' has no "
            "attribute 'DebugNumericSummary'\n")
    described = _describe_error(AttributeError(text))
    assert described == {"type": "AttributeError", "message": "AttributeError: module 'tensorflow._api.v1.raw_ops' "
                                                              "has no attribute 'DebugNumericSummary'"}
    assert _describe_error(ValueError("plain message"))["message"] == "plain message"


def test_the_patched_mode_needs_an_interpreter_that_can_run_the_patch(tmp_path):
    """Another interpreter gets the patched mode only if it can import tfdet's
    patch and catalogue there: a bare TF environment (no PyYAML) cannot."""
    import sys

    from tfdet.probe.runner import patch_available

    same = tmp_path / "same-python"  # another path to this interpreter, which has every dependency
    same.write_text('#!/bin/sh\nexec "%s" "$@"\n' % sys.executable)
    bare = tmp_path / "bare-python"  # fails as `import yaml` fails in a bare TF venv
    bare.write_text("#!/bin/sh\necho \"ModuleNotFoundError: No module named 'yaml'\" >&2\nexit 1\n")
    for script in (same, bare):
        script.chmod(0o755)
    assert patch_available() and patch_available(sys.executable)
    assert patch_available(str(same))
    assert not patch_available(str(bare))


def test_a_graph_error_is_described_by_its_message_not_by_the_node_lines_after_it():
    from tfdet.probe.worker import _describe_error

    # str() of the error TF 2.7's tf.function raised for sample_distorted_bounding_box(seed=0) under determinism
    text = (" When determinism is enabled, random ops must have a seed specified.\n\t [[node sample_distorted_"
            "bounding_box/SampleDistortedBoundingBoxV2\n (defined at /tmp/sd2.py:4)\n]] [Op:__inference_body_11]"
            "\n\nErrors may have originated from an input operation.\nInput Source operations connected to node "
            "sample_distorted_bounding_box/SampleDistortedBoundingBoxV2:\nIn[0] sample_distorted_bounding_box/"
            "SampleDistortedBoundingBoxV2/image_size:\t\n\nOperation defined at: (most recent call last)\n>>>   "
            "File \"/tmp/sd2.py\", line 6, in <module>\n")
    described = _describe_error(ValueError(text))
    assert described == {"type": "ValueError",
                         "message": "When determinism is enabled, random ops must have a seed specified."}


def test_a_python_error_inside_py_function_is_described_as_itself():
    from tfdet.probe.worker import _describe_error

    class UnknownError(Exception):  # the name TF gives a py_function's failure; only the name is read
        pass

    # str() of the error TF 2.8 raised for an unseeded Keras Dropout under op determinism, run in tf.py_function
    text = ("Graph execution error:\n\nDetected at node 'EagerPyFunc' defined at (most recent call last):\n"
            "    File \"/tmp/kp.py\", line 9, in <module>\n      f(tf.ones(1))\nNode: 'EagerPyFunc'\n"
            "RuntimeError: Exception encountered when calling layer \"dropout\" (type Dropout).\n\nRandom ops "
            "require a seed to be set when determinism is enabled. Please set a seed before running the op, e.g. "
            "by calling tf.random.set_seed(1).\n\nCall arguments received:\n  \u2022 training=True\nTraceback "
            "(most recent call last):\n\n  File \"script_ops.py\", line 269, in __call__\n")
    described = _describe_error(UnknownError(text))
    assert described["type"] == "RuntimeError"
    assert described["message"].startswith("Exception encountered when calling layer \"dropout\" (type Dropout). "
                                           "Random ops require a seed to be set when determinism is enabled.")
    # a non-wrapped error keeps its own type even when its text quotes another exception
    assert _describe_error(ValueError("KeyError: 'x' while parsing"))["type"] == "ValueError"
