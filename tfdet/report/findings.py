"""The cross-check applied to the report: each run's records against the
catalogue's claims (tfdet.catalog.crosscheck decides), the findings in the catalogue's
words, and the grid's cells flagged where a finding is about them. Pure."""

from collections import OrderedDict

from ..catalog import describe_source, expected_to_vary
from ..results.vocabulary import DETERMINISTIC, MEASURED, RAISED, VARIES
from ..catalog import crosscheck
from . import claims
from .grid import mark_unconfirmed
from .view import FindingView


def _finding_view(finding, run, entry, version_range, records_by_mode):
    sources = [describe_source(s) for s in (version_range.sources if version_range is not None else ())]
    measured = "; ".join(crosscheck.describe(m, r) for m, r in records_by_mode.items() if r.outcome in MEASURED)
    return FindingView(
        kind=finding.kind, run=run, case=finding.case, pass_name=finding.pass_name,
        title=entry.title if entry is not None else finding.case, status=finding.status,
        versions=version_range.versions if version_range is not None else "",
        device=run.device or "", modes=finding.modes, message=finding.message, sources=sources, measured=measured,
        notable=any(r.outcome in (VARIES, RAISED) for r in records_by_mode.values()))


def check(runs, keys, catalogue, cells):
    """({kind: [FindingView]}, number of claims checked); flags the cells in
    `cells` ({(run key, case, pass, mode): Cell}) the findings are about."""
    found = {kind: [] for kind in crosscheck.KINDS}
    checked = 0
    if catalogue is None:
        return found, checked
    for run in runs:
        if run.device is None:
            continue
        rows = OrderedDict()
        claimed = {}
        ranges = {}
        for case, pass_name in keys:
            records_by_mode = OrderedDict((m, run.records[(case, pass_name, m)]) for m in run.modes
                                          if (case, pass_name, m) in run.records)
            if not records_by_mode:
                continue
            entry = claims.entry(catalogue, case)
            if entry is None:
                continue
            rows[(case, pass_name)] = records_by_mode
            ranges[case] = claims.claim_range(entry, run)
            for mode, record in records_by_mode.items():  # green, but the catalogue says it varies here
                cell = cells.get((run.key, case, pass_name, mode))
                if cell is not None and cell.outcome == DETERMINISTIC and expected_to_vary(
                        ranges[case], run.mode_switches.get(mode) or frozenset(), mode == crosscheck.PATCHED):
                    mark_unconfirmed(cell, record)
            claimed[case] = crosscheck.Claim.from_range(ranges[case], entry.condition,
                                                        getattr(entry, "fixed_by_seeding", False))
        checked += sum(1 for (case, _) in rows if claimed.get(case) is not None and claimed[case].status != "unknown")
        for finding in crosscheck.check_run(rows, claimed, run.mode_switches):
            entry = claims.entry(catalogue, finding.case)
            view = _finding_view(finding, run, entry, ranges.get(finding.case), rows[(finding.case, finding.pass_name)])
            found[finding.kind].append(view)
            if finding.kind == crosscheck.NOT_REPRODUCED:
                for mode in finding.modes:
                    cell = cells.get((run.key, finding.case, finding.pass_name, mode))
                    record = run.records.get((finding.case, finding.pass_name, mode))
                    if cell is not None and record is not None and cell.outcome == DETERMINISTIC:
                        mark_unconfirmed(cell, record)
            if finding.kind == crosscheck.DISAGREEMENT:
                for mode in finding.modes:
                    cell = cells.get((run.key, finding.case, finding.pass_name, mode))
                    if cell is not None:
                        cell.disagreement = True
                        cell.title += " | DISAGREES WITH THE CATALOGUE: " + finding.message
    found[crosscheck.NEWLY_MEASURED].sort(key=lambda f: (not f.notable, f.run.index))
    return found, checked
