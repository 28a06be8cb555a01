"""The proposed catalogue: an update Plan written into the YAML text. Pure: text in, text out.

Edits are made in the text itself, at the positions PyYAML reports for each
node, so everything not changed stays byte for byte as it was: comments,
order, quoting, line breaks (no round-trip YAML library is a dependency, and
re-dumping the files would rewrite every line of them). Only the version
ranges a change touches are rewritten:

- agree: the range keeps its text; its sources list gets the new measured:
  sources and the range an `evidence` list (or more items in it);
- new, supersede, an accepted conflict: the range is split; each part that
  keeps the old claim is a copy of the old text with its `versions` narrowed,
  and each measured version gets a range of its own (neighbouring versions
  with the same claim share one);
- a conflict not accepted: a comment above the range says what was measured
  and why it was not applied.

The caller checks the result with the catalogue's own validation.
"""

import json
import textwrap

import yaml

from .model import VARYING_STATUSES
from .update import APPLIED, CONFLICT, unique, unique_evidence
from .validate import POSITIONS_LOADER
from .versions import COVERED_TF_VERSIONS

WIDTH = 110  # the catalogue's widest lines


class EditError(ValueError):
    """The text does not have the shape the catalogue's schema promises."""


def scalar(text):
    """A YAML scalar for text: plain where that reads back unchanged in and out of [flow], else quoted."""
    text = str(text)
    try:
        if yaml.safe_load(text) == text and yaml.safe_load("[%s]" % text) == [text] and "#" not in text:
            return text
    except yaml.YAMLError:
        pass
    return json.dumps(text)


def _value(node, key):
    for key_node, value_node in node.value:
        if key_node.value == key:
            return value_node
    return None


def _last_index(node):
    """The index just past the last character of a node's content (trailing blank lines left out)."""
    end = node.end_mark.index
    if isinstance(node, yaml.MappingNode):
        end = max(_last_index(v) for _, v in node.value) if node.value else end
    elif isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        end = max(_last_index(v) for v in node.value)
    return end


def _line_start(text, index):
    return text.rfind("\n", 0, index) + 1


def _line_end(text, index):
    """The end of the line holding the last non-space character before index."""
    while index > 0 and text[index - 1] in " \t\r\n":
        index -= 1
    end = text.find("\n", index)
    return len(text) if end < 0 else end


class _Located(object):
    """The nodes of one catalogue file: entry id -> device -> (sequence node, [range nodes])."""

    def __init__(self, text, path):
        try:
            root = yaml.compose(text, Loader=POSITIONS_LOADER)
        except yaml.YAMLError as exc:
            raise EditError("%s: not valid YAML: %s" % (path, exc)) from None
        self.entries = {}
        entries = _value(root, "entries") if isinstance(root, yaml.MappingNode) else None
        for item in entries.value if entries is not None else ():
            id_node = _value(item, "id")
            if id_node is not None:
                self.entries[id_node.value] = item


def _specifier(first, last):
    """A specifier for the covered versions first..last, in the catalogue's style."""
    index = COVERED_TF_VERSIONS.index(last)
    parts = []
    if first != COVERED_TF_VERSIONS[0]:
        parts.append(">=%s" % first)
    if index + 1 < len(COVERED_TF_VERSIONS):
        parts.append("<%s" % COVERED_TF_VERSIONS[index + 1])
    return ",".join(parts) or ">=%s" % COVERED_TF_VERSIONS[0]


def _render_evidence(items, indent):
    lines = []
    for item in items:
        data = item.to_dict()
        keys = list(data)
        lines.append("%s- %s: %s" % (indent, keys[0], scalar(data[keys[0]])))
        for key in keys[1:]:
            value = data[key]
            lines.append("%s  %s: %s" % (indent, key, value if isinstance(value, int) else scalar(value)))
    return lines


def _render_text(key, text, indent):
    body = textwrap.wrap(text, max(40, WIDTH - len(indent) - 2), break_long_words=False, break_on_hyphens=False)
    if len(body) == 1 and len(indent) + len(key) + len(body[0]) + 2 <= WIDTH and scalar(body[0]) == body[0]:
        return ["%s%s: %s" % (indent, key, body[0])]
    return ["%s%s: >-" % (indent, key)] + ["%s  %s" % (indent, line) for line in body]


