"""The end-of-run summary of a probe. Pure: records in, text out."""

import collections

from ..cli.table import format_table
from ..results import stats


def _cell(record):
    if record is None:
        return "-"
    outcome = record["outcome"]
    if outcome == "varies":
        return "%d/%d VARIES" % (record.get("distinct", 0), record.get("runs", 0))
    if outcome == "deterministic":  # with the per-run rate its silence rules out at 95%
        return "%d/%d (<%s)" % (record.get("distinct", 0), record.get("runs", 0), _percent(
            stats.max_rate_ruled_out(record.get("runs") or 0)))
    return outcome


def _percent(rate):
    percent = rate * 100.0
    return ("%.0f%%" % percent) if percent >= 10 else ("%.1f%%" % percent)


def ruled_out(record):
    """'0 of 40 runs differed: a per-run rate above 7.2% is ruled out at 95%' for a record that did not vary."""
    return stats.describe_ruled_out(record.get("runs") or 0)


def _ratio(record):
    if not record or record.get("ratio") is None:
        return "-"
    return cost_words(record["ratio"], record.get("ratio_low"), record.get("ratio_high"), ascii_only=True)


def cost_words(ratio, low=None, high=None, ascii_only=False):
    """A latency ratio to baseline in words: 'no measurable cost' where its 95% interval
    includes 1 (x0.96 would read as a speed-up it is not), else 'x1.34 [1.20-1.51]'."""
    times, dash = ("x", "-") if ascii_only else ("\u00d7", "\u2013")
    interval = " [%.2f%s%.2f]" % (low, dash, high) if low is not None and high is not None else ""
    if stats.no_measurable_cost(low, high):
        return "no measurable cost" + interval
    return "%s%.2f%s" % (times, ratio, interval)


def patch_cost(records):
    """What tfdet.patch() costs where it matters: the patched mode against baseline over
    the (case, pass) pairs that vary at baseline. None, or {cases: [(case, pass, ratio,
    low, high)], median, low, high}: with one case, its ratio and 95% interval; with
    several, the median of their ratios and the range of those ratios."""
    by_key = collections.defaultdict(dict)
    for record in records:
        if record.get("mode"):
            by_key[(record.get("case"), record.get("pass"))][record["mode"]] = record
    cases = []
    for (case, pass_name), modes in by_key.items():
        base, patched = modes.get("baseline"), modes.get("patched")
        if base and patched and base.get("outcome") == "varies" and patched.get("ratio") is not None:
            cases.append((case, pass_name, patched["ratio"], patched.get("ratio_low"), patched.get("ratio_high")))
    if not cases:
        return None
    ratios = sorted(c[2] for c in cases)
    if len(cases) == 1:
        return {"cases": cases, "median": cases[0][2], "low": cases[0][3], "high": cases[0][4]}
    return {"cases": cases, "median": stats.median(ratios), "low": ratios[0], "high": ratios[-1]}


def describe_patch_cost(cost, ascii_only=False):
    if cost is None:
        return ""
    n = len(cost["cases"])
    if n == 1:
        case, pass_name = cost["cases"][0][:2]
        words = cost_words(cost["median"], cost["low"], cost["high"], ascii_only)
        return "tfdet.patch() %s on the one op that varies without it (%s, %s), latency relative to baseline" % (
            ("has " if words.startswith("no ") else "costs ") + words, case, pass_name)
    times, dash = ("x", "-") if ascii_only else ("\u00d7", "\u2013")
    return ("tfdet.patch() costs a median %s%.2f over the %d ops that vary without it (from %s%.2f to %s%.2f; "
            "latency relative to baseline)" % (times, cost["median"], n, times, cost["low"], times, cost["high"]))


MEASURED = ("deterministic", "varies", "raised")

ModeProblem = collections.namedtuple("ModeProblem", "mode reason failure")


def mode_problems(header, records):
    """Modes that did not run, why, and whether that is a failure. Pure.

    A failure: a mode asked for that cannot run here (`--modes api` on TF 1.15),
    one whose processes could not start, or one where not a single case gave a
    measurement (every case in it crashed, hung or failed to run). A default mode
    this TF does not have (api before TF 2.8) is only noted: failure False.
    Files from before these fields were recorded: every mode not run is a note.
    """
    problems = collections.OrderedDict()
    for mode, reason in (header.get("mode_failures") or {}).items():
        problems[mode] = ModeProblem(mode, reason, True)
    by_mode = collections.OrderedDict()
    for record in records:
        if record.get("mode"):
            by_mode.setdefault(record["mode"], []).append(record)
    for mode in header.get("modes", []):
        mine = by_mode.get(mode, [])
        if mine and mode not in problems and not any(r.get("outcome") in MEASURED for r in mine):
            message = next((r.get("error_message") for r in mine if r.get("error_message")), "")
            problems[mode] = ModeProblem(mode, "no case gave a measurement: all %d failed%s" % (
                len(mine), " (%s)" % message if message else ""), True)
    for mode, reason in (header.get("end") or {}).get("mode_failures", {}).items():
        problems.setdefault(mode, ModeProblem(mode, reason, True))
    notes = dict(header.get("unavailable_modes") or {})
    notes.update(header.get("not_applicable_modes") or {})
    for mode, reason in notes.items():
        problems.setdefault(mode, ModeProblem(mode, reason, False))
    return list(problems.values())


