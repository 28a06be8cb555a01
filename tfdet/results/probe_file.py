"""A probe results file: read (validated and migrated once, here) and written."""

import os

from . import migrate, probe_settings
from .errors import ResultsError, ResultsMismatch
from .jsonl import JsonLinesWriter, read_lines
from .probe_records import KIND, RECORDS, SCHEMA_VERSION, CaseRecord, EndRecord, ProbeHeader
from .typed import RecordError


class ProbeResults(object):
    """What a probe results file holds: its header, its case records in file
    order, and the last end record (None if no run in it has finished)."""

    kind = KIND

    def __init__(self, header, cases, end=None, path=None):
        self.header = header
        self.cases = list(cases)
        self.end = end
        self.path = path

    @property
    def measured(self):
        """The records of (case, pass, mode)s that were run (skipped cases left out)."""
        return [r for r in self.cases if r.mode is not None]

    @property
    def skipped(self):
        return [r for r in self.cases if r.skipped]

    def done(self):
        return {r.key for r in self.cases}

    def to_json_lines(self):
        """The file's records as JSON objects, header first."""
        lines = [self.header.to_json()] + [r.to_json() for r in self.cases]
        return lines + ([self.end.to_json()] if self.end else [])

    def to_frame(self):
        """A pandas DataFrame, one row per case record (skipped cases included,
        with no pass and no mode), with the run's TF version, device and file
        name on every row. Column names are the file's field names."""
        from .optional import optional

        pd = optional("pandas", "ProbeResults.to_frame()", "pandas")  # an extra: nothing else needs pandas

        columns = [name for name in _case_columns()]
        frame = pd.DataFrame.from_records([r.to_json() for r in self.cases], columns=columns)
        frame["tf_version"] = self.header.tf_version
        frame["device"] = self.header.device
        frame["results_file"] = os.path.basename(self.path) if self.path else None
        return frame


def _case_columns():
    import dataclasses

    from .typed import json_name

    return [json_name(f) for f in dataclasses.fields(CaseRecord)]


def read_probe(path):
    """The ProbeResults of a file. A malformed line is a ResultsError naming
    path:line and the field; an older schema version is migrated."""
    lines = read_lines(path)
    if not lines or not isinstance(lines[0][1], dict) or lines[0][1].get("record") != "header":
        raise ResultsError("%s: not a tfdet results file (no header record on line 1)" % path)
    number, raw = lines[0]
    version = raw.get("schema_version")
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise ResultsError("%s: results schema version %d is newer than this tfdet reads (%d): upgrade tfdet"
                           % (path, version, SCHEMA_VERSION))
    kind = raw.get("kind", KIND)
    if kind != KIND:
        raise ResultsError("%s: a %s results file, not a probe results file" % (path, kind))
    try:
        raw = migrate.migrate_header(raw, SCHEMA_VERSION)
    except ValueError:
        raise ResultsError("%s: results schema version %r; this tfdet reads versions 1 to %d"
                           % (path, version, SCHEMA_VERSION)) from None
    try:
        header = ProbeHeader.from_json(raw, "%s:%d" % (path, number))
        cases, end = [], None
        for number, data in lines[1:]:
            where = "%s:%d" % (path, number)
            kind = data.get("record") if isinstance(data, dict) else None
            record_type = RECORDS.get(kind)
            if record_type is None or record_type is ProbeHeader:
                raise ResultsError("%s: record %s is not a case or end record" % (where, _show(kind)))
            record = record_type.from_json(data, where)
            if isinstance(record, EndRecord):
                end = record  # the last one counts: written again after each --resume
            else:
                cases.append(record)
    except RecordError as exc:
        raise ResultsError(str(exc)) from None
    return ProbeResults(header, cases, end, path)


def _show(value):
    return "(none)" if value is None else repr(value)


# --------------------------------------------------------------------------- --resume

