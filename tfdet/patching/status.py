"""What tfdet.patch() did (or would do), as data that prints readably. Pure."""

from dataclasses import asdict, dataclass, field
from typing import Dict, List, Optional, Tuple


@dataclass
class Status:
    patched: bool  # True only if patch() changed something
    tf_version: Optional[str] = None
    device: Optional[str] = None
    device_why: str = ""  # why the plan is for that device: given, TFDET_DEVICE, or detected
    supported: bool = True
    env: Dict[str, str] = field(default_factory=dict)
    api_switches: List[str] = field(default_factory=list)
    seed: Optional[int] = None
    seeded: List[str] = field(default_factory=list)
    replacements: Dict[str, List[str]] = field(default_factory=dict)  # patch name -> catalogue entry ids
    replaced_places: Dict[str, int] = field(default_factory=dict)  # patch name -> aliases or gradients changed
    replaced_apis: Dict[str, int] = field(default_factory=dict)  # public name (or gradient) -> bindings
    covered: List[Tuple[str, str]] = field(default_factory=list)  # (entry id, how)
    remaining: List[Tuple[str, str, str]] = field(default_factory=list)  # (entry id, status, reason)
    silenced: List[str] = field(default_factory=list)  # error-silencing switches set under on_unsupported="warn"
    switched_on: List[str] = field(default_factory=list)  # display names, same_as duplicates folded
    watching: str = ""  # how uses of not-covered ops are caught
    seen: List[Tuple[str, Tuple[str, ...], Optional[str]]] = field(default_factory=list)  # (op, entries, file:line)
    warnings: List[str] = field(default_factory=list)
    # (tf.raw_ops call, public API to call instead): raw ops of replaced sources that a direct call
    # runs with the stock kernel (the replacements rebind public functions and swap gradients)
    raw_not_replaced: List[Tuple[str, str]] = field(default_factory=list)
    batch_invariant: bool = False  # patch(batch_invariant=True) was asked for
    batch_invariant_apis: Dict[str, int] = field(default_factory=dict)  # public name -> bindings made invariant
    not_batch_invariant: List[Tuple[str, str]] = field(default_factory=list)  # (op, why not), when asked for

    def as_dict(self):
        data = asdict(self)
        data["covered"] = [list(c) for c in self.covered]
        data["remaining"] = [list(r) for r in self.remaining]
        data["seen"] = [[op, list(entries), site] for op, entries, site in self.seen]
        data["raw_not_replaced"] = [list(r) for r in self.raw_not_replaced]
        data["not_batch_invariant"] = [list(r) for r in self.not_batch_invariant]
        return data

    def summary_line(self):
        """The one line patch() prints: what it switched on and replaced, and
        how many catalogued sources it does not cover."""
        if not self.supported:
            return "tfdet: TF %s is not supported; nothing was changed" % self.tf_version
        parts = ["switched on " + ", ".join(self.switched_on) if self.switched_on else "no switch to turn on"]
        if self.replaced_apis:
            parts.append("replaced " + ", ".join(
                "%s (%d binding%s)" % (name, n, "" if n == 1 else "s") for name, n in sorted(self.replaced_apis.items())))
        if self.batch_invariant:
            parts.append(self._batch_invariant_words())
        if self.seed is not None:
            parts.append("seeded %d" % self.seed)
        if self.silenced:
            parts.append("TF determinism errors silenced by %s (ops they guard warn when used)" % ", ".join(self.silenced))
        if self.remaining:
            parts.append("%d catalogued source%s not covered%s: tfdet.status()" % (
                len(self.remaining), "" if len(self.remaining) == 1 else "s",
                ", warned on use" if self.watching.startswith("op callback") else ""))
        else:
            parts.append("nothing catalogued left uncovered")
        return "tfdet: " + "; ".join(parts)

    def _batch_invariant_words(self):
        made = ", ".join("%s (%d binding%s)" % (name, n, "" if n == 1 else "s")
                         for name, n in sorted(self.batch_invariant_apis.items()))
        return "batch-invariant: %s; %d op kind%s cannot be made so (tfdet.status())" % (
            made or "nothing replaced", len(self.not_batch_invariant), "" if len(self.not_batch_invariant) == 1
            else "s")

    def __repr__(self):
        return "<tfdet.Status patched=%s replacements=%d remaining=%d>" % (
            self.patched, len(self.replacements), len(self.remaining))

    def __str__(self):
        if self.tf_version is None:
            return "tfdet: not patched (call tfdet.patch() right after importing TensorFlow)"
        if not self.supported:
            return "\n".join(["tfdet: not patched: unsupported TF version %s, nothing was changed" % self.tf_version]
                             + ["  warning: " + text for text in self.warnings])
        lines = ["tfdet.patch() on TF %s, %s%s" % (self.tf_version, self.device,
                                                   "" if self.patched else ": nothing was changed")]
        if self.device_why:
            lines.append("  plan for:      %s (%s)" % (self.device, self.device_why))
        switches = ["%s=%s" % kv for kv in sorted(self.env.items())] + ["%s()" % s for s in self.api_switches]
        lines.append("  switches on:   %s" % (", ".join(switches) or "none"))
        if self.silenced:
            lines.append("  silenced:      %s (on_unsupported='warn': ops TF would refuse run nondeterministically)"
                         % ", ".join(self.silenced))
        if self.seed is None:
            lines.append("  seeds:         not set (pass seed=N to seed Python, NumPy, TF and Keras)")
        else:
            lines.append("  seeds:         %d (%s)" % (self.seed, ", ".join(self.seeded)))
        if self.replacements:
            lines.append("  replaced:")
            for name, entries in sorted(self.replacements.items()):
                lines.append("    %-28s %d place%s, for %s" % (
                    name, self.replaced_places.get(name, 0), "" if self.replaced_places.get(name, 0) == 1 else "s",
                    ", ".join(entries)))
        else:
            lines.append("  replaced:      nothing (the catalogue lists no op that needs it here)")
        lines.append("  covered:       %d catalogued source%s of nondeterminism" % (
            len(self.covered), "" if len(self.covered) == 1 else "s"))
        if self.remaining:
            lines.append("  NOT covered:")
            for entry_id, _status, reason in self.remaining:
                lines.append("    %-40s %s" % (entry_id, reason))
        else:
            lines.append("  NOT covered:   nothing the catalogue knows of")
        if self.watching:
            lines.append("  watching:      %s" % self.watching)
        for op_type, entries, site in self.seen:
            lines.append("  used:          %s at %s (%s)" % (op_type, site or "?", ", ".join(entries)))
        for text in self.warnings:
            lines.append("  warning: " + text)
        if self.replacements:
            lines.append("  (replacements cover the public APIs and what TF and Keras call through them)")
        if self.batch_invariant:
            lines.append("  batch-invariant: %s" % (", ".join(
                "%s (%d place%s, rows in fixed 8-row blocks)" % (name, n, "" if n == 1 else "s")
                for name, n in sorted(self.batch_invariant_apis.items())) or "nothing replaced"))
            lines.append("  NOT batch-invariant:")
            for op, why in self.not_batch_invariant:
                lines.append("    %s: %s" % (op, why))
        if self.raw_not_replaced:
            lines.append("  raw ops NOT replaced (a direct call runs the stock kernel):")
            for call, public in self.raw_not_replaced:
                lines.append("    %-40s call %s instead" % (call, public))
        return "\n".join(lines)
