"""Per version, what the matrix found: each case's outcome in each mode, which
cases varied, and what changed from one version to the next. Read from the
per-version results files (the only place measurements live)."""

import os

from ..results import ResultsError, read_probe
from ..results.vocabulary import MEASURED, VARIES
from .versions import version_key


def outcomes(results):
    """{mode: {case: outcome}} of one ProbeResults, over the cases it measured
    (a case with a forward and a gradient pass varies if either does)."""
    found = {mode: {} for mode in results.header.modes}
    for record in results.measured:
        if record.outcome not in MEASURED:
            continue
        cases = found.setdefault(record.mode, {})
        if cases.get(record.case) != VARIES:
            cases[record.case] = record.outcome
    return found


def varied(results):
    """{mode: sorted case ids that varied in it} of one ProbeResults (every mode it ran)."""
    return _varied(outcomes(results))


def _varied(by_mode):
    return {mode: sorted(c for c, outcome in cases.items() if outcome == VARIES) for mode, cases in by_mode.items()}


def rows(manifest, out_dir, versions=None):
    """One dict per version in the manifest (or in `versions`), oldest first: the
    manifest's facts plus `outcomes` and `varied` from its results file."""
    table = []
    for tf, entry in sorted(manifest["versions"].items(), key=lambda item: version_key(item[0])):
        if versions is not None and tf not in versions:
            continue
        row = dict(entry, outcomes=None, varied=None, results_error=None)
        probe = entry.get("probe")
        path = os.path.join(out_dir, probe["results"]) if probe else None
        if path and os.path.exists(path):
            try:
                row["outcomes"] = outcomes(read_probe(path))
            except ResultsError as exc:
                row["results_error"] = str(exc)
            else:
                row["varied"] = _varied(row["outcomes"])
        table.append(row)
    return table


def changes(table):
    """(tf, mode, [(case, outcome before, outcome now)]) for each version against
    the previous one that ran the same mode, over the cases both measured and
    where one of the two outcomes is "varies"; versions without a change left out."""
    found, last = [], {}
    for row in table:
        for mode, now in sorted((row.get("outcomes") or {}).items()):
            before = last.get(mode)
            if before is not None:
                moved = [(case, before[case], now[case]) for case in sorted(set(before) & set(now))
                         if before[case] != now[case] and VARIES in (before[case], now[case])]
                if moved:
                    found.append((row["tf"], mode, moved))
            last[mode] = now
    return found
