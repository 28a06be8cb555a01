"""The catalogue as documentation pages: one page per entry, an index, a page per TF version.

`pages(catalogue)` is pure: it returns {relative path: MyST markdown text}. The Sphinx
extension below writes them under docs/catalogue/ when a build starts, so the pages are
always the YAML of the checkout being built (nothing generated is committed).
"""

import os

from page_files import write_if_changed

from tfdet.catalog import COVERED_TF_VERSIONS, DEVICES, describe_source

STATUS_WORDS = {
    "deterministic": "deterministic",
    "nondeterministic": "varies",
    "deterministic_with_switch": "deterministic with a switch",
    "raises_under_determinism": "raises under determinism",
    "unknown": "unknown",
    "not_applicable": "not applicable",
}
# One character per status for the version strip (a legend is printed beside it).
STATUS_MARKS = {
    "deterministic": "D",
    "nondeterministic": "V",
    "deterministic_with_switch": "S",
    "raises_under_determinism": "R",
    "unknown": "?",
    "not_applicable": "-",
}
VERSIONS = [str(v) for v in COVERED_TF_VERSIONS]


def _cell(text):
    """Text safe inside a markdown table cell."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _source(citation):
    label, url = describe_source(citation)
    return "[%s](%s)" % (_cell(label), url) if url else _cell(label)


def _status_at(entry, version, device):
    version_range = entry.range_for(version, device)
    return version_range.status if version_range else None


def _strip(entry):
    """The version strip: one row per device, one column per covered TF version."""
    lines = ["| device | " + " | ".join(VERSIONS) + " |", "|---|" + "---|" * len(VERSIONS)]
    for device in DEVICES:
        if device not in entry.devices:
            continue
        marks = [STATUS_MARKS.get(_status_at(entry, v, device), " ") for v in VERSIONS]
        lines.append("| %s | %s |" % (device, " | ".join(marks)))
    lines.append("")
    lines.append("Legend: " + ", ".join("**%s** %s" % (mark, STATUS_WORDS[status])
                                        for status, mark in STATUS_MARKS.items()) + ".")
    return lines


def _fix(version_range):
    parts = []
    if version_range.switches:
        parts.append("switch: " + ", ".join("`%s`" % s for s in version_range.switches))
    if version_range.patch:
        parts.append("`tfdet.patch()` (%s)" % version_range.patch)
    if version_range.workaround:
        parts.append("workaround: " + _cell(version_range.workaround))
    return "; ".join(parts) or "none"


def _ranges(entry, device):
    lines = ["| TF versions | status | fix | sources |", "|---|---|---|---|"]
    for version_range in entry.devices[device]:
        lines.append("| `%s` | %s | %s | %s |" % (
            version_range.versions, STATUS_WORDS.get(version_range.status, version_range.status),
            _fix(version_range), "; ".join(_source(s) for s in version_range.sources)))
    details = []
    for version_range in entry.devices[device]:
        said = []
        if version_range.error:
            said.append("raises `%s`: %s" % (version_range.error.type, _cell(version_range.error.message)))
        if version_range.note:
            said.append(_cell(version_range.note))
        said.extend("measured: %s" % _cell(evidence) for evidence in version_range.evidence)
        if said:
            details.append("- `%s`: %s" % (version_range.versions, " ".join(
                s if s.endswith(".") else s + "." for s in said)))
    return lines + ([""] + details if details else [])


def entry_page(entry):
    lines = ["(entry-%s)=" % entry.id, "# %s" % entry.title, "", "`%s`" % entry.id, "",
             " ".join(entry.description.split()), ""]
    facts = [("Public APIs", ", ".join("`%s`" % a for a in entry.apis)),
             ("Raw ops", ", ".join("`%s`" % o for o in entry.raw_ops)),
             ("Pass", entry.direction),
             ("Root cause", entry.root_cause)]
    if entry.gradient_wrt:
        facts.append(("Gradient with respect to", ", ".join(entry.gradient_wrt)))
    if entry.condition:
        facts.append(("Only when", _cell(entry.condition)))
    if entry.requires:
        facts.append(("Requires", ", ".join(entry.requires)))
    if entry.fixed_by_seeding:
        facts.append(("Fixed by seeding", "yes"))
    lines += ["- **%s**: %s" % (name, value) for name, value in facts if value] + [""]
    lines += ["## Timeline", ""] + _strip(entry) + [""]
    for device in DEVICES:
        if device in entry.devices:
            lines += ["## %s" % device.upper(), ""] + _ranges(entry, device) + [""]
    if entry.sources:
        lines += ["## Sources", ""] + ["- %s" % _source(s) for s in entry.sources] + [""]
    if entry.origin:
        lines += ["Defined in `%s`." % os.path.join("tfdet/catalog_data", os.path.basename(entry.origin.path)), ""]
    return "\n".join(lines)


def _latest(entry, device):
    status = _status_at(entry, VERSIONS[-1], device)
    return STATUS_WORDS.get(status, "no row") if status else "no row"


def index_page(catalogue):
    entries = sorted(catalogue, key=lambda e: e.id)
    lines = ["# The catalogue", "",
             "Every entry of tfdet's catalogue (`tfdet/catalog_data/*.yaml`), %d in all, with what it does on "
             "each device in TF %s. Each page shows the whole timeline from TF %s, the fix, and the sources and "
             "measurements behind every claim. Use the search box to find an op by its API or raw-op name."
             % (len(entries), VERSIONS[-1], VERSIONS[0]), "",
             "| entry | what | GPU, TF %s | CPU, TF %s | names |" % (VERSIONS[-1], VERSIONS[-1]),
             "|---|---|---|---|---|"]
    for entry in entries:
        names = ", ".join("`%s`" % n for n in entry.raw_ops[:4])
        lines.append("| {doc}`%s <entries/%s>` | %s | %s | %s | %s |" % (
            entry.id, entry.id, _cell(entry.title), _latest(entry, "gpu"), _latest(entry, "cpu"), names))
    lines += ["", "By TF version: what changed in each release.", "",
              "```{toctree}", ":maxdepth: 1", ":hidden:", ""]
    lines += ["entries/%s" % e.id for e in entries]
    lines += ["```", "", "```{toctree}", ":maxdepth: 1", ""]
    lines += ["versions/%s" % v for v in VERSIONS]
    lines += ["```", ""]
    return "\n".join(lines)


def version_page(catalogue, version):
    """What changed in `version` against the release before it, per entry and device."""
    position = VERSIONS.index(version)
    lines = ["# TF %s" % version, ""]
    if position == 0:
        lines += ["The oldest release the catalogue covers: every entry's status here.", "",
                  "| entry | device | status |", "|---|---|---|"]
        for entry in sorted(catalogue, key=lambda e: e.id):
            for device in DEVICES:
                status = _status_at(entry, version, device)
                if status:
                    lines.append("| {doc}`%s <../entries/%s>` | %s | %s |" % (
                        entry.id, entry.id, device, STATUS_WORDS.get(status, status)))
        return "\n".join(lines) + "\n"
    before = VERSIONS[position - 1]
    changes = []
    for entry in sorted(catalogue, key=lambda e: e.id):
        for device in DEVICES:
            old, new = _status_at(entry, before, device), _status_at(entry, version, device)
            old_range, new_range = entry.range_for(before, device), entry.range_for(version, device)
            if old != new or (new_range is not None and old_range is not None
                              and old_range.switches != new_range.switches):
                changes.append("| {doc}`%s <../entries/%s>` | %s | %s | %s | %s |" % (
                    entry.id, entry.id, device, STATUS_WORDS.get(old, "no row"), STATUS_WORDS.get(new, "no row"),
                    _fix(new_range) if new_range else ""))
    if not changes:
        lines.append("Nothing in the catalogue changed from TF %s to TF %s." % (before, version))
    else:
        lines += ["%d changes from TF %s:" % (len(changes), before), "",
                  "| entry | device | TF %s | TF %s | fix in %s |" % (before, version, version),
                  "|---|---|---|---|---|"] + changes
    return "\n".join(lines) + "\n"


def pages(catalogue):
    """{path relative to docs/catalogue/: markdown} for the whole catalogue."""
    out = {"index.md": index_page(catalogue)}
    for entry in catalogue:
        out["entries/%s.md" % entry.id] = entry_page(entry)
    for version in VERSIONS:
        out["versions/%s.md" % version] = version_page(catalogue, version)
    return out


def write_pages(catalogue, directory):
    """Write the pages, leaving a file untouched when its text is unchanged (Sphinx then
    skips rereading it) and removing pages of entries that no longer exist."""
    wanted = pages(catalogue)
    for sub in ("entries", "versions"):
        folder = os.path.join(directory, sub)
        os.makedirs(folder, exist_ok=True)
        for name in os.listdir(folder):
            if "%s/%s" % (sub, name) not in wanted:
                os.remove(os.path.join(folder, name))
    for relative, text in wanted.items():
        write_if_changed(os.path.join(directory, relative), text)
    return sorted(wanted)


def _on_builder_inited(app):
    from tfdet.catalog import default_catalogue

    write_pages(default_catalogue(), os.path.join(app.srcdir, "catalogue"))


def setup(app):
    app.connect("builder-inited", _on_builder_inited)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