# Every parameter that changes what a record means: (name, how to read it from a header).
RESUME_PARAMETERS = (
    ("tf_version", lambda h: h.tf_version),
    ("python", lambda h: h.first_environment.python if h.first_environment else None),
    ("tfdet_version", lambda h: h.tfdet_version),
    ("catalogue", lambda h: h.catalogue_digest),
    ("ops", lambda h: sorted(h.case_ids)),
    ("modes", lambda h: sorted(h.modes_asked)),
    ("size", lambda h: h.size),
    ("seed", lambda h: h.seed),
    ("repeats", lambda h: h.repeats),
    ("max_repeats", lambda h: h.max_repeats),
    ("processes", lambda h: h.processes),
    ("execution", lambda h: h.execution),
    ("intra_op_threads", lambda h: h.threads.intra_op),
    ("inter_op_threads", lambda h: h.threads.inter_op),
    ("onednn", lambda h: h.onednn),
)

# Recorded only by newer files (None there: not a mismatch, but said).
_SOMETIMES_UNRECORDED = ("catalogue", "max_repeats", "python")


def _sometimes_unrecorded():
    """... and a setting in the header's `settings`, which files older than it lack."""
    return _SOMETIMES_UNRECORDED + tuple(name for name, _ in probe_settings.settings_parameters())


def resume_parameters(header):
    """{name: value} of the RESUME_PARAMETERS a header records, and of the
    compared settings it records in `settings` (None: not recorded)."""
    values = {name: read(header) for name, read in RESUME_PARAMETERS}
    settings = recorded_settings(header)
    values.update((name, settings.get(name)) for name, _ in probe_settings.settings_parameters())
    return values


def recorded_settings(header):
    """The header's `settings`; a file written before the header recorded them
    (no `settings`) had --settle only in its argv, the one place to look there."""
    if header.settings is not None:
        return dict(header.settings)
    return {"settle": "--settle" in header.argv}


def resume_mismatches(old, new):
    """[(name, value in the file, value now)] where both are known and differ.
    Threads of None mean TensorFlow's default on both sides, so they compare too."""
    before, after = resume_parameters(old), resume_parameters(new)
    return [(name, before[name], after[name]) for name in before
            if (name not in _sometimes_unrecorded() or (before[name] is not None and after[name] is not None))
            and before[name] != after[name]]


def unrecorded_parameters(old):
    recorded = resume_parameters(old)
    return [name for name in _sometimes_unrecorded() if recorded[name] is None]


def _show_value(value):
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


def mismatch_message(path, mismatches):
    return "cannot resume %s: %s; resume with the file's values (leave those flags out) or start a new file" % (
        path, "; ".join("%s is %s in the file, %s here" % (name, _show_value(old), _show_value(new))
                        for name, old, new in mismatches))


class ProbeResultsWriter(object):
    """Writes a probe results file: the header (or, resuming, checks the file's
    against this run's), then case records as each case finishes, then an end
    record. Records already in a resumed file are not written again."""

    def __init__(self, path, resume=False, overwrite=False):
        self.path = path
        self.lines = JsonLinesWriter(path, resume=resume, overwrite=overwrite)
        self.header = None
        self.done = set()

    def existing(self):
        """The ProbeResults of the file being resumed; None if it has no complete line
        yet (a run stopped before its header was on disk: nothing to continue)."""
        return read_probe(self.path) if self.lines.has_content() else None

    def start(self, header):
        existing = self.existing()
        if existing is not None:
            mismatches = resume_mismatches(existing.header, header)
            if mismatches:
                raise ResultsMismatch(mismatch_message(self.path, mismatches))
            self.header = existing.header
            self.done = existing.done()
            self.lines.continue_after_last_line()
        else:
            self.lines.write_header(header)
            self.header = header

    def write_cases(self, records):
        fresh = [r for r in records if r.key not in self.done]
        self.lines.append(fresh)
        self.done.update(r.key for r in fresh)

    def write_end(self, record):
        self.lines.append([record])

    def close(self):
        self.lines.close()
