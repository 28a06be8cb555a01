"""A diverge results file: read (each line validated, errors naming file:line)."""

from .diverge_records import KIND, RECORDS, SCHEMA_VERSION
from .jsonl import read_typed_records


class DivergeResults(object):
    """The header, the training records in file order (a training run again
    after a failure: the last record counts), and the last summary."""

    kind = KIND

    def __init__(self, header, trainings, summary=None, path=None):
        self.header = header
        self.trainings = list(trainings)
        self.summary = summary
        self.path = path

    def latest(self):
        """{training key: its last record}."""
        return {r.key: r for r in self.trainings}


def read_diverge(path):
    header, trainings, summary = None, [], None
    for kind, record in read_typed_records(path, KIND, SCHEMA_VERSION, RECORDS):
        if kind == "header":
            header = record
        elif kind == "training":
            trainings.append(record)
        else:
            summary = record
    return DivergeResults(header, trainings, summary, path)
