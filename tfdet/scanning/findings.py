"""From the ops found in a model's graphs to what its training will hit. Pure:
op sites, the catalogue and the patch's plan in; ScanHits and a verdict out."""

import collections

from ..catalog.model import VARYING_STATUSES
from ..results.scan_records import FIXED, NONDETERMINISTIC, RAISES, SEVERITY, UNKNOWN, ScanHit

MAX_WHERE = 3

Site = collections.namedtuple("Site", "op_type pass_name where ruled_out entry apis")
Site.__new__.__defaults__ = (None, frozenset())
Site.__doc__ = """One op found: its raw type, the pass that made it, where (scope, function or
source line), and the catalogue entries whose condition it provably does not meet.
entry: for a source that is not a raw op (an unseeded Keras initializer), the
catalogue entry it is; op_type then names it for people.
apis: the public functions a tfdet replacement rebinds that made it (tf.math.bincount),
from its creation stack: once patched, they run tfdet's function instead."""


def _judge(verdict, plan, assume_patched, sites=()):
    """(outcome, fix) of one catalogue verdict for the op's `sites`."""
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
    replaced = _replaced_through(verdict.entry, plan, sites) if status != "unknown" else None
    if replaced:
        return FIXED, "tfdet.patch(): replaces %s (%s), which made it" % (
            ", ".join(sorted(replaced[0])), ", ".join(sorted(replaced[1])))
    if status == "raises_under_determinism":
        return RAISES, verdict.fix or "none: TF raises with determinism on and tfdet has no replacement"
    if status == "unknown":
        return UNKNOWN, verdict.fix
    return NONDETERMINISTIC, verdict.fix or "none known"


def _replaced_through(entry, plan, sites):
    """(APIs, replacement names) when every site was made by a public function of
    this entry that a replacement on the plan rebinds (tf.math.bincount making
    DenseBincount): patched, the raw op is not made at all. Else None."""
    from .replaced_apis import patches_of

    apis, names = set(), set()
    for site in sites:
        mine = [(api, patches_of(api) & set(plan.replacements)) for api in site.apis if api in entry.apis]
        mine = [(api, patches) for api, patches in mine if patches]
        if not mine:
            return None
        for api, patches in mine:
            apis.add(api)
            names.update(patches)
    return (apis, names) if apis else None


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
        # an entry with no row for this device does not apply on it (TF32 on a CPU)
        verdicts = [v for v in verdicts if device in v.entry.devices]
        # an entry counts if one of the op's nodes may meet its condition
        verdicts = [v for v in verdicts if any(v.entry.id not in site.ruled_out for site in group)]
        if not verdicts:
            continue
        group = [site for site in group if any(v.entry.id not in site.ruled_out for v in verdicts)]
        judged = [(v,) + _judge(v, plan, assume_patched, [s for s in group if v.entry.id not in s.ruled_out])
                  for v in verdicts]
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
    """One line: what varies or raises as shipped, what tfdet.patch() fixes, what
    remains, and apart from those what the catalogue does not know (unknown is not
    'will vary'): '2 catalogued ops vary or raise on GPU with TF 2.6 as shipped; 1
    is fixed by tfdet.patch(); 1 remains: X (raises).'"""
    where = "on %s with TF %s" % (device.upper(), tf_version)
    if not found:
        return "No catalogued source of nondeterminism in the traced graphs for TF %s on %s." % (
            tf_version, device.upper())
    varying = [h for h in found if h.status in VARYING_STATUSES]
    left = [h for h in found if h.outcome in (NONDETERMINISTIC, RAISES)]
    unknown = [h for h in found if h.outcome == UNKNOWN]
    listed = ", ".join("%s (%s)" % (h.op_type, h.outcome) for h in left)
    if not varying:
        line = "Nothing the catalogue says varies %s (%d catalogued op%s%s)" % (
            where, len(found), _s(found), ", all deterministic" if not unknown else "")
    elif not assume_patched:
        line = "%d catalogued op%s will vary or raise %s: %s" % (len(left), _s(left), where, listed)
    elif left:
        fixed = len(varying) - len(left)
        line = "%d catalogued op%s vary or raise %s as shipped; %d %s fixed by tfdet.patch(); %d remain%s: %s" % (
            len(varying), _s(varying), where, fixed, "is" if fixed == 1 else "are", len(left),
            "s" if len(left) == 1 else "", listed)
    else:
        line = "Nothing catalogued varies or raises %s after tfdet.patch(): it fixes the %d op%s that would (%s)" % (
            where, len(varying), _s(varying), ", ".join(h.op_type for h in varying))
    if unknown:
        line += "; %d not known (the catalogue has no claim for this version and device): %s" % (
            len(unknown), ", ".join(h.op_type for h in unknown))
    return line + "."


def _s(items):
    return "" if len(items) == 1 else "s"


def worst_outcome(found):
    return max((h.outcome for h in found), key=lambda o: SEVERITY[o]) if found else None


def fails(found, level):
    """True when a hit at or above `level` (nondeterministic > raises > unknown) remains."""
    return any(SEVERITY[h.outcome] >= SEVERITY[level] for h in found if h.outcome != FIXED)
