"""`tfdet catalog`: list, show, diff and check the catalogue of nondeterministic ops."""

import argparse
import difflib
import json
import os
import textwrap

from .. import catalog
from ..tfinfo import installed_tf_version
from . import arguments, catalog_update_cmd
from .exitcodes import ENVIRONMENT, INVALID_INPUT, OK, USAGE, CommandError
from .tables import EXTRA, FIX, FIXED, KEY, Column, fit_lines, output_width, print_table

HELP = "query the catalogue of known-nondeterministic TensorFlow ops"

LIST_EPILOG = """\
examples:
  tfdet catalog list                          # your installed TF, both devices
  tfdet catalog list --tf-version 2.6 --device gpu
  tfdet catalog list --status raises_under_determinism --json

statuses: %s
By default only statuses under which an op can vary as TF ships are listed
(%s); --status all lists every entry.

The catalogue covers TF %s to %s. A newer version is answered with what it
says for %s, with a warning; an older one is an error (exit 3).
The table fits the terminal (or $COLUMNS); piped, each row is one line.
""" % (", ".join(catalog.STATUSES), ", ".join(catalog.VARYING_STATUSES),
       catalog.COVERED_TF_VERSIONS[0], catalog.COVERED_TF_VERSIONS[-1], catalog.COVERED_TF_VERSIONS[-1])


def add_parser(commands):
    parser = commands.add_parser("catalog", help=HELP, description=HELP.capitalize() + ".")
    parser.set_defaults(run=lambda args, out: _help(parser, out))
    sub = parser.add_subparsers(dest="catalog_command", metavar="SUBCOMMAND", parser_class=type(parser))

    listing = sub.add_parser(
        "list", help="entries that affect a TF version and device", epilog=LIST_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="List catalogue entries with their status and fix for one TF version.")
    listing.add_argument("--tf-version", type=arguments.tf_version,
                         help="TF version to ask about (default: the installed TF)")
    listing.add_argument("--device", choices=catalog.DEVICES, action="append",
                         help="cpu or gpu; repeat for both (default: both)")
    listing.add_argument("--status", action="append", metavar="STATUS",
                         help="only entries with this status (repeatable, or comma-separated; 'all' for every status)")
    _add_source_and_format(listing, 'a table')
    listing.set_defaults(run=run_list)

    show = sub.add_parser(
        "show", help="everything known about one entry, op or API",
        description="Show every catalogue entry matching an entry id, a public API name "
                    "(tf.math.segment_sum, any alias) or a raw op name (UnsortedSegmentSum).")
    show.add_argument("name", metavar="ID_OR_API")
    _add_source_and_format(show, 'text')
    show.set_defaults(run=run_show)

    diff = sub.add_parser(
        "diff", help="what changed between two TF versions",
        description="Entries whose status or fix differs between two TF versions on a device.")
    diff.add_argument("old", metavar="OLD_VERSION", type=arguments.tf_version)
    diff.add_argument("new", metavar="NEW_VERSION", type=arguments.tf_version)
    diff.add_argument("--device", choices=catalog.DEVICES, action="append", help="cpu or gpu (default: both)")
    _add_source_and_format(diff, 'a table')
    diff.set_defaults(run=run_diff)

    check = sub.add_parser(
        "check", help="validate the shipped catalogue or your own file",
        description="Validate catalogue YAML against the schema and the rules (no unknown keys, "
                    "no overlapping or gapped version ranges, a source for every claim). "
                    "Exit 0 if valid, 3 with every problem listed by file and line if not.")
    check.add_argument("path", nargs="?", metavar="PATH", help="a YAML file or a directory of them (default: the shipped catalogue)")
    check.add_argument("--json", action="store_true", help="print JSON instead of text")
    check.set_defaults(run=run_check)

    catalog_update_cmd.add_parser(sub)


def _add_source_and_format(parser, plain):
    parser.add_argument("--catalog", metavar="PATH", help="a catalogue file or directory to use instead of the shipped one")
    parser.add_argument("--json", action="store_true", help="print JSON instead of %s" % plain)


