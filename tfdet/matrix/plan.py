"""What a matrix run does: which versions, which modes each, what is already
done in the output directory. Pure apart from reading results files."""

import os
from collections import namedtuple

from ..results.vocabulary import DEFAULT_MODES
from .versions import VERSIONS, by_tf, version_key

# The modes a matrix measures: TF as it comes, and TF's own switches (the
# probe's default modes; patched is tfdet's, not TF's).
MATRIX_MODES = DEFAULT_MODES

RESULTS_NAME = "probe-tf%s-cpu.jsonl"
MANIFEST_NAME = "matrix.json"

# A version's results file: absent, partial (an interrupted probe: --resume
# continues it), complete (an end record and every planned case measured).
MISSING, PARTIAL, COMPLETE = "missing", "partial", "complete"

VersionPlan = namedtuple("VersionPlan", "version modes not_run results state")


class PlanError(ValueError):
    """A --versions or --modes value the matrix cannot run; the message says why."""


def parse_versions(text):
    """`all`, or a comma-separated list of TF minors ("1.15,2.6"), in table order."""
    if text is None or text.strip() == "all":
        return list(VERSIONS)
    wanted = [t.strip() for t in text.split(",") if t.strip()]
    if not wanted:
        raise PlanError("--versions: empty list (give e.g. 1.15,2.6 or all)")
    unknown = [t for t in wanted if by_tf(t) is None]
    if unknown:
        raise PlanError("--versions: no TF %s in the matrix (it has %s)" % (
            ", ".join(unknown), ", ".join(v.tf for v in VERSIONS)))
    return sorted({by_tf(t) for t in wanted}, key=lambda v: version_key(v.tf))


def parse_modes(text):
    if text is None:
        return list(MATRIX_MODES)
    modes = list(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))
    bad = [m for m in modes if m not in MATRIX_MODES]
    if bad or not modes:
        raise PlanError("--modes: %s; choose from %s" % (
            "unknown mode %s" % ", ".join(bad) if bad else "empty list", ", ".join(MATRIX_MODES)))
    return modes


def version_modes(modes, setups):
    """(modes this TF has, {mode: why not} for the others), given the probe's mode setups."""
    return ([m for m in modes if setups[m].available],
            {m: setups[m].reason for m in modes if not setups[m].available})


def results_path(out_dir, version):
    return os.path.join(out_dir, RESULTS_NAME % version.tf)


def results_state(path, read_probe, not_measured):
    """MISSING, PARTIAL or COMPLETE, from the file's records (read_probe raises on a
    file that is not probe results: the caller reports that)."""
    if not os.path.exists(path):
        return MISSING
    results = read_probe(path)
    if results.end is None or not_measured(results):
        return PARTIAL
    return COMPLETE


def pending(plans):
    """The plans a run still has to probe."""
    return [p for p in plans if p.state != COMPLETE]
