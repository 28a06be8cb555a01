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
    """The results in a tfdet results file, by its header's `kind`: a ProbeResults
    for a probe file (JSON Lines), a LocateResult for `tfdet locate --json` output
    (one JSON object), a DivergeResults for a `tfdet diverge` file, a
    CompareResults for a `tfdet compare` file. Raises ResultsError, naming the
    file and line, for anything malformed and for a header with no kind or
    another one."""
    from .kinds import load as load_by_kind

    return load_by_kind(path)


__all__ = [
    "load", "read_probe", "ProbeResults", "ProbeResultsWriter", "ProbeHeader", "CaseRecord", "EndRecord",
    "Environment", "Threads", "Build", "SCHEMA_VERSION", "MODES", "DEFAULT_MODES", "OUTCOMES", "MEASURED",
    "RecordError", "ResultsError", "ResultsInUse", "ResultsMismatch", "ResultsWriteError", "describe_os_error",
]
