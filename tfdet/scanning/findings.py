"""From the ops found in a model's graphs to what its training will hit. Pure:
op sites, the catalogue and the patch's plan in; ScanHits and a verdict out."""

import collections

from ..results.scan_records import FIXED, NONDETERMINISTIC, RAISES, SEVERITY, UNKNOWN, ScanHit

MAX_WHERE = 3

Site = collections.namedtuple("Site", "op_type pass_name where ruled_out entry")
Site.__new__.__defaults__ = (None,)
Site.__doc__ = """One op found: its raw type, the pass that made it, where (scope, function or
source line), and the catalogue entries whose condition it provably does not meet.
entry: for a source that is not a raw op (an unseeded Keras initializer), the
catalogue entry it is; op_type then names it for people."""


def _judge(verdict, plan, assume_patched):
    """(outcome, fix) of one catalogue verdict."""
    if verdict.range is None:
        return UNKNOWN, ""
    status = verdict.status
    if status in ("deterministic", "not_applicable"):
        return FIXED, ""
    if not assume_patched:
        return (NONDETERMINISTIC, verdict.fix) if status != "unknown" else (UNKNOWN, "")
    covered = {c.entry_id: c for c in plan.covered}
    if verdict.entry.id in covered:
        how = covered[verdict.entry.id]
        if how.kind == "seeded":
            return FIXED, "tfdet.patch(seed=N) seeds it"
        return FIXED, "tfdet.patch(): " + how.how
    if status == "raises_under_determinism":
        return RAISES, verdict.fix or "none: TF raises with determinism on and tfdet has no replacement"
    if status == "unknown":
        return UNKNOWN, verdict.fix
    return NONDETERMINISTIC, verdict.fix or "none known"


def hits(sites, catalogue, tf_version, device, plan, assume_patched=True):
    """One ScanHit per catalogued raw op type among `sites`, most severe first.
    A raw op several entries answer to takes the most severe of their outcomes."""
    by_type = collections.OrderedDict()
    for site in sites:
        by_type.setdefault(site.op_type, []).append(site)
    found = []
    for op_type, group in by_type.items():
        if group[0].entry is not None:  # the entry by its id
            verdicts = [v for v in catalogue.lookup(group[0].entry, tf_version, device, missing_ok=True)
                        if v.entry.id == group[0].entry]
        else:
            verdicts = catalogue.lookup(op_type, tf_version, device, missing_ok=True)
            verdicts = [v for v in verdicts if op_type in v.entry.raw_ops]  # the op itself, not an API of that name
        # an entry counts if one of the op's nodes may meet its condition
        verdicts = [v for v in verdicts if any(v.entry.id not in site.ruled_out for site in group)]
        if not verdicts:
            continue
        group = [site for site in group if any(v.entry.id not in site.ruled_out for v in verdicts)]
        judged = [(v,) + _judge(v, plan, assume_patched) for v in verdicts]
        judged.sort(key=lambda item: -SEVERITY[item[1]])
        worst, outcome, fix = judged[0]
        passes = sorted({s.pass_name for s in group})
        where = []
        for site in group:
            if site.where and site.where not in where:
                where.append(site.where)
        found.append(ScanHit(
            op_type=op_type, count=len(group), entries=[v.entry.id for v, _, _ in judged], status=worst.status,
            outcome=outcome, fix=fix, passes=passes, where=where[:MAX_WHERE] + (
                ["(%d more)" % (len(where) - MAX_WHERE)] if len(where) > MAX_WHERE else [])))
    found.sort(key=lambda hit: (-SEVERITY[hit.outcome], hit.op_type))
    return found


def verdict_line(found, tf_version, device, assume_patched):
    """'3 ops will vary on GPU with TF 2.6; 2 are fixed by tfdet.patch(); 1 has no fix: X.'"""
    if not found:
        return "No catalogued source of nondeterminism in the traced graphs for TF %s on %s." % (
            tf_version, device.upper())
    catalogued = [h for h in found if h.status not in ("deterministic", "not_applicable")]
    parts = ["%d catalogued op%s will vary or raise on %s with TF %s" % (
        len(catalogued), "" if len(catalogued) == 1 else "s", device.upper(), tf_version)]
    if assume_patched:
        fixed = [h for h in catalogued if h.outcome == FIXED]
        parts.append("%d %s fixed by tfdet.patch()" % (len(fixed), "is" if len(fixed) == 1 else "are"))
    left = [h for h in found if h.outcome in (NONDETERMINISTIC, RAISES, UNKNOWN)]
    if left:
        parts.append("%d remain%s: %s" % (len(left), "s" if len(left) == 1 else "", ", ".join(
            "%s (%s)" % (h.op_type, h.outcome) for h in left)))
    elif not catalogued:
        return "Nothing the catalogue says varies on %s with TF %s (%d catalogued op%s, all deterministic)." % (
            device.upper(), tf_version, len(found), "" if len(found) == 1 else "s")
    return "; ".join(parts) + "."


def worst_outcome(found):
    return max((h.outcome for h in found), key=lambda o: SEVERITY[o]) if found else None


def fails(found, level):
    """True when a hit at or above `level` (nondeterministic > raises > unknown) remains."""
    return any(SEVERITY[h.outcome] >= SEVERITY[level] for h in found if h.outcome != FIXED)
