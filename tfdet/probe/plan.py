"""Which probe cases run here, and why the others do not. Pure."""

from collections import namedtuple

from ..catalog import tf_minor

PlannedCase = namedtuple("PlannedCase", "case_id pass_name")
Skipped = namedtuple("Skipped", "case_id reason")

_NEEDS = {
    "gpu": "needs a GPU",
    "cudnn": "needs cuDNN (a GPU)",
    "multi_device": "needs several GPUs or machines",
    "horovod": "needs Horovod on several GPUs",
}


def machine_capabilities(device, gpu_count=0):
    """What a machine offers, in the catalogue's `requires` words."""
    caps = {"xla", "tf1_graph_mode"}
    if device == "gpu":
        caps.update({"gpu", "cudnn"})
    if gpu_count > 1:
        caps.add("multi_device")
    return caps


def why_not_runnable(entry, device, tf_version, capabilities):
    """The reason an entry cannot be probed on this machine, or None if it can."""
    missing = [r for r in entry.requires if r not in capabilities]
    if missing:
        return "; ".join(_NEEDS.get(r, "needs " + r) for r in missing) + "; this machine has %s only" % device
    version_range = entry.range_for(tf_version, device)
    if version_range is not None and version_range.status == "not_applicable":
        return "no such op on %s in TF %s (catalogue: not_applicable)" % (device, tf_minor(tf_version))
    return None


def plan_cases(catalogue, case_specs, tf_version, device, capabilities, only=None, fixtures=()):
    """(planned, skipped) for a probe run.

    case_specs: {id: {passes, min_tf, fixture}} from cases.describe_cases().
    only: catalogue ids (or fixture ids) to restrict to; fixtures: fixture ids
    to add (tests use them; they are not catalogue entries).
    """
    wanted = None if only is None else list(only)
    entry_ids = {e.id for e in catalogue}
    unknown = [i for i in (wanted or []) if i not in entry_ids and not case_specs.get(i, {}).get("fixture")]
    if unknown:
        raise ValueError("unknown probe case or catalogue id: %s" % ", ".join(unknown))
    planned, skipped = [], []
    version = tf_minor(tf_version)
    for entry in catalogue:
        if wanted is not None and entry.id not in wanted:
            continue
        reason = why_not_runnable(entry, device, tf_version, capabilities)
        spec = case_specs.get(entry.id)
        if reason is None and spec is None:
            reason = "no probe case for this entry yet"
        if reason is None and spec["min_tf"] and (version.major, version.minor) < tuple(spec["min_tf"]):
            reason = "the probe case needs TF %d.%d or later" % tuple(spec["min_tf"])
        if reason:
            skipped.append(Skipped(entry.id, reason))
            continue
        planned.extend(PlannedCase(entry.id, p) for p in spec["passes"])
    for fixture_id in list(fixtures) + [i for i in (wanted or []) if case_specs.get(i, {}).get("fixture")]:
        if fixture_id in case_specs and not any(p.case_id == fixture_id for p in planned):
            planned.extend(PlannedCase(fixture_id, p) for p in case_specs[fixture_id]["passes"])
    return planned, skipped


def resolve_ops(catalogue, names, fixture_ids=()):
    """(entry ids, [(unknown name, suggestions)]) for --ops: every name `tfdet catalog
    show` takes, resolved as it does (Catalogue.resolve: an entry id, any public API
    alias such as tf.math.bincount, a raw op name such as DenseBincount; exact first,
    then ignoring case and '_' versus '-'), plus the probe's fixture ids. A name that
    several entries answer to selects all of them. Order is kept, without repeats.
    """
    ids, unknown = [], []
    entry_ids = {entry.id for entry in catalogue}
    for name in names:
        if name in entry_ids or name in fixture_ids:
            found = [name]
        else:
            try:
                found = [entry.id for entry in catalogue.resolve(name)]
            except LookupError as exc:  # catalog.UnknownName
                unknown.append((name, tuple(getattr(exc, "suggestions", ()))))
                continue
        ids.extend(i for i in found if i not in ids)
    return ids, unknown


def fixture_ids():
    """The probe's own test fixtures (cases with no catalogue entry), which --ops also takes."""
    from .cases import CASES

    return {case_id for case_id, spec in CASES.items() if spec.fixture}
