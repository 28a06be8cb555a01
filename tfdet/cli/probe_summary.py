"""The end-of-run summary of a probe. Pure: typed results in, text out."""

import collections

from ..results import interpret, stats
from ..results.vocabulary import DETERMINISTIC, FAILED, RAISED, VARIES
from .tables import EXTRA, FIXED, KEY, Column, render_table


def _cell(record):
    if record is None:
        return "-"
    if record.outcome == VARIES:
        return "%d/%d VARIES" % (record.distinct or 0, record.runs or 0)
    if record.outcome == DETERMINISTIC:  # with the per-run rate its silence rules out at 95%
        return "%d/%d (<%s)" % (record.distinct or 0, record.runs or 0,
                                _percent(stats.max_rate_ruled_out(record.runs or 0)))
    return record.outcome


def _percent(rate):
    percent = rate * 100.0
    return ("%.0f%%" % percent) if percent >= 10 else ("%.1f%%" % percent)


def _table(headers, rows, width, last=EXTRA):
    """CASE and PASS as keys, figures fixed, the last column (a message) cut to fit."""
    kinds = [KEY, FIXED] + [FIXED] * (len(headers) - 3) + [last]
    return render_table([Column(h, k) for h, k in zip(headers, kinds)], rows, width)


def summarise(results, width=None):
    header = results.header
    modes = header.modes
    environment = header.first_environment
    problems = interpret.mode_problems(results)
    lines = [interpret.describe_mode_problem(p) for p in problems if p.failure]
    lines.append("TF %s on %s (%s, %s cores); modes %s; %d processes x %d runs each%s" % (
        header.tf_version, header.device, environment.cpu_model if environment else None,
        environment.cpu_count if environment else None, ", ".join(modes), header.processes, header.repeats,
        ", up to %d runs where variance is expected" % header.max_repeats if header.max_repeats else ""))
    lines += [interpret.describe_mode_problem(p) for p in problems if not p.failure]

    cells = interpret.by_case(results.cases)
    varied = [(key, by_mode) for key, by_mode in cells.items() if any(r.outcome == VARIES for r in by_mode.values())]
    lines.append("")
    if varied:
        lines.append("Varied from run to run (distinct results / runs; where one result, the per-run rate of "
                     "differing results ruled out at 95%):")
        rows = [[case, pass_name] + [_cell(by_mode.get(m)) for m in modes] for (case, pass_name), by_mode in varied]
        lines.append(_table(["CASE", "PASS"] + list(modes), rows, width, last=FIXED))
    else:
        lines.append("Nothing varied from run to run.")

    unconfirmed = [(key, r) for key, by_mode in cells.items() for r in by_mode.values()
                   if r.outcome == DETERMINISTIC and r.catalogue_expects_variance]
    if unconfirmed:
        lines += ["", "The catalogue says these vary here; they did not vary in this run (repeated up to %s runs), "
                  "so they are not shown to be safe:" % (header.max_repeats or "the default")]
        grouped = collections.OrderedDict()
        for (case, pass_name), r in unconfirmed:
            grouped.setdefault((case, pass_name, r.runs), []).append(r)
        for (case, pass_name, _), group in grouped.items():
            lines.append("  %s %s under %s: %s" % (case, pass_name, ", ".join(r.mode for r in group),
                                                   stats.describe_ruled_out(group[0].runs or 0)))

    raised = [r for by_mode in cells.values() for r in by_mode.values() if r.outcome == RAISED]
    if raised:
        lines += ["", "Raised an error:"]
        lines.append(_table(["CASE", "PASS", "MODE", "ERROR"], [
            [r.case, r.pass_name, r.mode, "%s: %s" % (r.error_type, r.error_message)] for r in raised], width))

    failed = [r for by_mode in cells.values() for r in by_mode.values() if r.outcome == FAILED]
    if failed:
        lines += ["", "Failed (crashed or hung; the run went on):"]
        lines.append(_table(["CASE", "PASS", "MODE", "WHAT HAPPENED"], [
            [r.case, r.pass_name, r.mode, r.error_message or ""] for r in failed], width))

    costed = [m for m in modes if m != "baseline"]
    if costed and "baseline" in modes:
        costly = [(key, by_mode) for key, by_mode in cells.items()
                  if any(by_mode.get(m) is not None and by_mode[m].ratio is not None for m in costed)]
        costly.sort(key=lambda item: -max((item[1][m].ratio or 0.0) if item[1].get(m) else 0.0 for m in costed))
        if costly:
            rows = [[case, pass_name] + [interpret.record_cost_words(by_mode.get(m)) for m in costed]
                    for (case, pass_name), by_mode in costly[:15]]
            lines += ["", "Cost: median latency relative to baseline [95% interval], highest first:"]
            lines.append(_table(["CASE", "PASS"] + costed, rows, width, last=FIXED))
            if len(costly) > 15:
                lines.append("(%d more in the results file)" % (len(costly) - 15))

    patch_line = interpret.describe_patch_cost(interpret.patch_cost(results.cases), ascii_only=True)
    if patch_line:
        lines += ["", patch_line + "."]

    skipped = results.skipped
    if skipped:
        reasons = collections.Counter((r.reason or "").split(";")[0] for r in skipped)
        lines += ["", "Skipped %d catalogue entries: %s" % (
            len(skipped), "; ".join("%s (%d)" % kv for kv in reasons.most_common()))]
    missing = interpret.not_measured(results)
    if missing:
        lines += ["", "Not measured yet (interrupted run): %d case passes; continue with --resume" % len(missing)]
    if results.path:
        lines += ["", "Results: %s" % results.path]
    return "\n".join(lines)
