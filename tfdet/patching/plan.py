"""What tfdet.patch() does for a TF version and device, decided from the
catalogue alone. Pure: no TensorFlow, no environment."""

import warnings
from dataclasses import dataclass, field
from typing import Dict, List, Tuple

from ..catalog import COVERED_TF_VERSIONS, StaleVersionWarning, tf_minor

# Switch roles patch() turns on on a CPU; it never sets silences_errors or
# restores_nondeterminism by default, and leaves workaround switches to the user.
APPLIED_ROLES = ("enables_determinism",)
# Taken only under patch(on_unsupported="warn"): TF's per-op escape hatches.
SILENCING_ROLE = "silences_errors"
# On a GPU the advice differs per TF version (NVIDIA's status page: which variable,
# the cuDNN frontend work-around, never the autotune variable), so the plan is the
# catalogue's set_by_patch rows for the GPU, each citing its source, and nothing else.
ROW_DEVICES = ("gpu",)
ALWAYS, ON_WARN = "always", "on_unsupported_warn"
ON_UNSUPPORTED = ("raise", "warn")


# How a catalogued source is covered: data that code branches on (`how` is for display).
REPLACED, SEEDED, SWITCHED = "replaced", "seeded", "switched"
# Why an entry remains, as data (the reason text is for people): a raw op that
# bypasses a replacement, an RNG source a seed would cover, or anything else.
BYPASSED, NEEDS_SEED, UNCOVERED = "bypassed", "needs_seed", "uncovered"


@dataclass(frozen=True)
class Covered:
    entry_id: str
    kind: str  # REPLACED, SEEDED or SWITCHED
    detail: Tuple[str, ...] = ()  # the patch name, or the switch ids

    @property
    def how(self):
        if self.kind == REPLACED:
            return "replaced by tfdet (%s)" % ", ".join(self.detail)
        if self.kind == SWITCHED:
            return "switch " + ", ".join(self.detail)
        return self.kind


@dataclass(frozen=True)
class Remaining:
    verdict: object  # catalog.Verdict
    reason: str
    kind: str = UNCOVERED  # BYPASSED, NEEDS_SEED or UNCOVERED

    @property
    def entry(self):
        return self.verdict.entry


@dataclass(frozen=True)
class PatchPlan:
    tf_version: str
    device: str
    supported: bool
    note: str
    env: Dict[str, str]  # name -> value
    api_switches: List[object]  # catalog.Switch
    replacements: Dict[str, List[str]]  # patch name -> entry ids
    covered: List[Covered]
    remaining: List[Remaining]
    on_unsupported: str = "raise"
    silenced: List[object] = field(default_factory=list)  # catalog.Switch set only under on_unsupported="warn"
    # Entries a replacement covers only through the public API: their raw op,
    # created directly (tf.raw_ops, internal TF code), keeps the stock kernel.
    bypassable: List[Remaining] = field(default_factory=list)
    env_switches: List[object] = field(default_factory=list)  # catalog.Switch behind `env`, silenced ones excluded
    # The catalogue says TF's own UnsortedSegmentSum is deterministic here (as
    # shipped, or with the switches this plan turns on): the replacements may call it.
    stock_segments_deterministic: bool = False

    def switches_in_words(self, api_switch_ids=None):
        """Display names of what is switched on, an env var left out when an API
        switch that is the same thing (same_as) is on: 'enable_op_determinism()'."""
        api = [s for s in self.api_switches if api_switch_ids is None or s.id in api_switch_ids]
        same = {i for s in api for i in (s.id,) + tuple(s.same_as)}
        return ["%s()" % s.id for s in api] + [
            "%s=%s" % (s.name, s.value) for s in self.env_switches if s.id not in same]

    def watched_ops(self):
        """{op type: (Remaining, ...)}: the not-covered entries an op callback can
        see, keyed by the raw op names the catalogue gives them, and the raw ops
        that bypass a replacement (the callback ignores those built by tfdet)."""
        watched = {}
        for remaining in self.remaining + self.bypassable:
            for op_type in remaining.entry.raw_ops:
                watched.setdefault(op_type, []).append(remaining)
        return {op: tuple(items) for op, items in watched.items()}

    def unwatchable(self):
        """Not-covered entries with no op to watch for (a runtime or API-level source)."""
        return [r for r in self.remaining if not r.entry.raw_ops]


def _switches_on(switches):
    on = set()
    for switch in switches:
        on.add(switch.id)
        on.update(switch.same_as)
    return on


def plan_patch(catalogue, tf_version, device, available_patches, seeded, on_unsupported="raise"):
    if on_unsupported not in ON_UNSUPPORTED:
        raise ValueError("on_unsupported must be one of %s, not %r" % (", ".join(ON_UNSUPPORTED), on_unsupported))
    version = tf_minor(tf_version)
    if version < COVERED_TF_VERSIONS[0]:
        return PatchPlan(str(tf_version), device, False,
                         "TF %s is older than any version tfdet knows (%s); nothing was changed" % (
                             version, COVERED_TF_VERSIONS[0]), {}, [], {}, [], [], on_unsupported)
    note = ""
    if version > COVERED_TF_VERSIONS[-1]:
        note = "TF %s is newer than the catalogue (%s); using what it says for the latest versions" % (
            version, COVERED_TF_VERSIONS[-1])
    with warnings.catch_warnings():  # the plan's note says it once, where patch() and status show it
        warnings.simplefilter("ignore", StaleVersionWarning)
        return _plan(catalogue, tf_version, device, available_patches, seeded, on_unsupported, note)


