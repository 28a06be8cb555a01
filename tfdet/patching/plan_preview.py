"""What tfdet.patch() would do on this machine, without patching: the data
behind `tfdet status`. Imports TensorFlow only to detect the device."""

import os
import sys
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from ..tfinfo import detect_device, installed_tf_version, onednn_setting, thread_settings
from . import registry
from .plan import fix_of, plan_patch


@dataclass
class Preview:
    tf_version: Optional[str]
    tf_version_source: str  # "installed", "given", or why there is none
    device: str
    device_source: str  # "detected", "given", "assumed (no TensorFlow)"
    python: str
    onednn: str
    onednn_why: str
    threads: Dict[str, object]
    plan: Optional[object] = None  # PatchPlan, None without a TF version
    replacement_apis: Dict[str, List[str]] = field(default_factory=dict)  # public name -> entry ids
    watchable: bool = True

    def as_dict(self):
        plan = self.plan
        data = {
            "tf_version": self.tf_version, "tf_version_source": self.tf_version_source,
            "device": self.device, "device_source": self.device_source, "python": self.python,
            "onednn": {"state": self.onednn, "why": self.onednn_why}, "threads": dict(self.threads),
        }
        if plan is None:
            return data
        data.update({
            "supported": plan.supported, "note": plan.note,
            "switches": [{"name": name, "value": value, "kind": "env"} for name, value in sorted(plan.env.items())
                         if name not in {s.name for s in plan.silenced}]
                        + [{"name": s.name, "kind": "api"} for s in plan.api_switches],
            "silenced": [s.name for s in plan.silenced],
            "replacements": [{"api": api, "entries": entries} for api, entries in sorted(self.replacement_apis.items())],
            "covered": [{"id": c.entry_id, "how": c.how} for c in plan.covered],
            "not_covered": [{"id": r.entry.id, "status": r.verdict.status, "reason": r.reason,
                             "raw_ops": list(r.entry.raw_ops), "fix": fix_of(r),
                             "watched": self.watchable and bool(r.entry.raw_ops)} for r in plan.remaining],
            "bypass_watched": [{"id": r.entry.id, "raw_ops": list(r.entry.raw_ops), "reason": r.reason}
                               for r in plan.bypassable if r.entry.raw_ops] if self.watchable else [],
            "watching": "op callback" if self.watchable else "none (TF < 2.2: named at patch time)",
        })
        return data


def preview(device=None, tf_version=None, seed=None, on_unsupported="raise", catalogue=None, environ=None):
    """The Preview of patch(seed=seed, on_unsupported=...) for this machine, or
    for another TF version or device when given."""
    from ..catalog import default_catalogue
    from .watch import callbacks_in

    environ = os.environ if environ is None else environ
    tf = sys.modules.get("tensorflow")
    if tf_version is not None:
        version_source = "given"
    else:
        tf_version = getattr(tf, "__version__", None) or installed_tf_version()
        version_source = "installed" if tf_version else "no TensorFlow installed"
    if device is not None:
        device_source = "given"
    elif environ.get("TFDET_DEVICE", ""):
        device = environ["TFDET_DEVICE"].strip().lower()
        device_source = "from TFDET_DEVICE=%s" % environ["TFDET_DEVICE"]
    elif tf_version is None or version_source == "given" and installed_tf_version() is None:
        device, device_source = "cpu", "assumed (no TensorFlow to ask)"
    else:
        import tensorflow as tf  # the only way to know whether it sees a GPU

        device, device_source = detect_device(tf), "detected"
    onednn, why = onednn_setting(tf_version, environ)
    result = Preview(tf_version, version_source, device, device_source, sys.version.split()[0], onednn, why,
                     thread_settings(environ, tf))
    if tf_version is None:
        return result
    result.plan = plan_patch(catalogue or default_catalogue(), tf_version, device, registry.names(),
                             seeded=seed is not None, on_unsupported=on_unsupported)
    for name, entries in result.plan.replacements.items():
        label = registry.label(registry.by_name(name))
        known = result.replacement_apis.setdefault(label, [])
        known.extend(e for e in entries if e not in known)
    result.watchable = callbacks_in(tf_version)
    return result
