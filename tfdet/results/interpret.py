"""What probe results mean, in the words both the CLI summary and the report
use: which modes did not run, what the patch costs, a cost in words. Pure:
typed records in, data or text out."""

import collections

from . import stats
from .vocabulary import MEASURED, VARIES


NOT_PRECISE = "not measured precisely enough"


def cost_words(ratio, low=None, high=None, ascii_only=False):
    """A latency ratio to baseline in words: 'no measurable cost' where its 95% interval
    includes 1 (x0.96 would read as a speed-up it is not), 'not measured precisely
    enough' where the interval is too wide to say (stats.imprecise_cost), else
    'x1.34 [1.20-1.51]'."""
    times, dash = ("x", "-") if ascii_only else ("\u00d7", "\u2013")
    interval = " [%.2f%s%.2f]" % (low, dash, high) if low is not None and high is not None else ""
    if stats.imprecise_cost(low, high):
        return NOT_PRECISE + interval
    if stats.no_measurable_cost(low, high):
        return "no measurable cost" + interval
    return "%s%.2f%s" % (times, ratio, interval)


def record_cost_words(record, ascii_only=True):
    """cost_words of a case record's ratio; '-' where it has none."""
    if record is None or record.ratio is None:
        return "-"
    return cost_words(record.ratio, record.ratio_low, record.ratio_high, ascii_only=ascii_only)


PatchCost = collections.namedtuple("PatchCost", "cases median low high")
PatchCost.__doc__ = """What tfdet.patch() costs where it matters. cases: [(case, pass,
ratio, low, high)]; with one case, its ratio and 95% interval; with several, the
median of their ratios and the range of those ratios."""


def by_case(records):
    """{(case, pass): {mode: record}} of the measured records, in file order."""
    cells = collections.OrderedDict()
    for record in records:
        if record.mode is not None:
            cells.setdefault((record.case, record.pass_name), {})[record.mode] = record
    return cells


def patch_cost(records):
    """The patched mode against baseline over the (case, pass) pairs that vary at
    baseline: a PatchCost, or None where there is no such pair."""
    cases = []
    for (case, pass_name), modes in by_case(records).items():
        base, patched = modes.get("baseline"), modes.get("patched")
        if base and patched and base.outcome == VARIES and patched.ratio is not None:
            cases.append((case, pass_name, patched.ratio, patched.ratio_low, patched.ratio_high))
    if not cases:
        return None
    ratios = sorted(c[2] for c in cases)
    if len(cases) == 1:
        return PatchCost(cases, cases[0][2], cases[0][3], cases[0][4])
    return PatchCost(cases, stats.median(ratios), ratios[0], ratios[-1])


def describe_patch_cost(cost, ascii_only=False):
    if cost is None:
        return ""
    n = len(cost.cases)
    if n == 1:
        case, pass_name = cost.cases[0][:2]
        words = cost_words(cost.median, cost.low, cost.high, ascii_only)
        return "tfdet.patch() %s on the one op that varies without it (%s, %s), latency relative to baseline" % (
            ("has " if words.startswith("no ") else "costs ") + words, case, pass_name)
    times = "x" if ascii_only else "\u00d7"
    return ("tfdet.patch() costs a median %s%.2f over the %d ops that vary without it (from %s%.2f to %s%.2f; "
            "latency relative to baseline)" % (times, cost.median, n, times, cost.low, times, cost.high))


ModeProblem = collections.namedtuple("ModeProblem", "mode reason failure")


def mode_problems(results):
    """Modes that did not run, why, and whether that is a failure.

    A failure: a mode asked for that cannot run here (`--modes api` on TF 1.15),
    one whose processes could not start, or one where not a single case gave a
    measurement (every case in it crashed, hung or failed to run). A default mode
    this TF does not have (api before TF 2.8) is only noted: failure False.
    """
    header = results.header
    problems = collections.OrderedDict()
    for mode, reason in header.mode_failures.items():
        problems[mode] = ModeProblem(mode, reason, True)
    by_mode = collections.OrderedDict()
    for record in results.measured:
        by_mode.setdefault(record.mode, []).append(record)
    for mode in header.modes:
        mine = by_mode.get(mode, [])
        if mine and mode not in problems and not any(r.outcome in MEASURED for r in mine):
            message = next((r.error_message for r in mine if r.error_message), "")
            problems[mode] = ModeProblem(mode, "no case gave a measurement: all %d failed%s" % (
                len(mine), " (%s)" % message if message else ""), True)
    for mode, reason in (results.end.mode_failures if results.end else {}).items():
        problems.setdefault(mode, ModeProblem(mode, reason, True))
    notes = dict(header.unavailable_modes)
    notes.update(header.not_applicable_modes)
    for mode, reason in notes.items():
        problems.setdefault(mode, ModeProblem(mode, reason, False))
    return list(problems.values())


def describe_mode_problem(problem):
    if problem.failure:
        return "MODE %s DID NOT RUN: %s" % (problem.mode, problem.reason)
    return "mode %s not run (not applicable here): %s" % (problem.mode, problem.reason)


def not_measured(results):
    """(case, pass) pairs planned and not yet in the file (an interrupted run)."""
    done = {(r.case, r.pass_name) for r in results.cases}
    return [tuple(p) for p in results.header.planned if tuple(p) not in done]


def varied_under(results, mode):
    """(case, pass) pairs that varied under a mode: the --fail-on-nondeterminism gate."""
    return [(r.case, r.pass_name) for r in results.measured if r.mode == mode and r.outcome == VARIES]
