"""What tfdet.patch() does for a TF version and device, decided from the
catalogue alone. Pure: no TensorFlow, no environment."""

from collections import namedtuple

from ..catalog import COVERED_TF_VERSIONS, tf_minor

# Switch roles patch() turns on; it never sets silences_errors or
# restores_nondeterminism, and leaves workaround switches to the user.
APPLIED_ROLES = ("enables_determinism", "disables_autotune")

Covered = namedtuple("Covered", "entry_id how")
Remaining = namedtuple("Remaining", "verdict reason")


class PatchPlan(namedtuple("PatchPlan", "tf_version device supported note env api_switches replacements covered remaining")):
    """env: {name: value}; api_switches: [Switch]; replacements: {patch name: [entry ids]}."""


def _switches_on(switches):
    on = set()
    for switch in switches:
        on.add(switch.id)
        on.update(switch.same_as)
    return on


def plan_patch(catalogue, tf_version, device, available_patches, seeded):
    version = tf_minor(tf_version)
    if version < COVERED_TF_VERSIONS[0]:
        return PatchPlan(str(tf_version), device, False,
                         "TF %s is older than any version tfdet knows (%s); nothing was changed" % (
                             version, COVERED_TF_VERSIONS[0]), {}, [], {}, [], [])
    note = ""
    if version > COVERED_TF_VERSIONS[-1]:
        note = "TF %s is newer than the catalogue (%s); using what it says for the latest versions" % (
            version, COVERED_TF_VERSIONS[-1])
    switches = catalogue.switches_for(tf_version, device, roles=APPLIED_ROLES)
    env = {s.name: s.value for s in switches if s.kind == "env"}
    api_switches = [s for s in switches if s.kind == "api"]
    on = _switches_on(switches)

    replacements, covered, remaining = {}, [], []
    for verdict in catalogue.affecting(tf_version, device):
        entry, version_range = verdict.entry, verdict.range
        if version_range.patch and version_range.patch in available_patches:
            replacements.setdefault(version_range.patch, []).append(entry.id)
            covered.append(Covered(entry.id, "replaced by tfdet (%s)" % version_range.patch))
        elif entry.fixed_by_seeding and seeded:
            covered.append(Covered(entry.id, "seeded"))
        elif version_range.status == "deterministic_with_switch" and set(version_range.switches) <= on:
            covered.append(Covered(entry.id, "switch " + ", ".join(version_range.switches)))
        else:
            remaining.append(Remaining(verdict, _why_remaining(verdict, on, available_patches, seeded)))
    return PatchPlan(str(tf_version), device, True, note, env, api_switches, replacements, covered, remaining)


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
