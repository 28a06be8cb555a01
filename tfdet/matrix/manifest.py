"""The matrix manifest, matrix.json next to the per-version results files:
read through its typed records (tfdet.results.matrix_manifest), merged a
version at a time as the matrix finishes it, and written atomically."""

import json
import os

from ..results import describe_os_error
from ..results.matrix_manifest import SCHEMA, ManifestError, read_manifest

__all__ = ["SCHEMA", "ManifestError", "load", "update", "save"]


def load(path):
    """{"schema", "versions": {tf: entry}, ...}: the manifest as its typed records
    (tfdet.results.matrix_manifest, the one reader) write it; an empty one if the
    file does not exist. ManifestError names the file and the field."""
    return read_manifest(path, require_schema=True).to_json()


def update(data, tf, entry):
    """The manifest with one version's entry merged in (a probe-less entry keeps the last probe)."""
    old = data["versions"].get(tf, {})
    if entry.get("status") == "installed" and old.get("probe"):  # --create-only keeps what was probed
        entry = dict(entry, status=old["status"])
    merged = dict(old, **{k: v for k, v in entry.items() if v is not None or k not in old})
    versions = dict(data["versions"], **{tf: merged})
    return dict(data, versions=versions)


def save(data, path):
    """Write atomically (a temporary file renamed over the old one). OSError says the path."""
    ordered = dict(data, versions={k: data["versions"][k] for k in sorted(
        data["versions"], key=lambda t: tuple(int(p) for p in t.split(".")))})
    temporary = path + ".tmp"
    try:
        with open(temporary, "w") as handle:
            json.dump(ordered, handle, indent=1, sort_keys=False)
            handle.write("\n")
        os.replace(temporary, path)
    except OSError as exc:
        raise OSError(describe_os_error(exc, path)) from None
