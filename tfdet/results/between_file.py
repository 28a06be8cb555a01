"""Write and read a fingerprints file (`tfdet locate --record`), and read a
`tfdet locate --compare --json` result back. Every malformed file is one
ResultsError naming the file and the line (and the field)."""

import json
import os
import tempfile
from dataclasses import dataclass
from typing import List

from .between_records import (BETWEEN, FINGERPRINT_RECORDS, FINGERPRINTS, SCHEMA_VERSION, BetweenResult,
                              FingerprintsHeader, OpLine, OutputLine)
from .errors import ResultsError, ResultsWriteError, describe_os_error
from .json_result import read_json_result
from .jsonl import read_lines
from .typed import RecordError


@dataclass
class Fingerprints:
    """A fingerprints file, read: its header, its ops and its outputs in execution order."""

    path: str
    header: FingerprintsHeader
    ops: List[OpLine]
    outputs: List[OutputLine]

    @property
    def kind(self):
        return self.header.kind


def write_fingerprints(path, header, ops, outputs):
    """Write the file whole, atomically (a new file renamed over `path`): a reader never
    sees half of one. ResultsWriteError (one line) when it cannot be written."""
    directory = os.path.dirname(os.path.abspath(path))
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(prefix=".tfdet-", suffix=".part", dir=directory)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            for record in [header] + list(ops) + list(outputs):
                out.write(json.dumps(record.to_json(), sort_keys=True, separators=(",", ":")) + "\n")
        os.replace(temporary, path)
    except OSError as exc:
        if temporary and os.path.exists(temporary):
            os.unlink(temporary)
        raise ResultsWriteError(describe_os_error(exc, path)) from None


def read_fingerprints(path):
    """The Fingerprints in `path`; ResultsError naming path:line for anything else."""
    lines = read_lines(path)
    if not lines:
        raise ResultsError("%s: empty, not a tfdet fingerprints file" % path)
    number, first = lines[0]
    if not isinstance(first, dict) or first.get("kind") != FINGERPRINTS:
        raise ResultsError("%s:%d: not a tfdet fingerprints file (tfdet locate --record writes them)" % (path, number))
    if first.get("schema_version") != SCHEMA_VERSION:
        raise ResultsError("%s:%d: fingerprints schema version %r; this tfdet reads version %d" % (
            path, number, first.get("schema_version"), SCHEMA_VERSION))
    header, ops, outputs = None, [], []
    for number, data in lines:
        where = "%s:%d" % (path, number)
        record = data.get("record") if isinstance(data, dict) else None
        cls = FINGERPRINT_RECORDS.get(record)
        if cls is None:
            raise ResultsError("%s: not a fingerprints record (record %s)" % (where, json.dumps(record)[:40]))
        if (cls is FingerprintsHeader) != (number == lines[0][0]):
            raise ResultsError("%s: the header must be the first line, and only it" % where)
        try:
            parsed = cls.from_json(data, where)
        except RecordError as exc:
            raise ResultsError(str(exc)) from None
        if cls is FingerprintsHeader:
            header = parsed
        elif cls is OpLine:
            ops.append(parsed)
        else:
            _check_key(parsed.key, where)
            outputs.append(parsed)
    if len(outputs) != header.outputs:
        raise ResultsError("%s: the header says %d outputs, the file holds %d (cut short?)" % (
            path, header.outputs, len(outputs)))
    return Fingerprints(path, header, ops, outputs)


def _check_key(key, where):
    graph = len(key) == 5 and key[0] == "g" and all(isinstance(k, str) for k in key[1:3]) and \
        all(isinstance(k, int) for k in key[3:])
    eager = len(key) == 3 and key[0] == "e" and all(isinstance(k, int) for k in key[1:])
    if not (graph or eager):
        raise ResultsError('%s: field key: expected ["g", graph, name, slot, occurrence] or ["e", index, slot], '
                           "got %s" % (where, json.dumps(key)[:60]))


def read_between(path, data=None):
    """A `tfdet locate --compare/--between --json` result."""
    return read_json_result(path, data, BETWEEN, SCHEMA_VERSION, BetweenResult, "a tfdet locate --compare result")
