"""Typed records and their JSON form, from one declaration.

A record is a dataclass whose field annotations say what its JSON holds
(str, int, float, bool, List[...], Tuple[...] (a JSON array of that length),
Dict[str, ...], Optional[...], Any, or another record). From that one declaration come:

- `from_json(data, where)`: the record, after checking every field: unknown
  fields, missing fields, wrong types and values outside a field's `choices`
  raise RecordError naming `where` (a file:line) and the field;
- `to_json()`: the dict written to a file (optional fields that are None are
  left out unless the field is required; the field's `json` name is used where
  it differs from Python's);
- `json_schema(cls)`: the JSON Schema of the same rules, committed per results
  kind and version (see tfdet/results/schema.py).

Standard library only and Python 3.7 compatible: the probe's worker runs
under the Python of the TensorFlow it measures.
"""

import dataclasses
import typing


class RecordError(ValueError):
    """A record that does not match its declaration: the message names where and which field."""


def field(default=dataclasses.MISSING, json=None, choices=None, keep_none=False, doc=""):
    """A record field. json: its name in the file (when not a Python name, e.g. "pass");
    choices: the values it may take; keep_none: write None as null instead of leaving it out."""
    metadata = {"json": json, "choices": tuple(choices) if choices else None, "keep_none": keep_none, "doc": doc}
    if default is dataclasses.MISSING:
        return dataclasses.field(metadata=metadata)
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def json_name(f):
    return f.metadata.get("json") or f.name


def _origin(tp):
    return getattr(tp, "__origin__", None)


def _args(tp):
    return getattr(tp, "__args__", ()) or ()


def _optional(tp):
    """(True, inner) for Optional[inner], else (False, tp)."""
    if _origin(tp) is typing.Union and type(None) in _args(tp):
        rest = [a for a in _args(tp) if a is not type(None)]
        return True, rest[0] if len(rest) == 1 else typing.Union[tuple(rest)]
    return False, tp


def _is_record(tp):
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _hints(cls):
    cached = cls.__dict__.get("_tfdet_hints")
    if cached is None:
        cached = typing.get_type_hints(cls)
        cls._tfdet_hints = cached
    return cached


def _describe(value):
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _type_name(tp):
    optional, inner = _optional(tp)
    if optional:
        return _type_name(inner) + " or null"
    if _is_record(tp):
        return "an object"
    origin = _origin(tp)
    if origin in (tuple, typing.Tuple):
        return "a list of %d" % len(_args(tp))
    if origin in (list, typing.List):
        return "a list"
    if origin in (dict, typing.Dict):
        return "an object"
    if origin is typing.Union:
        return " or ".join(_type_name(a) for a in _args(tp))
    return {str: "a string", int: "an integer", float: "a number", bool: "true or false"}.get(tp, str(tp))


def _convert(value, tp, path, where):
    """value (parsed JSON) as type tp, or RecordError naming where and path."""
    def wrong():
        return RecordError("%s: field %s: expected %s, got %s" % (where, path, _type_name(tp), _describe(value)))

    if tp is typing.Any:
        return value
    optional, inner = _optional(tp)
    if value is None:
        if optional:
            return None
        raise wrong()
    if optional:
        try:
            return _convert(value, inner, path, where)
        except RecordError as exc:
            if str(exc).startswith("%s: field %s: expected" % (where, path)):
                raise wrong() from None  # say "or null" too
            raise
    if _is_record(tp):
        if not isinstance(value, dict):
            raise wrong()
        return tp.from_json(value, where, path)
    origin = _origin(tp)
    if origin in (tuple, typing.Tuple):  # a fixed-length JSON array, kept as a list
        items = _args(tp)
        if not isinstance(value, list) or len(value) != len(items):
            raise wrong()
        return [_convert(v, item, "%s[%d]" % (path, i), where) for i, (v, item) in enumerate(zip(value, items))]
    if origin in (list, typing.List):
        if not isinstance(value, list):
            raise wrong()
        (item,) = _args(tp) or (typing.Any,)
        return [_convert(v, item, "%s[%d]" % (path, i), where) for i, v in enumerate(value)]
    if origin in (dict, typing.Dict):
        if not isinstance(value, dict):
            raise wrong()
        _, item = _args(tp) or (str, typing.Any)
        return {k: _convert(v, item, "%s.%s" % (path, k), where) for k, v in value.items()}
    if origin is typing.Union:
        for option in _args(tp):
            try:
                return _convert(value, option, path, where)
            except RecordError:
                pass
        raise wrong()
    if tp is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise wrong()
        return float(value)
    if tp is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise wrong()
        return value
    if not isinstance(value, tp):
        raise wrong()
    return value


