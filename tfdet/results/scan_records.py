"""The result of `tfdet scan`, version 1: what a model's training will hit,
op by op, with the catalogue's status and fix. `tfdet scan --json` prints
ScanReport.to_json(); its JSON Schema is tfdet/results/schemas/scan-1.json."""

from dataclasses import dataclass
from typing import List, Optional

from .header import ResultsHeader
from .typed import Record, field

SCHEMA_VERSION = 1
KIND = "scan"

# What remains of a hit after the fixes tfdet would apply, most severe first.
NONDETERMINISTIC, RAISES, UNKNOWN, FIXED = "nondeterministic", "raises", "unknown", "fixed"
OUTCOMES = (NONDETERMINISTIC, RAISES, UNKNOWN, FIXED)
SEVERITY = {NONDETERMINISTIC: 3, RAISES: 2, UNKNOWN: 1, FIXED: 0}


@dataclass(frozen=True)
class ScanHit(Record):
    """One catalogued raw op found in the traced graphs."""

    op_type: str = field(doc="the raw op, e.g. UnsortedSegmentSum")
    count: int = field(doc="nodes of it in the traced graphs")
    entries: List[str] = field(doc="catalogue entry ids the op answers to")
    status: str = field(doc="the catalogue's status for the TF version and device")
    outcome: str = field(choices=OUTCOMES, doc="what remains after the fixes tfdet would apply")
    fix: str = field(doc="what makes it reproducible, '' if nothing does")
    passes: List[str] = field(doc="forward, gradient, loss, metric, optimizer, input, initialisation")
    where: List[str] = field(doc="name scopes, functions and creation lines (a few)")


@dataclass(frozen=True)
class ScanReport(ResultsHeader):
    """What a scan found: the verdict line, the hits, and what was traced."""

    kind: str = field(choices=(KIND,))
    model: str = field(doc="the file or object scanned")
    tf_version: str = field(doc="the TF version judged (not necessarily the installed one)")
    traced_with: str = field(doc="the TF version that traced the graphs")
    device: str = field(choices=("cpu", "gpu"))
    assume_patched: bool = field()
    verdict: str = field()
    hits: List[ScanHit] = field()
    graphs: List[str] = field(doc="what was traced: inference, training step, ...")
    op_types: int = field(doc="distinct raw op types seen")
    notes: List[str] = field([])
    worst: Optional[str] = field(None, choices=OUTCOMES, doc="the most severe outcome, null when nothing was hit")
