"""A run's environment as the report's table shows it (TensorFlow, Python,
hardware, threads, the probe's settings), each mode's determinism settings,
and what differs between runs. Pure: typed records in, text out."""

from collections import OrderedDict

from .formatting import DASH, text

KEYS = (
    "TensorFlow", "TF build", "Python", "numpy", "Device", "CPU", "CPU cores", "GPUs", "NVIDIA driver",
    "CUDA build", "CUDA", "cuDNN", "Threads (intra / inter)", "oneDNN", "Execution", "Modes run", "Modes not run",
    "Processes x runs", "Timing rounds", "Input size, seed", "Platform", "Interpreter", "tfdet", "Recorded",
    "Results file",
)
# Keys that always differ between two files and say nothing about the environment.
NOT_ENVIRONMENT = ("Recorded", "Results file")


def _gpus(gpus):
    if not gpus:
        return "none"
    names = []
    for gpu in gpus:  # each as the worker described it: free-form keys
        name = gpu.get("name") or gpu.get("device") or "GPU"
        cc = gpu.get("compute_capability")
        names.append("%s%s" % (name, " (compute %s)" % cc if cc else ""))
    return "; ".join(str(n) for n in names)


def table(header, env, path, modes, unavailable):
    """{key: text} of one run, in KEYS order. header: a ProbeHeader; env: the
    Environment of its first mode (None if it recorded none); modes: the modes
    shown; unavailable: [(mode, why)] of the modes that did not run."""
    threads = (env.threads if env else None) or header.threads
    build = env.build if env else None
    onednn = text(env.onednn if env else None)
    # one run's oneDNN may be on without the variable set: the worker says whether it is active
    enabled = env.onednn_enabled if env else None
    onednn += " (active: %s)" % text(enabled, "unknown")

    def of_env(name, none=DASH):
        return text(getattr(env, name) if env else None, none)

    def of_build(name, none):
        return text(getattr(build, name) if build else None, none)

    return OrderedDict([
        ("TensorFlow", of_env("tf_version", "unknown")),
        ("TF build", of_env("tf_git_version")),
        ("Python", of_env("python")),
        ("numpy", of_env("numpy")),
        ("Device", of_env("device", "unknown")),
        ("CPU", of_env("cpu_model")),
        ("CPU cores", of_env("cpu_count")),
        ("GPUs", _gpus(env.gpus if env else [])),
        ("NVIDIA driver", of_env("nvidia_driver", "none")),
        ("CUDA build", of_build("cuda_build", "unknown")),
        ("CUDA", of_build("cuda_version", "none")),
        ("cuDNN", of_build("cudnn_version", "none")),
        ("Threads (intra / inter)", "%s / %s" % (text(threads.intra_op), text(threads.inter_op))),
        ("oneDNN", onednn),
        ("Execution", text(header.execution)),
        ("Modes run", text(modes)),
        ("Modes not run", "; ".join("%s (%s)" % kv for kv in unavailable) or "none"),
        ("Processes x runs", "%s x %s" % (text(header.processes), text(header.repeats))),
        ("Timing rounds", text(header.rounds)),
        ("Input size, seed", "%s, %s" % (text(header.size), text(header.seed))),
        ("Platform", of_env("platform")),
        ("Interpreter", of_env("python_executable")),
        ("tfdet", text(header.tfdet_version)),
        ("Recorded", text(header.created)),
        ("Results file", text(path)),
    ])


def mode_settings(header, modes):
    """[(mode, what it turned on)]: the determinism variables its workers saw,
    the call it made, and whether TF reported op determinism on."""
    settings = []
    for mode in modes:
        env = header.environment.get(mode)
        variables = env.env if env else {}
        names = ", ".join("%s=%s" % (k, text(v)) for k, v in sorted(variables.items()))
        parts = [names or "no determinism variables"]
        if mode == "api":
            parts.append("enable_op_determinism() called")
        if mode == "patched":
            parts.append("tfdet.patch() called")
        enabled = env.op_determinism_enabled if env else None
        parts.append({True: "TF reports op determinism on", False: "TF reports op determinism off"}.get(
            enabled, "TF does not report op determinism (before 2.8)"))
        settings.append((mode, "; ".join(parts)))
    return settings


def compare(runs):
    """(keys shown, keys that differ, [(key, its distinct values)], a sentence) over the runs' tables."""
    keys = [k for k in KEYS if any(k in run.environment for run in runs)]
    differing = [k for k in keys if k not in NOT_ENVIRONMENT and len({run.environment.get(k) for run in runs}) > 1]
    values = []
    for key in differing:
        seen = []
        for run in runs:
            value = run.environment.get(key, DASH)
            if value not in seen:
                seen.append(value)
        values.append((key, seen))
    if len(runs) < 2:
        sentence = "One run: nothing to compare."
    elif not differing:
        sentence = "The runs share the same environment and settings; any difference between them is run-to-run."
    else:
        sentence = "The runs differ in %d setting%s: %s. Everything else in the table is the same." % (
            len(differing), "" if len(differing) == 1 else "s", ", ".join(differing))
    return keys, differing, values, sentence


def hardware_intro(runs):
    """The summary's opening line for several runs: same hardware or not."""
    if len(runs) == 1:
        return ""
    if len({(r.environment.get("CPU"), r.environment.get("CPU cores"), r.environment.get("GPUs")) for r in runs}) == 1:
        first = runs[0].environment
        return "All %d runs are from the same hardware (%s, %s cores, GPUs: %s)." % (
            len(runs), first.get("CPU"), first.get("CPU cores"), first.get("GPUs"))
    return "The %d runs come from different hardware; see the environment table." % len(runs)
