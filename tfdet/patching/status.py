"""What tfdet.patch() did, as data that prints readably. Pure."""


class Status(object):
    def __init__(self, patched, tf_version=None, device=None, supported=True, env=None, api_switches=None,
                 seed=None, seeded=None, replacements=None, replaced_places=None, covered=None, remaining=None,
                 warnings=None):
        self.patched = patched
        self.tf_version = tf_version
        self.device = device
        self.supported = supported
        self.env = env or {}
        self.api_switches = api_switches or []
        self.seed = seed
        self.seeded = seeded or []
        self.replacements = replacements or {}  # patch name -> catalogue entry ids
        self.replaced_places = replaced_places or {}  # patch name -> aliases or gradients changed
        self.covered = covered or []  # (entry id, how)
        self.remaining = remaining or []  # (entry id, status, reason)
        self.warnings = warnings or []

    def as_dict(self):
        return dict(vars(self), covered=[list(c) for c in self.covered],
                    remaining=[list(r) for r in self.remaining])

    def __repr__(self):
        return "<tfdet.Status patched=%s replacements=%d remaining=%d>" % (
            self.patched, len(self.replacements), len(self.remaining))

    def __str__(self):
        if not self.patched:
            return "tfdet: not patched (call tfdet.patch() right after importing TensorFlow)"
        lines = ["tfdet.patch() on TF %s, %s" % (self.tf_version, self.device)]
        if not self.supported:
            lines.append("  unsupported TF version: nothing was changed")
        switches = ["%s=%s" % kv for kv in sorted(self.env.items())] + ["%s()" % s for s in self.api_switches]
        lines.append("  switches on:   %s" % (", ".join(switches) or "none"))
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
        for text in self.warnings:
            lines.append("  warning: " + text)
        if self.replacements:
            lines.append("  (replacements cover the public APIs and what TF and Keras call through them; "
                         "direct tf.raw_ops calls keep the stock kernels)")
        return "\n".join(lines)
