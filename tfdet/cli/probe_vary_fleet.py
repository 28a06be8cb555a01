"""`tfdet probe --vary SETTINGS --executor dask`: the same --vary run on every
machine of a Dask cluster (probe/fleet.py places one job per worker), one
results file per machine, and a row per machine of which settings changed
which ops' bits there."""

import datetime
import json
import os

from . import arguments
from .exitcodes import ENVIRONMENT, INTERRUPTED, OK, USAGE, CommandError
from .tables import FIXED, KEY, Column, print_table

DEFAULT_DIR = "tfdet-vary-fleet-%Y%m%d-%H%M%S"
COLUMNS = (Column("machine"), Column("host"), Column("TF", FIXED), Column("cells", FIXED),
           Column("differ", FIXED), Column("failed", FIXED), Column("sensitive", FIXED), Column("state", KEY))


def machine_flags(args, settings, cases):
    """The `tfdet probe` flags of each machine's run: the same settings, cases, repeats and seed. Pure."""
    flags = ["--vary", ",".join(settings)]
    if args.ops:
        flags += ["--ops", ",".join(cases)]
    for flag, value in (("--repeats", args.repeats), ("--seed", args.seed), ("--timeout", args.timeout)):
        if value:
            flags += [flag, str(value)]
    return flags


def page_for(report, machine):
    """The report page of one machine: PAGE.html -> PAGE-<machine>.html. Pure."""
    from ..probe.fleet import machine_slug

    stem, extension = os.path.splitext(report)
    return "%s-%s%s" % (stem, machine_slug(machine), extension or ".html")


def _directory(args):
    if args.out and os.path.isfile(args.out):
        raise CommandError("--out %s: a fleet writes one file per machine; give a directory" % args.out, USAGE)
    return arguments.newest_or_new(args, ("tfdet-vary-fleet-*",), datetime.datetime.now().strftime(DEFAULT_DIR),
                                   "--resume: no tfdet-vary-fleet-* directory here; name it with --out DIR")


def run(args, out, settings, cases):
    from .probe_fleet_cmd import run_on_fleet
    from .progress import Display

    directory = _directory(args)
    message = Display(args.err, "probe --vary", quiet=args.quiet or args.json).message
    outcomes = run_on_fleet(args, machine_flags(args, settings, cases), directory, message, "cells", "vary")
    if outcomes is None:
        return INTERRUPTED
    machines = [_summary(outcome) for outcome in outcomes]
    if args.json:
        out.write(json.dumps({"directory": directory, "machines": machines}, indent=1) + "\n")
    elif not args.quiet:
        print_table(out, COLUMNS, [_row(m) for m in machines])
    if args.report:
        from . import report_cmd

        for summary in machines:
            if summary["state"] != "failed":
                page = page_for(args.report, summary["machine"])
                grid = report_cmd.render([summary["path"]], page, None, out)
                if not args.quiet and not args.json:
                    out.write(report_cmd.describe(grid, page) + "\n")
    failed = [m["machine"] for m in machines if m["state"] == "failed" or m.get("failed_cells")]
    if failed:
        args.err.write("tfdet probe: error: %s did not finish every cell (exit %d)\n" % (", ".join(failed),
                                                                                        ENVIRONMENT))
        return ENVIRONMENT
    return OK


def _summary(outcome):
    """What one machine's file says: its TF, cell counts and the ops sensitive per setting."""
    from ..report.vary_grid import build_grid, sensitive_by_setting
    from ..results import ResultsError
    from ..results.vary_file import read_vary

    summary = {"machine": outcome.machine, "host": outcome.host, "path": outcome.path, "state": outcome.state,
               "error": outcome.error}
    if outcome.state == "failed" and not os.path.exists(outcome.path):
        return summary
    try:
        results = read_vary(outcome.path)
    except ResultsError as exc:
        return dict(summary, state="failed", error=str(exc))
    grid = build_grid(results)
    summary.update(tf_version=results.header.tf_version, cells=sum(grid.counts.values()),
                   differ=grid.counts.get("differs", 0), failed_cells=grid.counts.get("failed", 0),
                   sensitive={setting: len(ops) for setting, ops in sensitive_by_setting(grid).items()})
    return summary


def _row(summary):
    state = summary["state"] if not summary.get("error") else "%s: %s" % (summary["state"], summary["error"])
    sensitive = ", ".join("%s %d" % item for item in sorted(summary.get("sensitive", {}).items()))
    return [summary["machine"], summary.get("host") or "", summary.get("tf_version", ""),
            str(summary.get("cells", "")), str(summary.get("differ", "")), str(summary.get("failed_cells", "")),
            sensitive, state]
