"""The shipped catalogue's parsed YAML, kept between processes as JSON.

Parsing the shipped files (about 750 kB of YAML, libyaml included) is most of
what tfdet.patch() adds to a program's start-up (issue 30: about 0.14 of 0.25
CPU seconds). The parsed documents are plain data (mappings, lists, strings,
numbers) plus the line of each item the Catalogue's origins name, so they are
written once as JSON to a per-user cache directory and read back (about a
tenth of the parse) by every later process.

The key is a hash of every shipped file's name and bytes, of FORMAT and of
the YAML parser's version: an edited, added or removed file is a different
key, so a stale record is never read. Any failure to read or write (no home
directory, a read-only disk, a damaged file) is a miss: the caller parses the
YAML as before. JSON, not
pickle: reading a file from a user-writable directory runs no code.

The directory: $TFDET_CACHE_DIR (empty: no cache at all), else
$XDG_CACHE_HOME/tfdet, else ~/.cache/tfdet.
"""

import hashlib
import json
import os
import tempfile

# The layout of a record (documents and lines, see load._parse_trusted); a change makes a new key.
FORMAT = 1


def cache_dir():
    """The directory records are kept in, or None when the cache is switched off."""
    chosen = os.environ.get("TFDET_CACHE_DIR")
    if chosen is not None:
        return chosen or None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tfdet")


def key(named_texts, parser=""):
    """The record's key for [(file name, text)]: what the files hold, how a record is laid out and
    which parser read them (its version: the venvs of `tfdet matrix` share the directory)."""
    digest = hashlib.sha256(("tfdet-catalogue-%d\0%s\0" % (FORMAT, parser)).encode())
    for name, text in named_texts:
        digest.update(name.encode("utf-8") + b"\0" + text.encode("utf-8") + b"\0")
    return digest.hexdigest()[:32]


def _path(record_key):
    directory = cache_dir()
    return None if directory is None else os.path.join(directory, "catalogue-%s.json" % record_key)


def read(record_key):
    """The stored record of this key, or None (no record, no cache, unreadable or damaged)."""
    path = _path(record_key)
    if path is None:
        return None
    try:
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) and record.get("key") == record_key else None


def write(record_key, record):
    """Store the record (a JSON-able dict) under this key; quietly nothing where it cannot be.
    Only records that read back equal are stored (YAML may hold what JSON turns into something
    else: a date, a mapping with number keys). Written to a temporary file and renamed, so a
    concurrent reader sees the whole record or none."""
    path = _path(record_key)
    if path is None:
        return False
    record = dict(record, key=record_key)
    try:
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        if json.loads(text) != record:
            return False
        os.makedirs(os.path.dirname(path), exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".catalogue-", suffix=".tmp", dir=os.path.dirname(path))
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text)
            os.replace(temporary, path)
        except BaseException:
            try:
                os.unlink(temporary)
            except OSError:
                pass
            raise
    except (OSError, TypeError, ValueError):
        return False
    return True