def render_range(versions, proposal, indent, patch=None, workaround=None):
    """A new range item (lines), its '- ' at column len(indent) - 2."""
    dash = indent[:-2] + "- "
    lines = ["%sversions: %s" % (dash, json.dumps(versions)), "%sstatus: %s" % (indent, proposal.status)]
    if proposal.switches:
        lines.append("%sswitches: [%s]" % (indent, ", ".join(proposal.switches)))
    if patch:
        lines.append("%spatch: %s" % (indent, patch))
    if workaround:
        lines.extend(_render_text("workaround", workaround, indent))
    if proposal.error is not None:
        lines.append("%serror:" % indent)
        lines.append("%s  type: %s" % (indent, proposal.error.type))
        lines.append("%s  message: %s" % (indent, json.dumps(proposal.error.message)))
    lines.extend(_render_text("note", proposal.note, indent))
    lines.append("%ssources: [%s]" % (indent, ", ".join(scalar(s) for s in proposal.sources)))
    lines.append("%sevidence:" % indent)
    lines.extend(_render_evidence(proposal.evidence, indent + "  "))
    return lines


def _edit_old(text, start, node, versions=None, sources=(), evidence=()):
    """The text of a range item [start, end) with its versions replaced and sources and evidence added."""
    end = _line_end(text, _last_index(node))
    edits = []  # (index in text, index in text, replacement)
    if versions is not None:
        value = _value(node, "versions")
        edits.append((value.start_mark.index, value.end_mark.index, json.dumps(versions)))
    source_node = _value(node, "sources")
    if sources:
        if source_node.flow_style:
            close = source_node.end_mark.index - 1  # the ']'
            column = source_node.value[0].start_mark.column if source_node.value else source_node.start_mark.column + 1
            line = text[_line_start(text, close):close]
            added = "".join(", " + scalar(s) for s in sources)
            if len(line) + len(added) + 1 > WIDTH:
                added = "".join(",\n" + " " * column + scalar(s) for s in sources)
            edits.append((close, close, added))
        else:
            after = _line_end(text, _last_index(source_node))
            column = source_node.value[-1].start_mark.column - 2
            edits.append((after, after, "".join("\n%s- %s" % (" " * column, scalar(s)) for s in sources)))
    if evidence:
        existing = _value(node, "evidence")
        if existing is not None and not existing.flow_style:
            after = _line_end(text, _last_index(existing))
            indent = " " * (existing.value[0].start_mark.column - 2)
            edits.append((after, after, "\n" + "\n".join(_render_evidence(evidence, indent))))
        elif existing is not None:
            raise EditError("line %d: a flow-style evidence list; write it as a block list"
                            % (existing.start_mark.line + 1))
        else:
            after = _line_end(text, _last_index(source_node))
            indent = " " * node.start_mark.column
            edits.append((after, after, "\n%sevidence:\n" % indent + "\n".join(_render_evidence(evidence, indent + "  "))))
    piece = text[start:end]
    # from the end back, and at one position the later edit first, so they read in the order made
    for _, _, begin, stop, replacement in sorted(((e[0], i) + e for i, e in enumerate(edits)), reverse=True):
        piece = piece[:begin - start] + replacement + piece[stop - start:]
    return piece, end


def _comment(change, indent):
    proposal = change.proposal
    text = ("tfdet catalog update: CONFLICT, not applied: measured %s%s in TF %s on %s (%s) against this "
            "documented claim. %s A person decides: edit this range%s." % (
                proposal.status, " (%s)" % ", ".join(proposal.switches) if proposal.switches else "",
                change.version, change.device, ", ".join(proposal.sources), change.reason,
                ", or run again with --accept-conflicts" if change.acceptable else ""))
    return ["%s# %s" % (indent, line) for line in textwrap.wrap(text, WIDTH - len(indent) - 2, break_long_words=False)]


_CONFLICT_COMMENT = "# tfdet catalog update: CONFLICT"
_CONFLICT_COMMENT_ENDS = ("edit this range.", "--accept-conflicts.")


def without_conflict_comments(text):
    """`text` without the comments an earlier run wrote above conflicting ranges
    (see _comment), so that each run states afresh what is still in conflict."""
    kept, said = [], None  # said: the comment being dropped, so far
    for line in text.splitlines(True):
        stripped = line.strip()
        if said is None and stripped.startswith(_CONFLICT_COMMENT):
            said = stripped
        elif said is not None and stripped.startswith("#"):
            said += " " + stripped.lstrip("#").strip()
        else:
            said = None
            kept.append(line)
            continue
        if said.endswith(_CONFLICT_COMMENT_ENDS):
            said = None
    return "".join(kept)


def apply(texts, catalogue, plan):
    """{path: text} of the catalogue files with the plan written in (only changed files differ,
    and files holding an earlier run's conflict comments, which are written anew)."""
    texts = {path: without_conflict_comments(text) for path, text in texts.items()}
    by_device = {}
    for change in plan.changes:
        if change.applied or change.kind == CONFLICT:
            by_device.setdefault((change.entry_id, change.device), []).append(change)
    edits = {}  # path -> [(start, end, replacement)]
    located = {}
    for (entry_id, device), changes in by_device.items():
        entry = catalogue.get(entry_id)
        path = entry.origin.path
        if path not in texts:
            raise EditError("%s: entry %s is not in the files being edited" % (path, entry_id))
        if path not in located:
            located[path] = _Located(texts[path], path)
        node = located[path].entries.get(entry_id)
        if node is None:
            raise EditError("%s: no entry %r in the text" % (path, entry_id))
        edits.setdefault(path, []).extend(_device_edits(texts[path], entry, node, device, changes))
    result = dict(texts)
    for path, items in edits.items():
        text = texts[path]
        for start, end, replacement in sorted(items, key=lambda e: e[0], reverse=True):
            text = text[:start] + replacement + text[end:]
        result[path] = text
    return result


