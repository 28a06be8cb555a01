"""The records of a `tfdet compare` results file, version 1: a header (the two
setups, the sources randomised and held fixed, the statistics asked for), one
training record per training as it finishes, a look record each time the
sequential rule looks, and a summary record when a run ends (finished or
interrupted; the last one counts). Its JSON Schema
(tfdet/results/schemas/compare-1.json) is generated from these declarations.

Arms: "A" and "B" are the paired trainings of the two setups (pair i of each
shares every randomised seed; with --aa, B is A again on other seeds); "C",
"D", ... are more setups, each compared with A as B is (Bonferroni over the
comparisons);
"share:SOURCE" are the extra trainings of A that vary SOURCE alone (the
variance shares).
"""

from dataclasses import dataclass
from typing import Dict, List, Optional

from .header import FileHeader
from .typed import Record, field
from .vocabulary import MODES

SCHEMA_VERSION = 1
KIND = "compare"

SOURCES = ("data", "init", "order", "augment", "hparams", "numerics")
HPARAMS = ("lr", "momentum", "epochs", "batch_size")  # what a --space may draw
CANDIDATES = tuple("BCDEFGH")  # each compared with A; B is the one of a two-setup comparison
ARMS = ("A",) + CANDIDATES + tuple("share:" + s for s in SOURCES)
OUTCOMES = ("ok", "failed", "timeout")
VERDICTS = ("A better", "B better", "no meaningful difference", "undecided")
INTERVALS = ("percentile", "bca")


@dataclass(frozen=True)
class Setup(Record):
    """One side of the comparison: what trains and with which hyperparameters."""

    name: str = field(doc="A or B")
    workload: str = field(doc="a built-in workload, script:PATH or function:NAME")
    lr: float = field(0.0, doc="0: the script's own")
    momentum: float = field(0.0)
    epochs: int = field(0)
    batch_size: int = field(0)
    script: Optional[str] = field(None)
    script_args: List[str] = field([])
    function: Optional[str] = field(None, doc="path/to/module.py:name")


@dataclass(frozen=True)
class CompareHeader(FileHeader):
    """Line 1: what is compared, how, and where it ran."""

    kind: str = field(choices=(KIND,))
    a: Setup = field()
    b: Setup = field()
    aa: bool = field(doc="B is A on other seeds: the noise floor")
    sources: List[str] = field(doc="randomised across pairs (numerics: TF's kernels as they come)")
    fixed: List[str] = field(doc="held fixed in every training (numerics: tfdet.patch())")
    metric: str = field(choices=("accuracy",), doc="higher is better")
    gamma: float = field(doc="P(A>B) above it is a meaningful improvement")
    level: float = field(doc="the interval's level over all looks together")
    interval: str = field(choices=INTERVALS)
    resamples: int = field()
    seed: int = field(doc="the bootstrap's seed")
    min_runs: int = field(doc="pairs at the first look")
    max_runs: int = field(doc="the budget: pairs at the last look")
    step: int = field(doc="pairs added between looks")
    looks: int = field(doc="looks planned; each uses a 1-(1-level)/(looks x comparisons) interval (Bonferroni)")
    share_runs: int = field(0, doc="trainings per source for the variance shares (0: none)")
    space: Dict[str, str] = field({}, doc="hparams: each hyperparameter's distribution (LOW:HIGH, LOW:HIGH:log, A|B|C)")
    tf_version: Optional[str] = field(None)
    python: Optional[str] = field(None)
    executor: Optional[str] = field(None)
    others: List[Setup] = field([], doc="more setups (C, D, ...), each compared with A as B is")


