"""The end-of-run summary of a probe. Pure: records in, text out."""

import collections

from ..cli.table import format_table


def _cell(record):
    if record is None:
        return "-"
    outcome = record["outcome"]
    if outcome in ("varies", "deterministic"):
        text = "%d/%d" % (record.get("distinct", 0), record.get("runs", 0))
        return text + (" VARIES" if outcome == "varies" else "")
    return outcome


def _ratio(record):
    if not record or record.get("ratio") is None:
        return "-"
    return "%.2f [%.2f-%.2f]" % (record["ratio"], record["ratio_low"], record["ratio_high"])


def summarise(header, records, path=None, width=None):
    modes = header.get("modes", [])
    environment = next(iter((header.get("environment") or {}).values()), {})
    lines = ["TF %s on %s (%s, %s cores); modes %s; %d processes x %d runs each" % (
        environment.get("tf_version"), environment.get("device"), environment.get("cpu_model"),
        environment.get("cpu_count"), ", ".join(modes), header.get("processes", 0), header.get("repeats", 0))]
    for mode, reason in sorted((header.get("unavailable_modes") or {}).items()):
        lines.append("mode %s not run: %s" % (mode, reason))

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
        lines.append("Varied from run to run (distinct results / runs):")
        rows = [[case, pass_name] + [_cell(cells.get(m)) for m in modes] for (case, pass_name), cells in varied]
        lines.append(format_table(["CASE", "PASS"] + list(modes), rows, max_width=width))
    else:
        lines.append("Nothing varied from run to run.")

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
