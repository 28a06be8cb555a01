"""The report's view model: plain dataclasses the template renders. No logic
beyond naming (css classes, anchors, row groups); the other modules fill them.

A Run is one results file; a Column one (run, mode); a Cell what one (case,
pass) came to in a column; a Row one catalogue entry and pass; a FindingView
one cross-check finding with the catalogue's words; a Chart an SVG string
(every text in it escaped by svg.py); a Report all of them.
"""

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from ..results import CaseRecord


@dataclass
class Run:
    key: str
    index: int
    path: str
    name: str
    label: str
    tf_version: str
    device: Optional[str]
    modes: List[str]
    unavailable_modes: List[Tuple[str, str]]
    environment: "OrderedDict[str, str]"
    mode_settings: List[Tuple[str, str]]
    planned: List[Tuple[str, Optional[str]]]
    missing: List[Tuple[str, Optional[str]]]
    skipped: Dict[str, str]
    records: Dict[Tuple[str, Optional[str], str], CaseRecord]
    mode_switches: Dict[str, frozenset] = field(default_factory=dict)
    determinism_label: str = ""
    summary: List[str] = field(default_factory=list)
    summary_lists: List[Tuple[str, List[str]]] = field(default_factory=list)
    mode_problems: list = field(default_factory=list)  # results.interpret.ModeProblem: modes that did not run

    @property
    def partial(self):
        return bool(self.missing)


@dataclass
class Column:
    run: Run
    mode: str

    @property
    def key(self):
        return "%s-%s" % (self.run.key, self.mode)


@dataclass
class Cell:
    column: Column
    outcome: str
    label: str
    title: str
    figures: List[Tuple[str, str]] = field(default_factory=list)
    cost: str = ""
    detail: str = ""  # long text shown preformatted (a stderr tail)
    disagreement: bool = False
    unconfirmed: bool = False  # the catalogue says it varies here; it did not vary in this run
    span: int = 1  # columns covered (a skipped entry: all of its run's modes)

    @property
    def css(self):
        return "o-" + self.outcome + (" disagrees" if self.disagreement else "") + (
            " unconfirmed" if self.unconfirmed else "")


@dataclass
class Row:
    case: str
    pass_name: Optional[str]
    title: str
    in_catalogue: bool
    cells: List[Cell]
    display: List[Cell] = field(default_factory=list)  # cells as shown: a run's skipped cells merged into one
    group: str = "reproducible"  # attention | reproducible | not-measured
    advice: List[Tuple[str, str]] = field(default_factory=list)  # (who: run label or "", text)
    disagreements: int = 0

    @property
    def anchor(self):
        text = "row-%s-%s" % (self.case, self.pass_name or "none")
        return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in text)


@dataclass
class FindingView:
    kind: str
    run: Run
    case: str
    pass_name: Optional[str]
    title: str
    status: str
    versions: str
    device: str
    modes: Tuple[str, ...]
    message: str
    sources: List[Tuple[str, Optional[str]]]
    measured: str
    notable: bool = False  # varied or raised somewhere (for newly measured facts)


@dataclass
class Chart:
    title: str
    caption: str
    svg: str


ROW_GROUPS = OrderedDict([
    ("attention", "Varied, raised or failed somewhere"),
    ("reproducible", "Reproducible in every run and mode"),
    ("not-measured", "Not measured (skipped or interrupted)"),
])


@dataclass
class Report:
    title: str
    runs: List[Run]
    columns: List[Column]
    rows: List[Row]
    environment_keys: List[str]
    differing_keys: List[str]
    differences: str
    difference_values: List[Tuple[str, List[str]]]
    disagreements: List[FindingView]
    not_reproduced: List[FindingView]
    newly_measured: List[FindingView]
    claims_checked: int
    summary_intro: str
    cost_charts: List[Chart]
    variance_charts: List[Chart]
    heatmaps: List[Chart]
    legend: List[Tuple[str, str]]
    tfdet_version: str
    catalogue_used: bool

    @property
    def groups(self):
        return [(key, label, [r for r in self.rows if r.group == key]) for key, label in ROW_GROUPS.items()
                if any(r.group == key for r in self.rows)]
