"""The matrix manifest, matrix.json beside the per-version results files that
`tfdet matrix` writes, as typed records: per TF version its environment (python,
pins, what was installed, how long it took, or which step failed and why) and
its probe (status, time, results file). The measurements themselves are only in
the results files. Read one way: `tfdet matrix` (tfdet.matrix.manifest) and
`tfdet report --matrix` (tfdet.report.matrix_page) both read through
parse_manifest here.

Besides the file `tfdet matrix` writes, parse_manifest takes the shorter forms
a person writes by hand for `tfdet report --manifest`: the versions mapping
itself, a version mapped to a status string, and a "versions" list of objects
with a "version" key.
"""

import dataclasses
import json
import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from .errors import ResultsError
from .typed import Record, RecordError, field

SCHEMA = "tfdet-matrix-1"
STATUSES = ("probed", "installed", "failed", "probe-failed")


class ManifestError(ResultsError):
    """matrix.json exists and is not a matrix manifest."""


@dataclass(frozen=True)
class VersionEnvironment(Record):
    """What became of one version's environment (tfdet.matrix.venvs.record)."""

    status: Optional[str] = field(None, choices=("reused", "created", "failed"))
    tf: Optional[str] = field(None)
    python: Optional[str] = field(None)
    env: Optional[str] = field(None, doc="the environment's directory name")
    path: Optional[str] = field(None)
    requirements: List[str] = field([])
    seconds: Optional[float] = field(None)
    failed_step: Optional[str] = field(None, keep_none=True)
    error: str = field("", doc="the tail of the failed step's stderr")
    tf_version: Optional[str] = field(None, keep_none=True, doc="the TensorFlow it imports")
    numpy_version: Optional[str] = field(None, keep_none=True)
    interpreter: Optional[str] = field(None, keep_none=True)


@dataclass(frozen=True)
class VersionProbe(Record):
    """How one version's probe ended."""

    status: Optional[str] = field(None, choices=("probed", "failed"))
    exit_code: Optional[int] = field(None, keep_none=True)
    seconds: Optional[float] = field(None)
    cpu_seconds: Optional[float] = field(None, doc="of the probe and its workers")
    error: str = field("")
    results: Optional[str] = field(None, doc="the results file, beside the manifest")
    parameters: Dict[str, Any] = field({}, doc="the probe settings the matrix passed")


@dataclass(frozen=True)
class MatrixVersion(Record):
    """One TF version of the matrix."""

    status: str = field(choices=STATUSES)
    tf: Optional[str] = field(None)
    version: Optional[str] = field(None, doc="the version, in a \"versions\" list")
    python: Optional[str] = field(None)
    env: Optional[str] = field(None)
    requirements: List[str] = field([])
    environment: Optional[VersionEnvironment] = field(None)
    modes: List[str] = field([])
    modes_not_run: Dict[str, str] = field({})
    creation_seconds: Optional[float] = field(None, keep_none=True)
    probe: Optional[VersionProbe] = field(None)
    reason: Optional[str] = field(None, doc="why, in a manifest written by hand")
    error: Optional[str] = field(None, doc="why, in a manifest written by hand")

    def why(self):
        """The reason the entry gives: its own reason or error, else what `tfdet matrix`
        records (the failed step and error of the environment, or the probe's exit code
        and error); '' when there is none."""
        reason = self.reason or self.error
        if reason:
            return _last_line(reason)
        if self.environment is not None and self.environment.status == "failed":
            return "at %s: %s" % (self.environment.failed_step or "?", _last_line(self.environment.error))
        if self.probe is not None and self.probe.status not in (None, "probed"):
            return "probe exit %s: %s" % (self.probe.exit_code, _last_line(self.probe.error))
        return ""


@dataclass(frozen=True)
class LastRun(Record):
    """The last `tfdet matrix` run that did anything."""

    seconds: Optional[float] = field(None)
    versions: List[str] = field([])
    executor: Optional[str] = field(None)
    jobs: Optional[int] = field(None)
    finished: Optional[str] = field(None, doc="ISO 8601, UTC")


@dataclass(frozen=True)
class MatrixManifest(Record):
    """matrix.json: per version (major.minor, as the matrix names it) what became of it."""

    schema: Optional[str] = field(None, choices=(SCHEMA,))
    versions: Dict[str, MatrixVersion] = field({})
    tfdet_version: Optional[str] = field(None)
    updated: Optional[str] = field(None, doc="ISO 8601, UTC")
    last_run: Optional[LastRun] = field(None)


def _last_line(value, limit=200):
    lines = [line for line in str(value or "").splitlines() if line.strip()]
    line = lines[-1].strip() if lines else ""
    return line if len(line) <= limit else line[:limit] + "\u2026"


def parse_manifest(data, name="manifest", require_schema=False):
    """The MatrixManifest of a manifest's parsed JSON (see the module's forms);
    require_schema: only the file `tfdet matrix` writes. ManifestError, naming
    `name` and the field, for anything else."""
    def bad(why):
        return ManifestError("%s: not a matrix manifest: %s" % (name, why))

    if not isinstance(data, dict):
        raise bad("expected a JSON object")
    if require_schema and (data.get("schema") != SCHEMA or not isinstance(data.get("versions"), dict)):
        raise bad("schema %s expected" % SCHEMA)
    # the file `tfdet matrix` writes has "versions" (and its run's facts); a bare mapping is the versions
    top = {key: value for key, value in data.items() if key != "versions"} if "versions" in data else {}
    versions = data["versions"] if "versions" in data else data
    if isinstance(versions, list):
        items = []
        for item in versions:
            if not isinstance(item, dict) or "version" not in item:
                raise bad("each entry of \"versions\" needs a \"version\"")
            items.append((item["version"], item))
    elif isinstance(versions, dict):
        items = list(versions.items())
    else:
        raise bad("\"versions\" must be an object or a list")
    parsed = {}
    for version, entry in items:
        if isinstance(entry, str):
            entry = {"status": entry}
        if not isinstance(entry, dict) or not isinstance(entry.get("status"), str):
            raise bad("TF %s: expected a status string or an object with a \"status\"" % version)
        try:
            parsed[str(version)] = MatrixVersion.from_json(entry, name, "versions.%s" % version)
        except RecordError as exc:
            raise ManifestError("%s (not a matrix manifest)" % exc) from None
    try:
        return dataclasses.replace(MatrixManifest.from_json(dict(top, versions={}), name), versions=parsed)
    except RecordError as exc:
        raise ManifestError("%s (not a matrix manifest)" % exc) from None


def read_manifest(path, require_schema=True):
    """The MatrixManifest in `path` (an empty one where there is no file yet, with
    require_schema). ManifestError names the file for anything else."""
    if require_schema and not os.path.exists(path):
        return MatrixManifest(schema=SCHEMA)
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as exc:
        raise ManifestError("%s: not a matrix manifest (%s)" % (path, exc)) from None
    return parse_manifest(data, path, require_schema)
