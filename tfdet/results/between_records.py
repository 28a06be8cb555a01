"""The records of locate across environments, version 1.

- A fingerprints file (`tfdet locate --record FILE`, kind "fingerprints", JSON
  Lines): a header describing the machine and settings it ran in, then the
  program's ops ("op" lines, as traced into graphs) and every op output of its
  first run ("output" lines) with the fingerprint of the same output in a second
  run (`again`), so the file itself says which outputs vary run to run there.
- The comparison of two of them (`tfdet locate --compare A B --json` and
  `--between`, kind "between", one JSON object): the first op whose output
  differs while its inputs match, whether that is expected, the environments'
  differences, and the ops that could not be matched.

JSON Schemas: tfdet/results/schemas/fingerprints-1.json and between-1.json.
"""

from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from .header import FileHeader, ResultsHeader
from .locate_records import RunOutcome
from .typed import Record, field

SCHEMA_VERSION = 1
FINGERPRINTS = "fingerprints"
BETWEEN = "between"
VERDICTS = ("same", "expected", "unexplained", "varies-within", "unmatched-only")


@dataclass(frozen=True)
class Machine(Record):
    """The environment one side ran in, as its first run described itself after the program ran."""

    tf_version: str = field(doc="tf.__version__")
    device: str = field(choices=("cpu", "gpu"))
    tfdet_version: Optional[str] = field(None)
    tf_git_version: Optional[str] = field(None)
    python: Optional[str] = field(None)
    numpy: Optional[str] = field(None)
    platform: Optional[str] = field(None)
    cpu_model: Optional[str] = field(None)
    cpu_count: Optional[int] = field(None)
    cpu_flags: List[str] = field([], doc="the instruction-set flags of /proc/cpuinfo that change kernels "
                                         "(avx*, fma, sse4*, amx*, f16c)")
    gpus: List[Dict[str, Any]] = field([])
    nvidia_driver: Optional[str] = field(None)
    cuda_build: Optional[bool] = field(None)
    cuda_version: Any = field(None)
    cudnn_version: Any = field(None)
    onednn: Optional[str] = field(None, doc="on or off: whether TF's oneDNN CPU kernels are on "
                                                  "(TF_ENABLE_ONEDNN_OPTS, or TF's default)")
    onednn_enabled: Optional[bool] = field(None, doc="TF's own answer (IsMklEnabled)")
    intra_op_threads: Optional[int] = field(None, doc="as TF reports it (0: one per core)")
    inter_op_threads: Optional[int] = field(None)
    execution: Optional[str] = field(None, choices=("function", "eager"),
                                     doc="eager when tf.config.run_functions_eagerly(True)")
    xla_jit: Optional[str] = field(None, doc="tf.config.optimizer.get_jit(): '' when off")
    op_determinism_enabled: Optional[bool] = field(None)
    env: Dict[str, str] = field({}, doc="the variables that change TF's kernels, threads or numerics (TF_*, "
                                        "XLA_FLAGS, OMP_*, MKL_*, KMP_*, CUDA_*, NVIDIA_*, PYTHONHASHSEED)")


@dataclass(frozen=True)
class FingerprintsHeader(FileHeader):
    """Line 1 of a fingerprints file: what ran, where, and how its two runs compared."""

    kind: str = field(choices=(FINGERPRINTS,))
    target: str = field(doc="the script and its arguments")
    machine: Machine = field()
    side: Dict[str, str] = field({}, doc="the settings and variables this side was asked for (--between), by name")
    runs: int = field(2, doc="runs recorded; the first is kept, the second as `again` of each output")
    run_outcomes: List[RunOutcome] = field([])
    outputs: int = field(0, doc="output lines that follow")
    outputs_varying: int = field(0, doc="outputs whose second run differed")
    again_missing: int = field(0, doc="outputs of the first run the second run has no counterpart for")
    notes: List[str] = field([])
    fingerprint: Optional[str] = field(None, doc="how graph outputs were fingerprinted: farmhash64 (tf.fingerprint, "
                                                 "the CPU default) or sums2 (exact int64 sums, the GPU default); "
                                                 "absent in files before the field (then: farmhash64 on a cpu, "
                                                 "the older sums1 on a gpu). Files fingerprinted differently are "
                                                 "not compared")


