"""`tfdet catalog update`: probe results in, proposed catalogue edits and a summary out.

The deciding is tfdet.catalog.update's and the writing into YAML
tfdet.catalog.yaml_edit's; this module reads the files, writes the outputs,
and turns what happened into text, JSON and an exit code.
"""

import argparse
import dataclasses
import difflib
import json
import os
import textwrap
from typing import Optional

from .. import catalog
from ..catalog import evidence as catalog_evidence
from . import arguments
from .exitcodes import FINDING, INVALID_INPUT, OK, USAGE, WRITE_FAILED, CommandError
from .tables import output_width

EPILOG = """\
examples:
  tfdet catalog update --from reports/measured/*.jsonl                 # what would change
  tfdet catalog update --from gpu-run.jsonl --patch catalog-gpu.diff   # a user's GPU run, as a diff
  tfdet catalog update --from run.jsonl --out proposed/ && tfdet catalog check proposed/

what each measurement comes to (per entry, device and TF minor version):
  agree           the claim gets a measured:FILE source and an evidence item (TF, device,
                  GPU, driver, CUDA, cuDNN, host, runs, processes, date)
  new             the catalogue says unknown (or nothing) here: a claim for this version
  supersede       it contradicts a claim that rests only on measurements: the range is split
  conflict        it contradicts a documented claim: listed, and a comment in the proposed
                  copy; applied only with --accept-conflicts
  not_reproduced  the claim says it varies and it did not vary here: no change
  weak            it rests on runs that did not vary, too few (or in one process) to rule
                  out a per-run rate of variance above %d%%: no change
  inconclusive    it does not say a status, or does not test the claim's switches: no change
Cite files by the path you give (run from the repository root, with the results
copied under reports/, so the measured: source names a committed file).

exit codes: 0 proposed (or nothing to change); 1 a conflict with a documented claim
needs a person's decision (not with --accept-conflicts; the rest is still written);
2 usage; 3 a results file or catalogue is missing or malformed (file:line);
5 --out or --patch could not be written.
"""  # formatted in add_parser (the threshold lives in tfdet.catalog.evidence)


DESCRIPTION = (
    "Compare probe results with the catalogue, entry by entry, TF version by version and device by device, "
    "and propose the changes they call for: a measured source where they agree, a claim where the catalogue "
    "has none, a split range where they contradict an earlier measurement, and a list of conflicts with "
    "documented claims for a person to decide. Nothing is written unless --out or --patch says where.")


def add_parser(sub):
    """Register `update` on the `tfdet catalog` subparsers."""
    update = sub.add_parser(
        "update", help="propose catalogue changes from probe results (yours, or a user's GPU run)",
        epilog=EPILOG % round(100 * catalog_evidence.MAX_RATE_LEFT_OPEN), formatter_class=argparse.RawDescriptionHelpFormatter,
        description=textwrap.fill(DESCRIPTION, 79))
    update.add_argument("--from", dest="results", nargs="+", required=True, metavar="RESULTS",
                        help="probe results files (tfdet probe --out), from any machine and TF version")
    update.add_argument("--catalog", metavar="PATH",
                        help="the catalogue to compare with and edit: a directory or file (default: the shipped one)")
    target = update.add_mutually_exclusive_group()
    arguments.add_output_file(target, "write an edited copy of every catalogue file into DIR (created if missing; "
                                      "DIR may be the catalogue's own directory, to edit it in place)", metavar="DIR")
    target.add_argument("--patch", metavar="FILE", help="write the proposed edits as a unified diff of the YAML")
    update.add_argument("--accept-conflicts", action="store_true",
                        help="write the measured claim over documented claims it contradicts too (each with a "
                             "note naming the claim it replaces); without it they are only listed, and exit 1")
    update.add_argument("--json", action="store_true", help="print JSON instead of the summary")
    update.set_defaults(run=run_update)


def _cite(path):
    """How a measured: source names a results file: relative to here when under it."""
    relative = os.path.relpath(path)
    return relative if not relative.startswith(os.pardir) else os.path.abspath(path)


def _load_results(paths, varied=None):
    """[(cited, ProbeResults)]; `tfdet probe --vary` files go to `varied` (a list) instead."""
    from ..results import ProbeResults, ResultsError, load

    loaded = []
    for path in paths:
        if os.path.isdir(path):
            raise CommandError("%s: a directory, not a results file" % path, INVALID_INPUT)
        try:
            results = load(path)
        except ResultsError as exc:
            raise CommandError(str(exc), INVALID_INPUT) from None
        if getattr(results, "kind", None) == "vary" and varied is not None:
            varied.append((_cite(path), results))
            continue
        if not isinstance(results, ProbeResults):
            raise CommandError("%s: a %s results file, not a probe results file" % (
                path, getattr(results, "kind", "different")), INVALID_INPUT)
        loaded.append((_cite(path), results))
    return loaded