def _help(parser, out):
    parser.print_help(out)
    return USAGE


def _version(args, text):
    """(what the user asked about, the covered version that answers for it)."""
    code = INVALID_INPUT
    if text is None:
        text, code = installed_tf_version(), ENVIRONMENT
        if text is None:
            raise CommandError("no TensorFlow is installed here; say which version with --tf-version", ENVIRONMENT)
    try:
        answering, stale = catalog.answering_version(text)
    except ValueError as exc:  # UncoveredVersionError, or an installed TF with an odd version string
        raise CommandError(str(exc), code) from None
    if stale:
        args.err.write("tfdet: warning: %s\n" % stale)
    return text, str(answering)


def _heading(out, text):
    width = output_width(out)
    out.write((textwrap.fill(text, width, subsequent_indent="  ") if width else text) + "\n\n")


def _asked(asked, answering):
    return "TF %s" % asked if catalog.tf_minor(asked) == catalog.tf_minor(answering) else (
        "TF %s (answered for %s)" % (asked, answering))


def _statuses(values):
    if not values:
        return catalog.VARYING_STATUSES
    wanted = [s.strip() for value in values for s in value.split(",") if s.strip()]
    if "all" in wanted:
        return catalog.STATUSES
    resolved = []
    for status in wanted:
        prefixed = [s for s in catalog.STATUSES if s.startswith(status)]
        if len(prefixed) == 1:  # unique abbreviations are fine: --status raises
            resolved.append(prefixed[0])
            continue
        if status not in catalog.STATUSES:
            hint = difflib.get_close_matches(status, catalog.STATUSES, n=1)
            raise CommandError("unknown status %r%s; choose from: %s" % (
                status, " (did you mean %r?)" % hint[0] if hint else "", ", ".join(catalog.STATUSES)), INVALID_INPUT)
        resolved.append(status)
    return tuple(resolved)


def run_list(args, out):
    cat = arguments.load_catalogue_or_exit(args.catalog)
    asked, version = _version(args, args.tf_version)
    statuses = _statuses(args.status)
    verdicts = [v for device in (args.device or catalog.DEVICES) for v in cat.affecting(version, device, statuses)]
    if args.json:
        json.dump([catalog.verdict_to_dict(v) for v in verdicts], out, indent=2)
        out.write("\n")
        return OK
    _heading(out, "%s: %d entr%s with status %s" % (
        _asked(asked, version), len(verdicts), "y" if len(verdicts) == 1 else "ies", " or ".join(statuses)))
    rows = [(v.entry.id, v.device, v.status, v.fix or "-", v.entry.title) for v in verdicts]
    columns = [Column("ID", KEY), Column("DEVICE", FIXED), Column("STATUS", KEY), Column("FIX", FIX),
               Column("TITLE", EXTRA)]
    print_table(out, columns, rows)
    return OK


def run_show(args, out):
    cat = arguments.load_catalogue_or_exit(args.catalog)
    try:
        entries = cat.resolve(args.name)
    except catalog.UnknownName as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    if args.json:
        json.dump([catalog.entry_to_dict(e) for e in entries], out, indent=2)
        out.write("\n")
        return OK
    out.write(fit_lines("\n\n".join(render_entry(e) for e in entries), output_width(out)) + "\n")
    return OK


