"""The report's words: each run's plain-language summary (and the op names
behind it) and, for a row that varies, what the catalogue says fixes it and
what that cost here. Pure: the grid's cells and the runs' records in, text out."""

import statistics
from collections import OrderedDict

from ..catalog import Verdict
from ..results import stats
from ..results.interpret import describe_patch_cost, patch_cost
from ..results.vocabulary import DETERMINISTIC, FAILED, MEASURED, RAISED, VARIES
from . import claims
from .formatting import TIMES, plural

DETERMINISM_MODES = ("env", "api", "patched")
MAX_ERROR_MESSAGE = 160
MAX_UNCONFIRMED_SHOWN = 6


def advice(entry, run, pass_name, cells_by_mode):
    """What the catalogue says fixes a varying row, and what that cost here."""
    version_range = claims.claim_range(entry, run)
    if entry is None:
        text = "Not a catalogue entry."
    elif version_range is None:
        text = "The catalogue has no claim for TF %s on %s." % (run.tf_version, run.device or "this device")
    else:
        verdict = Verdict(entry, run.tf_version, run.device, version_range)
        text = verdict.fix
        if version_range.status == "raises_under_determinism" and version_range.error:
            message = version_range.error.message
            if len(message) > MAX_ERROR_MESSAGE:
                message = message[:MAX_ERROR_MESSAGE - 1].rstrip() + "\u2026"
            raises = "Under determinism it raises %s: %s" % (version_range.error.type, message)
            text = "%s. %s" % (text, raises) if text else raises
        if not text and version_range.note:
            text = version_range.note
        if not text:
            text = "The catalogue knows no fix (%s)." % version_range.status
    effects = []
    for mode in run.modes:
        cell = cells_by_mode.get(mode)
        if mode not in DETERMINISM_MODES or cell is None:
            continue
        if cell.outcome == DETERMINISTIC:
            effects.append("reproducible under %s%s" % (mode, ", cost " + cell.cost if cell.cost else ""))
        elif cell.outcome == VARIES:
            effects.append("still varies under %s" % mode)
        elif cell.outcome == RAISED:
            effects.append("raises under %s" % mode)
    if effects:
        text = text.rstrip()
        text += ("" if text.endswith((".", "!", "?", "\u2026")) else ".") + " Here: " + "; ".join(effects) + "."
    return text


def row_advice(row, runs, catalogue):
    """[(who, text)] for a row that varied somewhere: one per run it varied in (who is '' for one run)."""
    if VARIES not in {c.outcome for c in row.cells}:
        return []
    found = []
    for run in runs:
        by_mode = {c.column.mode: c for c in row.cells if c.column.run is run}
        if not any(c.outcome == VARIES for c in by_mode.values()):
            continue
        who = run.label if len(runs) > 1 else ""
        found.append((who, advice(claims.entry(catalogue, row.case), run, row.pass_name, by_mode)))
    return found


def cost_phrase(records):
    """'at no measurable cost' / 'at no measurable cost in 3 of 5 measurements, ×1.2 to ×2.0 in the others' /
    'at a median cost of ×1.40 (×1.20 to ×2.00)': costs whose 95% interval includes 1 are none."""
    quiet, costly, vague = [], [], []
    for record in records:
        if stats.imprecise_cost(record.ratio_low, record.ratio_high):
            vague.append(record.ratio)
        else:
            (quiet if stats.no_measurable_cost(record.ratio_low, record.ratio_high) else costly).append(record.ratio)
    phrase = _cost_phrase(quiet, costly)
    if not vague:
        return phrase
    if not phrase:  # too wide an interval says nothing, neither cost nor its absence
        return "at a cost not measured precisely enough"
    return "%s; not measured precisely enough in %d of %d measurements" % (
        phrase, len(vague), len(vague) + len(quiet) + len(costly))


def _cost_phrase(quiet, costly):
    if not quiet and not costly:
        return ""
    if not costly:
        return "at no measurable cost" + (" (all %d measurements)" % len(quiet) if len(quiet) > 1 else "")
    spread = ("%s%.2f to %s%.2f" % (TIMES, min(costly), TIMES, max(costly)) if len(costly) > 1
              else "%s%.2f" % (TIMES, costly[0]))
    if quiet:
        return "at no measurable cost in %d of %d measurements, %s in the others" % (
            len(quiet), len(quiet) + len(costly), spread)
    return "at a median cost of %s%.2f%s" % (TIMES, statistics.median(costly), " (%s)" % spread if len(costly) > 1 else "")


