"""Compare what a probe measured with what the catalogue claims. Pure.

A claim is the catalogue's VersionRange for one entry, on the run's device, in
the run's TF version. A measurement is the probe's records for one (case,
pass), one per mode. Each mode comes with the set of catalogue switches it
turned on *for that device* (computed by the caller from the results header;
same_as aliases included), so a claim is only tested by modes that exercise
it: a claim that "enable_op_determinism makes it deterministic" is not tested
by a mode that only set TF_CUDNN_DETERMINISTIC on a CPU.

Three kinds of finding:

disagreement     the measurement contradicts the claim (the catalogue says
                 deterministic and it varied; deterministic_with_switch and it
                 still varied or raised with the switch on; raises_under_
                 determinism and it did not raise with the switch on;
                 nondeterministic and a switch made it reproducible, or it
                 raised; not_applicable and it ran).
not_reproduced   the catalogue says it varies as shipped, and it did not vary
                 here without determinism. Weaker evidence: a few runs can miss
                 rare variance, or the case may not meet the entry's condition.
newly_measured   the catalogue is unsure (unknown, or no claim for this
                 version and device): what the probe saw is a new fact.

Failed and skipped cells, and cells not measured, are never evidence.

Used by the report (tfdet/report/findings.py) and by `tfdet catalog update`
(update.py), so both read a measurement against a claim the same way.
"""

from dataclasses import dataclass
from typing import Optional, Tuple

from .model import expand_switch_aliases as expand_switches
from ..results.vocabulary import MEASURED

DISAGREEMENT = "disagreement"
NOT_REPRODUCED = "not_reproduced"
NEWLY_MEASURED = "newly_measured"
KINDS = (DISAGREEMENT, NOT_REPRODUCED, NEWLY_MEASURED)

BASELINE = "baseline"
PATCHED = "patched"


@dataclass(frozen=True)
class Claim:
    """The part of a catalogue VersionRange the cross-check needs."""

    status: str
    versions: str = ""
    switches: Tuple[str, ...] = ()
    error_type: Optional[str] = None
    condition: Optional[str] = None
    patch: Optional[str] = None  # the tfdet replacement that fixes it
    fixed_by_seeding: bool = False  # the entry's global seeds (as tfdet.patch(seed=N) sets) fix it

    @classmethod
    def from_range(cls, version_range, condition=None, fixed_by_seeding=False):
        if version_range is None:
            return None
        error = getattr(version_range, "error", None)
        return cls(version_range.status, version_range.versions, tuple(version_range.switches or ()),
                   error.type if error else None, condition, getattr(version_range, "patch", None),
                   bool(fixed_by_seeding))


@dataclass(frozen=True)
class Finding:
    kind: str
    case: str
    pass_name: Optional[str]
    status: str  # the catalogue's claim ("unknown" when there is none)
    modes: Tuple[str, ...]  # the modes the finding is about
    message: str  # plain text; the template escapes it


def _count(value):
    return "?" if value is None else value


def describe(mode, record):
    """'varied under env (2/10 distinct results)' style text for one cell (a CaseRecord)."""
    outcome = record.outcome
    if outcome in ("deterministic", "varies"):
        figures = "%s/%s distinct results" % (_count(record.distinct), _count(record.runs))
        verb = "was reproducible" if outcome == "deterministic" else "varied"
        return "%s under %s (%s)" % (verb, mode, figures)
    if outcome == "raised":
        return "raised %s under %s" % (record.error_type or "an error", mode)
    return "%s under %s" % (outcome, mode)


def summarise_modes(measured):
    """'Varied under baseline (3/10) and env (4/10); reproducible under api (1/10).' for {mode: record}."""
    groups = {}
    for mode, record in measured.items():
        outcome = record.outcome
        if outcome in ("deterministic", "varies"):
            figure = "%s/%s" % (_count(record.distinct), _count(record.runs))
        else:
            figure = record.error_type or "an error"
        groups.setdefault(outcome, []).append("%s (%s)" % (mode, figure))
    verbs = (("varies", "varied under"), ("raised", "raised under"), ("deterministic", "reproducible under"))
    parts = ["%s %s" % (verb, _join(groups[outcome])) for outcome, verb in verbs if outcome in groups]
    text = "; ".join(parts)
    return (text[:1].upper() + text[1:] + " (distinct results/runs).") if text else ""


def _join(parts):
    parts = list(parts)
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]


def _claim_text(claim):
    text = claim.status
    if claim.switches:
        text += " (%s)" % ", ".join(claim.switches)
    if claim.versions:
        text += " for TF %s" % claim.versions
    return text