def _to_json(value):
    if dataclasses.is_dataclass(value):
        return value.to_json()
    if isinstance(value, (list, tuple)):
        return [_to_json(v) for v in value]
    if isinstance(value, dict):
        return {k: _to_json(v) for k, v in value.items()}
    return value


class Record(object):
    """Base of every typed record (a dataclass subclasses it)."""

    @classmethod
    def from_json(cls, data, where="", path=None):
        if not isinstance(data, dict):
            raise RecordError("%s: expected an object, got %s" % (where, _describe(data)))
        hints = _hints(cls)
        fields = dataclasses.fields(cls)
        by_json = {json_name(f): f for f in fields}
        unknown = sorted(set(data) - set(by_json))
        if unknown:
            raise RecordError("%s: unknown field %s" % (where, _join(path, unknown[0])))
        values = {}
        for name, f in by_json.items():
            where_field = _join(path, name)
            if name not in data:
                if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                    raise RecordError("%s: missing field %s" % (where, where_field))
                continue
            value = _convert(data[name], hints[f.name], where_field, where)
            choices = f.metadata.get("choices")
            if choices and value is not None and value not in choices:
                raise RecordError("%s: field %s: %s is not one of %s" % (
                    where, where_field, _describe(value), ", ".join(map(str, choices))))
            values[f.name] = value
        return cls(**values)

    def to_json(self):
        out = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if value is None and not f.metadata.get("keep_none") and _optional(_hints(type(self))[f.name])[0] \
                    and not _required(f):  # a required field is written even when null: from_json needs it
                continue
            out[json_name(f)] = _to_json(value)
        return out


def _required(f):
    return f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING


def _join(path, name):
    return "%s.%s" % (path, name) if path else name


# --------------------------------------------------------------------------- JSON Schema

def _schema_of(tp, definitions):
    if tp is typing.Any:
        return {}
    optional, inner = _optional(tp)
    if optional:
        return {"anyOf": [_schema_of(inner, definitions), {"type": "null"}]}
    if _is_record(tp):
        if tp.__name__ not in definitions:
            definitions[tp.__name__] = None  # reserve: records may refer to themselves
            definitions[tp.__name__] = _record_schema(tp, definitions)
        return {"$ref": "#/definitions/%s" % tp.__name__}
    origin = _origin(tp)
    if origin in (tuple, typing.Tuple):
        items = _args(tp)
        return {"type": "array", "items": [_schema_of(a, definitions) for a in items],
                "minItems": len(items), "maxItems": len(items)}
    if origin in (list, typing.List):
        (item,) = _args(tp) or (typing.Any,)
        return {"type": "array", "items": _schema_of(item, definitions)}
    if origin in (dict, typing.Dict):
        _, item = _args(tp) or (str, typing.Any)
        return {"type": "object", "additionalProperties": _schema_of(item, definitions)}
    if origin is typing.Union:
        return {"anyOf": [_schema_of(a, definitions) for a in _args(tp)]}
    return {"type": {str: "string", int: "integer", float: "number", bool: "boolean"}[tp]}


def _record_schema(cls, definitions):
    hints = _hints(cls)
    properties, required = {}, []
    for f in dataclasses.fields(cls):
        schema = _schema_of(hints[f.name], definitions)
        choices = f.metadata.get("choices")
        if choices:
            optional = _optional(hints[f.name])[0]
            schema = {"enum": list(choices) + ([None] if optional else [])}
        if f.metadata.get("doc"):
            schema = dict(schema, description=f.metadata["doc"])
        properties[json_name(f)] = schema
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            required.append(json_name(f))
    schema = {"type": "object", "properties": properties, "required": required, "additionalProperties": False}
    if cls.__doc__:
        schema["description"] = " ".join(cls.__doc__.split())
    return schema


def json_schema(title, schema_id, records):
    """A JSON Schema (draft 7) for a file whose lines are each one of `records`."""
    definitions = {}
    lines = [_schema_of(cls, definitions) for cls in records]
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "$id": schema_id,
        "title": title,
        "description": "One JSON object per line; each is one of the records below.",
        "oneOf": lines,
        "definitions": definitions,
    }

