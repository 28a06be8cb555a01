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


if __name__ == "__main__":  # `python -m tfdet.tfinfo`: used by the probe for other interpreters
    print(installed_tf_version())
