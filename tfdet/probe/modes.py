"""The probe's modes, derived from the catalogue's switches. Pure.

Each mode runs in its own process, since TensorFlow reads its determinism
switches once. What a mode turns on comes from catalog/switches.yaml, so the
probe and the patch agree on what each TF version has.
"""

from collections import namedtuple

MODES = ("baseline", "env", "api", "patched")
DEFAULT_MODES = ("baseline", "env", "api")

ModeSetup = namedtuple("ModeSetup", "name available reason env unset api_calls patch")


def mode_setups(catalogue, tf_version, patch_available):
    """{mode: ModeSetup} for a TF version. Unavailable modes carry the reason."""
    env_switches = [s for s in catalogue.switches if s.kind == "env"]
    enabling = catalogue.switches_for(tf_version, roles=("enables_determinism",))
    env = {s.name: s.value for s in enabling if s.kind == "env"}
    api = [s for s in enabling if s.kind == "api"]
    # Every mode starts from a clean slate: no inherited determinism variables.
    unset = sorted(s.name for s in env_switches)
    api_reason = "no determinism API in TF %s (%s)" % (tf_version, ", ".join(
        "%s arrived in %s" % (s.name, s.versions) for s in catalogue.switches
        if s.kind == "api" and s.role == "enables_determinism"))
    return {
        "baseline": ModeSetup("baseline", True, "", {}, unset, [], False),
        "env": ModeSetup("env", bool(env), "" if env else "no determinism environment variable in TF %s" % tf_version,
                         env, unset, [], False),
        "api": ModeSetup("api", bool(api), "" if api else api_reason, {}, unset,
                         [{"name": s.name} for s in api], False),
        "patched": ModeSetup("patched", patch_available,
                             "" if patch_available else "tfdet.patch() is not available in this tfdet",
                             {}, unset, [], True),
    }


def process_environment(base_environ, setup, extra=None):
    """The environment for a worker of this mode: base, minus switches, plus the mode's."""
    environ = {k: v for k, v in base_environ.items() if k not in setup.unset}
    environ.update(extra or {})
    environ.update(setup.env)
    return environ
