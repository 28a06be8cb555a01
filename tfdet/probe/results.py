"""The probe's results file: JSON Lines, a header then one record per
(case, pass, mode), appended and flushed as each case finishes so an
interrupted run keeps everything it measured."""

import json
import os

SCHEMA_VERSION = 1
OUTCOMES = ("deterministic", "varies", "raised", "failed", "skipped")


class ResultsError(ValueError):
    """A file that is not a tfdet results file, or one this tfdet cannot read."""


def read_results(path):
    """(header, records) of a results file. A truncated last line (a run
    killed mid-write) is dropped; anything else malformed is a ResultsError."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
    except OSError as exc:
        raise ResultsError("%s: cannot read: %s" % (path, exc.strerror or exc)) from None
    except UnicodeDecodeError:
        raise ResultsError("%s: not a tfdet results file (not UTF-8 text)" % path) from None
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except ValueError:
            if number == len(lines) or (number == len(lines) - 1 and not lines[-1]):
                break  # the line a killed run was writing
            raise ResultsError("%s:%d: not a tfdet results file (line is not JSON)" % (path, number)) from None
    if not records or not isinstance(records[0], dict) or records[0].get("record") != "header":
        raise ResultsError("%s: not a tfdet results file (no header record on line 1)" % path)
    header = records[0]
    version = header.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ResultsError("%s: results schema version %r; this tfdet reads version %d" % (path, version, SCHEMA_VERSION))
    body = [r for r in records[1:] if isinstance(r, dict) and r.get("record") == "case"]
    ends = [r for r in records[1:] if isinstance(r, dict) and r.get("record") == "end"]
    if ends:  # written when a run finishes (again after each --resume): the last one counts
        header = dict(header, end=ends[-1])
    return header, body


def load_results(path):
    """A results file as a pandas DataFrame, one row per (case, pass, mode),
    with the run's TF version, device and file name on every row."""
    import pandas as pd

    header, records = read_results(path)
    frame = pd.DataFrame.from_records(records)
    environment = _first_environment(header)
    frame["tf_version"] = environment.get("tf_version")
    frame["device"] = environment.get("device")
    frame["results_file"] = os.path.basename(path)
    return frame


def _first_environment(header):
    environments = header.get("environment") or {}
    for mode in header.get("modes", []):
        if mode in environments:
            return environments[mode]
    return next(iter(environments.values()), {})


def record_key(record):
    return (record.get("case"), record.get("pass"), record.get("mode"))


class ResultsWriter(object):
    """Appends records to a results file, durable after each write_case()."""

    def __init__(self, path, header, resume=False):
        self.path = path
        self.done = set()
        self.header = header
        if resume and os.path.exists(path) and os.path.getsize(path) > 0:
            old_header, records = read_results(path)
            self._check_compatible(old_header, header)
            self.header = old_header
            self.done = {record_key(r) for r in records}
            self._truncate_partial_line()
            self.handle = open(path, "a", encoding="utf-8")
        else:
            directory = os.path.dirname(os.path.abspath(path))
            os.makedirs(directory, exist_ok=True)
            self.handle = open(path, "w", encoding="utf-8")
            self._write([header])

    def _check_compatible(self, old, new):
        for key in ("tf_version", "python"):
            before, after = _first_environment(old).get(key), _first_environment(new).get(key)
            if before != after:
                raise ResultsError("%s: cannot resume: it was made with %s %s, this run has %s" % (
                    self.path, key, before, after))

    def _truncate_partial_line(self):
        with open(self.path, "rb+") as handle:
            data = handle.read()
            end = data.rfind(b"\n") + 1
            if end < len(data):
                handle.truncate(end)

    def _write(self, records):
        for record in records:
            self.handle.write(json.dumps(record, sort_keys=True) + "\n")
        self.handle.flush()
        os.fsync(self.handle.fileno())

    def write_case(self, records):
        fresh = [r for r in records if record_key(r) not in self.done]
        self._write(fresh)
        self.done.update(record_key(r) for r in fresh)

    def write_end(self, record):
        """The run's closing record (what it came to as a whole); readers put it in header["end"]."""
        self._write([record])

    def close(self):
        self.handle.close()
