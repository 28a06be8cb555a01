"""The catalogue as Python objects, and the queries on it. Pure: no I/O."""

import difflib
import warnings
from dataclasses import dataclass, field
from typing import Mapping, Optional, Tuple

from packaging.specifiers import SpecifierSet

from .versions import StaleVersionWarning, answering_version, contains, tf_minor

STATUSES = (
    "deterministic",
    "nondeterministic",
    "deterministic_with_switch",
    "raises_under_determinism",
    "unknown",
    "not_applicable",
)
# Statuses under which an op can change from run to run as TensorFlow ships.
VARYING_STATUSES = ("nondeterministic", "deterministic_with_switch", "raises_under_determinism")
DEVICES = ("cpu", "gpu")
# The probe's passes, and which of them an entry's direction is probed in unless
# its probe_passes say otherwise (an input pipeline or a runtime setting is run forward).
PASSES = ("forward", "gradient")
PASSES_OF_DIRECTION = {
    "forward": ("forward",),
    "gradient": ("gradient",),
    "forward_and_gradient": ("forward", "gradient"),
    "input_pipeline": ("forward",),
    "runtime": ("forward",),
}


@dataclass(frozen=True)
class Origin:
    """Where a fact was read from, for error messages and reports."""

    path: str
    line: int  # 1-based

    def __str__(self):
        return "%s:%d" % (self.path, self.line)


@dataclass(frozen=True)
class ErrorInfo:
    type: str
    message: str


@dataclass(frozen=True)
class Evidence:
    """Where and how one cited results file was measured (a range's `evidence` item)."""

    results: str  # the file, as its measured: source cites it
    tf_version: str
    device: str
    runs: int  # the fewest runs of any mode the claim rests on
    processes: int
    date: str
    gpu: Optional[str] = None
    driver: Optional[str] = None
    cuda: Optional[str] = None
    cudnn: Optional[str] = None
    host: Optional[str] = None

    def to_dict(self):
        data = {"results": self.results, "tf_version": self.tf_version, "device": self.device}
        for key in ("gpu", "driver", "cuda", "cudnn", "host"):
            if getattr(self, key):
                data[key] = getattr(self, key)
        data.update(runs=self.runs, processes=self.processes, date=self.date)
        return data

    def __str__(self):
        parts = ["TF %s" % self.tf_version, self.device]
        parts.extend(getattr(self, key) and "%s %s" % (label, getattr(self, key))
                     for key, label in (("gpu", ""), ("driver", "driver"), ("cuda", "CUDA"), ("cudnn", "cuDNN")))
        if self.host:
            parts.append(self.host)
        parts.append("%d runs in %d processes" % (self.runs, self.processes))
        parts.append(self.date)
        return "%s (%s)" % (self.results, ", ".join(p.strip() for p in parts if p))


@dataclass(frozen=True)
class VersionRange:
    """What one entry does on one device over a span of TF versions."""

    versions: str
    status: str
    sources: Tuple[str, ...]
    switches: Tuple[str, ...] = ()
    patch: Optional[str] = None
    workaround: Optional[str] = None
    error: Optional[ErrorInfo] = None
    note: Optional[str] = None
    evidence: Tuple[Evidence, ...] = ()
    specifier: SpecifierSet = field(default=None, compare=False, repr=False)
    origin: Optional[Origin] = field(default=None, compare=False)

    def covers(self, version):
        return contains(self.specifier, version)


@dataclass(frozen=True)
class PatchRow:
    """One row of where tfdet.patch() sets a switch: devices, TF versions, the
    condition (`when`) and the primary sources that say to set it there."""

    devices: Tuple[str, ...]
    versions: str
    sources: Tuple[str, ...]
    when: str = "always"  # or "on_unsupported_warn": only under patch(on_unsupported="warn")
    note: Optional[str] = None
    specifier: SpecifierSet = field(default=None, compare=False, repr=False)

    def covers(self, tf_version, device):
        return device in self.devices and contains(self.specifier, tf_minor(tf_version))


