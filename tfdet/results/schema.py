"""The JSON Schema of each results kind and version, generated from the typed
records. The committed copies (tfdet/results/schemas/KIND-VERSION.json) are
what other tools validate against; a test keeps them equal to the records.

    python -m tfdet.results.schema            # rewrite the committed schemas
    python -m tfdet.results.schema --check    # exit 1 if they are out of date
"""

import json
import os
import sys

from . import compare_records, diverge_records, locate_records, probe_records, scan_records, vary_records
from .typed import json_schema

SCHEMA_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")


def probe_schema():
    return json_schema("tfdet probe results, version %d" % probe_records.SCHEMA_VERSION,
                       "https://tfdet.invalid/schemas/probe-%d.json" % probe_records.SCHEMA_VERSION,
                       [probe_records.ProbeHeader, probe_records.CaseRecord, probe_records.EndRecord])


def scan_schema():
    schema = json_schema("tfdet scan --json, version %d" % scan_records.SCHEMA_VERSION,
                         "https://tfdet.invalid/schemas/scan-%d.json" % scan_records.SCHEMA_VERSION,
                         [scan_records.ScanReport])
    schema["description"] = "One JSON object: the report."
    return schema


def locate_schema():
    schema = json_schema("tfdet locate --json, version %d" % locate_records.SCHEMA_VERSION,
                         "https://tfdet.invalid/schemas/locate-%d.json" % locate_records.SCHEMA_VERSION,
                         [locate_records.LocateResult])
    schema["description"] = "One JSON object: where the runs first differed."
    return schema


def diverge_schema():
    records = diverge_records.RECORDS
    return json_schema("tfdet diverge results, version %d" % diverge_records.SCHEMA_VERSION,
                       "https://tfdet.invalid/schemas/diverge-%d.json" % diverge_records.SCHEMA_VERSION,
                       [records["header"], records["training"], records["summary"]])


def compare_schema():
    records = compare_records.RECORDS
    return json_schema("tfdet compare results, version %d" % compare_records.SCHEMA_VERSION,
                       "https://tfdet.invalid/schemas/compare-%d.json" % compare_records.SCHEMA_VERSION,
                       [records["header"], records["training"], records["look"], records["summary"]])


def vary_schema():
    records = vary_records.RECORDS
    return json_schema("tfdet probe --vary results, version %d" % vary_records.SCHEMA_VERSION,
                       "https://tfdet.invalid/schemas/vary-%d.json" % vary_records.SCHEMA_VERSION,
                       [records["header"], records["vary"], records["end"]])


# kind: (version, the schema now)
SCHEMAS = {"probe": (probe_records.SCHEMA_VERSION, probe_schema), "scan": (scan_records.SCHEMA_VERSION, scan_schema),
           "locate": (locate_records.SCHEMA_VERSION, locate_schema),
           "diverge": (diverge_records.SCHEMA_VERSION, diverge_schema),
           "compare": (compare_records.SCHEMA_VERSION, compare_schema),
           "vary": (vary_records.SCHEMA_VERSION, vary_schema)}


def schema_path(kind, version):
    return os.path.join(SCHEMA_DIR, "%s-%d.json" % (kind, version))


def committed_schema(kind, version=None):
    version = SCHEMAS[kind][0] if version is None else version
    with open(schema_path(kind, version), encoding="utf-8") as handle:
        return json.load(handle)


def _text(schema):
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    stale = []
    for kind, (version, build) in SCHEMAS.items():
        path, text = schema_path(kind, version), _text(build())
        current = open(path, encoding="utf-8").read() if os.path.exists(path) else None
        if current != text:
            stale.append(path)
            if "--check" not in argv:
                with open(path, "w", encoding="utf-8") as handle:
                    handle.write(text)
    for path in stale:
        print(("out of date: %s" if "--check" in argv else "wrote %s") % path)
    return 1 if stale and "--check" in argv else 0


if __name__ == "__main__":
    sys.exit(main())
