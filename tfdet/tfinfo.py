"""What TensorFlow is installed, found without importing it (importing takes seconds)."""

try:
    from importlib import metadata as _metadata
except ImportError:  # Python 3.7
    _metadata = None

# Distributions that install the `tensorflow` module.
TF_DISTRIBUTIONS = (
    "tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-intel", "tensorflow-macos",
    "tensorflow-aarch64", "tf-nightly", "tf-nightly-cpu",
)


def list_gpus(tf):
    """The GPUs TensorFlow sees (tf.config's list, TF 1.14 to 2.21); [] if it cannot tell."""
    config = tf.config
    lister = getattr(config, "list_physical_devices", None) or config.experimental.list_physical_devices
    try:
        return list(lister("GPU"))
    except Exception:
        return []


def resolve_api(tf, dotted):
    """The object at a dotted public name such as 'tf.config.experimental.x', or None."""
    target = tf
    for part in dotted.split(".")[1:]:
        target = getattr(target, part, None)
        if target is None:
            return None
    return target


def installed_tf_version():
    """The installed TensorFlow version string, or None if there is none."""
    for name in TF_DISTRIBUTIONS:
        try:
            if _metadata is not None:
                return _metadata.version(name)
            import pkg_resources

            return pkg_resources.get_distribution(name).version
        except Exception:  # not installed under this name
            continue
    return None


def onednn_setting(tf_version, environ, platform=None):
    """('on' | 'off', why): whether TF's oneDNN CPU kernels are on, from
    TF_ENABLE_ONEDNN_OPTS or, unset, TF's default (on for x86 Linux from 2.9;
    off before, and elsewhere). They change floating-point summation order."""
    import platform as _platform

    value = environ.get("TF_ENABLE_ONEDNN_OPTS")
    if value is not None:
        on = value.strip().lower() in ("1", "true")
        return ("on" if on else "off"), "TF_ENABLE_ONEDNN_OPTS=%s" % value
    if tf_version is None:
        return "unknown", "no TensorFlow installed"
    parts = str(tf_version).split(".")
    try:
        recent = (int(parts[0]), int(parts[1])) >= (2, 9)
    except (ValueError, IndexError):
        return "unknown", "TF version %s" % tf_version
    machine = (platform or _platform.machine()).lower()
    on = recent and machine in ("x86_64", "amd64") and _platform.system() == "Linux"
    return ("on" if on else "off"), "TF %s's default for %s %s; TF_ENABLE_ONEDNN_OPTS unset" % (
        tf_version, _platform.system(), machine)


def thread_settings(environ, tf=None):
    """The CPU thread settings TF will use: env vars, TF's config if it is
    imported (0 means TF's default: one thread per core), and the core count."""
    import os

    settings = {name: environ.get(name) for name in ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS",
                                                     "OMP_NUM_THREADS")}
    settings["cpu_count"] = os.cpu_count()
    if tf is not None:
        threading = getattr(getattr(tf, "config", None), "threading", None)
        if threading is not None:
            settings["intra_op"] = threading.get_intra_op_parallelism_threads()
            settings["inter_op"] = threading.get_inter_op_parallelism_threads()
    return settings


if __name__ == "__main__":  # `python -m tfdet.tfinfo`: used by the probe for other interpreters
    print(installed_tf_version())
