"""Parse and validate catalogue YAML, reporting problems by file and line.

Pure: works on text; reading files is load.py's job. YAML is read with the
safe loader only, and every problem found (not only the first) is reported.
"""

import difflib
import json
import os

import yaml

from .errors import CatalogError, Problem
from .sensitivity import overlapping_rows, sensitivity_from_raw
from .model import ErrorInfo, Entry, Evidence, Origin, Switch, VersionRange, entry_keys, patch_row
from .paths import shipped_catalogue_dir
from .versions import COVERED_TF_VERSIONS, contains, format_versions, parse_specifier


def _load_schema():
    with open(os.path.join(shipped_catalogue_dir(), "schema.json"), encoding="utf-8") as handle:
        return json.load(handle)


_VALIDATOR = None


def schema_validator():
    global _VALIDATOR
    if _VALIDATOR is None:
        # Imported here: only user catalogues and tests validate, and importing
        # jsonschema at start-up costs a full garbage collection once TF is loaded.
        import jsonschema

        schema = _load_schema()
        jsonschema.Draft202012Validator.check_schema(schema)
        _VALIDATOR = jsonschema.Draft202012Validator(schema)
    return _VALIDATOR


# --- YAML with positions ---------------------------------------------------

# libyaml's loader where PyYAML has it: its nodes carry the same marks (line, column
# and character index, non-ASCII text included) and it composes the catalogue about ten
# times faster than the pure-Python one.
POSITIONS_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

def _compose(text, path):
    """Parse YAML safely into (data, node). Raises CatalogError on bad YAML."""
    loader = POSITIONS_LOADER(text)
    try:
        node = loader.get_single_node()
        if node is None:
            raise CatalogError([Problem(path, 1, "", "the file is empty")])
        problems = list(_duplicate_keys(node, path, ""))
        if problems:
            raise CatalogError(problems)
        data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else 0
        raise CatalogError([Problem(path, line, "", "not valid YAML: %s" % (exc.problem or exc))]) from None
    except yaml.YAMLError as exc:
        raise CatalogError([Problem(path, 0, "", "not valid YAML: %s" % exc)]) from None
    finally:
        loader.dispose()
    return data, node


def _duplicate_keys(node, path, where):
    if isinstance(node, yaml.MappingNode):
        seen = set()
        for key_node, value_node in node.value:
            key = key_node.value
            if key in seen:
                yield Problem(path, key_node.start_mark.line + 1, _join(where, key),
                              "duplicate key %r (YAML would silently keep only the last)" % key)
            seen.add(key)
            yield from _duplicate_keys(value_node, path, _join(where, key))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            yield from _duplicate_keys(item, path, "%s[%d]" % (where, index))


def _join(where, key):
    return "%s.%s" % (where, key) if where else str(key)


def _where(parts):
    text = ""
    for part in parts:
        text = "%s[%d]" % (text, part) if isinstance(part, int) else _join(text, part)
    return text


def _node_at(node, parts, key_of_last=False):
    """The YAML node at a path (or the key node of its last part)."""
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if key_node.value == part:
                    node = key_node if (last and key_of_last) else value_node
                    break
            else:
                return node
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return node
    return node


def _line(node, parts, key_of_last=False):
    return _node_at(node, list(parts), key_of_last).start_mark.line + 1


# --- schema ----------------------------------------------------------------