def summarise(run, rows, single):
    """(sentences, [(list title, op names)]): one run in plain language."""
    by_case = OrderedDict()  # case -> mode -> [(pass, outcome)]
    for row in rows:
        if row.pass_name is None:
            continue
        for cell in row.cells:
            if cell.column.run is run:
                by_case.setdefault(row.case, {}).setdefault(cell.column.mode, []).append((row.pass_name, cell.outcome))

    def outcomes(case, mode):
        return [o for _, o in by_case[case].get(mode, [])]

    det_modes = [m for m in run.modes if run.mode_switches.get(m)]
    has_baseline = "baseline" in run.modes
    varying = [c for c in by_case if has_baseline and VARIES in outcomes(c, "baseline")]
    fixed, only_patch, still, raised, unclear = [], [], [], [], []
    for case in varying:
        seen = [o for m in det_modes for o in outcomes(case, m)]
        patched = outcomes(case, "patched") if "patched" in det_modes else []
        if RAISED in seen:
            raised.append(case)
        elif VARIES in seen and patched and all(o == DETERMINISTIC for o in patched):
            only_patch.append(case)  # TF's switches leave it varying; tfdet's replacement fixes it
        elif VARIES in seen:
            still.append(case)
        elif seen and all(o == DETERMINISTIC for o in seen):
            fixed.append(case)
        else:
            unclear.append(case)
    only_under = [c for c in by_case if c not in varying and any(VARIES in outcomes(c, m) for m in det_modes)]
    measured = [c for c in by_case if any(o in MEASURED for m in run.modes for o in outcomes(c, m))]

    def ratios(cases, modes, only_deterministic):
        values = []
        for case in cases:
            for mode in modes:
                for pass_name, outcome in by_case[case].get(mode, []):
                    record = run.records.get((case, pass_name, mode))
                    if record is not None and record.ratio is not None and (
                            outcome == DETERMINISTIC or not only_deterministic):
                        values.append(record)
        return values

    env = run.environment
    if single:
        where = "On this machine (TF %s, %s: %s, %s cores)" % (run.tf_version, env.get("Device"), env.get("CPU"),
                                                             env.get("CPU cores"))
    else:
        where = "With TF %s (%s, %s)" % (run.tf_version, env.get("Device"), run.name)
    sentences = ["Mode %s did not run: %s. Its column is empty or failed; nothing here says what it fixes or costs." % (
        p.mode, p.reason) for p in run.mode_problems if p.failure]
    if not has_baseline:
        sentences.append("%s, no baseline mode was run, so run-to-run variance without determinism was not measured."
                         % where)
    elif not measured:
        sentences.append("%s, nothing was measured yet." % where)
    elif not varying:
        sentences.append("%s, none of the %s measured varies from run to run without determinism." % (
            where, plural(len(measured), "op")))
    else:
        text = "%s, %s of %d measured vary from run to run without determinism" % (
            where, plural(len(varying), "op"), len(measured))
        if det_modes:
            label = run.determinism_label or "/".join(det_modes)
            cost = cost_phrase(ratios(fixed, det_modes, True))
            text += "; %d of them become%s reproducible with %s%s" % (
                len(fixed), "s" if len(fixed) == 1 else "", label, " " + cost if cost else "")
            if only_patch:
                text += "; %d more only with tfdet.patch() (%s)" % (len(only_patch), ", ".join(only_patch))
            text += "; %d still var%s; %d raise%s errors under determinism" % (
                len(still), "ies" if len(still) == 1 else "y", len(raised), "s" if len(raised) == 1 else "")
            if unclear:
                text += "; %d could not be told (failed or not measured)" % len(unclear)
        else:
            text += ("; no determinism switch of TF %s applies to %s in the modes run, so no switch can fix them"
                     % (run.tf_version, run.device or "this device"))
        sentences.append(text + ".")
    if only_under:
        sentences.append("%s only with determinism on: %s." % (
            ("1 more op varies" if len(only_under) == 1 else "%d more ops vary" % len(only_under)),
            ", ".join(only_under)))
    if det_modes and measured:
        overall = []
        for mode in det_modes:
            values = ratios(list(by_case), [mode], False)
            if values:
                overall.append("under %s, %s" % (mode, cost_phrase(values)))
        if overall:
            sentences.append("Across all measured ops (latency relative to baseline, 95%% intervals): %s." %
                             "; ".join(overall))
    patch_line = describe_patch_cost(patch_cost(list(run.records.values())))
    if patch_line:
        sentences.append(patch_line + ".")
    unconfirmed = [(row, cell) for row in rows for cell in row.cells if cell.column.run is run and cell.unconfirmed]
    if unconfirmed:
        groups = OrderedDict()  # case -> (passes, modes, fewest runs)
        for row, cell in unconfirmed:
            passes, modes, runs = groups.setdefault(row.case, ([], [], []))
            for value, bucket in ((row.pass_name, passes), (cell.column.mode, modes)):
                if value not in bucket:
                    bucket.append(value)
            runs.append(run.records[(row.case, row.pass_name, cell.column.mode)].runs or 0)
        shown = ["%s (%s) under %s: %s" % (case, ", ".join(passes), ", ".join(modes),
                                           stats.describe_ruled_out(min(runs)))
                 for case, (passes, modes, runs) in list(groups.items())[:MAX_UNCONFIRMED_SHOWN]]
        sentences.append("The catalogue says %s here that did not vary in this run; their cells are marked ? "
                         "rather than read as safe: %s%s." % (
                             plural(len(groups), "op varies", "ops vary"), "; ".join(shown),
                             "; and %d more" % (len(groups) - MAX_UNCONFIRMED_SHOWN)
                             if len(groups) > MAX_UNCONFIRMED_SHOWN else ""))
    for problem in run.mode_problems:
        if not problem.failure:
            sentences.append("Mode %s was not run (not applicable here): %s." % (problem.mode, problem.reason))
    failed = sorted({c for c in by_case for m in run.modes if FAILED in outcomes(c, m)})
    if failed:
        sentences.append("%s failed (crashed or hung): %s." % (plural(len(failed), "op"), ", ".join(failed)))
    if run.missing:
        sentences.append("This run is incomplete: %d of %d planned case passes were not measured (interrupted); "
                         "continue it with tfdet probe --resume." % (len(run.missing), len(run.planned)))
    lists = [(title, names) for title, names in (
        ("vary without determinism", varying), ("reproducible with determinism", fixed),
        ("reproducible only with tfdet.patch()", only_patch), ("still vary with determinism", still),
        ("raise under determinism", raised), ("vary only with determinism", only_under)) if names]
    return sentences, lists
