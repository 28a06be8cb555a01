"""The result of `tfdet locate`, version 1: where two runs of the same program
first parted, op by op. `tfdet locate --json` prints LocateResult.to_json();
its JSON Schema is tfdet/results/schemas/locate-1.json."""

from dataclasses import dataclass
from typing import List, Optional

from .header import ResultsHeader
from .typed import Record, field

SCHEMA_VERSION = 1
KIND = "locate"
RUN_STATUSES = ("finished", "raised", "interrupted", "timed-out", "unfinished", "write-failed")


@dataclass(frozen=True)
class Difference(Record):
    """The first op whose output differed while everything it read matched."""

    op_type: str = field(doc="the raw op, e.g. CropAndResizeGradImage")
    op_name: str = field(doc="the op's name in its graph, or 'Type (eager #N)' for an eager op")
    function: Optional[str] = field(doc="the tf.function (graph) holding it; null for an eager op")
    source: Optional[str] = field(doc="file:line in the user's code that made the op (for a gradient op: "
                                      "the line that made the op it differentiates)")
    gradient_of: Optional[str] = field(None, doc="for a gradient op, the forward op type it differentiates")
    created_at: Optional[str] = field(None, doc="file:line where the op itself was created (e.g. tape.gradient)")
    made_in: Optional[str] = field(None, doc="the innermost Keras frame that made the op, e.g. an optimizer's "
                                             "update step, when the user's line only called fit()")
    step: Optional[int] = field(None, doc="1-based call of the top-level tf.function; null for an eager op")
    occurrence: int = field(0, doc="how many times this output was produced before, in the run")
    output_slot: int = field(0, doc="which output; -1: the variable the op wrote, read back")
    runs: List[int] = field([], doc="the two runs (0-based) compared")
    max_abs_diff: Optional[float] = field(None, doc="largest |a - b| over the output; null when not measured")
    max_ulps: Optional[int] = field(None, doc="largest difference in units in the last place (floats)")
    values_differing: Optional[int] = field(None)
    values: Optional[int] = field(None, doc="elements in the output")
    catalog_entries: List[str] = field([], doc="catalogue entry ids the op answers to")
    status: Optional[str] = field(None, doc="the catalogue's status on this TF and device")
    fix: str = field("", doc="what makes it reproducible, '' if the catalogue knows nothing")

    def size_in_words(self):
        """'7 of 4096 values, max |a-b| 0.5, 12 ULPs', or 'not measured'."""
        if self.values_differing is None:
            return "not measured"
        parts = ["%d of %d values" % (self.values_differing, self.values)]
        if self.max_abs_diff is not None:
            parts.append("max |a-b| %.3g" % self.max_abs_diff)
        if self.max_ulps is not None:
            parts.append("%d ULPs" % self.max_ulps)
        return ", ".join(parts)


@dataclass(frozen=True)
class Spread(Record):
    """An output that differed after the first difference, because an input did."""

    op_type: str = field()
    op_name: str = field()
    function: Optional[str] = field()
    step: Optional[int] = field()


@dataclass(frozen=True)
class RunOutcome(Record):
    """How one run (one call of the program) ended, and what it left."""

    status: str = field(choices=RUN_STATUSES)
    detail: str = field("", doc="the exception or the signal, for a run that did not finish")
    stopped_capture: Optional[str] = field(None, doc="steps or max-bytes: capture stopped on purpose")
    seconds: float = field(0.0)
    trace_bytes: int = field(0)
    outputs: int = field(0, doc="op outputs fingerprinted")
    process: int = field(0, doc="the process it ran in (0-based)")
    call: int = field(0, doc="which call of the program in that process (0-based); compared with the same "
                             "call of the other processes")


@dataclass(frozen=True)
class LocateResult(ResultsHeader):
    """What `tfdet locate` found."""

    kind: str = field(choices=(KIND,))
    tf_version: str = field()
    device: str = field(choices=("cpu", "gpu"))
    target: str = field(doc="the script and its arguments, or module:function")
    runs: int = field(doc="processes the program ran in")
    ops_compared: int = field(doc="op outputs compared between runs (the fewest over the pairs)")
    verdict: str = field()
    first_difference: Optional[Difference] = field(keep_none=True, doc="null when no output differed")
    other_roots: List[Difference] = field([], doc="later outputs that also differed with matching inputs")
    spread: List[Spread] = field([], doc="how the difference travelled: the outputs it changed, in order (a few)")
    spread_total: int = field(0, doc="outputs that differed because an input did")
    run_outcomes: List[RunOutcome] = field([])
    traces: Optional[str] = field(None, doc="directory kept with the traces, null when removed")
    notes: List[str] = field([])
    calls: int = field(1, doc="calls of the program in each process; each call is a run of its own, compared "
                              "with the same call in the first process")
    runs_compared: int = field(0, doc="runs compared with their counterpart (the same call in the first process), "
                                          "both having finished")
    runs_differing: int = field(0, doc="compared runs whose op outputs differed from their counterpart's")
    rate_ruled_out: Optional[float] = field(None, doc="when no run differed: a per-run rate of differing above "
                                                      "this is ruled out at 95% (1 - 0.05 ** (1 / runs_compared))")

