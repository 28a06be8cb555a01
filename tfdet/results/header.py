"""What every results file says about itself, declared once: which kind of
results it holds, in which version of that kind's schema, written by which
tfdet. ResultsHeader is the base of each kind's header (a locate or scan
result, one JSON object, is its own header); FileHeader adds what a JSON Lines
file's first line records besides (its record name, when, and the command).

A kind's header class declares `kind` again with that kind alone as its
choice; the field keeps its place.
"""

from dataclasses import dataclass
from typing import List

from .typed import Record, field

# Every kind of tfdet results (schemas/KIND-VERSION.json).
KINDS = ("probe", "diverge", "compare", "locate", "scan", "vary")


@dataclass(frozen=True)
class ResultsHeader(Record):
    """The kind of results, the version of its schema, and the tfdet that wrote it."""

    kind: str = field(choices=KINDS)
    schema_version: int = field()
    tfdet_version: str = field()


@dataclass(frozen=True)
class FileHeader(ResultsHeader):
    """Line 1 of a JSON Lines results file: what was asked for and where it ran."""

    record: str = field(choices=("header",))
    created: str = field(doc="ISO 8601, UTC")
    argv: List[str] = field()
