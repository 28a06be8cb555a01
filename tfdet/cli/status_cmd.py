"""`tfdet status`: what tfdet.patch() would do on this machine, from a shell."""

import argparse
import json
import os

from .. import catalog
from .. import patching
from . import arguments
from .exitcodes import ENVIRONMENT, OK, CommandError

HELP = "what tfdet.patch() would switch on, replace and leave uncovered here"

EPILOG = """\
examples:
  tfdet status                       # this machine: TF, device, oneDNN, threads, the plan
  tfdet status --seed 0              # as tfdet.patch(seed=0) would do it
  tfdet status --device gpu --tf-version 2.6 --json

Detecting the device imports TensorFlow (a few seconds); --device skips that.
"""


def add_parser(commands):
    parser = commands.add_parser("status", help=HELP, description=HELP.capitalize() + ".", epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", choices=catalog.DEVICES, help="preview the plan for this device (default: detect)")
    parser.add_argument("--tf-version", type=arguments.tf_version,
                        help="preview the plan for this TF version (default: the installed TF)")
    parser.add_argument("--seed", type=arguments.seed, help="as patch(seed=SEED): seeding covers the unseeded-RNG sources")
    parser.add_argument("--on-unsupported", choices=("raise", "warn"), default="raise",
                        help="as patch(on_unsupported=...); 'warn' takes TF's error-silencing switches")
    parser.add_argument("--json", action="store_true", help="print JSON for machines instead of tables")
    parser.set_defaults(run=run)


def run(args, out):
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")  # TF's start-up chatter is not the answer
    try:
        found = patching.preview(device=args.device, tf_version=args.tf_version, seed=args.seed,
                                 on_unsupported=args.on_unsupported)
    except ImportError as exc:
        raise CommandError("cannot import TensorFlow to detect the device (%s); pass --device" % exc,
                           ENVIRONMENT) from None
    if args.json:
        json.dump(found.as_dict(), out, indent=2)
        out.write("\n")
    else:
        render(found, out)
    if found.plan is None:
        raise CommandError("no TensorFlow installed here: pass --tf-version to preview a plan", ENVIRONMENT)
    return OK


def render(found, out):
    """Tables sized to the terminal (or $COLUMNS); plain text when piped."""
    from rich.console import Console
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    console = Console(file=out, highlight=False, soft_wrap=False,
                      width=None if out.isatty() else int(os.environ.get("COLUMNS", "100")))
    data = found.as_dict()
    threads = found.threads
    machine = Table(box=None, show_header=False, title="this machine", title_justify="left", pad_edge=False)
    machine.add_column(style="bold", no_wrap=True)
    machine.add_column(overflow="fold")
    machine.add_row("TensorFlow", "%s (%s)" % (found.tf_version or "none", found.tf_version_source))
    machine.add_row("device", "%s (%s)" % (found.device, found.device_source))
    machine.add_row("Python", found.python)
    machine.add_row("oneDNN", "%s (%s)" % (found.onednn, found.onednn_why))
    machine.add_row("threads", _threads(threads))
    console.print(machine)
    if found.plan is None:
        return
    if not found.plan.supported:
        console.print("patch(): %s" % found.plan.note)
        return
    if found.plan.note:
        console.print("note: %s" % found.plan.note)
    plan = Table(box=None, show_header=False, title="\ntfdet.patch() would", title_justify="left", pad_edge=False)
    plan.add_column(style="bold", no_wrap=True)
    plan.add_column(overflow="fold")
    switches = ["%s=%s" % (s["name"], s["value"]) if s["kind"] == "env" else "%s()" % s["name"]
                for s in data["switches"]]
    plan.add_row("switch on", ", ".join(switches) or "nothing")
    if data["silenced"]:
        plan.add_row("silence", ", ".join(data["silenced"]) + " (on_unsupported='warn': those ops then vary, warned)")
    plan.add_row("replace", ", ".join("%s (for %s)" % (r["api"], ", ".join(r["entries"]))
                                      for r in data["replacements"]) or "nothing")
    plan.add_row("cover", "%d catalogued sources" % len(data["covered"]))
    plan.add_row("watch", "%d op types of the not-covered entries, warning on first use (%s)" % (
        len({op for r in data["not_covered"] if r["watched"] for op in r["raw_ops"]}), data["watching"]))
    bypass = sorted({op for r in data["bypass_watched"] for op in r["raw_ops"]})
    if bypass:
        plan.add_row("", "and raw %s created directly, not through the replaced API" % ", ".join(bypass))
    console.print(plan)
    if data["not_covered"]:
        # Grouped by fix: many entries share one, and the list must fit a screen.
        console.print("\n[bold]not covered (%d)[/bold], by fix: entry \\[ops tfdet watches for]" % len(data["not_covered"]))
        by_fix = {}
        for row in data["not_covered"]:
            by_fix.setdefault(row["fix"], []).append(row)
        for fix, rows in by_fix.items():
            console.print(Padding(Text("fix: " + fix, style="bold"), (0, 0, 0, 2)))
            names = ", ".join("%s [%s]" % (row["id"], _ops(row)) for row in rows)
            console.print(Padding(Text(names), (0, 0, 0, 4)))


def _ops(row):
    if not row["watched"] or not row["raw_ops"]:
        return "not an op" if not row["raw_ops"] else "not watched"
    ops = row["raw_ops"]
    return ops[0] + (" +%d" % (len(ops) - 1) if len(ops) > 1 else "")


def _threads(threads):
    parts = []
    for key in ("intra_op", "inter_op"):
        if key in threads:
            parts.append("%s %s" % (key, threads[key] or "default"))
    for key in ("TF_NUM_INTRAOP_THREADS", "TF_NUM_INTEROP_THREADS", "OMP_NUM_THREADS"):
        if threads.get(key) is not None:
            parts.append("%s=%s" % (key, threads[key]))
    parts.append("%s cores" % threads.get("cpu_count"))
    return ", ".join(parts)
