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
