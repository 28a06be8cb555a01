"""Read a `tfdet locate --json` file back as a typed LocateResult."""

from .json_result import read_json_result
from .locate_records import KIND, SCHEMA_VERSION, LocateResult


def read_locate(path, data=None):
    """The LocateResult in `path` (its parsed JSON may be passed as `data`).
    ResultsError names the file (and the field) for anything else."""
    return read_json_result(path, data, KIND, SCHEMA_VERSION, LocateResult, "a tfdet locate result")
