"""Typed results records for tests, built through the records' own classes so a
field renamed in tfdet/results fails here first. Every builder takes the
fields to change as keywords."""

import json

from tfdet.results import CaseRecord, EndRecord, Environment, ProbeHeader, ProbeResults, Threads


def environment(**changes):
    fields = dict(tf_version="2.21.0", device="cpu", python="3.11.7", cpu_model="AMD EPYC", cpu_count=2,
                  threads=Threads(intra_op=2, inter_op=2), onednn="default")
    fields.update(changes)
    return Environment(**fields)


def header(modes=("baseline",), **changes):
    modes = list(modes)
    fields = dict(
        record="header", schema_version=2, kind="probe", tfdet_version="0.1.0", created="2026-11-24T12:00:00+00:00",
        argv=["probe"], modes=modes, modes_asked=list(modes), unavailable_modes={}, mode_failures={},
        not_applicable_modes={}, processes=2, repeats=5, size=1.0, rounds=5, seed=0, execution="function",
        threads=Threads(intra_op=2, inter_op=2), onednn="default",
        environment={mode: environment() for mode in modes}, planned=[["a", "forward"]], skipped=[],
        max_repeats=100, timeout_s=120.0, catalogue_digest="sha256:abc")
    fields.update(changes)
    return ProbeHeader(**fields)


def case(name, mode, outcome, pass_name="forward", **fields):
    return CaseRecord(record="case", case=name, pass_name=pass_name, mode=mode, outcome=outcome, **fields)


def skipped(name, reason):
    return CaseRecord(record="case", case=name, outcome="skipped", reason=reason)


def end(**mode_failures):
    return EndRecord(record="end", mode_failures=dict(mode_failures), finished="2026-11-24T12:05:00+00:00")


def results(head=None, cases=(), last=None, path=None):
    return ProbeResults(head or header(), cases, last, path)


def write(path, head=None, cases=(), last=None):
    """A results file of these records, as the probe writes them (one JSON object per line)."""
    lines = results(head, cases, last).to_json_lines()
    with open(str(path), "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(line, sort_keys=True) + "\n" for line in lines)
    return str(path)