def _workarounds_needed(catalogue, tf_version, device):
    """Environment workarounds (role "workaround") a catalogued fix needs together with
    the determinism switches on this version and device: e.g. TF_CUDNN_USE_FRONTEND for
    deterministic cuDNN convolutions on TF 2.5-2.7 GPUs (TF issue 53771)."""
    needed = set()
    for verdict in catalogue.affecting(tf_version, device):
        if verdict.range.status == "deterministic_with_switch":
            needed.update(verdict.range.switches)
    return [s for s in catalogue.switches_for(tf_version, device, roles=("workaround",))
            if s.kind == "env" and s.id in needed]


def _switches_set(catalogue, tf_version, device, on_unsupported):
    """(switches turned on, env switches that silence TF's errors) for this TF and device."""
    if device in ROW_DEVICES:
        silenced = catalogue.set_by_patch(tf_version, device, ON_WARN) if on_unsupported == "warn" else []
        return catalogue.set_by_patch(tf_version, device, ALWAYS), [s for s in silenced if s.kind == "env"]
    switches = catalogue.switches_for(tf_version, device, roles=APPLIED_ROLES)
    switches = switches + _workarounds_needed(catalogue, tf_version, device)
    silenced = []
    if on_unsupported == "warn":
        silenced = [s for s in catalogue.switches_for(tf_version, device, roles=(SILENCING_ROLE,)) if s.kind == "env"]
    return switches, silenced


def _plan(catalogue, tf_version, device, available_patches, seeded, on_unsupported, note):
    switches, silenced = _switches_set(catalogue, tf_version, device, on_unsupported)
    env = {s.name: s.value for s in switches if s.kind == "env"}
    api_switches = [s for s in switches if s.kind == "api"]
    env.update((s.name, s.value) for s in silenced)
    on = _switches_on(switches)

    replacements, covered, remaining, bypassable = {}, [], [], []
    for verdict in catalogue.affecting(tf_version, device):
        entry, version_range = verdict.entry, verdict.range
        if version_range.patch and version_range.patch in available_patches:
            replacements.setdefault(version_range.patch, []).append(entry.id)
            covered.append(Covered(entry.id, REPLACED, (version_range.patch,)))
            if entry.direction != "gradient":  # for gradient entries the raw op is the (fine) forward op
                bypassable.append(Remaining(verdict, _why_bypassed(entry), BYPASSED))
        elif entry.fixed_by_seeding and seeded:
            covered.append(Covered(entry.id, SEEDED))
        elif version_range.status == "deterministic_with_switch" and set(version_range.switches) <= on:
            covered.append(Covered(entry.id, SWITCHED, tuple(version_range.switches)))
        else:
            remaining.append(Remaining(verdict, _why_remaining(verdict, on, available_patches, seeded),
                                       _remaining_kind(verdict, available_patches, seeded)))
    return PatchPlan(str(tf_version), device, True, note, env, api_switches, replacements, covered, remaining,
                     on_unsupported, silenced, bypassable, [s for s in switches if s.kind == "env"],
                     _stock_segments_deterministic(catalogue, tf_version, device, covered))


def _stock_segments_deterministic(catalogue, tf_version, device, covered):
    """Whether TF's UnsortedSegmentSum kernel is deterministic under this plan:
    the catalogue says so as shipped, or the plan turns on the switches it needs."""
    switched = {c.entry_id for c in covered if c.kind == SWITCHED}
    verdicts = catalogue.lookup("UnsortedSegmentSum", tf_version, device, missing_ok=True)
    return bool(verdicts) and all(v.status == "deterministic" or v.entry.id in switched for v in verdicts)


def _why_bypassed(entry):
    public = [api for api in entry.apis if not api.startswith("tf.raw_ops.")]
    return "created directly, not through %s, which tfdet replaces; the stock kernel runs" % (
        public[0] if public else "the public API")


def _remaining_kind(verdict, available_patches, seeded):
    """NEEDS_SEED exactly where _why_remaining says 'unseeded', else UNCOVERED."""
    version_range = verdict.range
    if version_range.patch and version_range.patch not in available_patches:
        return UNCOVERED
    return NEEDS_SEED if verdict.entry.fixed_by_seeding and not seeded else UNCOVERED


def _why_remaining(verdict, on, available_patches, seeded):
    entry, version_range = verdict.entry, verdict.range
    if version_range.patch and version_range.patch not in available_patches:
        return "tfdet has no %s replacement yet" % version_range.patch
    if entry.fixed_by_seeding and not seeded:
        return "unseeded: call tfdet.patch(seed=N)"
    if version_range.status == "raises_under_determinism":
        return "raises %s under determinism (TF's error is kept: no tfdet replacement)" % (
            version_range.error.type if version_range.error else "an error")
    if version_range.status == "deterministic_with_switch":
        missing = [s for s in version_range.switches if s not in on]
        return "needs %s, which tfdet.patch() does not set" % ", ".join(missing)
    if version_range.workaround:
        return "no TF switch or tfdet replacement; workaround: " + version_range.workaround
    return "no TF switch or tfdet replacement"


def fix_of(remaining):
    """The one thing to do about a not-covered entry, for a warning line."""
    version_range = remaining.verdict.range
    if remaining.kind == BYPASSED:
        public = [api for api in remaining.entry.apis if not api.startswith("tf.raw_ops.")]
        return "call %s instead of the raw op" % (public[0] if public else "the public API")
    if remaining.kind == NEEDS_SEED:
        return "pass seed= to the op, or call tfdet.patch(seed=N)"
    if version_range is not None and version_range.workaround:
        return " ".join(version_range.workaround.split())
    if version_range is not None and version_range.status == "raises_under_determinism":
        return "avoid the op (TF refuses it under determinism; no deterministic version in TF or tfdet)"
    return "avoid the op, or accept that it varies (no deterministic version known)"
