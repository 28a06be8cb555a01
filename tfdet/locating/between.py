"""`tfdet locate --compare A B` and `--between A B SCRIPT`: the first op whose
output differs between two environments while every input it read matches,
what differs between the environments, and whether that difference is
*expected*: the op is deterministic within each environment (its two recorded
runs agree) and the catalogue knows it sensitive to a setting that changed.

The outputs are paired by crossalign's stable keys, so two TF versions'
graphs can be compared; what cannot be paired is reported, never guessed.
"""

import os
import shutil
import tempfile

from .. import __version__
from ..results import ResultsError
from ..results.between_records import BETWEEN, SCHEMA_VERSION, BetweenResult, FirstDifference, Unmatched
from . import align, crossalign
from .capture import function_key
from .record import load_run, record_target
from .sides import settings_changed
from .trace_file import same_fingerprints

MAX_OTHER_ROOTS = 5
# Machine fields that say nothing about what the kernels compute.
NOT_COMPARED = ("tfdet_version",)


def environment_changes(machine_a, machine_b):
    """{name: [value on a, value on b]} for every described property and variable that differs."""
    a, b = machine_a.to_json(), machine_b.to_json()
    changes = {}
    for name in sorted(set(a) | set(b)):
        if name in ("env",) + NOT_COMPARED:
            continue
        if a.get(name) != b.get(name):
            changes[name] = [a.get(name), b.get(name)]
    env_a, env_b = machine_a.env, machine_b.env
    for name in sorted(set(env_a) | set(env_b)):
        if env_a.get(name) != env_b.get(name):
            changes[name] = [env_a.get(name), env_b.get(name)]
    return changes


def sensitivity(op_type, settings, tf_versions, device, catalogue=None):
    """{setting: the catalogue's fact, as JSON} for the changed `settings` the catalogue
    (default: the shipped one) knows `op_type` sensitive to, on any of `tf_versions`."""
    from ..catalog import default_catalogue

    catalogue = default_catalogue() if catalogue is None else catalogue  # a catalogue of facts only is falsy
    found = {}
    for version in tf_versions:
        try:
            facts = catalogue.sensitive_to(op_type, version, device)
        except ValueError:  # not a TF version the catalogue can read
            continue
        for setting, fact in facts.items():
            if setting in settings and fact.changes and setting not in found:
                found[setting] = _fact_json(fact)
    return found


def _fact_json(fact):
    fields = ("changes", "stable_within", "max_ulp", "sources", "note")
    return {name: _plain(getattr(fact, name, None)) for name in fields if getattr(fact, name, None) is not None}


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _stable(again, execution):
    """True when the side's second run had the same fingerprint, False when not, None when it had none."""
    theirs = again.get(execution.key)
    return None if theirs is None else theirs == execution.fingerprint


def compare_files(path_a, path_b, label_a=None, label_b=None, catalogue=None):
    """A BetweenResult for two fingerprints files (ResultsError for a malformed one);
    catalogue: the one whose sensitive_to facts say what is expected (default: the shipped one)."""
    recorded_a, run_a, again_a = load_run(path_a)
    recorded_b, run_b, again_b = load_run(path_b)
    header_a, header_b = recorded_a.header, recorded_b.header
    refused = same_fingerprints((run_a.fingerprint, run_a.device), (run_b.fingerprint, run_b.device), path_a, path_b)
    if refused:
        raise ResultsError(refused)
    notes = []
    if _program(header_a.target) != _program(header_b.target):  # machines keep it in other directories
        notes.append("the two files recorded different programs (%s; %s)" % (header_a.target, header_b.target))
    pairs, unpaired_a, unpaired_b = crossalign.pair(run_a, run_b)
    comparison = align.compare(run_a, run_b, counterparts=pairs)
    # a root whose counterpart reads other inputs (an op inserted before it on one side) is not the op's doing
    mapped = crossalign.op_map(pairs)
    rewired = [r for r in comparison.roots
               if not crossalign.inputs_correspond(r, pairs[r.key], mapped, run_a.ops, run_b.ops)]
    comparison.roots = [r for r in comparison.roots if r not in rewired]
    comparison.uncertain.extend(rewired)
    _explain_function_calls(comparison)
    changes = environment_changes(header_a.machine, header_b.machine)
    side_changes = [n for n in set(header_a.side) | set(header_b.side) if header_a.side.get(n) != header_b.side.get(n)]
    changed = settings_changed(set(changes) | set(side_changes))

    def stable_within(execution):
        other = pairs[execution.key]
        return {"a": _stable(again_a, execution), "b": _stable(again_b, other)}

    deterministic = [r for r in comparison.roots if all(v is not False for v in stable_within(r).values())]
    varying = [r for r in comparison.roots if r not in deterministic]
    first, verdict, sensitive = None, "same", {}
    chosen = deterministic[0] if deterministic else (varying[0] if varying else None)
    if chosen is not None:
        device = header_a.machine.device
        versions = sorted({header_a.machine.tf_version, header_b.machine.tf_version})
        if deterministic:
            sensitive = sensitivity(chosen.op.op_type, changed, versions, device, catalogue)
            measured = all(stable is True for stable in stable_within(chosen).values())
            verdict = "expected" if sensitive and measured else "unexplained"
            if not measured:  # no second run to say it is the same run to run: not expected, only possible
                notes.append("%s has no second run on a side to measure it against: whether it is deterministic "
                             "within each side is not known" % chosen.op.op_type)
        else:
            verdict = "varies-within"
        first = _first(chosen, pairs[chosen.key], stable_within(chosen), sensitive, header_a.machine)
        if deterministic and varying and _before(varying[0], chosen, run_a):
            notes.append("%s (%s) differed earlier, but it also varies run to run within a side: not the "
                         "environment's doing" % (varying[0].op.op_type, varying[0].op.name))
    elif comparison.uncertain:
        verdict = "unmatched-only"
    others = [r for r in (deterministic + varying) if r is not chosen][:MAX_OTHER_ROOTS]
    unmatched = [Unmatched(side=side, count=len(items), first=crossalign.describe(items))
                 for side, items in (("a", unpaired_a), ("b", unpaired_b)) if items]
    within = {"a": header_a.outputs_varying, "b": header_b.outputs_varying}
    differing = len(comparison.roots) + len(comparison.spread) + len(comparison.uncertain)
    return BetweenResult(
        kind=BETWEEN, schema_version=SCHEMA_VERSION, tfdet_version=__version__,
        a=label_a or path_a, b=label_b or path_b, target=header_a.target, verdict=verdict,
        summary=_summary(verdict, first, changed, comparison, unmatched, header_a, header_b),
        environment_changes=changes, settings_changed=changed, first_difference=first,
        other_roots=["%s (%s)" % (r.op.op_type, r.op.name) for r in others],
        outputs_compared=comparison.compared, outputs_differing=differing, unmatched=unmatched,
        varying_within=within, notes=notes + _uncertain_note(comparison))


