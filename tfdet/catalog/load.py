"""Reading catalogue files from disk (the only I/O in tfdet.catalog)."""

import functools
import os

from .model import Catalogue
from .validate import CatalogError, Problem, check_catalogue, parse_document


def shipped_catalogue_dir():
    """The directory of the catalogue shipped inside the installed package."""
    from .. import catalog_data  # a package, so this works for wheels and editable installs alike

    return os.path.dirname(os.path.abspath(catalog_data.__file__))


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
    every load; problems from all files are reported together as one
    CatalogError naming each file and line.
    """
    if paths is None:
        paths = [shipped_catalogue_dir()]
    elif isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files = [f for p in paths for f in _yaml_files(os.fspath(p))]
    if not files:
        raise CatalogError([Problem(", ".join(map(str, paths)), 0, "", "no catalogue files (*.yaml) found")])
    documents, problems = [], []
    for path in files:
        try:
            entries, switches = parse_document(_read(path), path)
        except CatalogError as exc:
            problems.extend(exc.problems)
            continue
        documents.append((path, entries, switches))
    if problems:
        raise CatalogError(problems)
    check_catalogue(documents, known_switches)
    entries = [e for _, es, _ in documents for e in es]
    switches = list(known_switches) + [s for _, _, ss in documents for s in ss]
    return Catalogue(entries, switches)


@functools.lru_cache(maxsize=1)
def default_catalogue():
    """The shipped catalogue, loaded once per process."""
    return load_catalogue()


def load_user_catalogue(path):
    """Load a user's own catalogue file, resolving switches against the shipped ones."""
    return load_catalogue([path], known_switches=default_catalogue().switches)
