"""A compare results file: read (each line validated, errors naming file:line)."""

from .compare_records import KIND, RECORDS, SCHEMA_VERSION
from .jsonl import read_typed_records


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
    header, trainings, looks, summary = None, [], [], None
    for kind, record in read_typed_records(path, KIND, SCHEMA_VERSION, RECORDS):
        if kind == "header":
            header = record
        elif kind == "training":
            trainings.append(record)
        elif kind == "look":
            looks.append(record)
        else:
            summary = record
    return CompareResults(header, trainings, looks, summary, path)
