"""Which kind of results a file holds, read from its header's `kind`, and the
reader of each kind: what tfdet.results.load() dispatches on. Nothing here
guesses from the text; a header without a kind, or with one no reader takes,
is one line naming the file and the place.
"""

import json

from .errors import ResultsError
from .header import KINDS


def _read_text(path):
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise ResultsError("%s: cannot read: %s" % (path, exc.strerror or exc)) from None
    except UnicodeDecodeError:
        raise ResultsError("%s: not a tfdet results file (not UTF-8 text)" % path) from None


def read_header(path):
    """(kind, header as parsed JSON, where) of a results file: its one JSON object
    (a locate result) or its first line (a JSON Lines file), `where` naming the
    place (path:line). Version 1 probe headers predate `kind` and are the one
    header read as probe without it."""
    text = _read_text(path)
    try:
        header, number = json.loads(text), 1 + len(text) - len(text.lstrip("\n"))
    except ValueError:
        header, number = _first_line(path, text)
    where = "%s:%d" % (path, number)
    kind = header.get("kind") if isinstance(header, dict) else None
    if kind is None and isinstance(header, dict) and header.get("record") == "header":
        kind = "probe"
    if kind is None:
        raise ResultsError("%s: not a tfdet results file (no header record on line %d)" % (path, number))
    if kind not in KINDS:
        raise ResultsError("%s: kind %s is not a kind of tfdet results (%s)" % (
            where, json.dumps(kind)[:40], ", ".join(KINDS)))
    return kind, header, where


def _first_line(path, text):
    lines = text.split("\n")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            return json.loads(line), number
        except ValueError:
            raise ResultsError("%s:%d: not a tfdet results file (line is not JSON)" % (path, number)) from None
    raise ResultsError("%s: empty, not a tfdet results file" % path)


def _probe(path, header):
    from .probe_file import read_probe

    return read_probe(path)


def _diverge(path, header):
    from .diverge_file import read_diverge

    return read_diverge(path)


def _compare(path, header):
    from .compare_file import read_compare

    return read_compare(path)


def _locate(path, header):
    from .locate_file import read_locate

    return read_locate(path, header)


def _vary(path, header):
    from .vary_file import read_vary

    return read_vary(path)


# kind -> reader(path, parsed header): the kinds load() reads
READERS = {"probe": _probe, "diverge": _diverge, "compare": _compare, "locate": _locate, "vary": _vary}


def load(path):
    """The results in `path`, read by the reader of its header's kind."""
    kind, header, where = read_header(path)
    reader = READERS.get(kind)
    if reader is None:
        raise ResultsError("%s: a %s results file, not a probe results file (load reads %s files)" % (
            where, kind, ", ".join(READERS)))
    return reader(path, header)
