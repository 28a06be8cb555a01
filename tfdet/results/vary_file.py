"""A `tfdet probe --vary` results file: read (each line validated, errors naming file:line)."""

from .jsonl import read_typed_records
from .vary_records import KIND, RECORDS, SCHEMA_VERSION


class VaryResults(object):
    """The header, the vary records in file order (the last one of a key counts), and the last end record."""

    kind = KIND

    def __init__(self, header, records, end=None, path=None):
        self.header = header
        self.records = list(records)
        self.end = end
        self.path = path

    def latest(self):
        """{(case, setting, variant): its last record}."""
        return {r.key: r for r in self.records}

    def done(self):
        return set(self.latest())


def read_vary(path):
    header, records, end = None, [], None
    for name, record in read_typed_records(path, KIND, SCHEMA_VERSION, RECORDS):
        if name == "header":
            header = record
        elif name == "vary":
            records.append(record)
        else:
            end = record
    return VaryResults(header, records, end, path)
