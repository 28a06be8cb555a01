"""One results file as a Run of the report: its label, modes, environment,
what was planned, skipped and measured, which modes did not run, and which
catalogue switches each mode turned on. Pure: a ProbeResults in, a Run out."""

from collections import OrderedDict

from ..results.interpret import mode_problems
from ..catalog import crosscheck
from . import environment
from .formatting import file_name, mode_key, text
from .view import Run

NO_REASON = "no reason recorded"


def build_run(index, results):
    """The Run of one ProbeResults (index: its place among the report's runs)."""
    header = results.header
    env = header.first_environment
    modes = sorted(set(header.modes), key=mode_key)
    # modes seen in records but not in the header (a hand-edited file) still get columns
    for record in results.measured:
        if not record.skipped and record.mode not in modes:
            modes.append(record.mode)
    modes.sort(key=mode_key)
    problems = mode_problems(results)
    not_run = dict(header.unavailable_modes)
    not_run.update((p.mode, p.reason) for p in problems if p.failure and p.mode not in not_run)
    unavailable = sorted(((m, text(r)) for m, r in not_run.items()), key=lambda kv: mode_key(kv[0]))
    planned = []
    for case, pass_name in header.planned:
        if (case, pass_name) not in planned:
            planned.append((case, pass_name))
    skipped = OrderedDict()
    for case, reason in header.skipped:
        skipped[case] = text(reason, NO_REASON)
    by_key = {}
    for record in results.cases:
        if record.skipped:
            skipped.setdefault(record.case, text(record.reason, NO_REASON))
        elif record.mode is not None:
            by_key[record.key] = record
    missing = [p for p in planned if any((p[0], p[1], m) not in by_key for m in modes)]
    tf_version = text(env.tf_version if env else None, "unknown")
    device = env.device if env else None
    path = str(results.path)
    return Run(
        key="r%d" % (index + 1), index=index, path=path, name=file_name(path),
        label="TF %s \u00b7 %s" % (tf_version, device or "unknown device"),
        tf_version=tf_version, device=device, modes=modes, unavailable_modes=unavailable,
        environment=environment.table(header, env, path, modes, unavailable),
        mode_settings=environment.mode_settings(header, modes),
        planned=planned, missing=missing, skipped=dict(skipped), records=by_key, mode_problems=problems)


def tell_apart(runs):
    """Labels made unique: the file name, then the run's number, where two runs share one."""
    labels = [run.label for run in runs]
    for run in runs:
        if labels.count(run.label) > 1:
            run.label = "%s \u00b7 %s" % (run.label, run.name)
    labels = [run.label for run in runs]
    for run in runs:
        if labels.count(run.label) > 1:
            run.label = "%s #%d" % (run.label, run.index + 1)


def mode_switches(run, header, catalogue):
    """{mode: switch ids on for the run's device}; empty without a catalogue or device."""
    return crosscheck.header_switch_sets(run.modes, header, run.tf_version, run.device, catalogue)


def determinism_label(run, catalogue):
    """'TF_DETERMINISTIC_OPS / enable_op_determinism()': what the run's determinism modes turned on."""
    names = []
    for mode in run.modes:
        on = run.mode_switches.get(mode) or frozenset()
        if not on or catalogue is None:
            continue
        if mode == "env":
            environments = [s.name for s in catalogue.switches if s.id in on and s.kind == "env"]
            names.extend(n for n in environments if n not in names)
        elif mode == "api":
            names.extend(n for n in ["enable_op_determinism()"] if n not in names)
        elif mode == "patched":
            names.append("tfdet.patch()")
    return " / ".join(names)
