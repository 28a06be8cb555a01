"""`tfdet catalog update` for `tfdet probe --vary` results: measured setting
facts per op, TF minor version and device. Pure: results in, YAML text out.

The facts live in one generated file of the catalogue (SENSITIVITY_FILE):
it is rewritten whole from what it held plus the new measurements, one row
per (op, setting, device, TF minor version) measured, the newest measurement
of a row replacing the one before. A cell that raised or failed says nothing
about bits and makes no fact.
"""

import json

from .sensitivity import Sensitivity, SensitivityRow, SettingFact, sensitivity_to_dict
from .versions import parse_specifier, tf_minor

SENSITIVITY_FILE = "settings_sensitivity.yaml"
STABLE = ("same", "differs")


def facts_of(results, cited):
    """[(op, title, names, SensitivityRow)] of one --vary results file, one row per (case, setting)."""
    header = results.header
    minor = tf_minor(header.tf_version)
    versions = "==%d.%d" % (minor.major, minor.minor)
    by_key = {}
    for record in results.latest().values():
        by_key.setdefault((record.case, record.setting), []).append(record)
    out = []
    for (case, setting), records in by_key.items():
        measured = [r for r in records if r.verdict in STABLE + ("varies",)]
        if not measured:
            continue  # raised or failed everywhere: nothing about bits
        stable = all(r.verdict in STABLE for r in measured)
        changes = stable and any(r.verdict == "differs" for r in measured)
        ulps = [r.max_ulp for r in measured if r.max_ulp is not None]
        note = "; ".join("%s: %s%s" % (r.variant, r.verdict, " (%d ulp)" % r.max_ulp if r.max_ulp else "")
                         for r in sorted(records, key=lambda r: r.variant))
        fact = SettingFact(changes=changes, stable_within=stable, max_ulp=max(ulps) if stable and ulps else None,
                           sources=("measured:%s" % cited,), note=note)
        row = SensitivityRow(setting=setting, device=header.device, versions=versions, fact=fact,
                             specifier=parse_specifier(versions))
        out.append((case, header.titles.get(case, ""), tuple(header.names.get(case, ())), row))
    return out


def merge(existing, new_facts):
    """The sensitivities after adding new facts: a row for the same (setting, device, versions) is replaced."""
    items = {item.op: item for item in existing}
    order = [item.op for item in existing]
    for op, title, names, row in new_facts:
        item = items.get(op)
        if item is None:
            item = Sensitivity(op=op, names=names, rows=(), title=title)
            order.append(op)
        rows = [r for r in item.rows if (r.setting, r.device, r.versions) != (row.setting, row.device, row.versions)]
        rows.append(row)
        rows.sort(key=lambda r: (r.device, r.versions, _setting_order(r.setting)))
        items[op] = Sensitivity(op=op, names=tuple(item.names) or names, rows=tuple(rows),
                                title=item.title or title)
    return [items[op] for op in order]


def _setting_order(setting):
    from .sensitivity import SETTINGS

    return SETTINGS.index(setting) if setting in SETTINGS else len(SETTINGS)


HEADER = """\
# Measured sensitivity of ops' bits to settings: written by `tfdet catalog update --from`
# `tfdet probe --vary` results (edit by measuring again, not by hand). One item per op,
# one fact per setting, device and TF version; read by Catalogue.sensitive_to().
"""


def render(items):
    """The YAML text of the sensitivity file."""
    lines = [HEADER.rstrip("\n"), "schema_version: 1", "sensitivities:"]
    for item in items:
        data = sensitivity_to_dict(item)
        lines.append("  - op: %s" % data["op"])
        if "title" in data:
            lines.append("    title: %s" % json.dumps(data["title"]))
        if "names" in data:
            lines.append("    names: [%s]" % ", ".join(data["names"]))
        lines.append("    facts:")
        for row in data["facts"]:
            first = True
            for key, value in row.items():
                text = json.dumps(value) if not isinstance(value, list) else "[%s]" % ", ".join(
                    json.dumps(v) for v in value)
                lines.append("%s%s: %s" % ("      - " if first else "        ", key, text))
                first = False
    return "\n".join(lines) + "\n"