def run_update(args, out):
    from ..catalog import update, yaml_edit
    from ..catalog.load import catalogue_from_texts, read_texts
    from ..results import describe_os_error

    varied = []
    loaded = _load_results(args.results, varied)
    source = args.catalog or catalog.shipped_catalogue_dir()
    if args.catalog and not os.path.exists(args.catalog):
        raise CommandError("no such file or directory: %s" % args.catalog, INVALID_INPUT)
    try:
        texts = read_texts(source)
        if not texts:
            raise CommandError("%s: no catalogue files (*.yaml)" % source, INVALID_INPUT)
        # the shipped catalogue is proven valid by the tests; a user's is validated in full
        cat = catalogue_from_texts(texts, catalog.default_catalogue().switches) if args.catalog else (
            catalog.default_catalogue())
    except catalog.CatalogError as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    plan = update.plan(cat, loaded, accept_conflicts=args.accept_conflicts)
    before = dict(texts)
    try:
        after = yaml_edit.apply(before, cat, plan)
        if varied:
            texts, before, after = _with_sensitivities(source, cat, varied, texts, before, after)
        changed = [path for path, _ in texts if after[path] != before[path]]
        # the edited files must be valid: schema, coverage of every version, switches that exist
        catalogue_from_texts([(path, after[path]) for path in changed], cat.switches)
    except yaml_edit.EditError as exc:
        raise CommandError("cannot edit the catalogue: %s" % exc, INVALID_INPUT) from None
    except catalog.CatalogError as exc:
        raise CommandError("the proposed catalogue would be invalid, so nothing was written "
                           "(please report this): %s" % exc, INVALID_INPUT) from None
    written = None
    try:
        if args.out:
            written = _write_copy(args.out, texts, after)
        elif args.patch:
            written = _write_patch(args.patch, texts, before, after)
    except OSError as exc:
        raise CommandError(describe_os_error(exc, args.out or args.patch), WRITE_FAILED) from None
    code = FINDING if plan.open_conflicts else OK
    if args.json:
        json.dump(_update_json(plan, loaded, source, changed, written, args, code), out, indent=2)
        out.write("\n")
    else:
        out.write(_hanging(render_update(plan, loaded, source, changed, written, args), output_width(out)) + "\n")
        if varied:
            out.write(_sensitivity_line(varied) + "\n")
    return code


def _sensitivity_line(varied):
    """What the --vary files add: facts per file, and the ops they find sensitive to each setting."""
    from ..catalog import sensitivity_update

    lines = []
    for cited, results in varied:
        facts = sensitivity_update.facts_of(results, cited)
        changed = {}
        for op, _, _, row in facts:
            if row.fact.changes:
                changed.setdefault(row.setting, []).append(op)
        lines.append("%s (probe --vary, TF %s, %s): %d setting facts for %d ops into %s%s" % (
            cited, results.header.tf_version, results.header.device, len(facts), len({f[0] for f in facts}),
            sensitivity_update.SENSITIVITY_FILE, "".join("\n  %s changes: %s" % (s, ", ".join(ops))
                                                          for s, ops in changed.items())))
    return "\n".join(lines)


def _with_sensitivities(source, cat, varied, texts, before, after):
    """The --vary files' setting facts written into the catalogue's sensitivity file (created if absent)."""
    from ..catalog import sensitivity_update

    if not os.path.isdir(source):
        raise CommandError("--from a probe --vary file needs a catalogue directory (--catalog DIR), not the file %s"
                           % source, USAGE)
    path = os.path.join(source, sensitivity_update.SENSITIVITY_FILE)
    facts = [fact for cited, results in varied for fact in sensitivity_update.facts_of(results, cited)]
    text = sensitivity_update.render(sensitivity_update.merge(cat.sensitivities, facts))
    if path not in before:
        texts = list(texts) + [(path, "")]
        before = dict(before, **{path: ""})
    return texts, before, dict(after, **{path: text})


def _written_json(args, written):
    if not written:
        return None
    if isinstance(written, PatchWritten):
        return {"out": None, "patch": written.path, "patch_paths_from": written.base, "checkout": written.root,
                "edited_copy": written.copy}
    return {"out": written, "patch": None}