def _device_edits(text, entry, node, device, changes):
    ranges = entry.devices.get(device)
    devices_node = _value(node, "devices")
    applied = [c for c in changes if c.applied]
    proposals = {c.version: c.proposal for c in applied if c.kind in APPLIED + (CONFLICT,) and c.proposal}
    extras = {c.version: c for c in applied if c.add_sources or c.add_evidence}
    if ranges is None:
        return [_new_device(text, devices_node, device, proposals)]
    sequence = _value(devices_node, device)
    if sequence.flow_style or any(item.flow_style for item in sequence.value):
        raise EditError("%s: the %s ranges of %s are in flow style ([...] or {...}); write them as block "
                        "lists for tfdet to edit them" % (entry.origin, device, entry.id))
    out = []
    for version_range, item in zip(ranges, sequence.value):
        covered = [v for v in COVERED_TF_VERSIONS if version_range.covers(v)]
        comments = [c for c in changes if c.kind == CONFLICT and not c.applied and c.version in covered]
        if not comments and not any(v in proposals or v in extras for v in covered):
            continue
        start = _line_start(text, item.start_mark.index)
        indent = " " * item.start_mark.column
        pieces = []  # [key, [versions]]
        for version in covered:
            key = ("new",) + proposals[version].key() if version in proposals else ("old",)
            if pieces and pieces[-1][0] == key and _next(pieces[-1][1][-1]) == version:
                pieces[-1][1].append(version)
            else:
                pieces.append([key, [version]])
        lines = []
        for comment in comments:
            lines.extend(_comment(comment, indent[:-2]))
        end = None
        for key, versions in pieces:
            spec = version_range.versions if versions == covered else _specifier(versions[0], versions[-1])
            if key[0] == "old":
                sources = [s for v in versions if v in extras for s in extras[v].add_sources]
                evidence = [e for v in versions if v in extras for e in extras[v].add_evidence]
                piece, end = _edit_old(text, start, item, None if spec == version_range.versions else spec,
                                       unique(sources), unique_evidence(evidence))
                lines.append(piece)
            else:
                merged = _merge([proposals[v] for v in versions])
                keep = merged.status in VARYING_STATUSES  # tfdet's own fix and advice still apply
                lines.extend(render_range(spec, merged, indent, version_range.patch if keep else None,
                                          version_range.workaround if keep else None))
        if end is None:
            end = _line_end(text, _last_index(item))
        out.append((start, end, "\n".join(lines)))
    return out


def _next(version):
    index = COVERED_TF_VERSIONS.index(version)
    return COVERED_TF_VERSIONS[index + 1] if index + 1 < len(COVERED_TF_VERSIONS) else None


def _merge(proposals):
    """One proposal for neighbouring versions with the same claim."""
    return proposals[0].merged(proposals[1:])


def _new_device(text, devices_node, device, proposals):
    """Claims for a device the entry has none for: the measured versions, and unknown elsewhere."""
    first_device = devices_node.value[0][0]
    key_indent = " " * first_device.start_mark.column
    indent = key_indent + "    "
    measured = sorted(proposals)
    sources = unique(s for v in measured for s in proposals[v].sources)
    lines = ["%s%s:" % (key_indent, device)]
    runs, current = [], None
    for version in COVERED_TF_VERSIONS:
        key = proposals[version].key() if version in proposals else None
        if current is not None and current[0] == key:
            current[1].append(version)
        else:
            current = [key, [version]]
            runs.append(current)
    for key, versions in runs:
        spec = _specifier(versions[0], versions[-1])
        if key is None:
            lines.append("%s- versions: %s" % (indent[:-2], json.dumps(spec)))
            lines.append("%sstatus: unknown" % indent)
            lines.extend(_render_text("note", "Not measured; the %s claims of TF %s come from measurements "
                                      "(tfdet catalog update)." % (device, ", ".join(str(v) for v in measured)), indent))
            lines.append("%ssources: [%s]" % (indent, ", ".join(scalar(s) for s in sources)))
        else:
            lines.extend(render_range(spec, _merge([proposals[v] for v in versions]), indent))
    after = _line_end(text, _last_index(devices_node))
    return (after, after, "\n" + "\n".join(lines))