def describe_mode_problem(problem):
    if problem.failure:
        return "MODE %s DID NOT RUN: %s" % (problem.mode, problem.reason)
    return "mode %s not run (not applicable here): %s" % (problem.mode, problem.reason)


def summarise(header, records, path=None, width=None):
    modes = header.get("modes", [])
    environment = next(iter((header.get("environment") or {}).values()), {})
    problems = mode_problems(header, records)
    lines = [describe_mode_problem(p) for p in problems if p.failure]
    lines.append("TF %s on %s (%s, %s cores); modes %s; %d processes x %d runs each%s" % (
        environment.get("tf_version"), environment.get("device"), environment.get("cpu_model"),
        environment.get("cpu_count"), ", ".join(modes), header.get("processes", 0), header.get("repeats", 0),
        ", up to %d runs where variance is expected" % header["max_repeats"] if header.get("max_repeats") else ""))
    lines += [describe_mode_problem(p) for p in problems if not p.failure]

    by_case = collections.OrderedDict()
    skipped = []
    for record in records:
        if record["outcome"] == "skipped":
            skipped.append(record)
            continue
        by_case.setdefault((record["case"], record["pass"]), {})[record["mode"]] = record

    varied = [(key, cells) for key, cells in by_case.items() if any(r["outcome"] == "varies" for r in cells.values())]
    lines.append("")
    if varied:
        lines.append("Varied from run to run (distinct results / runs; where one result, the per-run rate of "
                     "differing results ruled out at 95%):")
        rows = [[case, pass_name] + [_cell(cells.get(m)) for m in modes] for (case, pass_name), cells in varied]
        lines.append(format_table(["CASE", "PASS"] + list(modes), rows, max_width=width))
    else:
        lines.append("Nothing varied from run to run.")

    unconfirmed = [(key, r) for key, cells in by_case.items() for r in cells.values()
                   if r["outcome"] == "deterministic" and r.get("catalogue_expects_variance")]
    if unconfirmed:
        lines += ["", "The catalogue says these vary here; they did not vary in this run (repeated up to %s runs), "
                  "so they are not shown to be safe:" % (header.get("max_repeats") or "the default")]
        grouped = collections.OrderedDict()
        for (case, pass_name), r in unconfirmed:
            grouped.setdefault((case, pass_name, r.get("runs")), []).append(r["mode"])
        for (case, pass_name, _), group in grouped.items():
            first = by_case[(case, pass_name)][group[0]]
            lines.append("  %s %s under %s: %s" % (case, pass_name, ", ".join(group), ruled_out(first)))

    raised = [(key, r) for key, cells in by_case.items() for r in cells.values() if r["outcome"] == "raised"]
    if raised:
        lines += ["", "Raised an error:"]
        lines.append(format_table(["CASE", "PASS", "MODE", "ERROR"], [
            [case, pass_name, r["mode"], "%s: %s" % (r.get("error_type"), r.get("error_message"))]
            for (case, pass_name), r in raised], max_width=width))

    failed = [(key, r) for key, cells in by_case.items() for r in cells.values() if r["outcome"] == "failed"]
    if failed:
        lines += ["", "Failed (crashed or hung; the run went on):"]
        lines.append(format_table(["CASE", "PASS", "MODE", "WHAT HAPPENED"], [
            [case, pass_name, r["mode"], r.get("error_message", "")] for (case, pass_name), r in failed],
            max_width=width))

    costed = [m for m in modes if m != "baseline"]
    if costed and "baseline" in modes:
        rows = [[case, pass_name] + [_ratio(cells.get(m)) for m in costed]
                for (case, pass_name), cells in by_case.items()
                if any(cells.get(m, {}).get("ratio") is not None for m in costed)]
        rows.sort(key=lambda row: -max(_ratio_value(by_case[(row[0], row[1])].get(m)) for m in costed))
        if rows:
            lines += ["", "Cost: median latency relative to baseline [95% interval], highest first:"]
            lines.append(format_table(["CASE", "PASS"] + costed, rows[:15], max_width=width))
            if len(rows) > 15:
                lines.append("(%d more in the results file)" % (len(rows) - 15))

    patch_line = describe_patch_cost(patch_cost(records), ascii_only=True)
    if patch_line:
        lines += ["", patch_line + "."]

    if skipped:
        reasons = collections.Counter(r["reason"].split(";")[0] for r in skipped)
        lines += ["", "Skipped %d catalogue entries: %s" % (
            len(skipped), "; ".join("%s (%d)" % kv for kv in reasons.most_common()))]
    missing = _missing(header, records)
    if missing:
        lines += ["", "Not measured yet (interrupted run): %d case passes; continue with --resume" % len(missing)]
    if path:
        lines += ["", "Results: %s" % path]
    return "\n".join(lines)


def _ratio_value(record):
    return record.get("ratio") or 0.0 if record else 0.0


def _missing(header, records):
    done = {(r.get("case"), r.get("pass")) for r in records}
    return [tuple(p) for p in header.get("planned", []) if tuple(p) not in done]


def varied_under(records, mode):
    """(case, pass) pairs that varied under a mode: the --fail-on-nondeterminism gate."""
    return [(r["case"], r["pass"]) for r in records if r.get("mode") == mode and r["outcome"] == "varies"]