def patch_row(raw, specifier):
    """A PatchRow from its YAML mapping (both catalogue loaders build them here)."""
    return PatchRow(devices=tuple(raw["devices"]), versions=raw["versions"], sources=tuple(raw["sources"]),
                    when=raw.get("when", "always"), note=raw.get("note"), specifier=specifier)


@dataclass(frozen=True)
class Switch:
    """A TensorFlow setting that changes determinism (an env var or an API)."""

    id: str
    kind: str  # env | api
    name: str
    role: str
    versions: str
    devices: Tuple[str, ...]
    description: str
    sources: Tuple[str, ...]
    value: Optional[str] = None
    same_as: Tuple[str, ...] = ()
    specifier: SpecifierSet = field(default=None, compare=False, repr=False)
    origin: Optional[Origin] = field(default=None, compare=False)
    # Where tfdet.patch() sets this switch, row by row with sources (the GPU plan is these rows).
    set_by_patch: Tuple[PatchRow, ...] = ()

    def available_in(self, tf_version):
        return contains(self.specifier, tf_minor(tf_version))

    def set_by_patch_in(self, tf_version, device, when="always"):
        """The set_by_patch row covering this TF version and device under `when`, or None."""
        for row in self.set_by_patch:
            if row.when == when and row.covers(tf_version, device):
                return row
        return None


@dataclass(frozen=True)
class ScanKeys:
    """How `tfdet scan` judges an entry beyond matching its raw_ops in a graph (the
    entry's `scan:` mapping). check: the graph check that can show one op does not
    meet the entry's condition (tfdet.scanning.conditions.CHECKS); raw_ops_only:
    the entry is about calling tf.raw_ops.X directly, so an op a public API made
    does not count; keras: "layer" or "initializer", found on a Keras model's
    objects by the class names its apis end in, since it leaves no op in a graph."""

    check: Optional[str] = None
    raw_ops_only: bool = False
    keras: Optional[str] = None

    @classmethod
    def from_raw(cls, raw):
        raw = raw or {}
        return cls(check=raw.get("check"), raw_ops_only=bool(raw.get("raw_ops_only", False)), keras=raw.get("keras"))

    def to_dict(self):
        data = {}
        if self.check:
            data["check"] = self.check
        if self.raw_ops_only:
            data["raw_ops_only"] = True
        if self.keras:
            data["keras"] = self.keras
        return data


def entry_keys(raw):
    """The Entry fields both catalogue loaders build the same way from an entry's
    YAML mapping beyond its required keys (validate.parse_document, load._entry)."""
    return dict(
        gradient_wrt=tuple(raw.get("gradient_wrt", ())), condition=raw.get("condition"),
        requires=tuple(raw.get("requires", ())), fixed_by_seeding=bool(raw.get("fixed_by_seeding", False)),
        scan=ScanKeys.from_raw(raw.get("scan")), probe_passes=tuple(raw.get("probe_passes", ())))


@dataclass(frozen=True)
class Entry:
    """One known source of nondeterminism (usually one op and its aliases)."""

    id: str
    title: str
    description: str
    apis: Tuple[str, ...]
    raw_ops: Tuple[str, ...]
    direction: str
    root_cause: str
    devices: Mapping[str, Tuple[VersionRange, ...]]
    sources: Tuple[str, ...]
    gradient_wrt: Tuple[str, ...] = ()
    condition: Optional[str] = None
    requires: Tuple[str, ...] = ()
    fixed_by_seeding: bool = False
    scan: ScanKeys = ScanKeys()
    probe_passes: Tuple[str, ...] = ()  # as written; `passes` is what the probe runs
    origin: Optional[Origin] = field(default=None, compare=False)

    @property
    def passes(self):
        """The passes the probe runs this entry in: its probe_passes, else those of its direction."""
        return self.probe_passes or PASSES_OF_DIRECTION[self.direction]

    @property
    def names(self):
        """Every name this entry answers to: public APIs and raw op names."""
        return self.apis + self.raw_ops

    def range_for(self, tf_version, device):
        """The VersionRange covering a TF version on a device, or None."""
        version = tf_minor(tf_version)
        for version_range in self.devices.get(device, ()):
            if version_range.covers(version):
                return version_range
        return None

    def matches(self, name):
        wanted = _normalise_name(name)
        return wanted == self.id or any(_normalise_name(n) == wanted for n in self.names)


