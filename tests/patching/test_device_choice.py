"""tfdet.patch(device=...) and TFDET_DEVICE: the plan for a device chosen explicitly (issue 14, item 3)."""

import pytest

from tfdet.patching.install import choose_device

from test_install import run_python  # noqa: E402  (tests/patching is on sys.path under pytest)


class _NoGpuTF:
    class config:  # noqa: N801 - mimics tf.config
        @staticmethod
        def list_physical_devices(kind):
            return []


def test_choose_device_order():
    assert choose_device(_NoGpuTF, None, {}) == ("cpu", "detected (TensorFlow sees no GPU)")
    assert choose_device(_NoGpuTF, None, {"TFDET_DEVICE": "GPU"})[0] == "gpu"
    assert choose_device(_NoGpuTF, "gpu", {"TFDET_DEVICE": "cpu"}) == ("gpu", "given: patch(device='gpu')")
    assert choose_device(_NoGpuTF, None, {"TFDET_DEVICE": ""})[0] == "cpu"
    with pytest.raises(ValueError, match="device must be one of cpu, gpu"):
        choose_device(_NoGpuTF, "tpu", {})


def test_patch_device_gpu_installs_the_gpu_plan_on_a_cpu():
    result = run_python("""
        from tfdet.patching.plan_preview import preview
        gpu = preview(device="gpu").plan
        cpu = preview(device="cpu").plan
        status = tfdet.patch(device="gpu", quiet=True)
        report(device=status.device, why=status.device_why, replaced=sorted(status.replacements),
               gpu=sorted(gpu.replacements), cpu=sorted(cpu.replacements), text=str(status),
               gpus=len(tf.config.list_physical_devices("GPU")))
    """)
    assert result["gpus"] == 0
    assert result["device"] == "gpu" and "given" in result["why"]
    assert result["replaced"] == result["gpu"] and result["gpu"] != result["cpu"]
    assert "plan for:      gpu (given: patch(device='gpu'))" in result["text"]


def test_tfdet_device_env_and_default_detection():
    result = run_python("""
        os.environ["TFDET_DEVICE"] = "gpu"
        by_env = tfdet.patch(quiet=True)
        tfdet.unpatch()
        del os.environ["TFDET_DEVICE"]
        default = tfdet.patch(quiet=True)
        report(env=[by_env.device, by_env.device_why], default=[default.device, default.device_why])
    """)
    assert result["env"] == ["gpu", "from TFDET_DEVICE=gpu"]
    assert result["default"][0] == "cpu" and result["default"][1].startswith("detected")
