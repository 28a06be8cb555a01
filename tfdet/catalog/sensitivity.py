"""Measured sensitivity of an op's bits to a setting (oneDNN, threads, XLA, ...).

A different question from an entry's status: an op can be reproducible under
each setting (stable_within) and still give other bits when the setting
changes (changes). `tfdet probe --vary` measures it; `tfdet catalog update`
writes it into a catalogue file's `sensitivities:` list; Catalogue.sensitive_to
answers it. Pure: no I/O.
"""

from dataclasses import dataclass, field
from typing import Optional, Tuple

from packaging.specifiers import SpecifierSet

from .model import Origin
from .versions import contains, tf_minor

# The settings `tfdet probe --vary` changes, by the names the catalogue keeps facts under.
SETTINGS = ("onednn", "threads", "execution", "xla", "batch", "replicas", "precision")


@dataclass(frozen=True)
class SettingFact:
    """What changing one setting does to an op's bits (in one TF version, on one device).

    changes: the bits differ between the reference setting and the changed one.
    stable_within: each setting gives the same bits run after run (when False,
    `changes` says nothing: the op varies run to run, a different finding).
    max_ulp: the largest difference in units in the last place, None when not measured.
    """

    changes: bool
    stable_within: bool
    max_ulp: Optional[int]
    sources: Tuple[str, ...]
    note: str = ""


@dataclass(frozen=True)
class SensitivityRow:
    """One fact as the catalogue file holds it: a setting, a device, a span of TF versions."""

    setting: str
    device: str
    versions: str
    fact: SettingFact
    specifier: SpecifierSet = field(default=None, compare=False, repr=False)
    origin: Optional[Origin] = field(default=None, compare=False)

    def covers(self, tf_version, device):
        return device == self.device and contains(self.specifier, tf_minor(tf_version))


@dataclass(frozen=True)
class Sensitivity:
    """The measured setting facts of one op (named like the probe's --vary case)."""

    op: str
    names: Tuple[str, ...]
    rows: Tuple[SensitivityRow, ...]
    title: str = ""
    origin: Optional[Origin] = field(default=None, compare=False)

    def facts(self, tf_version, device):
        """{setting: SettingFact} for a TF version on a device (the first row covering each)."""
        found = {}
        for row in self.rows:
            if row.setting not in found and row.covers(tf_version, device):
                found[row.setting] = row.fact
        return found


def sensitivity_from_raw(raw, origin=None, row_origins=(), specifier_of=None):
    """A Sensitivity from its YAML mapping. specifier_of(text, index) parses a row's
    versions (the checking loader records problems there); the default parses plainly."""
    from .versions import parse_specifier

    rows = []
    for index, r in enumerate(raw.get("facts", ())):
        specifier = specifier_of(r["versions"], index) if specifier_of else parse_specifier(r["versions"])
        fact = SettingFact(changes=bool(r["changes"]), stable_within=bool(r["stable_within"]),
                           max_ulp=r.get("max_ulp"), sources=tuple(r["sources"]), note=r.get("note", ""))
        rows.append(SensitivityRow(setting=r["setting"], device=r["device"], versions=r["versions"], fact=fact,
                                   specifier=specifier,
                                   origin=row_origins[index] if index < len(row_origins) else None))
    return Sensitivity(op=raw["op"], names=tuple(raw.get("names", ())), rows=tuple(rows),
                       title=raw.get("title", ""), origin=origin)


def sensitivity_to_dict(sensitivity):
    """The YAML mapping of a Sensitivity, in the catalogue's own field names."""
    data = {"op": sensitivity.op}
    if sensitivity.title:
        data["title"] = sensitivity.title
    if sensitivity.names:
        data["names"] = list(sensitivity.names)
    data["facts"] = [row_to_dict(row) for row in sensitivity.rows]
    return data


def row_to_dict(row):
    data = {"setting": row.setting, "device": row.device, "versions": row.versions,
            "changes": row.fact.changes, "stable_within": row.fact.stable_within}
    if row.fact.max_ulp is not None:
        data["max_ulp"] = row.fact.max_ulp
    if row.fact.note:
        data["note"] = row.fact.note
    data["sources"] = list(row.fact.sources)
    return data


def overlapping_rows(rows, versions):
    """Pairs (i, j, version) of rows of one setting and device that both cover a version:
    one fact per (setting, device, version), or the answer would depend on file order."""
    clashes = []
    for i, a in enumerate(rows):
        for j in range(i + 1, len(rows)):
            b = rows[j]
            if (a.setting, a.device) != (b.setting, b.device) or a.specifier is None or b.specifier is None:
                continue
            both = [v for v in versions if contains(a.specifier, v) and contains(b.specifier, v)]
            if both:
                clashes.append((i, j, both[0]))
    return clashes