@dataclass(frozen=True)
class Verdict:
    """The answer to 'what does this entry do in TF version V on device D?'."""

    entry: Entry
    tf_version: str
    device: str
    range: Optional[VersionRange]

    @property
    def status(self):
        return self.range.status if self.range else "unknown"

    @property
    def fix(self):
        """A one-line description of what makes the op reproducible, or ''."""
        if self.range is None:
            return ""
        parts = []
        if self.range.status in ("deterministic_with_switch",) and self.range.switches:
            parts.append("switch: " + ", ".join(self.range.switches))
        if self.range.patch:
            parts.append("tfdet.patch() (%s)" % self.range.patch)
        if self.range.workaround:
            parts.append("workaround: " + self.range.workaround)
        return "; ".join(parts)


class UnknownName(LookupError):
    """No entry answers to a name; `suggestions` holds the closest names there are."""

    def __init__(self, name, suggestions=()):
        self.name = name
        self.suggestions = tuple(suggestions)
        hint = "; did you mean: %s?" % ", ".join(self.suggestions) if self.suggestions else ""
        super().__init__("nothing in the catalogue is called %r%s" % (name, hint))

    def __str__(self):  # LookupError would show the repr of the message
        return self.args[0]


def _normalise_name(name):
    name = name.strip()
    return name if not name.startswith("tensorflow.") else "tf." + name[len("tensorflow."):]


def _fold(name):
    """The loose form of a name: case and '_' versus '-' do not matter (DenseBincount,
    densebincount; unsorted_segment_sum, unsorted-segment-sum)."""
    return _normalise_name(name).lower().replace("_", "-")


def _answering(tf_version):
    version, stale = answering_version(tf_version)
    if stale:
        warnings.warn(stale, StaleVersionWarning, stacklevel=3)
    return version