def _program(target):
    script, _, args = target.partition(" ")
    return os.path.basename(script), args


def _explain_function_calls(comparison):
    """A tf.function call whose result differs is explained by the ops inside it that differed
    (spread from a root, or unknown when only unpaired ones did): a root only when none did,
    as when what differs inside is not instrumented (jit_compile)."""
    inside = {}
    for kind, executions in (("spread", comparison.roots + comparison.spread), ("uncertain", comparison.uncertain)):
        for execution in executions:
            if execution.key[0] == "g":
                inside.setdefault(execution.op.graph, kind)
    kept = []
    for root in comparison.roots:
        kind = inside.get(function_key(root.op.op_type)) if root.op.op_type.startswith("__") else None
        if kind is None:
            kept.append(root)
        else:
            (comparison.spread if kind == "spread" else comparison.uncertain).append(root)
    comparison.roots = kept


def _before(execution, other, run):
    order = {e.key: i for i, e in enumerate(run.executions)}
    return order[execution.key] < order[other.key]


def _first(execution, other, stable, sensitive, machine):
    from .api import _judge

    op = execution.op
    key = execution.key
    entries, _, _ = _judge(op.op_type, machine.tf_version, machine.device or "cpu", op.apis)
    return FirstDifference(
        op_type=op.op_type, op_name=op.name, op_name_b=other.op.name, function=op.graph, source=op.source,
        step=execution.step, output_slot=key[3] if key[0] == "g" else key[2], stable_within=stable,
        sensitive_to=sensitive, catalog_entries=list(entries))


def _uncertain_note(comparison):
    if not comparison.uncertain:
        return []
    first = comparison.uncertain[0].op
    return ["%d outputs differed reading an output that has no counterpart, or other inputs than their counterpart "
            "(first: %s %s): not blamed" % (len(comparison.uncertain), first.op_type, first.name)]


def _summary(verdict, first, changed, comparison, unmatched, header_a, header_b):
    what = ", ".join(changed) or "nothing described"
    runs = "deterministic within each side (2 runs each: %d and %d outputs varied run to run)" % (
        header_a.outputs_varying, header_b.outputs_varying)
    unpaired = "; %s could not be matched" % " and ".join(
        "%d outputs of %s" % (u.count, u.side) for u in unmatched) if unmatched else ""
    if first is None:
        if verdict == "unmatched-only":
            return ("No output differed with matching inputs among the %d matched; %d differed downstream of "
                    "outputs that could not be matched%s." % (comparison.compared, len(comparison.uncertain),
                                                              unpaired))
        return "No difference: %d op outputs matched between the environments%s (changed: %s)." % (
            comparison.compared, unpaired, what)
    where = "%s (%s) in %s%s" % (first.op_type, first.op_name, first.function or "eager code",
                                 (", step %d" % first.step) if first.step else "")
    if verdict == "varies-within":
        sides = [s for s, v in sorted(first.stable_within.items()) if v is False]
        return ("First difference: %s; it varies run to run within side %s, so it is not the environment's doing "
                "(tfdet locate on that side names why)%s." % (where, " and ".join(sides), unpaired))
    if verdict == "expected":
        return "First difference: %s. Expected: %s; the catalogue knows %s sensitive to %s%s." % (
            where, runs, first.op_type, ", ".join(sorted(first.sensitive_to)), unpaired)
    return "First difference: %s. Unexplained: %s, and the catalogue knows no sensitivity of %s to %s%s." % (
        where, runs, first.op_type, what, unpaired)


def between_target(target, side_a, side_b, steps=None, max_bytes=None, timeout=None, traces=None, progress=None,
                   argv=None, catalogue=None):
    """Record `target` under each side in this machine, then compare the two (a BetweenResult)."""
    directory = traces or tempfile.mkdtemp(prefix="tfdet-between-")
    os.makedirs(directory, exist_ok=True)
    paths = [os.path.join(directory, "side-%s.fingerprints.jsonl" % name) for name in ("a", "b")]
    try:
        for side, path in zip((side_a, side_b), paths):
            record_target(target, path, side=side, steps=steps, max_bytes=max_bytes, timeout=timeout, traces=traces,
                          progress=progress, argv=argv)
        result = compare_files(paths[0], paths[1], label_a=side_a.text or "(as is)", label_b=side_b.text or "(as is)",
                               catalogue=catalogue)
    finally:
        if not traces:
            for path in paths:
                if os.path.exists(path):
                    os.unlink(path)
            shutil.rmtree(directory, ignore_errors=True)
    return result
