"""The records of a diverge results file, version 1: a header, one training
record per training as it finishes, and a summary record (the cells' figures)
each time a run ends. Its JSON Schema (tfdet/results/schemas/diverge-1.json)
is generated from these declarations.

A cell is one (workload, lr, condition, mode): K trainings whose disagreement
is the cell's figure. Final weights are not in the file (they are large): the
training record names the .npz beside it (RESULTS.weights/) and its sha256.
"""

from dataclasses import dataclass
from typing import Dict, List, Optional

from .header import FileHeader
from .typed import Record, field
from .vocabulary import MODES

SCHEMA_VERSION = 1
KIND = "diverge"

CONDITIONS = ("fixed-fixed", "fixed-random", "random-fixed", "random-random")
CELL_NAMES = ("IMPL", "ALGO+IMPL", "ALGO", "control", "")
TRAINING_OUTCOMES = ("ok", "failed", "timeout")


@dataclass(frozen=True)
class DivergeHeader(FileHeader):
    """Line 1: what was asked for and where it ran."""

    kind: str = field(choices=(KIND,))
    workload: str = field()
    lrs: List[float] = field(doc="the learning rates swept")
    momentum: float = field()
    epochs: int = field()
    batch_size: int = field()
    conditions: List[str] = field(doc="init-batches: fixed or random seeds across runs")
    modes: List[str] = field()
    runs: int = field(doc="trainings per cell (K)")
    tf_version: Optional[str] = field(None)
    python: Optional[str] = field(None)
    executor: Optional[str] = field(None, doc="local or dask, and where")
    mode_env: Dict[str, Dict[str, str]] = field({}, doc="mode: the determinism variables its trainings get")


@dataclass(frozen=True)
class TrainingRecord(Record):
    """One training, in its own process."""

    record: str = field(choices=("training",))
    workload: str = field()
    lr: float = field()
    condition: str = field(choices=CONDITIONS)
    mode: str = field(choices=MODES)
    run: int = field(doc="0 .. runs-1 within the cell")
    init_seed: int = field()
    batch_seed: int = field()
    outcome: str = field(choices=TRAINING_OUTCOMES)
    error: Optional[str] = field(None, doc="why a failed or timed-out training has no result")
    predictions: Optional[List[int]] = field(None, doc="predicted class of each test example")
    labels: Optional[List[int]] = field(None, doc="true class of each test example")
    accuracy: Optional[float] = field(None)
    top5_accuracy: Optional[float] = field(None, doc="null when the workload has 5 classes or fewer")
    final_loss: Optional[float] = field(None)
    weights_file: Optional[str] = field(None, doc="the final weights' .npz, relative to the results file")
    weights_sha256: Optional[str] = field(None, doc="of the weights' bytes in order: equal digests, equal weights")
    steps: Optional[int] = field(None)
    seconds_total: Optional[float] = field(None, doc="the training loop, tracing included")
    seconds_per_step: Optional[float] = field(None, doc="median over steps after the first")
    wall_seconds: Optional[float] = field(None, doc="the whole process: start, import, train, write")
    op_determinism: Optional[bool] = field(None, doc="TF's op determinism flag in the training process")
    host: Optional[str] = field(None)
    pid: Optional[int] = field(None, doc="the training process (each training has its own)")

    @property
    def key(self):
        return (self.workload, float(self.lr), self.condition, self.mode, int(self.run))


@dataclass(frozen=True)
class Cell(Record):
    """The figures of one (workload, lr, condition, mode) over its finished trainings."""

    workload: str = field()
    lr: float = field()
    condition: str = field(choices=CONDITIONS)
    mode: str = field(choices=MODES)
    cell_name: str = field(choices=CELL_NAMES, doc="Zhuang et al., MLSys 2022; '' for the mixed conditions")
    runs: int = field(doc="finished trainings the figures are over")
    failed: int = field(doc="trainings that crashed or timed out")
    disagreement_any: Optional[float] = field(keep_none=True, doc="fraction of test examples on which not all runs agree")
    disagreement_pairwise_mean: Optional[float] = field(keep_none=True)
    disagreement_pairwise_min: Optional[float] = field(keep_none=True)
    disagreement_pairwise_max: Optional[float] = field(keep_none=True)
    per_class_disagreement: Dict[str, float] = field(doc="true class: fraction of its examples not all runs agree on")
    weight_distance_max: Optional[float] = field(keep_none=True, doc="largest L2 distance between two runs' final weights")
    weight_frobenius_max: Optional[float] = field(keep_none=True, doc="largest Frobenius norm of one weight tensor's difference")
    distinct_weights: int = field(doc="different final weights (by sha256) among the runs")
    accuracy_mean: Optional[float] = field(keep_none=True)
    accuracy_std: Optional[float] = field(keep_none=True)
    top5_accuracy_mean: Optional[float] = field(keep_none=True)
    seconds_per_step: Optional[float] = field(keep_none=True, doc="median over the cell's trainings")
    seconds_total: Optional[float] = field(keep_none=True, doc="median over the cell's trainings")
    step_time_ratio: Optional[float] = field(keep_none=True, doc="seconds_per_step / baseline's of the same lr and condition")
    total_time_ratio: Optional[float] = field(keep_none=True)


@dataclass(frozen=True)
class SummaryRecord(Record):
    """Written when a run ends (finished or interrupted): every cell's figures
    over the trainings in the file. The last one in a file is current."""

    record: str = field(choices=("summary",))
    complete: bool = field(doc="every planned training has a record")
    trainings: int = field()
    cells: List[Cell] = field()


RECORDS = {"header": DivergeHeader, "training": TrainingRecord, "summary": SummaryRecord}