class Catalogue:
    """A validated, queryable set of entries and switches."""

    def __init__(self, entries, switches, sensitivities=()):
        self.entries = tuple(entries)
        self.switches = tuple(switches)
        # Measured setting facts (catalog/sensitivity.py), by every name they answer to.
        self.sensitivities = tuple(sensitivities)
        self._sensitivity_exact, self._sensitivity_loose = {}, {}
        for item in self.sensitivities:
            for name in (item.op,) + item.names:
                self._sensitivity_exact.setdefault(_normalise_name(name), item)
                self._sensitivity_loose.setdefault(_fold(name), item)
        self._by_id = {entry.id: entry for entry in self.entries}
        self._switch_by_id = {switch.id: switch for switch in self.switches}
        self._exact, self._loose = {}, {}
        for entry in self.entries:
            for name in (entry.id,) + entry.names:
                for index, key in ((self._exact, _normalise_name(name)), (self._loose, _fold(name))):
                    hits = index.setdefault(key, [])
                    if entry not in hits:
                        hits.append(entry)
        self._display = {}  # loose form -> a name as the catalogue spells it, for suggestions
        for entry in self.entries:
            for name in (entry.id,) + entry.names:
                self._display.setdefault(_fold(name), name)

    def __len__(self):
        return len(self.entries)

    def __iter__(self):
        return iter(self.entries)

    def get(self, entry_id):
        """The entry with this id; KeyError names close ids if there is none."""
        try:
            return self._by_id[entry_id]
        except KeyError:
            raise KeyError("no catalogue entry with id %r" % entry_id) from None

    def switch(self, switch_id):
        return self._switch_by_id[switch_id]

    def find(self, name):
        """Entries answering to `name` (see resolve), or [] when none does."""
        return list(self._exact.get(_normalise_name(name)) or self._loose.get(_fold(name)) or [])

    def resolve(self, name):
        """The entries a name means: an entry id (bincount), a public API alias
        (tf.math.bincount, tensorflow.math.bincount) or a raw op name (DenseBincount).
        An exact match wins; otherwise case and '_' versus '-' are ignored.
        Raises UnknownName, with the closest names, when nothing matches."""
        entries = self.find(name)
        if not entries:
            suggestions, seen = [], set()
            for close in difflib.get_close_matches(_fold(name), list(self._display), n=12):
                meant = tuple(e.id for e in self._loose[close])
                if meant not in seen:  # one name per thing meant, not three aliases of one op
                    seen.add(meant)
                    suggestions.append(self._display[close])
            raise UnknownName(name, suggestions[:3])
        return entries

    def lookup(self, op_or_api, tf_version, device, missing_ok=False):
        """Status and fix of an op or API in a TF version on a device.

        Returns one Verdict per matching entry (an API can be reached by more
        than one source of nondeterminism, e.g. conv2d by its backprop and by
        autotuning). An unknown name raises UnknownName, as tfdet.catalog.lookup()
        and the CLI do; missing_ok=True gives [] instead, for callers that ask
        about an op a user's catalogue may not have. Versions as in affecting().
        """
        _check_device(device)
        version = _answering(tf_version)
        entries = self.find(op_or_api) if missing_ok else self.resolve(op_or_api)
        return [Verdict(e, str(tf_version), device, e.range_for(version, device)) for e in entries]

    def affecting(self, tf_version, device, statuses=VARYING_STATUSES):
        """Verdicts for every entry whose status on (version, device) is in `statuses`.

        A TF version newer than the catalogue is answered with its newest
        release and a StaleVersionWarning; an older one raises
        UncoveredVersionError, a non-version ValueError.
        """
        _check_device(device)
        version = _answering(tf_version)
        verdicts = []
        for entry in self.entries:
            verdict = Verdict(entry, str(tf_version), device, entry.range_for(version, device))
            if verdict.range is not None and verdict.status in statuses:
                verdicts.append(verdict)
        return verdicts

    def set_by_patch(self, tf_version, device, when="always"):
        """Switches whose set_by_patch rows cover this TF version and device under `when`."""
        return [s for s in self.switches if s.set_by_patch_in(tf_version, device, when) is not None]

    def sensitive_to(self, op_or_api, tf_version, device):
        """{setting name: SettingFact} measured for an op or API in a TF version on a device.

        Settings are those of `tfdet probe --vary` (onednn, threads, execution, xla,
        batch, replicas, precision). The name is an op as the probe's cases name it
        (matmul), a public API or a raw op (tf.linalg.matmul, MatMul), or a catalogue
        entry id or alias whose id has measured facts. Facts are per TF version as
        measured, never carried to another version: an empty dict when nothing is known.
        """
        _check_device(device)
        tf_minor(tf_version)  # a non-version is the caller's error, as in lookup()
        item = (self._sensitivity_exact.get(_normalise_name(op_or_api))
                or self._sensitivity_loose.get(_fold(op_or_api)))
        if item is None:
            for entry in self.find(op_or_api):
                item = self._sensitivity_exact.get(entry.id)
                if item is not None:
                    break
        return item.facts(tf_version, device) if item is not None else {}

    def switches_for(self, tf_version, device=None, roles=None):
        """Switches that exist in a TF version (and on a device, with a role)."""
        return [
            s
            for s in self.switches
            if s.available_in(tf_version)
            and (device is None or device in s.devices)
            and (roles is None or s.role in roles)
        ]

    def to_dataframe(self):
        """One row per (entry, device, version range), as a pandas DataFrame."""
        from ..results.optional import optional

        pd = optional("pandas", "Catalogue.to_dataframe()", "pandas")  # an extra: nothing else needs pandas

        rows = []
        for entry in self.entries:
            for device, ranges in entry.devices.items():
                for r in ranges:
                    rows.append(
                        {
                            "id": entry.id,
                            "title": entry.title,
                            "device": device,
                            "versions": r.versions,
                            "status": r.status,
                            "switches": list(r.switches),
                            "patch": r.patch,
                            "workaround": r.workaround,
                            "error_type": r.error.type if r.error else None,
                            "error_message": r.error.message if r.error else None,
                            "direction": entry.direction,
                            "root_cause": entry.root_cause,
                            "apis": list(entry.apis),
                            "raw_ops": list(entry.raw_ops),
                            "sources": list(r.sources),
                        }
                    )
        columns = [
            "id", "title", "device", "versions", "status", "switches", "patch", "workaround",
            "error_type", "error_message", "direction", "root_cause", "apis", "raw_ops", "sources",
        ]
        return pd.DataFrame(rows, columns=columns)


