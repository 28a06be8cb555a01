"""Reading catalogue files from disk (the only I/O in tfdet.catalog).

Two paths. A user's file (load_catalogue with paths, load_user_catalogue) is
always fully validated: schema, semantics, every problem by file and line.
The shipped catalogue is validated by the tests and at build time, so
default_catalogue() only parses it (libyaml where available, or the parsed
files an earlier process kept: parsed_cache) and builds the objects: it runs
on every tfdet.patch(), and full validation costs about a third of a second.
"""

import functools
import gc
import os

import yaml

from .errors import CatalogError, Problem
from . import parsed_cache
from .model import Catalogue, Entry, ErrorInfo, Evidence, Origin, Switch, VersionRange, entry_keys, patch_row
from .paths import shipped_catalogue_dir
from .sensitivity import sensitivity_from_raw
from .validate import check_catalogue, parse_document_parts
from .versions import parse_specifier

# libyaml's loader is ~10x faster; it is missing from some PyYAML builds.
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml_files(path):
    if os.path.isdir(path):
        names = sorted(n for n in os.listdir(path) if n.endswith((".yaml", ".yml")))
        return [os.path.join(path, n) for n in names]
    return [path]


def _read(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise CatalogError([Problem(path, 0, "", "cannot read: %s" % (exc.strerror or exc))]) from None
    except UnicodeDecodeError as exc:
        raise CatalogError([Problem(path, 0, "", "not UTF-8 text: %s" % exc)]) from None


def load_catalogue(paths=None, known_switches=()):
    """Load and validate catalogue files (a file, a directory, or a list of them).

    With no paths, loads the shipped catalogue. Every file is validated on
    every call; problems from all files are reported together as one
    CatalogError naming each file and line.
    """
    if paths is None:
        paths = [shipped_catalogue_dir()]
    elif isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = catalogue_files(paths)
    if not files:
        raise CatalogError([Problem(", ".join(map(str, paths)), 0, "", "no catalogue files (*.yaml) found")])
    return catalogue_from_texts([(path, _read(path)) for path in files], known_switches)


def catalogue_files(paths):
    """The YAML files of catalogue paths (files, or directories of *.yaml), in load order."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return [f for p in paths for f in _yaml_files(os.fspath(p))]


def read_texts(paths):
    """[(path, text)] of catalogue paths' YAML files; CatalogError where one cannot be read."""
    return [(path, _read(path)) for path in catalogue_files(paths)]


def catalogue_from_texts(texts, known_switches=()):
    """A fully validated Catalogue of [(path, YAML text)]: every problem of every file in one CatalogError."""
    documents, sensitivities, problems = [], [], []
    for path, text in texts:
        try:
            entries, switches, measured = parse_document_parts(text, path)
        except CatalogError as exc:
            problems.extend(exc.problems)
            continue
        documents.append((path, entries, switches))
        sensitivities.extend(measured)
    if problems:
        raise CatalogError(problems)
    check_catalogue(documents, known_switches, sensitivities)
    entries = [e for _, es, _ in documents for e in es]
    own = [s for _, _, ss in documents for s in ss]
    # A file may define a switch the shipped catalogue has (a copy of switches.yaml):
    # its definition replaces the shipped one instead of standing beside it.
    redefined = {s.id for s in own}
    return Catalogue(entries, [s for s in known_switches if s.id not in redefined] + own, sensitivities)


@functools.lru_cache(maxsize=1)
def default_catalogue():
    """The shipped catalogue, loaded once per process without re-validating it
    (tests/catalog prove it valid and equal to load_catalogue()'s result). The
    parsed files come from parsed_cache where an earlier process stored them."""
    entries, switches, sensitivities = [], [], []
    # Building allocates ~100k small objects; with TensorFlow loaded every full
    # garbage collection walks its millions, which made this 6x slower.
    collecting = gc.isenabled()
    gc.disable()
    try:
        texts = [(path, _read(path)) for path in _yaml_files(shipped_catalogue_dir())]
        for path, parsed in zip((p for p, _ in texts), _parsed_files(texts)):
            document_entries, document_switches, measured = _build_parsed(parsed, path)
            entries.extend(document_entries)
            switches.extend(document_switches)
            sensitivities.extend(measured)
    except Exception as exc:
        if isinstance(exc, CatalogError):  # unreadable file: already says which
            raise
        # The shipped files were changed or damaged after the tests proved them
        # valid: the checking loader says what is wrong, by file and line, the
        # same CatalogError every command and patch() report.
        return load_catalogue()
    finally:
        if collecting:
            gc.enable()
    return Catalogue(entries, switches, sensitivities)


def _parsed_files(texts):
    """[_parse_trusted(text)] of [(path, text)]: from parsed_cache when it holds these files, else
    parsed now (and stored for the next process)."""
    record_key = parsed_cache.key([(os.path.basename(path), text) for path, text in texts],
                                  parser="PyYAML %s" % getattr(yaml, "__version__", "?"))
    record = parsed_cache.read(record_key)
    files = record.get("files") if record is not None else None
    if isinstance(files, list) and len(files) == len(texts):
        return files
    files = [_parse_trusted(text) for _, text in texts]
    parsed_cache.write(record_key, {"files": files})
    return files


def load_user_catalogue(path):
    """Load a user's own catalogue file, resolving switches against the shipped ones."""
    return load_catalogue([path], known_switches=default_catalogue().switches)


# --- the trusted (shipped) path: parse and build, no checks ---------------

def _parse_trusted(text):
    """{"data": the document, "lines": the line of each item an origin names} of an
    already-validated file: plain data, so parsed_cache can keep it as JSON."""
    loader = _FAST_LOADER(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node)
    finally:
        loader.dispose()
    lines = {
        "switches": [_line(item) for item in _items(node, "switches")],
        "entries": [{"line": _line(item),
                     "devices": {device.value: [_line(r) for r in ranges.value]
                                 for device, ranges in _value(item, "devices").value}}
                    for item in _items(node, "entries")],
        "sensitivities": [{"line": _line(item), "facts": [_line(n) for n in _items(item, "facts")]}
                          for item in _items(node, "sensitivities")],
    }
    return {"data": data, "lines": lines}


def _build_parsed(parsed, path):
    """(entries, switches, sensitivities) of an already-validated file, from _parse_trusted's
    record: the same objects validate.parse_document builds, origins included, without its checks."""
    data, lines = parsed["data"], parsed["lines"]
    switches = [_switch(raw, Origin(path, line)) for raw, line in zip(data.get("switches", []), lines["switches"])]
    entries = [_entry(raw, at, path) for raw, at in zip(data.get("entries", []), lines["entries"])]
    sensitivities = [sensitivity_from_raw(raw, Origin(path, at["line"]), [Origin(path, n) for n in at["facts"]])
                     for raw, at in zip(data.get("sensitivities", []), lines["sensitivities"])]
    return entries, switches, sensitivities


def _value(node, key):
    for key_node, value_node in node.value:
        if key_node.value == key:
            return value_node
    return None


def _items(node, key):
    found = _value(node, key)
    return found.value if found is not None else []


def _line(node):
    return node.start_mark.line + 1


def _switch(raw, origin):
    return Switch(
        id=raw["id"], kind=raw["kind"], name=raw["name"], role=raw["role"], versions=raw["versions"],
        devices=tuple(raw["devices"]), description=raw["description"], sources=tuple(raw["sources"]),
        value=raw.get("value"), same_as=tuple(raw.get("same_as", ())), specifier=parse_specifier(raw["versions"]),
        origin=origin, set_by_patch=tuple(patch_row(r, parse_specifier(r["versions"])) for r in raw.get("set_by_patch", ())))


def _range(r, origin):
    return VersionRange(
        versions=r["versions"], status=r["status"], sources=tuple(r["sources"]),
        switches=tuple(r.get("switches", ())), patch=r.get("patch"), workaround=r.get("workaround"),
        error=ErrorInfo(**r["error"]) if "error" in r else None, note=r.get("note"),
        evidence=tuple(Evidence(**item) for item in r.get("evidence", ())),
        specifier=parse_specifier(r["versions"]), origin=origin)


def _entry(raw, at, path):
    devices = {}
    for device, raw_ranges in raw["devices"].items():
        devices[device] = tuple(_range(r, Origin(path, line)) for r, line in zip(raw_ranges, at["devices"][device]))
    return Entry(
        id=raw["id"], title=raw["title"], description=raw["description"], apis=tuple(raw["apis"]),
        raw_ops=tuple(raw["raw_ops"]), direction=raw["direction"], root_cause=raw["root_cause"],
        devices=devices, sources=tuple(raw["sources"]), origin=Origin(path, at["line"]), **entry_keys(raw))