def _schema_problems(data, node, path):
    for error in schema_validator().iter_errors(data):
        parts = list(error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            allowed = set(error.schema.get("properties", {}))
            for key in sorted(set(error.instance) - allowed, key=str):
                hint = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                suggestion = " (did you mean %r?)" % hint[0] if hint else ""
                yield Problem(path, _line(node, parts + [key], key_of_last=True), _where(parts + [key]),
                              "unknown key %r%s; allowed keys: %s" % (key, suggestion, ", ".join(sorted(allowed))))
        elif error.validator == "enum":
            hint = difflib.get_close_matches(str(error.instance), [str(v) for v in error.validator_value], n=1)
            suggestion = " (did you mean %r?)" % hint[0] if hint else ""
            yield Problem(path, _line(node, parts), _where(parts),
                          "%r is not one of: %s%s" % (error.instance, ", ".join(error.validator_value), suggestion))
        elif error.validator == "required":
            yield Problem(path, _line(node, parts), _where(parts), error.message)
        elif error.validator == "minItems" and error.validator_value == 1 and parts and parts[-1] == "sources":
            yield Problem(path, _line(node, parts), _where(parts), "every claim needs at least one source")
        else:
            yield Problem(path, _line(node, parts), _where(parts), "%s" % error.message)


# --- building objects and semantic checks ---------------------------------

def parse_document(text, path):
    """Parse one catalogue file. Returns (entries, switches); raises CatalogError.

    Checks everything that can be checked inside one file; references between
    files (switch ids, unique ids across files) are checked by check_catalogue.
    """
    entries, switches, _ = parse_document_parts(text, path)
    return entries, switches


def parse_document_parts(text, path):
    """parse_document, and the file's measured setting facts: (entries, switches, sensitivities)."""
    data, node = _compose(text, path)
    problems = list(_schema_problems(data, node, path))
    if problems:
        raise CatalogError(problems)

    switches = []
    for index, raw in enumerate(data.get("switches", [])):
        parts = ["switches", index]
        specifier = _specifier(raw["versions"], path, node, parts + ["versions"], problems)
        rows = []
        for r_index, r in enumerate(raw.get("set_by_patch", ())):
            r_parts = parts + ["set_by_patch", r_index]
            rows.append(patch_row(r, _specifier(r["versions"], path, node, r_parts + ["versions"], problems)))
            problems.extend(_patch_row_problems(raw, rows[-1], specifier, path, node, r_parts))
        switches.append(Switch(
            id=raw["id"], kind=raw["kind"], name=raw["name"], role=raw["role"], versions=raw["versions"],
            devices=tuple(raw["devices"]), description=raw["description"], sources=tuple(raw["sources"]),
            value=raw.get("value"), same_as=tuple(raw.get("same_as", ())), specifier=specifier, origin=Origin(path, _line(node, parts)),
            set_by_patch=tuple(rows),
        ))

    entries = []
    for index, raw in enumerate(data.get("entries", [])):
        parts = ["entries", index]
        devices = {}
        for device, raw_ranges in raw["devices"].items():
            ranges = []
            for r_index, r in enumerate(raw_ranges):
                r_parts = parts + ["devices", device, r_index]
                specifier = _specifier(r["versions"], path, node, r_parts + ["versions"], problems)
                ranges.append(VersionRange(
                    versions=r["versions"], status=r["status"], sources=tuple(r["sources"]),
                    switches=tuple(r.get("switches", ())), patch=r.get("patch"), workaround=r.get("workaround"),
                    error=ErrorInfo(**r["error"]) if "error" in r else None, note=r.get("note"),
                    evidence=tuple(Evidence(**item) for item in r.get("evidence", ())),
                    specifier=specifier, origin=Origin(path, _line(node, r_parts)),
                ))
                problems.extend(_evidence_problems(r, path, node, r_parts))
            devices[device] = tuple(ranges)
            if all(r.specifier is not None for r in ranges):
                problems.extend(_coverage_problems(ranges, path, node, parts + ["devices", device]))
        entries.append(Entry(
            id=raw["id"], title=raw["title"], description=raw["description"], apis=tuple(raw["apis"]),
            raw_ops=tuple(raw["raw_ops"]), direction=raw["direction"], root_cause=raw["root_cause"],
            devices=devices, sources=tuple(raw["sources"]), origin=Origin(path, _line(node, parts)),
            **entry_keys(raw),
        ))
    sensitivities = [_sensitivity(raw, path, node, ["sensitivities", index], problems)
                     for index, raw in enumerate(data.get("sensitivities", []))]
    if problems:
        raise CatalogError(problems)
    return entries, switches, sensitivities


def _sensitivity(raw, path, node, parts, problems):
    """A Sensitivity, its rows' versions parsed and checked; one fact per (setting, device, version)."""
    rows = raw.get("facts", ())
    origins = [Origin(path, _line(node, parts + ["facts", i])) for i in range(len(rows))]
    item = sensitivity_from_raw(
        raw, Origin(path, _line(node, parts)), origins,
        lambda text, i: _specifier(text, path, node, parts + ["facts", i, "versions"], problems))
    for i, j, version in overlapping_rows(item.rows, COVERED_TF_VERSIONS):
        where = parts + ["facts", j]
        problems.append(Problem(path, _line(node, where), _where(where),
                                "a second %s fact for %s in TF %s (facts %d and %d overlap); one fact per setting, "
                                "device and version" % (item.rows[j].setting, item.rows[j].device, version, i, j)))
    for i, row in enumerate(item.rows):
        if row.fact.changes and not row.fact.stable_within:
            where = parts + ["facts", i, "changes"]
            problems.append(Problem(path, _line(node, where), _where(where),
                                    "changes: true needs stable_within: true (an op that varies run to run "
                                    "cannot be said to change with a setting)"))
    return item


def _patch_row_problems(raw_switch, row, switch_specifier, path, node, parts):
    """A switch is set only on its own devices and in versions where TF has it."""
    stray = [d for d in row.devices if d not in raw_switch["devices"]]
    if stray:
        yield Problem(path, _line(node, parts + ["devices"]), _where(parts + ["devices"]),
                      "set on %s, which the switch does not list in its devices" % ", ".join(stray))
    if row.specifier is not None and switch_specifier is not None:
        outside = [v for v in COVERED_TF_VERSIONS if row.covers(v, row.devices[0]) and not contains(switch_specifier, v)]
        if outside:
            yield Problem(path, _line(node, parts + ["versions"]), _where(parts + ["versions"]),
                          "set in TF %s, where the switch does not exist (versions %r)"
                          % (format_versions(outside), raw_switch["versions"]))


def _evidence_problems(raw_range, path, node, parts):
    """Each evidence item describes a results file the range cites as a measured: source."""
    cited = {s.split(":", 1)[1] for s in raw_range["sources"] if s.startswith("measured:")}
    for index, item in enumerate(raw_range.get("evidence", ())):
        if item["results"] not in cited:
            where = parts + ["evidence", index, "results"]
            yield Problem(path, _line(node, where), _where(where),
                          "evidence for %r, which this range does not cite (add measured:%s to its sources)"
                          % (item["results"], item["results"]))


def _specifier(text, path, node, parts, problems):
    try:
        return parse_specifier(text)
    except ValueError as exc:
        problems.append(Problem(path, _line(node, parts), _where(parts), str(exc)))
        return None


def _coverage_problems(ranges, path, node, parts):
    """Each covered TF version must fall in exactly one range of a device."""
    covered_by = {version: [i for i, r in enumerate(ranges) if r.covers(version)] for version in COVERED_TF_VERSIONS}
    overlapping = [v for v, hits in covered_by.items() if len(hits) > 1]
    missing = [v for v, hits in covered_by.items() if not hits]
    if overlapping:
        first = covered_by[overlapping[0]]
        yield Problem(path, _line(node, parts + [first[1]]), _where(parts),
                      "version ranges overlap: %s covered by ranges %s (%s)" % (
                          format_versions(overlapping), " and ".join(str(i) for i in first),
                          " / ".join(repr(ranges[i].versions) for i in first)))
    if missing:
        yield Problem(path, _line(node, parts), _where(parts),
                      "version ranges leave a gap: no range covers TF %s (ranges must cover %s-%s; "
                      "use status not_applicable where the op does not exist)" % (
                          format_versions(missing), COVERED_TF_VERSIONS[0], COVERED_TF_VERSIONS[-1]))


def check_catalogue(documents, known_switches=(), sensitivities=()):
    """Cross-file checks over parsed documents [(path, entries, switches)]
    and their measured setting facts [Sensitivity] (one op name means one op).

    `known_switches` are switches defined elsewhere (the shipped catalogue's,
    when checking a user's own file). Raises CatalogError.
    """
    problems = []
    switch_ids = {s.id for s in known_switches}
    seen_switches = {}
    for path, _, switches in documents:
        for switch in switches:
            if switch.id in seen_switches:
                problems.append(Problem(path, switch.origin.line, "switches." + switch.id,
                                        "switch id %r is also defined at %s" % (switch.id, seen_switches[switch.id])))
            seen_switches[switch.id] = switch.origin
            switch_ids.add(switch.id)
    for path, _, switches in documents:
        for switch in switches:
            for other in switch.same_as:
                if other not in switch_ids:
                    problems.append(Problem(path, switch.origin.line, "switches.%s.same_as" % switch.id,
                                            "unknown switch %r" % other))
    problems.extend(_sensitivity_problems(sensitivities))
    seen_entries = {}
    for path, entries, _ in documents:
        for entry in entries:
            if entry.id in seen_entries:
                problems.append(Problem(path, entry.origin.line, "entries." + entry.id,
                                        "entry id %r is also used at %s" % (entry.id, seen_entries[entry.id])))
            seen_entries[entry.id] = entry.origin
            for device, ranges in entry.devices.items():
                for index, version_range in enumerate(ranges):
                    for switch_id in version_range.switches:
                        if switch_id not in switch_ids:
                            hint = difflib.get_close_matches(switch_id, sorted(switch_ids), n=1)
                            problems.append(Problem(
                                path, version_range.origin.line, "%s.devices.%s[%d].switches" % (entry.id, device, index),
                                "unknown switch %r%s" % (switch_id, " (did you mean %r?)" % hint[0] if hint else "")))
    problems.extend(_scan_check_problems(documents))
    if problems:
        raise CatalogError(problems)


def _sensitivity_problems(sensitivities):
    """Each name (op, API, raw op) of a measured-facts item belongs to that item alone."""
    owner = {}
    for item in sensitivities:
        for name in (item.op,) + item.names:
            if name in owner and owner[name] is not item:
                yield Problem(item.origin.path, item.origin.line, "sensitivities.%s" % item.op,
                              "%r also names the facts of %r at %s" % (name, owner[name].op, owner[name].origin))
            owner.setdefault(name, item)


def _scan_check_problems(documents):
    """The stateful_map scan check counts the stateful random ops, which are the raw
    ops of the entries with the op_seed check: a catalogue with the first needs the second."""
    entries = [(path, entry) for path, es, _ in documents for entry in es]
    if any(entry.scan.check == "op_seed" and entry.raw_ops for _, entry in entries):
        return []
    return [Problem(path, entry.origin.line, "%s.scan.check" % entry.id,
                    "stateful_map looks for the stateful random ops, the raw ops of an entry with "
                    "scan: {check: op_seed}, and this catalogue has none")
            for path, entry in entries if entry.scan.check == "stateful_map"]
