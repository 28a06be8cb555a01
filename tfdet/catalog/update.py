"""`tfdet catalog update`: what probe results say the catalogue should change. Pure.

Every measured (entry, pass) of every results file is read against the claim
for its TF version and device (crosscheck.check, as the report does) and put
in the catalogue's words (evidence.infer). Measurements of one entry, minor
version and device are taken together (evidence.combine), and come to one
Change:

agree           the measurement says what the claim says: the claim gets a
                measured: source and an evidence item for each results file
                it does not cite yet.
new             the catalogue has no claim here (status unknown, or no claims
                for the device at all): a claim for this version is proposed.
supersede       the measurement contradicts a claim that rests only on earlier
                measurements: the range is split and this version takes the
                new claim (a difference once seen is proof of variance).
conflict        the measurement contradicts a documented claim (one with a
                source other than measured:). Never applied unless asked
                (accept_conflicts); a person decides.
not_reproduced  the claim says it varies, and it did not vary here. A few runs
                can miss rare variance and a case may miss the entry's
                condition: no change.
weak            the conclusion rests on "did not vary" in too few runs (see
                evidence.strong_runs()): reported, never applied.
inconclusive    the measurement says no status, or does not test the claim's
                switches: reported, no change.
"""

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Optional, Tuple

from packaging.version import Version

from ..results.interpret import by_case
from . import crosscheck
from .evidence import combine, infer, provenance, strong_runs
from .model import VARYING_STATUSES, ErrorInfo, Evidence, VersionRange
from .versions import COVERED_TF_VERSIONS, format_versions, tf_minor

AGREE, NEW, SUPERSEDE, CONFLICT = "agree", "new", "supersede", "conflict"
NOT_REPRODUCED, WEAK, INCONCLUSIVE = "not_reproduced", "weak", "inconclusive"
KINDS = (AGREE, NEW, SUPERSEDE, CONFLICT, NOT_REPRODUCED, WEAK, INCONCLUSIVE)
# Kinds whose proposal is written into the proposed catalogue (CONFLICT only when accepted).
APPLIED = (AGREE, NEW, SUPERSEDE)

MEASURED_KIND = "measured"


@dataclass(frozen=True)
class Measurement:
    """One (results file, entry, pass): what it measured and what that says."""

    results: str  # the file as a measured: source cites it
    case: str
    pass_name: Optional[str]
    device: str
    tf_version: str
    version: Version  # its minor release
    inference: object  # evidence.Inference
    findings: Tuple[object, ...]  # crosscheck.Finding
    evidence: Evidence
    switches: Tuple[str, ...]  # the switches the status rests on, as a claim would name them
    summary: str  # the outcomes per mode, in words


@dataclass(frozen=True)
class Observation:
    """What one measurement saw, for a claim's note."""

    version: Version  # the minor release it stands for
    where: str  # "TF 2.7.2, cpu" (and the GPU where there is one)
    reason: str  # the outcomes, as a sentence
    replaced: Optional[str] = None  # the claim it contradicts, in words


@dataclass(frozen=True)
class Proposal:
    """A claim for one or more neighbouring versions, in the catalogue's fields."""

    status: str
    sources: Tuple[str, ...]
    evidence: Tuple[Evidence, ...]
    observations: Tuple[Observation, ...]
    switches: Tuple[str, ...] = ()
    error: Optional[ErrorInfo] = None

    def key(self):
        """Proposals for neighbouring versions with the same key become one range."""
        return (self.status, self.switches, self.error.type if self.error else None)

    @property
    def note(self):
        """Said once per distinct outcome and replaced claim, however many versions share it:
        'Measured by tfdet probe (TF 2.10.1, cpu; TF 2.11.1, cpu): ... Replaces, for TF 2.10-2.11, ...'."""
        sentences = []
        for reason in unique(o.reason for o in self.observations):
            where = "; ".join(unique(o.where for o in self.observations if o.reason == reason))
            sentences.append("Measured by tfdet probe (%s): %s" % (where, reason))
        for replaced in unique(o.replaced for o in self.observations if o.replaced):
            versions = {o.version for o in self.observations if o.replaced == replaced}
            sentences.append("Replaces, for TF %s, the claim %s." % (versions_text(versions), replaced))
        return " ".join(sentences)

    def merged(self, others):
        """This proposal and its neighbours' (same key) as one: sources, evidence and observations together."""
        group = (self,) + tuple(others)
        return Proposal(
            status=self.status, switches=self.switches, error=self.error,
            sources=tuple(unique(s for p in group for s in p.sources)),
            evidence=tuple(unique_evidence(e for p in group for e in p.evidence)),
            observations=tuple(o for p in group for o in p.observations))