@dataclass(frozen=True)
class OpLine(Record):
    """An op traced into a graph (capture.py's "op" record)."""

    record: str = field(choices=("op",))
    graph: str = field()
    name: str = field()
    type: str = field()
    inputs: List[Any] = field([], doc="[graph, op name, slot] per input, or null")
    source: Optional[str] = field(None)
    forward: Optional[str] = field(None)
    library: Optional[str] = field(None)
    apis: List[str] = field([])
    outputs: Optional[List[Any]] = field(None, doc="[dtype, shape] per output (shape null when unknown)")


@dataclass(frozen=True)
class OutputLine(Record):
    """One op output of the first run, in execution order."""

    record: str = field(choices=("output",))
    key: List[Any] = field(doc='["g", graph, op name, slot, occurrence] or ["e", eager index, slot]')
    fingerprint: Optional[str] = field(keep_none=True)
    again: Optional[str] = field(None, keep_none=True, doc="the second run's fingerprint; null: no counterpart")
    step: Optional[int] = field(None)
    type: Optional[str] = field(None, doc="eager ops: the op type")
    source: Optional[str] = field(None, doc="eager ops: the user's line")
    inputs: Optional[List[Any]] = field(None, doc="eager ops: their inputs (refs or fingerprints)")


@dataclass(frozen=True)
class Unmatched(Record):
    """Outputs of one side that have no counterpart on the other."""

    side: str = field(choices=("a", "b"))
    count: int = field()
    first: List[str] = field([], doc="the first few, as 'Type name (function)'")


@dataclass(frozen=True)
class FirstDifference(Record):
    """The first output that differs between the sides while every input it read matches."""

    op_type: str = field()
    op_name: str = field()
    op_name_b: str = field(doc="its counterpart's name on side b")
    function: Optional[str] = field(None)
    source: Optional[str] = field(None)
    step: Optional[int] = field(None)
    output_slot: int = field(0)
    stable_within: Dict[str, Optional[bool]] = field({}, doc="side: its two runs agreed on this output (null: "
                                                             "no second run to say)")
    sensitive_to: Dict[str, Any] = field({}, doc="changed setting: the catalogue's fact about this op and it")
    catalog_entries: List[str] = field([])


@dataclass(frozen=True)
class BetweenResult(ResultsHeader):
    """Where two environments' runs of one program first part, and whether that is expected."""

    kind: str = field(choices=(BETWEEN,))
    a: str = field(doc="side a: its file, or its settings")
    b: str = field()
    target: str = field()
    verdict: str = field(choices=VERDICTS, doc="same: nothing differs; expected: the first difference is an op "
                                               "deterministic within each side and known sensitive to a changed "
                                               "setting; unexplained: deterministic within each, not known "
                                               "sensitive; varies-within: it varies run to run on a side; "
                                               "unmatched-only: differences only downstream of unmatched ops")
    summary: str = field()
    environment_changes: Dict[str, List[Any]] = field({}, doc="name: [value on a, value on b]")
    settings_changed: List[str] = field([], doc="the settings those changes touch (onednn, threads, ...)")
    first_difference: Optional[FirstDifference] = field(None, keep_none=True)
    other_roots: List[str] = field([], doc="later outputs that also differ with matching inputs, a few")
    outputs_compared: int = field(0)
    outputs_differing: int = field(0)
    unmatched: List[Unmatched] = field([])
    varying_within: Dict[str, int] = field({}, doc="side: outputs that differed between its own two runs")
    notes: List[str] = field([])


FINGERPRINT_RECORDS = {"header": FingerprintsHeader, "op": OpLine, "output": OutputLine}
