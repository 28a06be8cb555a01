"""Turn what the workers reported for one case into result records. Pure,
apart from `load`, the function that reads a saved output array."""

import dataclasses

from ..results import stats
from ..results.probe_records import CaseRecord
from ..results.vocabulary import DETERMINISTIC, FAILED, RAISED, SKIPPED, VARIES


def variance_fields(process_results, load):
    """Variance figures for one (case, pass, mode) over its processes: CaseRecord fields.

    process_results: one dict per process: {"digests", "saved", "raised"} as
    the worker answered, or {"failed": {"message", "stderr_tail"}}.
    """
    failed = [r["failed"] for r in process_results if "failed" in r]
    raised = [r["raised"] for r in process_results if r.get("raised")]
    digests = _digests_by_process(process_results)
    record = {"processes": len(digests) if not failed else len(process_results)}
    if failed:
        record.update(outcome=FAILED, error_type="WorkerFailed", error_message=failed[0]["message"],
                      stderr_tail=failed[0].get("stderr_tail", ""))
        return record
    if raised:
        record.update(outcome=RAISED, error_type=raised[0]["type"], error_message=raised[0]["message"],
                      raised_in_processes=len(raised))
        return record
    record.update(stats.summarise_digests(digests))
    saved = {}
    for result in process_results:
        saved.update(result.get("saved", {}))
    arrays = [load(saved[d]) for d in sorted(saved)]
    if arrays:
        summary = stats.variance_summary(arrays)
        summary.pop("runs", None)
        summary.pop("distinct", None)
        record.update(summary)
    record["first_digest"] = digests[0][0] if digests and digests[0] else None
    record["outcome"] = VARIES if record["distinct"] > 1 else DETERMINISTIC
    if record["outcome"] == DETERMINISTIC:
        # what this silence rules out: any per-run rate of differing results above this
        record["rate_ruled_out_95"] = stats.max_rate_ruled_out(record["runs"])
    return record


def _digests_by_process(process_results):
    """Digests per process, in order. Answers may carry "process" (an index):
    further batches of runs in a process the probe asked again (adaptive repeats)."""
    grouped = {}
    for position, result in enumerate(process_results):
        if "failed" not in result:
            grouped.setdefault(result.get("process", position), []).extend(result.get("digests", []))
    return list(grouped.values())


def distinct_results(process_results):
    """How many bitwise-distinct results the answers so far hold (0 if none)."""
    return stats.count_distinct(d for r in process_results if "failed" not in r for d in r.get("digests", []))


def run_count(process_results):
    return sum(len(r.get("digests", [])) for r in process_results if "failed" not in r)


def cost_fields(samples, baseline_samples):
    """Latency figures for one mode, and its ratio to baseline with an interval."""
    if not samples:
        return {}
    q1, q3 = stats.iqr(samples)
    fields = {"samples_s": list(samples), "median_s": stats.median(samples), "iqr_s": [q1, q3]}
    if baseline_samples:
        interval = stats.ratio_interval(baseline_samples, samples)
        fields.update(ratio=interval["ratio"], ratio_low=interval["low"], ratio_high=interval["high"],
                      ratio_method=interval["method"],
                      cost_p_value=stats.mann_whitney_u(baseline_samples, samples)["p_two_sided"])
    return fields


def case_records(case_id, pass_name, variance_by_mode, samples_by_mode, load):
    """CaseRecords for every mode of one (case, pass). Baseline is the reference
    for cost ratios and for `matches_baseline` (bitwise equal results)."""
    fields_by_mode = {}
    baseline_samples = samples_by_mode.get("baseline") or []
    for mode, process_results in variance_by_mode.items():
        fields = variance_fields(process_results, load)
        fields.update(cost_fields(samples_by_mode.get(mode) or [], baseline_samples if mode != "baseline" else []))
        fields_by_mode[mode] = fields
    baseline_digest = (fields_by_mode.get("baseline") or {}).get("first_digest")
    records = []
    for mode, fields in fields_by_mode.items():
        if baseline_digest and fields.get("first_digest"):
            fields["matches_baseline"] = fields["first_digest"] == baseline_digest
        records.append(CaseRecord(record="case", case=case_id, pass_name=pass_name, mode=mode, **fields))
    return records


def annotated(record, **fields):
    """The record with more fields set (what the catalogue expected, extra runs)."""
    return dataclasses.replace(record, **fields)


def skipped_record(case_id, reason):
    return CaseRecord(record="case", case=case_id, outcome=SKIPPED, reason=reason)