@dataclass
class Change:
    """What the measurements of one entry, device and minor version come to."""

    kind: str
    entry_id: str
    device: str
    version: Version
    claim: Optional[VersionRange]  # the catalogue's current claim (None: none for this device)
    measurements: Tuple[Measurement, ...]
    reason: str
    proposal: Optional[Proposal] = None  # new / supersede / conflict: the claim for this version
    add_sources: Tuple[str, ...] = ()  # agree: sources to add to the claim
    add_evidence: Tuple[Evidence, ...] = ()
    applied: bool = False
    acceptable: bool = True  # a conflict --accept-conflicts may apply

    @property
    def measured_status(self):
        inference = combine([m.inference for m in self.measurements])
        return inference.status


@dataclass
class Plan:
    changes: list
    notes: list = field(default_factory=list)  # files or cases not compared, and why
    files: list = field(default_factory=list)  # the results files, as cited

    def of_kind(self, *kinds):
        return [c for c in self.changes if c.kind in kinds]

    @property
    def conflicts(self):
        return self.of_kind(CONFLICT)

    @property
    def open_conflicts(self):
        return [c for c in self.conflicts if not c.applied]


def documented(version_range):
    """True where a claim cites anything but measurements of ours."""
    return any(s.partition(":")[0] != MEASURED_KIND for s in version_range.sources)


def claim_switches(switch_ids, catalogue, tf_version):
    """The switches a claim names for a set a mode turned on: determinism switches of
    this TF, one per same_as group (the API where this TF has it, as the catalogue
    writes enable_op_determinism from 2.8 and TF_DETERMINISTIC_OPS before)."""
    chosen, seen = [], set()
    for switch in catalogue.switches:
        if switch.id not in switch_ids or switch.id in seen or switch.role != "enables_determinism":
            continue
        group = [switch] + [s for s in catalogue.switches if s.id in switch.same_as and s.id in switch_ids]
        seen.update(s.id for s in group)
        available = [s for s in group if _available(s, tf_version)] or group
        chosen.append(next((s for s in available if s.kind == "api"), available[0]).id)
    return tuple(chosen)


def _available(switch, tf_version):
    try:
        return switch.available_in(tf_version)
    except ValueError:
        return False


def measurements(catalogue, results, cited):
    """(Measurements of one ProbeResults, notes). cited: how a source cites its file."""
    header = results.header
    notes = []
    tf_version, device = header.tf_version, header.device
    if not tf_version or device is None:
        return [], ["%s: the header names no TF version or device; nothing compared" % cited]
    minor = tf_minor(tf_version)
    if minor not in COVERED_TF_VERSIONS:
        return [], ["%s: TF %s is outside the catalogue's versions (%s to %s); nothing compared" % (
            cited, tf_version, COVERED_TF_VERSIONS[0], COVERED_TF_VERSIONS[-1])]
    modes = list(header.modes)
    modes.extend(r.mode for r in results.measured if r.mode not in modes)
    switch_sets = crosscheck.header_switch_sets(modes, header, tf_version, device, catalogue)
    switch_exists = bool(catalogue.switches_for(tf_version, device, roles=("enables_determinism",)))
    found, unknown = [], []
    for (case, pass_name), records in by_case(results.measured).items():
        try:
            entry = catalogue.get(case)
        except KeyError:
            unknown.append(case)
            continue
        version_range = entry.range_for(minor, device)
        claim = crosscheck.Claim.from_range(version_range, entry.condition, entry.fixed_by_seeding)
        findings = crosscheck.check(case, pass_name, claim, records, switch_sets)
        # what tfdet.patch() did is about tfdet, not about TensorFlow's claim: said, never an edit
        for finding in findings:
            if finding.modes == (crosscheck.PATCHED,) and finding.kind == crosscheck.DISAGREEMENT:
                notes.append("%s: %s %s TF %s: %s (about tfdet.patch(), not the catalogue's claim)" % (
                    cited, case, device, minor, finding.message))
        findings = tuple(f for f in findings if f.modes != (crosscheck.PATCHED,))
        inference = infer(records, switch_sets, switch_exists)
        options = [claim_switches(switch_sets.get(m, ()), catalogue, tf_version) for m in inference.modes]
        switches = min(options, key=len) if options else ()
        found.append(Measurement(
            results=cited, case=case, pass_name=pass_name, device=device, tf_version=tf_version, version=minor,
            inference=inference, findings=findings, evidence=provenance(header, cited, inference.runs),
            switches=switches, summary=crosscheck.summarise_modes({m: r for m, r in records.items() if m != "patched"})))
    if unknown:
        notes.append("%s: not in the catalogue, not compared: %s" % (cited, ", ".join(sorted(set(unknown)))))
    return found, notes