def check(case, pass_name, claim, records_by_mode, mode_switches):
    """Findings for one (case, pass) of one run.

    claim: a Claim, or None when the catalogue says nothing for this version
    and device. records_by_mode: {mode: CaseRecord}. mode_switches: {mode:
    frozenset of switch ids the mode turned on for this device, aliases
    included}; the baseline's is empty.
    """
    measured = {m: r for m, r in records_by_mode.items() if r and r.outcome in MEASURED}
    if not measured:
        return []
    status = claim.status if claim else "unknown"
    if claim is None or status == "unknown":
        modes = tuple(measured)
        return [Finding(NEWLY_MEASURED, case, pass_name, status, modes, summarise_modes(measured))]

    # tfdet.patch() does more than turn switches on (it seeds, and replaces ops), so the patched
    # mode tests only what the catalogue says the patch does; see _check_patched.
    determinism = {m: r for m, r in measured.items() if mode_switches.get(m) and m != PATCHED}
    base = measured.get(BASELINE)
    base_raised = base is not None and base.outcome == "raised"

    def relevant(mode):
        on = mode_switches.get(mode) or frozenset()
        if not claim.switches:
            return bool(on)
        if status == "raises_under_determinism":
            return any(s in on for s in claim.switches)  # any of them makes it raise
        return all(s in on for s in claim.switches)  # all of them are needed

    def finding(kind, modes, message):
        return Finding(kind, case, pass_name, status, tuple(modes), message)

    claim_text = _claim_text(claim)
    found = []
    if status == "deterministic":
        varied = [m for m, r in measured.items() if r.outcome == "varies"]
        raised = [m for m, r in determinism.items() if r.outcome == "raised" and not base_raised]
        if varied:
            found.append(finding(DISAGREEMENT, varied, "The catalogue says %s; it %s." % (
                claim_text, _join(describe(m, measured[m]) for m in varied))))
        if raised:
            found.append(finding(DISAGREEMENT, raised, "The catalogue says %s; it %s." % (
                claim_text, _join(describe(m, measured[m]) for m in raised))))
        return found

    if status == "not_applicable":
        ran = [m for m, r in measured.items() if r.outcome in ("deterministic", "varies")]
        if ran:
            found.append(finding(DISAGREEMENT, ran, "The catalogue says there is no such op on this device "
                                 "(not_applicable for TF %s), but the probe ran it: it %s." % (
                                     claim.versions, _join(describe(m, measured[m]) for m in ran))))
        return found

    tested = {m: r for m, r in determinism.items() if relevant(m)}
    if status == "deterministic_with_switch":
        bad = [m for m, r in tested.items() if r.outcome == "varies" or (r.outcome == "raised" and not base_raised)]
        if bad:
            found.append(finding(DISAGREEMENT, bad, "The catalogue says %s: reproducible with the switch on; it %s." % (
                claim_text, _join(describe(m, measured[m]) for m in bad))))
    elif status == "raises_under_determinism":
        quiet = [m for m, r in tested.items() if r.outcome in ("deterministic", "varies")]
        if quiet:
            error = " (%s)" % claim.error_type if claim.error_type else ""
            found.append(finding(DISAGREEMENT, quiet, "The catalogue says %s: it raises%s once determinism is on; "
                                 "it did not raise: it %s." % (
                                     claim_text, error, _join(describe(m, measured[m]) for m in quiet))))
    elif status == "nondeterministic":
        fixed = [m for m, r in determinism.items() if r.outcome == "deterministic"]
        raised = [m for m, r in determinism.items() if r.outcome == "raised" and not base_raised]
        if base is not None and base.outcome == "varies" and fixed:
            # "Did not vary in N runs" only contradicts the claim when the baseline
            # varied often; rare, intermittent variance can miss a few runs.
            often = 2 * (base.distinct or 0) >= (base.runs or 0)
            found.append(finding(
                DISAGREEMENT if often else NOT_REPRODUCED, fixed,
                "The catalogue says %s: no TensorFlow switch fixes it; it %s but %s.%s" % (
                    claim_text, describe(BASELINE, base), _join(describe(m, measured[m]) for m in fixed),
                    "" if often else " The baseline varied rarely; a few runs cannot show that a switch fixes it.")))
        if raised:
            found.append(finding(DISAGREEMENT, raised, "The catalogue says %s: it varies and no switch changes "
                                 "that; it %s." % (claim_text, _join(describe(m, measured[m]) for m in raised))))
    else:
        return found
    found.extend(_check_patched(claim, claim_text, measured, mode_switches, relevant(PATCHED), base_raised,
                                case, pass_name))

    if base is not None and base.outcome == "deterministic" and not any(
            r.outcome == "varies" for r in measured.values()):
        runs = base.runs
        condition = " Its condition: %s." % claim.condition if claim.condition else ""
        found.append(finding(NOT_REPRODUCED, (BASELINE,), "The catalogue says %s: it varies as TensorFlow ships; "
                             "it did not vary in %s runs without determinism here.%s" % (
                                 claim_text, runs if runs is not None else "the", condition)))
    return found


