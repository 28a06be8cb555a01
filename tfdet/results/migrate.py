"""Older results files, brought up to the current schema when they are read.

One function per step, `update_to_N(header) -> header`, applied in turn from
the file's version (asv's Results.update_to_N is the model). They work on the
parsed JSON before it is typed, and never touch the file: a file keeps its
version on disk, and --resume appends records of the current shape, which
every step so far leaves unchanged.
"""


def update_to_2(header):
    """Version 1 headers (tfdet 0.1 before the results layer) lacked the kind,
    and early ones the mode bookkeeping and the top-level ONEDNN setting."""
    header = dict(header, schema_version=2, kind="probe")
    modes = list(header.get("modes") or [])
    unavailable = dict(header.get("unavailable_modes") or {})
    header.setdefault("modes_asked", modes + [m for m in unavailable if m not in modes])
    header.setdefault("unavailable_modes", unavailable)
    header.setdefault("mode_failures", {})
    header.setdefault("not_applicable_modes", {})
    if "onednn" not in header:
        environments = header.get("environment") or {}
        first = next((environments[m] for m in modes if m in environments), None) or next(
            iter(environments.values()), {})
        value = first.get("onednn", "default") if isinstance(first, dict) else "default"
        # the worker recorded TF_ENABLE_ONEDNN_OPTS as it saw it
        header["onednn"] = {"1": "on", "0": "off"}.get(value, value)
    return header


# version: the step that brings a header of that version to the next one
STEPS = {1: update_to_2}


def migrate_header(header, current):
    """header brought to version `current`; ValueError for a version with no way there."""
    version = header.get("schema_version")
    while version != current:
        step = STEPS.get(version) if isinstance(version, int) else None
        if step is None:
            raise ValueError(version)
        header = step(header)
        version = header["schema_version"]
    return header
