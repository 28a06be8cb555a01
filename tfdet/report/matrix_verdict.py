"""The matrix page's verdict in words: which ops vary without TF's switches
and in which versions, which the switches make reproducible, which still vary
or raise with them, and where behaviour changed from one version to the next.
Pure: the page's version columns and mode tables in, sentences out.

Version lists name the versions measured: "2.4\u20132.10" means every version
measured from 2.4 to 2.10 (for that op and mode) came to the same thing.
"""

from collections import Counter
from dataclasses import dataclass, field
from typing import List, Tuple

from ..results import stats
from ..results.vocabulary import DETERMINISTIC, MEASURED, RAISED, VARIES

BASELINE = "baseline"
SWITCH_MODES = ("env", "api")  # TF's own switches: TF_DETERMINISTIC_OPS and friends, enable_op_determinism()
STATE_WORDS = {DETERMINISTIC: "deterministic", VARIES: "varies", RAISED: "raises"}


@dataclass
class Verdict:
    lead: List[str]  # sentences, the first the most important
    points: List[Tuple[str, List[str]]] = field(default_factory=list)  # (heading, items), only non-empty ones


def version_list(versions, sequence):
    """'1.15, 2.4\u20132.10': versions (in the order of sequence), where three or
    more consecutive entries of sequence become a range."""
    groups = []
    for version in versions:
        index = sequence.index(version)
        if groups and groups[-1][-1][0] == index - 1:
            groups[-1].append((index, version))
        else:
            groups.append([(index, version)])
    parts = []
    for group in groups:
        if len(group) >= 3:
            parts.append("%s\u2013%s" % (group[0][1], group[-1][1]))
        else:
            parts.extend(version for _, version in group)
    return ", ".join(parts)


def measured(row, columns):
    """[(version, state)] of a row's measured cells (deterministic, varies, raised), oldest first."""
    return [(column.version, c.state) for column, c in zip(columns, row.cells) if c.state in MEASURED]


def segments(points):
    """[(state, [versions])]: runs of one state over consecutive measured versions."""
    found = []
    for version, state in points:
        if found and found[-1][0] == state:
            found[-1][1].append(version)
        else:
            found.append((state, [version]))
    return found


def _plural(n, one, many=None):
    return "%d %s" % (n, one if n == 1 else (many or one + "s"))


def _in(points, state):
    """'2.4\u20132.10' for the versions in points with that state, or ''."""
    sequence = [v for v, _ in points]
    return version_list([v for v, s in points if s == state], sequence)