@dataclass(frozen=True)
class CompareTraining(Record):
    """One training, in its own process."""

    record: str = field(choices=("training",))
    arm: str = field(choices=ARMS)
    pair: int = field(doc="0-based; pair i of A and of B share the randomised seeds")
    mode: str = field(choices=MODES, doc="baseline (kernels vary) or patched (tfdet.patch())")
    init_seed: int = field()
    batch_seed: int = field()
    outcome: str = field(choices=OUTCOMES)
    data_seed: Optional[int] = field(None, doc="the bootstrap of the training set; null: the whole set")
    augment_seed: Optional[int] = field(None, doc="augmentation and dropout; null: files before the source existed")
    hparams: Dict[str, float] = field({}, doc="the hyperparameters drawn from the space (hparams randomised)")
    score: Optional[float] = field(None, doc="the metric on the held-out test set")
    error: Optional[str] = field(None)
    wall_seconds: Optional[float] = field(None)
    host: Optional[str] = field(None)

    @property
    def key(self):
        return (self.arm, int(self.pair))


@dataclass(frozen=True)
class Estimate(Record):
    """A statistic and its interval."""

    value: float = field()
    lower: float = field()
    upper: float = field()
    level: float = field()


@dataclass(frozen=True)
class Look(Record):
    """The sequential rule looked at `pairs` complete pairs."""

    record: str = field(choices=("look",))
    number: int = field(doc="1-based")
    pairs: int = field()
    p: Estimate = field(doc="P(A>B)")
    verdict: str = field(choices=VERDICTS)
    arm: str = field("B", choices=CANDIDATES, doc="the setup compared with A at this look")


@dataclass(frozen=True)
class Share(Record):
    """The variance of the metric over trainings of A that vary one source alone."""

    source: str = field(choices=SOURCES)
    runs: int = field()
    variance: Optional[float] = field(keep_none=True)
    share: Optional[float] = field(keep_none=True, doc="of the sum over the sources measured")


@dataclass(frozen=True)
class Comparison(Record):
    """A against one more setup (C, D, ...), as the summary's own figures are A against B."""

    arm: str = field(choices=CANDIDATES)
    pairs: int = field()
    p: Optional[Estimate] = field(None, doc="P(A>arm)")
    difference: Optional[Estimate] = field(None, doc="mean of A - arm over pairs")
    mean: Optional[float] = field(None, doc="the arm's mean score")
    verdict: str = field("undecided", choices=VERDICTS)
    decided: bool = field(False)
    significant: bool = field(False)
    runs_to_decide: Optional[int] = field(None)


@dataclass(frozen=True)
class CompareSummary(Record):
    """When a run ends: the verdict and what it rests on."""

    record: str = field(choices=("summary",))
    complete: bool = field(doc="the rule stopped (decided or budget spent), not interrupted")
    pairs: int = field(doc="complete pairs the figures are over")
    excluded: int = field(doc="trainings that crashed or timed out (their pairs are left out)")
    notes: List[str] = field([], doc="one per excluded training")
    p: Optional[Estimate] = field(None, doc="P(A>B), at the last look's level")
    difference: Optional[Estimate] = field(None, doc="mean of A - B over pairs")
    mean_a: Optional[float] = field(None)
    mean_b: Optional[float] = field(None)
    verdict: str = field("undecided", choices=VERDICTS)
    decided: bool = field(False)
    significant: bool = field(False, doc="the interval of P(A>B) excludes 0.5")
    stopped: str = field("", doc="why the rule stopped")
    looks_taken: int = field(0)
    runs_to_decide: Optional[int] = field(None, doc="pairs in all that would likely decide, when undecided")
    shares: List[Share] = field([])
    joint_variance: Optional[float] = field(None, doc="A's variance over the pairs: every randomised source at once")
    additive_ratio: Optional[float] = field(None, doc="the shares' variances summed, over joint_variance (1: additive)")
    trainings: int = field(0, doc="trainings in the file that finished")
    seconds: Optional[float] = field(None, doc="wall time of this run (not of earlier ones on --resume)")
    scores: Dict[str, List[float]] = field({}, doc="arm: the scores of its complete pairs, in pair order")
    others: List[Comparison] = field([], doc="A against each more setup (C, D, ...)")


RECORDS = {"header": CompareHeader, "training": CompareTraining, "look": Look, "summary": CompareSummary}
