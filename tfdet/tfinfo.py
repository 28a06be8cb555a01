"""What TensorFlow is installed and how it is set up: its version (found
without importing it, which takes seconds), its devices, its determinism flag.

Standard library only, Python 3.7 syntax: the primitive and the probe's worker
import this inside bare TensorFlow interpreters (no packaging, no PyYAML).
"""

import re

try:
    from importlib import metadata as _metadata
except ImportError:  # Python 3.7
    _metadata = None

_RELEASE = re.compile(r"^\s*v?(\d+)\.(\d+)")

# Distributions that install the `tensorflow` module.
TF_DISTRIBUTIONS = (
    "tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tensorflow-intel", "tensorflow-macos",
    "tensorflow-aarch64", "tf-nightly", "tf-nightly-cpu",
)


def release(version):
    """(major, minor) of a TF version string: '2.6.2', '2.6.0rc1', 'v2.6' -> (2, 6).

    The catalogue's facts are per minor release. ValueError for anything else.
    """
    match = _RELEASE.match(str(version))
    if not match:
        raise ValueError("not a TensorFlow version: %r (expected e.g. 2.6 or 2.21.0)" % (version,))
    return int(match.group(1)), int(match.group(2))


def op_determinism_enabled(environ=None):
    """Whether TF op determinism is on in this process: TF's own flag where it
    has one (enable_op_determinism, 2.8+; TF_DETERMINISTIC_OPS sets it too), else
    TF_DETERMINISTIC_OPS in `environ` (default os.environ), as TF 2.1-2.7 read it.
    None if neither can tell. Never imports TensorFlow."""
    import os
    import sys

    if "tensorflow" in sys.modules:  # never import TF just to ask (seconds)
        try:
            from tensorflow.python.framework import config as tf_config

            return bool(tf_config.is_op_determinism_enabled())
        except (ImportError, AttributeError):  # TF < 2.8
            pass
    value = (os.environ if environ is None else environ).get("TF_DETERMINISTIC_OPS")
    if value is None:
        return None
    return value.strip().lower() in ("1", "true")


def detect_device(tf):
    """'gpu' if TensorFlow sees a GPU, else 'cpu': the device the catalogue is asked about."""
    return "gpu" if list_gpus(tf) else "cpu"


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
    try:
        recent = release(tf_version) >= (2, 9)
    except ValueError:
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
