"""Per version, what the matrix found: which cases varied in each mode. Read
from the per-version results files (the only place measurements live)."""

import os

from ..results import ResultsError, read_probe
from ..results.vocabulary import VARIES


def varied(results):
    """{mode: sorted case ids that varied in it} of one ProbeResults (every mode it ran)."""
    found = {mode: set() for mode in results.header.modes}
    for record in results.measured:
        if record.outcome == VARIES:
            found.setdefault(record.mode, set()).add(record.case)
    return {mode: sorted(cases) for mode, cases in found.items()}


def rows(manifest, out_dir, versions=None):
    """One dict per version in the manifest (or in `versions`): the manifest's facts plus `varied`."""
    table = []
    for tf, entry in manifest["versions"].items():
        if versions is not None and tf not in versions:
            continue
        row = dict(entry, varied=None, results_error=None)
        probe = entry.get("probe")
        path = os.path.join(out_dir, probe["results"]) if probe else None
        if path and os.path.exists(path):
            try:
                row["varied"] = varied(read_probe(path))
            except ResultsError as exc:
                row["results_error"] = str(exc)
        table.append(row)
    return table
