"""The matrix manifest, matrix.json next to the per-version results files:
per version its environment (python, pins, what was installed, how long it
took, or which step failed and why) and its probe (status, time, results file).
The measurements themselves are only in the results files."""

import json
import os

from ..results import describe_os_error

SCHEMA = "tfdet-matrix-1"


class ManifestError(ValueError):
    """matrix.json exists and is not a matrix manifest."""


def load(path):
    """{"schema", "runs": [...], "versions": {tf: entry}}; an empty one if the file does not exist."""
    if not os.path.exists(path):
        return {"schema": SCHEMA, "versions": {}}
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise ManifestError("%s: not a matrix manifest (%s)" % (path, exc)) from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("versions"), dict):
        raise ManifestError("%s: not a matrix manifest (schema %s expected)" % (path, SCHEMA))
    return data


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
