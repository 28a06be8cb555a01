"""The records of a probe results file, version 2: a header, one case record
per (case, pass, mode) or per skipped case, and an end record per finished run.

These declarations are the contract: the probe builds these objects, the
file holds their to_json(), readers get them back through from_json(), and
the committed JSON Schema (tfdet/results/schemas/probe-2.json) is generated
from them. Renaming a field here, or writing one not declared here, fails
the tests that read a real probe run.
"""

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple

from .header import FileHeader
from .typed import Record, field
from .vocabulary import EXECUTIONS, MODES, ONEDNN_SETTINGS, OUTCOMES

SCHEMA_VERSION = 2
KIND = "probe"


@dataclass(frozen=True)
class Threads(Record):
    """TensorFlow's thread pools (None: TensorFlow's default)."""

    intra_op: Optional[int] = field(None)
    inter_op: Optional[int] = field(None)


@dataclass(frozen=True)
class Build(Record):
    """What the TensorFlow wheel was built with."""

    cuda_build: Optional[bool] = field(None)
    cuda_version: Any = field(None)
    cudnn_version: Any = field(None)


@dataclass(frozen=True)
class Environment(Record):
    """One mode's worker process as it described itself when it started."""

    tf_version: str = field(doc="tf.__version__")
    device: str = field(choices=("cpu", "gpu"))
    python: Optional[str] = field(None)
    python_executable: Optional[str] = field(None)
    tf_git_version: Optional[str] = field(None)
    numpy: Optional[str] = field(None)
    platform: Optional[str] = field(None)
    cpu_model: Optional[str] = field(None)
    cpu_count: Optional[int] = field(None)
    gpus: List[Dict[str, Any]] = field([])
    nvidia_driver: Optional[str] = field(None)
    build: Optional[Build] = field(None)
    threads: Optional[Threads] = field(None)
    op_determinism_enabled: Optional[bool] = field(None)
    onednn: Optional[str] = field(None, doc="TF_ENABLE_ONEDNN_OPTS as the worker saw it, or 'default'")
    onednn_enabled: Optional[bool] = field(None)
    env: Dict[str, str] = field({}, doc="the determinism variables set in the worker's environment")
    patch_warnings: Optional[List[str]] = field(None, doc="what tfdet.patch() warned (patched mode only)")


@dataclass(frozen=True)
class ProbeHeader(FileHeader):
    """Line 1: what was asked for and where it ran."""

    kind: str = field(choices=(KIND,))
    modes: List[str] = field(doc="the modes that ran")
    modes_asked: List[str] = field(doc="every mode the run was asked for, whether or not it could run")
    unavailable_modes: Dict[str, str] = field(doc="mode: why it could not run")
    mode_failures: Dict[str, str] = field(doc="mode: why its not running is a failure")
    not_applicable_modes: Dict[str, str] = field(doc="mode: why it does not apply to this TF (a note)")
    processes: int = field()
    repeats: int = field()
    size: float = field()
    rounds: int = field()
    seed: int = field()
    execution: str = field(choices=EXECUTIONS)
    threads: Threads = field()
    onednn: str = field(choices=ONEDNN_SETTINGS)
    environment: Dict[str, Environment] = field(doc="mode: its workers' environment")
    planned: List[Tuple[str, str]] = field(doc="[case, pass] in the order they run")
    skipped: List[Tuple[str, str]] = field(doc="[case, reason]")
    modes_requested: Optional[bool] = field(None, doc="true when --modes named the modes")
    max_repeats: Optional[int] = field(None)
    timeout_s: Optional[float] = field(None)
    catalogue_digest: Optional[str] = field(None)
    # An optional addition to version 2 (absent from files written before it):
    # probe_file.recorded_settings reads those from their argv.
    settings: Optional[Dict[str, Any]] = field(None, doc="the probe settings with no field of their own here, by "
                                                         "name (tfdet/results/probe_settings.py), e.g. settle")

    @property
    def first_environment(self):
        """The environment of the first mode that ran (TF version, device, host)."""
        for mode in self.modes:
            if mode in self.environment:
                return self.environment[mode]
        return next(iter(self.environment.values()), None)

    @property
    def tf_version(self):
        env = self.first_environment
        return env.tf_version if env else None

    @property
    def device(self):
        env = self.first_environment
        return env.device if env else None

    @property
    def case_ids(self):
        """The catalogue ids (and fixtures) the run covers, planned then skipped, in order."""
        ids = []
        for item in list(self.planned) + list(self.skipped):
            if item and item[0] not in ids:
                ids.append(item[0])
        return ids


@dataclass(frozen=True)
class CaseRecord(Record):
    """One (case, pass, mode): what it came to and the figures behind it.
    A skipped case has no pass and no mode, only a reason."""

    record: str = field(choices=("case",))
    case: str = field(doc="catalogue id (or fixture name)")
    outcome: str = field(choices=OUTCOMES)
    pass_name: Optional[str] = field(None, json="pass", keep_none=True, doc="forward or gradient; null when skipped")
    mode: Optional[str] = field(None, keep_none=True, choices=MODES)
    reason: Optional[str] = field(None, doc="why the case was skipped")
    processes: Optional[int] = field(None)
    # outcome failed / raised
    error_type: Optional[str] = field(None)
    error_message: Optional[str] = field(None)
    stderr_tail: Optional[str] = field(None)
    raised_in_processes: Optional[int] = field(None)
    # outcome deterministic / varies: variance over the runs
    runs: Optional[int] = field(None)
    distinct: Optional[int] = field(None, doc="bitwise-distinct results among the runs")
    distinct_within_process: Optional[int] = field(None)
    distinct_across_processes: Optional[int] = field(None)
    max_abs_diff: Optional[float] = field(None)
    max_ulp_diff: Optional[int] = field(None)
    frac_elements_differ: Optional[float] = field(None)
    norm_min: Optional[float] = field(None)
    norm_max: Optional[float] = field(None)
    norm_spread: Optional[float] = field(None)
    size: Optional[int] = field(None, doc="elements in the output")
    dtype: Optional[str] = field(None)
    shape: Optional[List[int]] = field(None)
    shape_mismatch: Optional[bool] = field(None)
    first_digest: Optional[str] = field(None)
    matches_baseline: Optional[bool] = field(None, doc="first result bitwise equal to baseline's")
    rate_ruled_out_95: Optional[float] = field(None, doc="per-run rate of differing results ruled out at 95%")
    catalogue_expects_variance: Optional[str] = field(None, doc="why the catalogue expects this mode to vary")
    repeated_because: Optional[str] = field(None)
    extra_runs: Optional[int] = field(None)
    # cost
    samples_s: Optional[List[float]] = field(None)
    median_s: Optional[float] = field(None)
    iqr_s: Optional[List[float]] = field(None)
    ratio: Optional[float] = field(None, doc="median latency relative to baseline")
    ratio_low: Optional[float] = field(None)
    ratio_high: Optional[float] = field(None)
    ratio_method: Optional[str] = field(None)
    cost_p_value: Optional[float] = field(None)

    @property
    def key(self):
        return (self.case, self.pass_name, self.mode)

    @property
    def skipped(self):
        return self.outcome == "skipped"


@dataclass(frozen=True)
class EndRecord(Record):
    """Written when a run finishes (again after each --resume): what it came to as a whole."""

    record: str = field(choices=("end",))
    mode_failures: Dict[str, str] = field()
    finished: Optional[str] = field(None)


RECORDS = {"header": ProbeHeader, "case": CaseRecord, "end": EndRecord}
