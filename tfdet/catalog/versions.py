"""TensorFlow versions as the catalogue speaks of them: major.minor releases."""

import functools
import re

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

# The releases the catalogue covers. Every device of every entry must say
# something about each of these exactly once.
COVERED_TF_VERSIONS = tuple(
    Version(v)
    for v in ["1.14", "1.15"] + ["2.%d" % minor for minor in range(0, 22)]
)

_RELEASE = re.compile(r"^\s*v?(\d+)\.(\d+)")


def tf_minor(version):
    """Return the major.minor release of a TF version string as a Version.

    The catalogue's claims are per minor release, so 2.6.2, 2.6.0rc1 and 2.6
    all mean 2.6. Raises ValueError for anything that is not a version.
    """
    try:
        return _tf_minor_cached(version)
    except TypeError:  # unhashable, so no version: the uncached path says so
        return _tf_minor(version)


# Lookups ask for the same few versions again and again (the docs' catalogue pages
# about a million times); parsing them each time was most of the cost.
@functools.lru_cache(maxsize=1024)
def _tf_minor_cached(version):
    return _tf_minor(version)


def _tf_minor(version):
    if isinstance(version, Version):
        return Version("%d.%d" % (version.major, version.minor))
    match = _RELEASE.match(str(version))
    if not match:
        raise ValueError("not a TensorFlow version: %r (expected e.g. 2.6 or 2.21.0)" % (version,))
    try:
        Version(str(version).strip().lstrip("v"))
    except InvalidVersion:
        raise ValueError("not a TensorFlow version: %r (expected e.g. 2.6 or 2.21.0)" % (version,)) from None
    return Version("%s.%s" % match.groups())


class UncoveredVersionError(ValueError):
    """A TF version older than any the catalogue covers: an answer would be made up."""


class StaleVersionWarning(UserWarning):
    """A TF version newer than the catalogue: the answers are its newest release's."""


def answering_version(version):
    """The covered release whose facts answer for a TF version, and a warning or ''.

    A version newer than the catalogue is answered with the newest covered
    release (TF rarely makes an op less deterministic, but the facts may be
    stale). One older than the catalogue raises UncoveredVersionError, and a
    non-version ValueError. Pure: the caller decides how to warn.
    """
    minor = tf_minor(version)
    oldest, newest = COVERED_TF_VERSIONS[0], COVERED_TF_VERSIONS[-1]
    if minor < oldest:
        raise UncoveredVersionError(
            "TF %s is older than any version the catalogue covers (%s to %s)" % (minor, oldest, newest))
    if minor > newest:
        return newest, ("TF %s is newer than the catalogue (%s to %s); these are the facts for %s "
                        "and may be stale" % (minor, oldest, newest, newest))
    return minor, ""


def parse_specifier(text):
    """Parse a PEP 440 specifier; ValueError names the bad text."""
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise ValueError("not a PEP 440 version specifier: %r (expected e.g. '>=2.5,<2.7')" % (text,)) from None


@functools.lru_cache(maxsize=8192)
def contains(specifier, version):
    """True if a major.minor Version falls in the specifier.

    A minor release is represented by its .0 release, so '<2.7' holds 2.6 and
    '>=2.7' holds 2.7; pre-releases count as their release. Cached: equal
    specifiers and versions hash alike, and both are immutable.
    """
    return specifier.contains(Version("%d.%d.0" % (version.major, version.minor)), prereleases=True)


def format_versions(versions):
    """Summarise a sorted list of covered versions as 'a-b' runs: '1.14-2.4, 2.7'."""
    runs = []
    for version in versions:
        index = COVERED_TF_VERSIONS.index(version)
        if runs and runs[-1][1] == index - 1:
            runs[-1][1] = index
        else:
            runs.append([index, index])
    return ", ".join(
        str(COVERED_TF_VERSIONS[a]) if a == b else "%s-%s" % (COVERED_TF_VERSIONS[a], COVERED_TF_VERSIONS[b])
        for a, b in runs
    )
