"""Describe the environment a run ran in (`tfdet locate --record`): runs inside
the run's process, after the program, so what the program set itself (threads,
run_functions_eagerly, jit) is what is described.

The machine and build come from the probe's own description
(tfdet/probe/environment.py: one account of CPU, GPUs, driver, CUDA and cuDNN);
added here are the CPU's instruction-set flags, the execution mode and XLA,
oneDNN as TF decides it, and every variable that changes kernels or numerics.
"""

import os

# /proc/cpuinfo flags that decide which kernels oneDNN, Eigen and XLA pick (and so
# the order of their sums): vector widths, fused multiply-add, matrix units.
ISA_PREFIXES = ("avx", "fma", "sse4", "amx", "f16c", "avx512")
# Variables that change kernels, threads or numerics.
ENV_PREFIXES = ("TF_", "XLA_", "OMP_", "MKL_", "KMP_", "CUDA_", "NVIDIA_", "ONEDNN_", "DNNL_")
ENV_NAMES = ("PYTHONHASHSEED",)
# TF_CPP_* only change TensorFlow's logs; the others are Terraform's, which shares the prefix.
ENV_IGNORED_PREFIXES = ("TF_CPP_", "TF_CLI_", "TF_VAR_", "TF_LOG", "TF_IN_AUTOMATION", "TF_INPUT", "TF_DATA_DIR",
                        "TF_WORKSPACE", "TF_PLUGIN_CACHE_DIR", "TF_REGISTRY_")


def cpu_flags(cpuinfo_path="/proc/cpuinfo"):
    """The instruction-set flags of the first CPU in /proc/cpuinfo, sorted ([] elsewhere)."""
    try:
        with open(cpuinfo_path) as handle:
            for line in handle:
                if line.startswith("flags"):
                    return sorted(f for f in line.split(":", 1)[1].split() if f.startswith(ISA_PREFIXES))
    except OSError:
        pass
    return []


def relevant_environment(environ):
    """{name: value} of the variables that may change what the kernels compute."""
    return dict(sorted((k, v) for k, v in environ.items()
                       if (k.startswith(ENV_PREFIXES) or k in ENV_NAMES) and not k.startswith(ENV_IGNORED_PREFIXES)))


def describe(tf, np, environ=None):
    """A dict with the fields of tfdet.results.between_records.Machine."""
    from .. import __version__
    from ..probe.environment import describe as describe_probe
    from ..tfinfo import onednn_setting

    environ = os.environ if environ is None else environ
    base = describe_probe(tf, np, environ)
    build = base.get("build") or {}
    threads = base.get("threads") or {}
    onednn, _ = onednn_setting(tf.__version__, environ)  # why: the variable, recorded in env
    try:
        eager = bool(tf.config.functions_run_eagerly())
    except AttributeError:
        eager = None
    try:
        jit = tf.config.optimizer.get_jit()
        jit = jit.decode() if isinstance(jit, bytes) else str(jit or "")
    except AttributeError:
        jit = None
    return {
        "tf_version": base["tf_version"], "device": base["device"], "tfdet_version": __version__,
        "tf_git_version": base.get("tf_git_version"), "python": base.get("python"), "numpy": base.get("numpy"),
        "platform": base.get("platform"), "cpu_model": base.get("cpu_model"), "cpu_count": base.get("cpu_count"),
        "cpu_flags": cpu_flags(), "gpus": base.get("gpus") or [], "nvidia_driver": base.get("nvidia_driver"),
        "cuda_build": build.get("cuda_build"), "cuda_version": build.get("cuda_version"),
        "cudnn_version": build.get("cudnn_version"), "onednn": onednn,
        "onednn_enabled": base.get("onednn_enabled"), "intra_op_threads": threads.get("intra_op"),
        "inter_op_threads": threads.get("inter_op"),
        "execution": None if eager is None else ("eager" if eager else "function"), "xla_jit": jit,
        "op_determinism_enabled": base.get("op_determinism_enabled"), "env": relevant_environment(environ),
    }