def _check_patched(claim, claim_text, measured, mode_switches, switches_on, base_raised, case, pass_name):
    """The patched mode against what the catalogue says tfdet.patch() does for this entry."""
    record = measured.get(PATCHED)
    if record is None:
        return []
    if claim.patch:
        fix = "tfdet.patch() (%s)" % claim.patch
    elif claim.fixed_by_seeding:
        fix = "the global seeds tfdet.patch() sets"
    elif claim.status == "deterministic_with_switch" and switches_on:
        fix = "the switch tfdet.patch() turns on"
    else:
        return []  # the catalogue says nothing about what the patch does here
    outcome = record.outcome
    if outcome == "varies" and claim.fixed_by_seeding and not claim.patch and record.distinct_across_processes == 1:
        return []  # seeded: a random sequence within a process, the same one in every process
    if outcome == "varies" or (outcome == "raised" and not base_raised):
        return [Finding(DISAGREEMENT, case, pass_name, claim.status, (PATCHED,),
                        "The catalogue says %s; %s makes it reproducible; it %s." % (
                            claim_text, fix, describe(PATCHED, record)))]
    return []


def check_run(rows, claims, mode_switches):
    """Findings for a whole run.

    rows: {(case, pass): {mode: CaseRecord}} in display order; claims: {case:
    Claim or None} for the catalogue entries (a case missing from claims is
    not a catalogue entry, e.g. a test fixture, and is not checked).
    """
    found = []
    for (case, pass_name), records_by_mode in rows.items():
        if case not in claims:
            continue
        found.extend(check(case, pass_name, claims[case], records_by_mode, mode_switches))
    return found


def switch_sets(modes, recorded_env, switches, tf_version_ok, device, same_as):
    """{mode: frozenset of switch ids on for this device}: pure helper for the view model.

    modes: the run's modes; recorded_env: {mode: {VAR: value}} as the header
    recorded them; switches: catalogue Switch-like objects (id, kind, name,
    value, role, devices); tf_version_ok(switch) -> whether this TF honours it.
    The api mode turns on the catalogue's enabling APIs, patched every enabling
    switch (tfdet.patch() turns them on); env turns on the variables recorded.
    """
    usable = [s for s in switches if device in s.devices and tf_version_ok(s)]
    result = {}
    for mode in modes:
        ids = set()
        environ = recorded_env.get(mode) or {}
        for s in usable:
            if s.kind == "env" and s.role == "enables_determinism" and s.name in environ:
                if s.value is None or str(environ[s.name]) == str(s.value):
                    ids.add(s.id)
        if mode == "api":
            ids.update(s.id for s in usable if s.kind == "api" and s.role == "enables_determinism")
        if mode == "patched":
            ids.update(s.id for s in usable if s.role == "enables_determinism")
        result[mode] = expand_switches(ids, same_as) if ids else frozenset()
    return result


def header_switch_sets(modes, header, tf_version, device, catalogue):
    """{mode: switch ids on for the device} of a results file (a ProbeHeader): what
    each mode's recorded environment turned on, in a TF that honours the switch.
    Empty sets without a catalogue, a device or a TF version."""
    if catalogue is None or device is None or not tf_version or tf_version == "unknown":
        return {m: frozenset() for m in modes}
    recorded = {}
    for mode in modes:
        env = header.environment.get(mode)
        recorded[mode] = env.env if env else {}

    def honoured(switch):
        try:
            return switch.available_in(tf_version)
        except ValueError:
            return False

    same_as = {s.id: tuple(s.same_as) for s in catalogue.switches}
    return switch_sets(modes, recorded, catalogue.switches, honoured, device, same_as)


__all__ = ["Claim", "Finding", "DISAGREEMENT", "NOT_REPRODUCED", "NEWLY_MEASURED", "KINDS", "check", "check_run",
           "describe", "expand_switches", "header_switch_sets", "summarise_modes", "switch_sets"]