def render_entry(entry):
    """A readable, multi-line description of one entry. Pure."""
    lines = ["%s  (%s)" % (entry.title, entry.id), "", "  " + entry.description, ""]
    fields = [
        ("apis", ", ".join(entry.apis) or "-"),
        ("raw ops", ", ".join(entry.raw_ops) or "-"),
        ("direction", entry.direction + (" w.r.t. " + ", ".join(entry.gradient_wrt) if entry.gradient_wrt else "")),
        ("root cause", entry.root_cause),
    ]
    if entry.condition:
        fields.append(("condition", entry.condition))
    if entry.requires:
        fields.append(("requires", ", ".join(entry.requires)))
    lines.extend("  %-11s %s" % (name + ":", value) for name, value in fields)
    for device, ranges in entry.devices.items():
        lines.append("")
        lines.append("  %s:" % device.upper())
        for r in ranges:
            lines.append("    TF %-12s %s" % (r.versions, r.status))
            details = []
            if r.switches:
                details.append("switches: " + ", ".join(r.switches))
            if r.patch:
                details.append("tfdet patch: " + r.patch)
            if r.error:
                details.append("raises %s: %s" % (r.error.type, r.error.message))
            if r.workaround:
                details.append("workaround: " + r.workaround)
            if r.note:
                details.append("note: " + r.note)
            details.append("sources: " + "; ".join(r.sources))
            details.extend("measured: %s" % item for item in r.evidence)
            lines.extend("      " + d for d in details)
    lines.append("")
    lines.append("  sources:")
    for citation in entry.sources:
        label, link = catalog.describe_source(citation)
        lines.append("    - %s%s" % (label, "  <%s>" % link if link else ""))
    if entry.origin:
        lines.append("  defined at %s" % entry.origin)
    return "\n".join(lines)


def run_diff(args, out):
    cat = arguments.load_catalogue_or_exit(args.catalog)
    (asked_old, old), (asked_new, new) = _version(args, args.old), _version(args, args.new)
    changes = []
    for device in args.device or catalog.DEVICES:
        for entry in cat:
            before, after = entry.range_for(old, device), entry.range_for(new, device)
            if before is after:
                continue
            verdicts = [catalog.Verdict(entry, v, device, r) for v, r in ((old, before), (new, after))]
            if (verdicts[0].status, verdicts[0].fix) != (verdicts[1].status, verdicts[1].fix):
                changes.append(verdicts)
    if args.json:
        json.dump([{"id": a.entry.id, "device": a.device, "old": catalog.verdict_to_dict(a),
                    "new": catalog.verdict_to_dict(b)} for a, b in changes], out, indent=2)
        out.write("\n")
        return OK
    _heading(out, "%s -> %s: %d change%s" % (
        _asked(asked_old, old), _asked(asked_new, new), len(changes), "" if len(changes) == 1 else "s"))
    rows = [(a.entry.id, a.device, a.status, b.status, b.fix or "-") for a, b in changes]
    columns = [Column("ID", KEY), Column("DEVICE", FIXED), Column("IN " + old, KEY), Column("IN " + new, KEY),
               Column("FIX IN " + new, FIX)]
    print_table(out, columns, rows)
    return OK


def run_check(args, out):
    path = args.path or catalog.shipped_catalogue_dir()
    if args.path and not os.path.exists(args.path):
        raise CommandError("no such file or directory: %s" % args.path, INVALID_INPUT)
    try:
        cat = catalog.load_user_catalogue(path) if args.path else catalog.load_catalogue()
    except catalog.CatalogError as exc:
        if args.json:
            json.dump({"valid": False, "problems": [p.__dict__ for p in exc.problems]}, out, indent=2)
            out.write("\n")
            return INVALID_INPUT
        raise CommandError(str(exc), INVALID_INPUT) from None
    ranges = sum(len(rs) for e in cat for rs in e.devices.values())
    # Count what the checked files define: a user's file is checked against the
    # shipped switches, which are not its own.
    files = {os.path.abspath(f) for f in catalog.catalogue_files(path)}
    switches = sum(1 for s in cat.switches if s.origin is not None and os.path.abspath(s.origin.path) in files)
    if args.json:
        json.dump({"valid": True, "path": path, "entries": len(cat), "ranges": ranges,
                   "switches": switches}, out, indent=2)
        out.write("\n")
    else:
        out.write("ok: %s is a valid catalogue (%d entries, %d version ranges, %d switches)\n" % (
            path, len(cat), ranges, switches))
    return OK
