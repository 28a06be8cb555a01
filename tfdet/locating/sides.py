"""The two sides of `tfdet locate --between A B SCRIPT`, and the settings names
a difference between two environments is put in. Pure.

A side is a comma-separated list of items, each NAME=VALUE:

- a probe setting, lowercase: threads=N (intra- and inter-op threads),
  execution=eager|function (tf.config.run_functions_eagerly), xla=on|off
  (tf.config.optimizer.set_jit: auto-clustering), onednn=on|off
  (TF_ENABLE_ONEDNN_OPTS=1|0);
- anything else is an environment variable set for that side's runs (its
  value may hold spaces, not commas). A variable one side sets and the other
  does not is inherited by the other from the caller's environment.

`''` (an empty side) runs as the caller's environment is.
"""

import re
from dataclasses import dataclass, field
from typing import Dict

SETTINGS = {
    "threads": "intra- and inter-op threads (tf.config.threading), a positive integer",
    "execution": "eager or function (tf.config.run_functions_eagerly)",
    "xla": "on or off (tf.config.optimizer.set_jit: XLA auto-clustering of tf.function graphs)",
    "onednn": "on or off (TF_ENABLE_ONEDNN_OPTS=1 or 0)",
}

# Which setting an environment variable (or a described property of a machine)
# changes: the names the catalogue's sensitive_to facts are keyed by.
SETTING_OF = {
    "TF_ENABLE_ONEDNN_OPTS": "onednn", "onednn": "onednn", "onednn_enabled": "onednn",
    "TF_NUM_INTRAOP_THREADS": "threads", "TF_NUM_INTEROP_THREADS": "threads", "OMP_NUM_THREADS": "threads",
    "intra_op_threads": "threads", "inter_op_threads": "threads", "cpu_count": "threads",
    "execution": "execution",
    "TF_XLA_FLAGS": "xla", "XLA_FLAGS": "xla", "xla_jit": "xla",
    "NVIDIA_TF32_OVERRIDE": "tf32",
    "TF_DETERMINISTIC_OPS": "determinism", "TF_CUDNN_DETERMINISTIC": "determinism",
    "op_determinism_enabled": "determinism",
    "tf_version": "tf_version", "tf_git_version": "tf_version",
    "cpu_model": "cpu", "cpu_flags": "cpu",
    "device": "device", "gpus": "gpu", "nvidia_driver": "gpu", "cuda_version": "gpu", "cudnn_version": "gpu",
}

_VARIABLE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class SideError(ValueError):
    """A side that cannot be read (one line for the user)."""


@dataclass(frozen=True)
class Side:
    """One side: environment variables to set and settings to apply in its runs."""

    text: str
    env: Dict[str, str] = field(default_factory=dict)
    settings: Dict[str, str] = field(default_factory=dict)

    def items(self):
        """{name: value} of everything the side asks for (settings by their name, variables by theirs)."""
        return dict(self.env, **self.settings)


def parse_side(text):
    """The Side `text` asks for; SideError naming the item that is not one."""
    env, settings = {}, {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, equals, value = item.partition("=")
        name = name.strip()
        if not equals:
            raise SideError("%r: expected NAME=VALUE (a setting: %s; or an environment variable)" % (
                item, ", ".join(sorted(SETTINGS))))
        if name in SETTINGS:
            settings[name] = _setting_value(name, value.strip())
            if name == "onednn":  # applied through its variable, before TensorFlow starts
                env["TF_ENABLE_ONEDNN_OPTS"] = "1" if settings[name] == "on" else "0"
        elif _VARIABLE.match(name) and name.lower() != name:
            env[name] = value
        else:
            raise SideError("%r: %s is neither a setting (%s) nor an environment variable name (letters, digits, "
                            "_, with a capital)" % (item, name, ", ".join(sorted(SETTINGS))))
    return Side(text, env, settings)


def _setting_value(name, value):
    if name == "threads":
        if not value.isdigit() or int(value) < 1:
            raise SideError("threads=%s: expected a positive integer" % value)
        return str(int(value))
    allowed = {"execution": ("eager", "function"), "xla": ("on", "off"), "onednn": ("on", "off")}[name]
    if value.lower() not in allowed:
        raise SideError("%s=%s: expected %s" % (name, value, " or ".join(allowed)))
    return value.lower()


def apply_settings(tf, settings):
    """Apply a side's settings in a run's process, before the program and before
    TensorFlow's runtime starts (thread pools are fixed at the first op)."""
    if "threads" in settings:
        tf.config.threading.set_intra_op_parallelism_threads(int(settings["threads"]))
        tf.config.threading.set_inter_op_parallelism_threads(int(settings["threads"]))
    if "execution" in settings:
        tf.config.run_functions_eagerly(settings["execution"] == "eager")
    if "xla" in settings:
        tf.config.optimizer.set_jit(settings["xla"] == "on")


def settings_changed(names):
    """The settings the changed properties or variables `names` touch, sorted; unknown names as themselves."""
    return sorted({SETTING_OF.get(name, name) for name in names})