def _hanging(text, width):
    """Each long line wrapped to width, its continuation indented under its text ('  - ' items). Pure."""
    if width is None:
        return text
    lines = []
    for line in text.splitlines():
        body = line.lstrip()
        indent = len(line) - len(body)
        hang = indent + (2 if body.startswith("- ") else 4 if indent else 2)
        lines.append(textwrap.fill(line, width, subsequent_indent=" " * hang, break_long_words=False,
                                   break_on_hyphens=False) if len(line) > width else line)
    return "\n".join(lines)


def _write_copy(directory, texts, after):
    os.makedirs(directory, exist_ok=True)
    for path, _ in texts:
        target = os.path.join(directory, os.path.basename(path))
        if os.path.abspath(target) == os.path.abspath(path) and after[path] == _read_text(path):
            continue  # in place and unchanged
        temporary = target + ".tmp-tfdet"
        with open(temporary, "w", encoding="utf-8") as handle:
            handle.write(after[path])
        os.replace(temporary, target)
    return directory


def _read_text(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def _checkout_root(path):
    """The git checkout (a directory holding .git) a file lies in, or None."""
    directory = os.path.dirname(os.path.abspath(path))
    while True:
        if os.path.exists(os.path.join(directory, ".git")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent


def _diff_base(path):
    """(directory a diff names the catalogue's files from, checkout root or None).

    In a git checkout: its root, so `git apply` works there. Otherwise (an
    installed package, a copy somewhere): the directory above tfdet/ for tfdet's
    own catalog_data, so the paths are those of tfdet's repository; else the
    catalogue's own directory."""
    root = _checkout_root(path)
    if root is not None:
        return root, root
    directory = os.path.dirname(os.path.abspath(path))
    package = os.path.dirname(directory)
    if os.path.basename(directory) == "catalog_data" and os.path.basename(package) == "tfdet":
        return os.path.dirname(package), None
    return directory, None


def _write_patch(target, texts, before, after):
    """Write the diff; where the catalogue is no checkout, also an edited copy beside it.
    Returns a PatchWritten saying where and how the diff applies."""
    changed = [path for path, _ in texts if after[path] != before[path]]
    base, root = _diff_base(texts[0][0])
    lines = []
    for path in changed:
        name = os.path.relpath(os.path.abspath(path), base).replace(os.sep, "/")
        lines.extend(difflib.unified_diff(before[path].splitlines(True), after[path].splitlines(True),
                                          "a/" + name, "b/" + name))
    with open(target, "w", encoding="utf-8") as handle:
        handle.writelines(lines)
    copy = None
    if root is None and changed:
        copy = _write_copy(os.path.splitext(target)[0] + "-catalog", texts, after)
    return PatchWritten(target, base, root, copy)


@dataclasses.dataclass(frozen=True)
class PatchWritten:
    """Where --patch wrote the diff, the directory its paths start from, the
    checkout that is (or None), and the edited copy written beside it (or None)."""

    path: str
    base: str
    root: Optional[str]
    copy: Optional[str]

    def describe(self):
        if self.root is not None:
            return "written as a diff to %s (paths from the checkout %s: `git apply %s` there)" % (
                self.path, self.root, os.path.abspath(self.path))
        text = ("written as a diff to %s; the catalogue at %s is not a git checkout (an installed package?), "
                "so the diff names its files from %s" % (self.path, self.base, self.base))
        if self.copy:
            text += ", and the edited catalogue files were written to %s" % self.copy
        return text


_HEADINGS = (
    ("agree", "agree: a measured source and its evidence for the claim"),
    ("new", "new: a claim where the catalogue has none"),
    ("supersede", "supersede: contradicts a claim resting only on measurements; the range is split"),
    ("conflict", "CONFLICT with a documented claim: a person decides"),
    ("not_reproduced", "not reproduced: the claim says it varies, it did not vary here (no change)"),
    ("inconclusive", "inconclusive (no change)"),
)


def _by_version(item):
    try:
        return (catalog.tf_minor(item[1].header.tf_version), item[0])
    except (TypeError, ValueError):
        return (catalog.COVERED_TF_VERSIONS[-1], item[0])


def _file_line(cited, results):
    header = results.header
    env = header.first_environment
    parts = ["TF %s" % header.tf_version, str(header.device)]
    gpus = [g.get("name") or g.get("device") for g in (env.gpus if env else []) if isinstance(g, dict)]
    if gpus:
        parts.append(", ".join(str(g) for g in gpus if g))
    parts.append("modes %s" % ",".join(header.modes))
    parts.append("%s repeats x %s processes" % (header.repeats, header.processes))
    return "  %s: %s" % (cited, "; ".join(parts))


def render_update(plan, loaded, source, changed, written, args):
    """The summary of `tfdet catalog update`. Pure."""
    from ..catalog import update

    lines = ["%d results file%s against the catalogue at %s:" % (
        len(loaded), "" if len(loaded) == 1 else "s", _cite(source))]
    lines.extend(_file_line(cited, results) for cited, results in sorted(loaded, key=_by_version))
    lines.extend("  note: " + note for note in plan.notes)
    for kind, heading in _HEADINGS:
        changes = plan.of_kind(kind)
        if not changes:
            continue
        if kind == "agree":
            cited = [c for c in changes if not c.applied]
            changes = [c for c in changes if c.applied]
            if cited:
                lines.extend(["", "agree, already cited (%d): %s" % (len(cited), _compact(cited))])
            if not changes:
                continue
        lines.append("")
        lines.append("%s (%d):" % (heading, len(changes)))
        for together in update.group(changes):
            text = update.describe(together)
            if kind == "conflict":
                text += " [%s]" % ("APPLIED: --accept-conflicts" if together[0].applied else "not applied")
            lines.append("  - " + text)
    weak = plan.of_kind("weak")
    if weak:
        lines.extend(["", "weak evidence, not written (%d): these rest on fewer than %d runs, or one process, "
                      "that did not vary: %s" % (len(weak), catalog_evidence.strong_runs(), _compact(weak))])
    lines.append("")
    applied = [c for c in plan.changes if c.applied]
    if not changed:
        lines.append("Nothing to change in the catalogue.")
    else:
        names = ", ".join(os.path.basename(p) for p in changed)
        where = ("written to %s" % written if args.out else written.describe()) if written else (
            "not written: use --out DIR or --patch FILE")
        lines.append("Proposed: %d change%s in %s; %s." % (len(applied), "" if len(applied) == 1 else "s", names, where))
    if plan.open_conflicts:
        count = len(plan.open_conflicts)
        lines.append("%d conflict%s with documented claims need%s a person's decision (exit 1)." % (
            count, "" if count == 1 else "s", "s" if count == 1 else ""))
    return "\n".join(lines)


def _compact(changes):
    grouped = {}
    for change in changes:
        grouped.setdefault((change.entry_id, change.device), []).append(change.version)
    from ..catalog.update import versions_text

    return "; ".join("%s %s TF %s" % (entry_id, device, versions_text(set(versions)))
                     for (entry_id, device), versions in grouped.items())


def _update_json(plan, loaded, source, changed, written, args, code):
    from ..catalog.model import range_to_dict

    def proposal(p):
        if p is None:
            return None
        data = {"status": p.status, "sources": list(p.sources), "note": p.note,
                "evidence": [e.to_dict() for e in p.evidence]}
        if p.switches:
            data["switches"] = list(p.switches)
        if p.error is not None:
            data["error"] = {"type": p.error.type, "message": p.error.message}
        return data

    return {
        "catalogue": _cite(source),
        "results": [{"path": cited, "tf_version": r.header.tf_version, "device": r.header.device,
                     "modes": list(r.header.modes), "repeats": r.header.repeats, "processes": r.header.processes}
                    for cited, r in loaded],
        "notes": list(plan.notes),
        "changes": [{
            "kind": c.kind, "id": c.entry_id, "device": c.device, "tf_version": str(c.version),
            "applied": c.applied, "reason": c.reason,
            "claim": range_to_dict(c.claim) if c.claim is not None else None,
            "measured_status": c.measured_status, "proposal": proposal(c.proposal),
            "add_sources": list(c.add_sources), "add_evidence": [e.to_dict() for e in c.add_evidence],
            "measurements": [{"results": m.results, "pass": m.pass_name, "tf_version": m.tf_version,
                              "status": m.inference.status, "weak": m.inference.weak, "outcomes": m.summary}
                             for m in c.measurements],
        } for c in plan.changes],
        "counts": {kind: len(plan.of_kind(kind)) for kind in ("agree", "new", "supersede", "conflict",
                                                               "not_reproduced", "weak", "inconclusive")},
        "open_conflicts": len(plan.open_conflicts),
        "files_changed": [_cite(p) for p in changed],
        "written": _written_json(args, written),
        "exit_code": code,
    }
