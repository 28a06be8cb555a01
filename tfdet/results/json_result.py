"""Read one typed result kept as a single JSON document (locate, between): the file,
its kind and schema version checked, each failure one line naming the file."""

import json

from .errors import ResultsError
from .typed import RecordError


def read_json_result(path, data, kind, schema_version, result_type, described):
    """result_type.from_json of the JSON in `path` (or of `data`, already parsed).

    `described` finishes "not a ..." when the document is another kind."""
    if data is None:
        try:
            with open(path, encoding="utf-8") as handle:
                data = json.load(handle)
        except OSError as exc:
            raise ResultsError("%s: cannot read: %s" % (path, exc.strerror or exc)) from None
        except ValueError as exc:
            raise ResultsError("%s: not JSON: %s" % (path, exc)) from None
    if not isinstance(data, dict) or data.get("kind") != kind:
        raise ResultsError("%s: not %s" % (path, described))
    if data.get("schema_version") != schema_version:
        raise ResultsError("%s: %s schema version %r; this tfdet reads version %d" % (
            path, kind, data.get("schema_version"), schema_version))
    try:
        return result_type.from_json(data, path)
    except RecordError as exc:
        raise ResultsError(str(exc)) from None