def expand_switch_aliases(switch_ids, same_as):
    """switch_ids plus every switch reachable through same_as ({id: (ids...)}):
    switches that are the same mechanism under another name count as on."""
    result = set(switch_ids)
    todo = list(result)
    while todo:
        for alias in same_as.get(todo.pop(), ()):
            if alias not in result:
                result.add(alias)
                todo.append(alias)
    return frozenset(result)


def _check_device(device):
    if device not in DEVICES:
        raise ValueError("unknown device %r (expected one of: %s)" % (device, ", ".join(DEVICES)))


def range_to_dict(version_range):
    data = {"versions": version_range.versions, "status": version_range.status}
    for key in ("switches", "patch", "workaround", "note"):
        value = getattr(version_range, key)
        if value:
            data[key] = list(value) if isinstance(value, tuple) else value
    if version_range.error:
        data["error"] = {"type": version_range.error.type, "message": version_range.error.message}
    data["sources"] = list(version_range.sources)
    if version_range.evidence:
        data["evidence"] = [item.to_dict() for item in version_range.evidence]
    return data


def entry_to_dict(entry):
    """A JSON-ready dict of an entry, in the catalogue's own field names."""
    data = {
        "id": entry.id,
        "title": entry.title,
        "description": entry.description,
        "apis": list(entry.apis),
        "raw_ops": list(entry.raw_ops),
        "direction": entry.direction,
        "root_cause": entry.root_cause,
    }
    if entry.gradient_wrt:
        data["gradient_wrt"] = list(entry.gradient_wrt)
    if entry.condition:
        data["condition"] = entry.condition
    if entry.requires:
        data["requires"] = list(entry.requires)
    if entry.fixed_by_seeding:
        data["fixed_by_seeding"] = True
    if entry.scan.to_dict():
        data["scan"] = entry.scan.to_dict()
    if entry.probe_passes:
        data["probe_passes"] = list(entry.probe_passes)
    data["devices"] = {device: [range_to_dict(r) for r in ranges] for device, ranges in entry.devices.items()}
    data["sources"] = list(entry.sources)
    return data


def verdict_to_dict(verdict):
    data = {
        "id": verdict.entry.id,
        "title": verdict.entry.title,
        "tf_version": verdict.tf_version,
        "device": verdict.device,
        "status": verdict.status,
        "fix": verdict.fix,
    }
    if verdict.range is not None:
        data.update({k: v for k, v in range_to_dict(verdict.range).items() if k not in ("status",)})
    return data


def expected_to_vary(version_range, switches_on, patched=False):
    """Why the catalogue expects an op to vary in a mode that turns on `switches_on`, or None.

    nondeterministic varies in every mode (but the patched one when a tfdet patch
    covers it); raises_under_determinism varies where none of its switches is on
    (with one on it raises instead); deterministic_with_switch varies unless all
    of its switches are on.
    """
    if version_range is None or version_range.status not in VARYING_STATUSES:
        return None
    status, switches = version_range.status, tuple(version_range.switches or ())
    claim = "the catalogue says %s (TF %s)" % (status, version_range.versions)
    if status == "nondeterministic":
        return None if patched and version_range.patch else claim
    if status == "raises_under_determinism":
        return None if any(s in switches_on for s in switches) else claim + ", and this mode has none of its switches"
    if switches and all(s in switches_on for s in switches):
        return None
    return claim + ", and this mode lacks " + ", ".join(s for s in switches if s not in switches_on)