def plan(catalogue, loaded, accept_conflicts=False):
    """The Plan for [(cited path, ProbeResults)] against a Catalogue."""
    groups, notes = OrderedDict(), []
    for cited, results in loaded:
        found, file_notes = measurements(catalogue, results, cited)
        notes.extend(file_notes)
        for item in found:
            groups.setdefault((item.case, item.device, item.version), []).append(item)
    changes = [_decide(catalogue.get(case), device, version, tuple(items), accept_conflicts)
               for (case, device, version), items in groups.items()]
    return Plan(changes, notes, [cited for cited, _ in loaded])


def _decide(entry, device, version, items, accept_conflicts):
    claim = entry.range_for(version, device)
    inference = combine([m.inference for m in items])
    kinds = {f.kind for m in items for f in m.findings}
    messages = unique(f.message for m in items for f in m.findings if f.kind == crosscheck.DISAGREEMENT)

    def change(kind, reason, **fields):
        return Change(kind, entry.id, device, version, claim, items, reason, **fields)

    if inference.status is None:
        return change(INCONCLUSIVE, inference.reason)
    if claim is None or claim.status == "unknown":
        if inference.weak:
            return change(WEAK, _weak_reason(inference))
        return change(NEW, inference.reason, proposal=_proposal(items, inference, None),
                      applied=True)
    if crosscheck.DISAGREEMENT in kinds:
        if inference.weak:
            return change(WEAK, "contradicts the claim, but %s: %s" % (_weak_reason(inference), " ".join(messages)))
        if inference.status == claim.status:
            return change(INCONCLUSIVE, "measured %s as the claim says, yet: %s" % (inference.status, " ".join(messages)))
        proposal = _proposal(items, inference, claim)
        if inference.status == "deterministic" and claim.status in VARYING_STATUSES:
            # "did not vary" never overrules a claim that it varies, however many runs: a person decides
            return change(CONFLICT, " ".join(messages) + " A claim that an op varies is never replaced by runs "
                          "that did not vary; not applied even with --accept-conflicts.", proposal=proposal,
                          acceptable=False)
        if documented(claim):
            return change(CONFLICT, " ".join(messages), proposal=proposal, applied=accept_conflicts)
        return change(SUPERSEDE, " ".join(messages), proposal=proposal, applied=True)
    if inference.status == claim.status:
        if inference.weak:
            return change(WEAK, "agrees, but %s" % _weak_reason(inference))
        agreeing = [m for m in items if m.inference.status == claim.status and not m.inference.weak]
        sources = unique("measured:" + m.results for m in agreeing)
        add_sources = tuple(s for s in sources if s not in claim.sources)
        have = {e.results for e in claim.evidence}
        add_evidence = tuple(unique_evidence(m.evidence for m in agreeing if m.results not in have))
        reason = inference.reason if (add_sources or add_evidence) else "agrees; already cited"
        return change(AGREE, reason, add_sources=add_sources, add_evidence=add_evidence,
                      applied=bool(add_sources or add_evidence))
    if crosscheck.NOT_REPRODUCED in kinds:
        return change(NOT_REPRODUCED, " ".join(unique(f.message for m in items for f in m.findings
                                                       if f.kind == crosscheck.NOT_REPRODUCED)))
    return change(INCONCLUSIVE, "measured %s (%s), which does not test the claim %s%s" % (
        inference.status, inference.reason, claim.status,
        " (%s)" % ", ".join(claim.switches) if claim.switches else ""))