def verdict(device, columns, tables, found):
    """The Verdict of a matrix: columns (VersionColumn), tables (ModeTable), found ({kind: [FindingView]})."""
    by_mode = {table.mode: table for table in tables}
    measured_columns = [c for c in columns if c.run is not None]
    lead = []
    if not measured_columns:
        return Verdict(["No results file: nothing was measured."])
    rows = tables[0].rows if tables else []
    names = ", ".join(c.version for c in measured_columns)
    sentence = "%s measured on %s (%s), %s." % (
        _plural(len(measured_columns), "TF version"), device.upper(), names, _plural(len(rows), "op and pass",
                                                                                      "ops and passes"))
    partial = [c for c in measured_columns if c.run.partial]
    if partial:
        sentence += " Incomplete (the run stopped before the end, or is still going): %s." % ", ".join(
            "%s (%s not measured)" % (c.version, _plural(len(c.run.missing), "op and pass", "ops and passes"))
            for c in partial)
    missing = [c for c in columns if c.run is None]
    if missing:
        sentence += " No results for %s." % "; ".join("%s (%s%s)" % (
            c.version, c.long_status, ": " + c.note if c.note else "") for c in missing)
    lead.append(sentence)

    points = []
    base = by_mode.get(BASELINE)
    switch_tables = [by_mode[m] for m in SWITCH_MODES if m in by_mode]
    varied, fixed, still, raised, changed = [], [], [], [], []
    for index, row in enumerate(rows):
        base_points = measured(base.rows[index], columns) if base is not None else []
        if any(s == VARIES for _, s in base_points):
            varied.append("%s: varies in %s" % (row.label, _in(base_points, VARIES)))
        fixed_in = []
        for version, state in base_points:
            if state != VARIES:
                continue
            states = [s for table in switch_tables for v, s in measured(table.rows[index], columns) if v == version]
            if states and all(s == DETERMINISTIC for s in states):
                fixed_in.append(version)
        if fixed_in:
            fixed.append("%s: in %s" % (row.label, version_list(fixed_in, [v for v, _ in base_points])))
        still_parts, raised_parts = [], []
        for table in switch_tables:
            points_here = measured(table.rows[index], columns)
            if any(s == VARIES for _, s in points_here):
                still_parts.append("under %s in %s" % (table.mode, _in(points_here, VARIES)))
            # raised with the switches on, where it did not raise without them (that is an error of its own)
            base_raised = {v for v, s in base_points if s == RAISED}
            raised_here = [v for v, s in points_here if s == RAISED and v not in base_raised]
            if raised_here:
                raised_parts.append("under %s in %s" % (table.mode, version_list(raised_here, [
                    v for v, _ in points_here])))
        if still_parts:
            still.append("%s: %s" % (row.label, "; ".join(still_parts)))
        if raised_parts:
            raised.append("%s: %s" % (row.label, "; ".join(raised_parts)))
        for table in tables:
            runs_of_state = segments(measured(table.rows[index], columns))
            if len(runs_of_state) > 1:
                sequence = [v for v, _ in measured(table.rows[index], columns)]
                changed.append("%s under %s: %s" % (row.label, table.mode, "; ".join(
                    "%s in %s" % (STATE_WORDS[state], version_list(versions, sequence))
                    for state, versions in runs_of_state)))

    if base is None:
        lead.append("No baseline mode: what varies without switches was not measured.")
    elif varied:
        if len(varied) == 1:
            rescued = "TF's switches make it reproducible in %s of the versions where it varied" % (
                "some" if fixed else "none")
        else:
            rescued = "TF's switches make %d of them reproducible in at least one version where they varied" % len(
                fixed)
        lead.append("Without TF's switches, %d of the %s %s in at least one version; %s." % (
            len(varied), _plural(len(rows), "op and pass", "ops and passes"), "varies" if len(varied) == 1 else "vary",
            rescued))
    else:
        lead.append("Without TF's switches, none of the %s varied in any version measured." % _plural(
            len(rows), "op and pass", "ops and passes"))
    if switch_tables:
        lead.append("With the switches on (%s), %s in some version, %s; behaviour changed between versions "
                    "for %s." % (
                        ", ".join(t.mode for t in switch_tables),
                        _count_verb(len(still), "still varies", "still vary"), _count_verb(len(raised), "raises",
                                                                                           "raise"),
                        _plural(len(changed), "op and mode", "ops and modes")))
    lead.append(_catalogue_sentence(found, tables))
    lead.append(_runs_sentence(tables))
    for heading, items in (("Vary without switches (baseline)", varied),
                           ("Made reproducible by TF's switches, where they varied without", fixed),
                           ("Still vary with the switches on", still),
                           ("Raise with the switches on (and not without them)", raised),
                           ("Behaviour changed between versions", changed)):
        if items:
            points.append((heading, items))
    return Verdict([s for s in lead if s], points)


def _count_verb(n, one, many):
    """'1 op still varies', '2 ops still vary', 'none raise'."""
    if n == 0:
        return "none " + many
    return "%s %s" % (_plural(n, "op"), one if n == 1 else many)


def _catalogue_sentence(found, tables):
    if found is None:
        return "No catalogue cross-check (no catalogue given)."
    disagreements = found.get("disagreement", [])
    unseen = sum(1 for table in tables for row in table.rows for cell in row.cells if cell.unconfirmed)
    if disagreements:
        text = "%s the catalogue's claim for %s version and device (marked \u26a0, listed below)" % (
            _plural(len(disagreements), "measurement disagrees with", "measurements disagree with"),
            "its" if len(disagreements) == 1 else "their")
    else:
        text = "No measurement contradicts the catalogue's claim for its version and device"
    if unseen:
        text += "; %s did not vary where the catalogue says %s (striped, ?; a few runs can miss rare variance)" % (
            _plural(unseen, "cell"), "it does" if unseen == 1 else "they do")
    unclaimed = sum(1 for table in tables for row in table.rows for cell in row.cells if cell.unclaimed)
    if unclaimed:
        text += "; %s measured where the catalogue has no claim for the version (dotted: new facts)" % (
            _plural(unclaimed, "cell was", "cells were"))
    return text + "."


def _runs_sentence(tables):
    """What 'deterministic' rules out, for the most common number of runs per cell."""
    counts = Counter()
    for table in tables:
        for row in table.rows:
            for cell in row.cells:
                if cell.state == DETERMINISTIC and cell.runs:
                    counts[cell.runs] += 1
    if not counts:
        return ""
    runs = counts.most_common(1)[0][0]
    return "A deterministic cell is one where every run gave bitwise the same result; with %d runs (most cells " \
           "here): %s." % (runs, stats.describe_ruled_out(runs))
