"""The results layer: the typed records the probe writes (and scan, locate and
diverge will), the files that hold them, and what they mean.

    import tfdet.results
    results = tfdet.results.load("tfdet-probe-20261124-101500.jsonl")
    results.header.tf_version, results.cases[0].outcome
    frame = results.to_frame()          # pandas: one row per case record

Standard library only at import time: the probe's worker imports
tfdet.results.stats under the Python of the TensorFlow it measures (3.7+).
"""

from .errors import ResultsError, ResultsInUse, ResultsMismatch, ResultsWriteError, describe_os_error
from .probe_file import ProbeResults, ProbeResultsWriter, read_probe
from .probe_records import SCHEMA_VERSION, Build, CaseRecord, EndRecord, Environment, ProbeHeader, Threads
from .typed import RecordError
from .vocabulary import DEFAULT_MODES, MEASURED, MODES, OUTCOMES


def load(path):
    """The results in a tfdet results file: a ProbeResults for a probe file (JSON
    Lines), a LocateResult for `tfdet locate --json` output (one JSON object),
    a DivergeResults for a `tfdet diverge` file (JSON Lines, a diverge header),
    a CompareResults for a `tfdet compare` file (a compare header).
    Raises ResultsError, naming the file and line, for anything malformed."""
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except (OSError, UnicodeDecodeError):
        return read_probe(path)  # says what is wrong with the file, as for any probe file
    if text.lstrip().startswith("{") and "\n{" not in text.strip():
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("kind") == "locate":
            from .locate_file import read_locate

            return read_locate(path, data)
    first = text.lstrip().split("\n", 1)[0]
    if first.startswith("{") and '"diverge"' in first:
        try:
            data = json.loads(first)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("kind") == "diverge":
            from .diverge_file import read_diverge

            return read_diverge(path)
    if first.startswith("{") and '"compare"' in first:
        try:
            data = json.loads(first)
        except ValueError:
            data = None
        if isinstance(data, dict) and data.get("kind") == "compare":
            from .compare_file import read_compare

            return read_compare(path)
    return read_probe(path)


__all__ = [
    "load", "read_probe", "ProbeResults", "ProbeResultsWriter", "ProbeHeader", "CaseRecord", "EndRecord",
    "Environment", "Threads", "Build", "SCHEMA_VERSION", "MODES", "DEFAULT_MODES", "OUTCOMES", "MEASURED",
    "RecordError", "ResultsError", "ResultsInUse", "ResultsMismatch", "ResultsWriteError", "describe_os_error",
]
