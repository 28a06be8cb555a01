#!/usr/bin/env python
"""Where a probe's wall time goes, and plain start-up against the fork server.

    python benchmarks/bench_probe.py [--pairs 3] [--ops bincount,...] [--startup both|auto|plain] [--keep DIR]
        [--cases N] [--json FILE]

Runs the probe in this process (`tfdet probe` with its defaults, every case
unless --ops), in pairs alternating the start-up (plain, fork; fork, plain;
...) so that a machine's drift falls on both. For each run: wall time, the
load average at its start and end, how the workers started (the header's
settings.startup), whether weighted bincount varied under baseline and env, and
where the time went, from timestamps taken inside the run: each phase's wall
time in the runner, and the workers' own TensorFlow import and case building
(summed over workers, so several overlap in one wall second). Then the median
wall time of each start-up, and the median of the per-pair ratios fork/plain.
No assertions: a measurement.
"""

import argparse
import json
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from tfdet import catalog  # noqa: E402
from tfdet.probe.runner import Probe, ProbeConfig  # noqa: E402
from tfdet.progress import SILENT  # noqa: E402
from tfdet.results import read_probe  # noqa: E402

MODES = ("baseline", "env", "api", "patched")
SHOW_CASES = 0  # --cases N: the N costliest (case, pass) pairs, by the workers' CPU seconds per phase


def run_once(startup, ops, directory, index):
    out = os.path.join(directory, "probe-%s-%d.jsonl" % (startup, index))
    config = ProbeConfig(catalog.default_catalogue(), out, modes=MODES, modes_requested=False, ops=ops,
                         startup=startup)
    probe = Probe(config, SILENT)
    load_before = os.getloadavg()[0]
    started = time.monotonic()
    try:
        probe.run()
    finally:
        probe.stop()
    wall = time.monotonic() - started
    results = read_probe(out)
    varied = {r.mode for r in results.measured if r.case == "bincount" and r.outcome == "varies"}
    return {"startup": startup, "used": (results.header.settings or {}).get("startup"), "wall": wall,
            "load": (load_before, os.getloadavg()[0]), "bincount": varied, "spent": dict(probe.spent),
            "by_case": {"%s %s" % key: dict(value) for key, value in probe.spent_by_case.items()},
            "runs": {(r.case, r.pass_name, r.mode): (r.runs, r.processes, r.outcome) for r in results.measured}}


def show(run):
    print("%-6s %7.1f s  load %.1f -> %.1f  startup %s  bincount varied under: %s" % (
        run["startup"], run["wall"], run["load"][0], run["load"][1], run["used"],
        ", ".join(sorted(run["bincount"])) or "-"), flush=True)
    for phase, seconds in sorted(run["spent"].items(), key=lambda kv: -kv[1]):
        print("         %-32s %8.1f" % (phase, seconds))
    if SHOW_CASES:
        phases = ("variance runs", "more runs", "timing rounds")
        print("         %-44s %s" % ("case pass: worker cpu s", "  ".join("%-13s" % p for p in phases + ("wall",))))
        rows = sorted(run["by_case"].items(), key=lambda kv: -sum(kv[1].get(p + " (worker cpu)", 0) for p in phases))
        for name, spent in rows[:SHOW_CASES]:
            wall = sum(spent.get(p + " (wall)", 0) for p in phases)
            print("         %-44s %s" % (name, "  ".join("%-13.1f" % spent.get(p + " (worker cpu)", 0)
                                                        for p in phases) + "  %.1f" % wall))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--ops", help="comma-separated catalogue ids (default: every case, as `tfdet probe`)")
    parser.add_argument("--startup", choices=("both", "auto", "plain"), default="both")
    parser.add_argument("--keep", metavar="DIR", help="keep the results files there (default: a temporary directory)")
    parser.add_argument("--cases", type=int, default=0, help="also show the N costliest cases, phase by phase")
    parser.add_argument("--json", metavar="FILE", help="also write every run's figures there (phases, per case)")
    args = parser.parse_args(argv)
    global SHOW_CASES
    SHOW_CASES = args.cases
    ops = args.ops.split(",") if args.ops else None
    kinds = ("plain", "auto") if args.startup == "both" else (args.startup,)
    runs = {kind: [] for kind in kinds}
    with tempfile.TemporaryDirectory(prefix="bench_probe_") as scratch:
        directory = args.keep or scratch
        os.makedirs(directory, exist_ok=True)
        for pair in range(args.pairs):
            for kind in (kinds if pair % 2 == 0 else kinds[::-1]):
                run = run_once(kind, ops, directory, pair)
                show(run)
                runs[kind].append(run)
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({kind: [dict(r, bincount=sorted(r["bincount"]), runs={" ".join(k): v for k, v in r["runs"].items()})
                              for r in kind_runs] for kind, kind_runs in runs.items()}, handle, indent=1)
    print("ops: %s; %d pair(s), %d cores" % (args.ops or "all (the README's command)", args.pairs, os.cpu_count()))
    for kind in kinds:
        walls = [r["wall"] for r in runs[kind]]
        caught = sum(1 for r in runs[kind] if {"baseline", "env"} <= r["bincount"])
        print("%-6s median %.1f s (%s); bincount varied under baseline and env in %d of %d" % (
            kind, statistics.median(walls), ", ".join("%.1f" % w for w in walls), caught, len(walls)))
    if len(kinds) == 2:
        ratios = [a["wall"] / b["wall"] for a, b in zip(runs["auto"], runs["plain"])]
        print("fork/plain per pair: %s; median %.2f" % (", ".join("%.2f" % r for r in ratios),
                                                        statistics.median(ratios)))


if __name__ == "__main__":
    main()
