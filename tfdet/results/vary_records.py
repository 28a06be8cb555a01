"""The records of a `tfdet probe --vary` results file, version 1: a header, one
record per (case, setting, variant) as soon as both of its arms finished the
case, and an end record per finished run. Its JSON Schema
(tfdet/results/schemas/vary-1.json) is generated from these declarations.

A verdict is about bits between two settings, kept apart from run-to-run
variance: `differs` is only said when each arm gave one result over all its
runs; otherwise `varies` (in the reference arm, the changed one, or both).
"""

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from .header import FileHeader
from .typed import Record, field

SCHEMA_VERSION = 1
KIND = "vary"

SAME, DIFFERS, VARIES, RAISED, FAILED, NOT_APPLICABLE = "same", "differs", "varies", "raised", "failed", "n/a"
VERDICTS = (SAME, DIFFERS, VARIES, RAISED, FAILED, NOT_APPLICABLE)
SETTINGS = ("onednn", "threads", "execution", "xla", "batch", "replicas", "precision")


@dataclass(frozen=True)
class ArmInfo(Record):
    """One arm: a fresh TensorFlow process under one setting."""

    env: Dict[str, str] = field(doc="environment variables set before TensorFlow loaded")
    threads: int = field(doc="intra- and inter-op threads")
    execution: str = field(choices=("eager", "function", "xla"))
    logical_devices: int = field(0, doc="logical CPU devices (replicas arms)")
    workers: int = field(0, doc="processes of one loopback MultiWorkerMirroredStrategy cluster (workers arms)")
    environment: Optional[Dict[str, Any]] = field(None, doc="the process as it described itself")
    import_seconds: Optional[float] = field(None)


@dataclass(frozen=True)
class VaryHeader(FileHeader):
    """Line 1: what was asked for and where it ran."""

    kind: str = field(choices=(KIND,))
    settings: List[str] = field(doc="the settings varied, in grid order")
    cases: List[str] = field(doc="the cases planned, in order")
    repeats: int = field(doc="runs of each case in each arm's process")
    seed: int = field()
    tf_version: str = field()
    device: str = field(choices=("cpu", "gpu"))
    cpu_count: int = field()
    arms: Dict[str, ArmInfo] = field({}, doc="arm name: how it ran")
    titles: Dict[str, str] = field({}, doc="case: what it computes")
    names: Dict[str, List[str]] = field({}, doc="case: the public APIs and raw ops it stands for")


@dataclass(frozen=True)
class VaryRecord(Record):
    """One (case, setting, variant): do the bits change between the reference and the changed setting?"""

    record: str = field(choices=("vary",))
    case: str = field()
    setting: str = field(choices=SETTINGS)
    variant: str = field(doc="the changed value, e.g. TF_ENABLE_ONEDNN_OPTS=0, 3 replicas")
    verdict: str = field(choices=VERDICTS)
    reference_arm: Optional[str] = field(None)
    changed_arm: Optional[str] = field(None)
    reference_runs: Optional[int] = field(None)
    changed_runs: Optional[int] = field(None)
    reference_distinct: Optional[int] = field(None, doc="bitwise-distinct results among the reference's runs")
    changed_distinct: Optional[int] = field(None)
    varies_in: Optional[str] = field(None, doc="verdict varies: which arm(s) gave more than one result")
    max_ulp: Optional[int] = field(None)
    max_abs: Optional[float] = field(None)
    max_rel: Optional[float] = field(None)
    frac_differ: Optional[float] = field(None, doc="fraction of output elements whose bits differ")
    elements: Optional[int] = field(None)
    error: Optional[str] = field(None, doc="verdict raised / failed: what happened")
    note: Optional[str] = field(None)

    @property
    def key(self):
        return (self.case, self.setting, self.variant)

    @property
    def stable_within(self):
        return self.verdict in (SAME, DIFFERS)


@dataclass(frozen=True)
class VaryEnd(Record):
    """Written when a run finishes (again after each --resume)."""

    record: str = field(choices=("end",))
    finished: str = field()
    seconds: float = field(doc="wall time of this run")
    notes: List[str] = field([], doc="what was not measured, and why")


RECORDS = {"header": VaryHeader, "vary": VaryRecord, "end": VaryEnd}
