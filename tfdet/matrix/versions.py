"""The TensorFlow versions the matrix covers: one row per minor version.

Pure data, the one table of versions and pins: `tfdet matrix` and
tests/multiversion/make_venvs.py both build from it. Each row: TF minor, the pyenv Python minor whose CPU wheels it
installs with, and the pip requirements. The TF pin is a wildcard on the minor
(the newest patch release); the other pins are what that TF needs to import and
run on that Python. The resolved versions of each environment are recorded in
the matrix manifest.
"""

from collections import namedtuple

Version = namedtuple("Version", "tf python requirements")

# Old TF wheels declare protobuf>=3.x with no upper bound; protobuf 4 (2022)
# dropped the pure-Python descriptors they were generated with, so they fail at
# import ("Descriptors cannot be created directly"). 3.20.3 is the last 3.x.
_PB3 = "protobuf==3.20.3"

VERSIONS = (
    # TF 1.x wheels were built against numpy < 1.19; h5py 3 changed string
    # handling that tf.keras 1.15 relies on.
    Version("1.15", "3.7", ("tensorflow-cpu==1.15.*", "numpy==1.18.5", _PB3,
                            "h5py==2.10.0")),
    # No tensorflow-cpu wheel exists for 2.0: the plain package is CPU-only then.
    Version("2.0", "3.7", ("tensorflow==2.0.*", "numpy==1.18.5", _PB3, "h5py==2.10.0")),
    Version("2.1", "3.7", ("tensorflow-cpu==2.1.*", "numpy==1.18.5", _PB3, "h5py==2.10.0")),
    # 2.2 and 2.3 declare numpy<1.19.
    Version("2.2", "3.8", ("tensorflow-cpu==2.2.*", "numpy==1.18.5", _PB3, "h5py==2.10.0")),
    Version("2.3", "3.8", ("tensorflow-cpu==2.3.*", "numpy==1.18.5", _PB3)),
    # 2.4-2.6 declare numpy~=1.19.2 (numpy >= 1.20 breaks their symbolic-tensor
    # conversion).
    Version("2.4", "3.7", ("tensorflow-cpu==2.4.*", "numpy==1.19.5", _PB3)),
    Version("2.5", "3.9", ("tensorflow-cpu==2.5.*", "numpy==1.19.5", _PB3)),
    # 2.6 declares keras~=2.6 with no upper bound, and keras 2.7+ does not
    # import with it.
    Version("2.6", "3.9", ("tensorflow-cpu==2.6.*", "keras==2.6.0", "numpy==1.19.5", _PB3)),
    Version("2.7", "3.9", ("tensorflow-cpu==2.7.*", "keras==2.7.0", "numpy==1.21.6", _PB3)),
    Version("2.8", "3.10", ("tensorflow-cpu==2.8.*", "keras==2.8.0", "numpy==1.23.5", _PB3)),
    # 2.9-2.11 declare protobuf<3.20.
    Version("2.9", "3.10", ("tensorflow-cpu==2.9.*", "numpy==1.23.5", "protobuf==3.19.6")),
    Version("2.10", "3.10", ("tensorflow-cpu==2.10.*", "numpy==1.23.5", "protobuf==3.19.6")),
    Version("2.11", "3.10", ("tensorflow-cpu==2.11.*", "numpy==1.23.5", "protobuf==3.19.6")),
    Version("2.12", "3.11", ("tensorflow-cpu==2.12.*", "numpy==1.23.5")),
    Version("2.13", "3.11", ("tensorflow-cpu==2.13.*", "numpy==1.24.3")),
    # 2.14 declares numpy>=1.23.5 with no upper bound; it was built against
    # numpy 1.x and does not import with numpy 2.
    Version("2.14", "3.11", ("tensorflow-cpu==2.14.*", "numpy==1.26.4")),
    Version("2.15", "3.11", ("tensorflow-cpu==2.15.*", "numpy==1.26.4")),
    Version("2.16", "3.12", ("tensorflow-cpu==2.16.*", "numpy==1.26.4")),
    Version("2.17", "3.12", ("tensorflow-cpu==2.17.*", "numpy==1.26.4")),
    Version("2.18", "3.12", ("tensorflow-cpu==2.18.*",)),
    Version("2.19", "3.12", ("tensorflow-cpu==2.19.*",)),
    Version("2.20", "3.13", ("tensorflow-cpu==2.20.*",)),
    Version("2.21", "3.13", ("tensorflow-cpu==2.21.*",)),
)

# The versions the worker-compatibility tests (tox -e multiversion) run: one
# per Python minor from 3.7 to 3.13, and the Keras 2 -> 3 change (2.16).
REPRESENTATIVE = ("1.15", "2.2", "2.6", "2.10", "2.13", "2.16", "2.21")


def env_name(version):
    """The directory name of a version's environment: tf<X.Y>-py<A.B>."""
    return "tf%s-py%s" % (version.tf, version.python)


def by_tf(tf):
    """The row of a TF minor version ("2.6"), or None."""
    for v in VERSIONS:
        if v.tf == tf:
            return v
    return None


def tf_requirement(version):
    """The tensorflow requirement of a row ("tensorflow-cpu==2.6.*")."""
    for r in version.requirements:
        if r.startswith(("tensorflow==", "tensorflow-cpu==")):
            return r
    raise ValueError("no tensorflow requirement in %r" % (version.requirements,))


def version_key(tf):
    """Sort key of a TF minor version string: "2.10" after "2.9"."""
    return tuple(int(p) for p in tf.split("."))
