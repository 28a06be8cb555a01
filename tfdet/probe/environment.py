"""Describe the machine and TensorFlow build a probe ran on.

Runs inside the worker (Python 3.7+, stdlib + numpy + TF only). Every probe of
TensorFlow goes through the `tf` object passed in, and the process environment
through `environ`, so tests can hand in fakes: the GPU paths are exercised on
machines without a GPU.
"""

import os
import platform
import sys

from ..tfinfo import list_gpus, op_determinism_enabled

# Variables that change determinism, numerics or threading; recorded when set.
RECORDED_ENV_PREFIXES = ("TF_DETERMINISTIC", "TF_CUDNN_", "TF_DISABLE_", "TF_USE_", "TF_ENABLE_ONEDNN", "TF_GPU_")
RECORDED_ENV_NAMES = (
    "XLA_FLAGS", "TF_XLA_FLAGS", "OMP_NUM_THREADS", "CUDA_VISIBLE_DEVICES", "PYTHONHASHSEED",
    "HOROVOD_FUSION_THRESHOLD", "TF_INTRA_OP_PARALLELISM_THREADS", "TF_INTER_OP_PARALLELISM_THREADS",
)


def recorded_environment(environ):
    return dict(sorted(
        (k, v) for k, v in environ.items()
        if k in RECORDED_ENV_NAMES or k.startswith(RECORDED_ENV_PREFIXES)
    ))


def cpu_model(cpuinfo_path="/proc/cpuinfo"):
    try:
        with open(cpuinfo_path) as handle:
            for line in handle:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def gpu_devices(tf):
    """[{name, compute_capability}] for each visible GPU; [] on CPU-only builds."""
    described = []
    for device in list_gpus(tf):
        entry = {"device": getattr(device, "name", str(device))}
        details_of = getattr(tf.config.experimental, "get_device_details", None)  # TF 2.3+
        if details_of is not None:
            try:
                details = details_of(device) or {}
                entry["name"] = details.get("device_name")
                capability = details.get("compute_capability")
                entry["compute_capability"] = ".".join(str(x) for x in capability) if capability else None
            except Exception:
                pass
        described.append(entry)
    return described


def build_info(tf):
    """CUDA and cuDNN versions TF was built with (TF 2.3+), else what is known."""
    info = {"cuda_build": None, "cuda_version": None, "cudnn_version": None}
    try:
        info["cuda_build"] = bool(tf.test.is_built_with_cuda())
    except Exception:
        pass
    getter = getattr(getattr(tf, "sysconfig", None), "get_build_info", None)
    if getter is not None:
        try:
            built = getter()
            info["cuda_version"] = built.get("cuda_version")
            info["cudnn_version"] = built.get("cudnn_version")
        except Exception:
            pass
    return info


def nvidia_driver(proc_path="/proc/driver/nvidia/version"):
    """The NVIDIA kernel driver version, or None without one."""
    try:
        with open(proc_path) as handle:
            first = handle.readline()
    except OSError:
        return None
    words = first.split()
    for i, word in enumerate(words):
        if word == "Kernel" and i + 2 < len(words) and words[i + 1] == "Module":
            return words[i + 2]
    return first.strip() or None


def threading_settings(tf):
    threading = getattr(tf.config, "threading", None)
    if threading is None:
        return {"intra_op": None, "inter_op": None}
    return {
        "intra_op": threading.get_intra_op_parallelism_threads(),
        "inter_op": threading.get_inter_op_parallelism_threads(),
    }


def onednn_enabled(tf):
    """Whether this TF build runs oneDNN kernels now (TF's own answer where it has one)."""
    try:
        from tensorflow.python.util import _pywrap_util_port

        return bool(_pywrap_util_port.IsMklEnabled())
    except Exception:
        return None


def describe(tf, np, environ=None):
    environ = os.environ if environ is None else environ
    gpus = gpu_devices(tf)
    return {
        "tf_version": tf.__version__,
        "tf_git_version": getattr(getattr(tf, "version", None), "GIT_VERSION", None),
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "numpy": np.__version__,
        "platform": platform.platform(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "device": "gpu" if gpus else "cpu",
        "gpus": gpus,
        "nvidia_driver": nvidia_driver() if gpus else None,
        "build": build_info(tf),
        "threads": threading_settings(tf),
        "op_determinism_enabled": op_determinism_enabled(environ),
        "onednn": environ.get("TF_ENABLE_ONEDNN_OPTS", "default"),
        "onednn_enabled": onednn_enabled(tf),
        "env": recorded_environment(environ),
    }