def _weak_reason(inference):
    return "it rests on %d runs that did not vary (fewer than %d, or in one process): %s" % (
        inference.runs, strong_runs(), inference.reason)


def unique(values):
    """values without repeats, in order."""
    seen = []
    for value in values:
        if value not in seen:
            seen.append(value)
    return seen


def unique_evidence(items):
    """Evidence items, one per results file, in order."""
    seen, out = set(), []
    for item in items:
        if item.results not in seen:
            seen.add(item.results)
            out.append(item)
    return out


def _proposal(items, inference, replaced):
    """The claim the measurements make for their version; `replaced`: the claim they contradict."""
    resting = [m for m in items if m.inference.status == inference.status and not m.inference.weak] or list(items)
    first = next((m for m in resting if m.inference is inference), resting[0])
    error = None
    if inference.status == "raises_under_determinism":
        error = ErrorInfo(inference.error_type or "Error", _first_line(inference.error_message))
    where = "TF %s, %s" % (first.tf_version, first.device)
    if first.evidence.gpu:
        where += ", " + first.evidence.gpu
    observation = Observation(
        version=first.version, where=where, reason=_sentence(inference.reason),
        replaced=None if replaced is None else "%s (TF %s; %s)" % (
            replaced.status, replaced.versions, ", ".join(replaced.sources)))
    return Proposal(
        status=inference.status, sources=tuple(unique("measured:" + m.results for m in resting)),
        evidence=tuple(unique_evidence(m.evidence for m in resting)), observations=(observation,),
        switches=first.switches if inference.status in ("deterministic_with_switch", "raises_under_determinism")
        else (), error=error)


def _sentence(text):
    text = text.strip()
    return text + ("" if text.endswith(".") else ".")


def _first_line(message):
    line = (message or "").strip().splitlines()[0].strip() if (message or "").strip() else ""
    return (line[:297] + "...") if len(line) > 300 else (line or "(no message recorded)")


def claim_words(version_range, device):
    """'deterministic, TF >=1.14 (tf-release:2.7 + 4 measured)' for a claim in the summary."""
    if version_range is None:
        return "no claim for %s" % device
    documented_sources = [s for s in version_range.sources if s.partition(":")[0] != MEASURED_KIND]
    measured = len(version_range.sources) - len(documented_sources)
    cited = ", ".join(documented_sources) + (" + " if documented_sources and measured else "") + (
        "%d measured" % measured if measured else "")
    switches = " (%s)" % ", ".join(version_range.switches) if version_range.switches else ""
    return "%s%s, TF %s (%s)" % (version_range.status, switches, version_range.versions, cited)


def group(changes):
    """Changes of one kind to one claim with the same proposal, together: [[Change]] by entry, device, version."""
    groups = OrderedDict()
    for change in sorted(changes, key=lambda c: (c.entry_id, c.device, c.version)):
        proposal = change.proposal.key() if change.proposal else None
        claim = change.claim.versions if change.claim is not None else None
        key = (change.kind, change.entry_id, change.device, claim, proposal, change.applied)
        groups.setdefault(key, []).append(change)
    return list(groups.values())


def describe(changes):
    """One line for the summary of a group of changes (see group): what changes and why."""
    first = changes[0]
    head = "%s %s TF %s" % (first.entry_id, first.device, versions_text({c.version for c in changes}))
    claim = claim_words(first.claim, first.device)
    reasons = unique(c.reason for c in changes)
    why = reasons[0] if len(reasons) == 1 else "; ".join(
        "TF %s: %s" % (c.version, c.reason) for c in changes)
    if first.kind == AGREE:
        if not any(c.applied for c in changes):
            return "%s: agrees with %s; already cited" % (head, claim)
        sources = unique(s for c in changes for s in c.add_sources)
        added = ("add measured: " + ", ".join(s.partition(":")[2] for s in sources)) if sources else (
            "add evidence for the files it already cites")
        return "%s: agrees with %s; %s" % (head, claim, added)
    if first.kind in (NEW, SUPERSEDE, CONFLICT):
        proposal = first.proposal
        status = proposal.status + (" (%s)" % ", ".join(proposal.switches) if proposal.switches else "")
        return "%s: %s -> %s: %s" % (head, claim, status, why)
    return "%s: %s; claim %s" % (head, why, claim)


def versions_text(versions):
    return format_versions(sorted(versions))
