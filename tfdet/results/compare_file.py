"""A compare results file: read (each line validated, errors naming file:line)."""

from .compare_records import KIND, RECORDS, SCHEMA_VERSION
from .errors import ResultsError
from .jsonl import read_lines
from .typed import RecordError


class CompareResults(object):
    """The header, the training records in file order (the last record of a
    training counts), the looks, and the last summary."""

    kind = KIND

    def __init__(self, header, trainings, looks, summary=None, path=None):
        self.header = header
        self.trainings = list(trainings)
        self.looks = list(looks)
        self.summary = summary
        self.path = path

    def latest(self):
        """{(arm, pair): its last record}."""
        return {r.key: r for r in self.trainings}


def read_compare(path):
    lines = read_lines(path)
    if not lines:
        raise ResultsError("%s: empty, not a tfdet compare results file" % path)
    header, trainings, looks, summary = None, [], [], None
    for number, data in lines:
        where = "%s:%d" % (path, number)
        kind = data.get("record") if isinstance(data, dict) else None
        if number == lines[0][0]:
            if kind != "header" or data.get("kind") != KIND:
                raise ResultsError("%s: not a tfdet compare results file (no compare header)" % where)
            if data.get("schema_version") != SCHEMA_VERSION:
                raise ResultsError("%s: compare schema version %r; this tfdet reads version %d" % (
                    where, data.get("schema_version"), SCHEMA_VERSION))
        if kind not in RECORDS:
            raise ResultsError("%s: unknown record %r" % (where, kind))
        try:
            record = RECORDS[kind].from_json(data, where)
        except RecordError as exc:
            raise ResultsError(str(exc)) from None
        if kind == "header":
            if header is not None:
                raise ResultsError("%s: a second header" % where)
            header = record
        elif kind == "training":
            trainings.append(record)
        elif kind == "look":
            looks.append(record)
        else:
            summary = record
    return CompareResults(header, trainings, looks, summary, path)
