"""The modes (baseline, env, api, patched), derived from the catalogue's switches. Pure.

Each mode runs in its own process, since TensorFlow reads its determinism
switches once. What a mode turns on comes from catalog/switches.yaml, so the
probe, diverge, the matrix and the patch agree on what each TF version has.
Its environment is set by the parent (process_environment, launch.child_environ);
the rest is applied inside the child by runtime.apply.apply_mode.
"""

from collections import namedtuple

from ..catalog.model import expand_switch_aliases

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
                             "" if patch_available else "tfdet.patch() cannot run here (not in this tfdet, or "
                             "the interpreter lacks its dependencies: pip install tfdet there)",
                             {}, unset, [], True),
    }


def classify_modes(modes, setups, requested):
    """(modes to run, {mode: reason} failures, {mode: reason} not applicable).

    A mode this TF lacks is a failure when it was asked for (`--modes api` on
    TF 1.15) and only not applicable among the default modes.
    """
    active = [m for m in modes if setups[m].available]
    missing = {m: setups[m].reason for m in modes if not setups[m].available}
    return active, (missing if requested else {}), ({} if requested else missing)


def process_environment(base_environ, setup, extra=None):
    """The environment for a worker of this mode: base, minus switches, plus the mode's."""
    environ = {k: v for k, v in base_environ.items() if k not in setup.unset}
    environ.update(extra or {})
    environ.update(setup.env)
    return environ


def mode_switch_ids(catalogue, setups, tf_version, device):
    """{mode: frozenset of catalogue switch ids the mode turns on for this device and TF}.

    env turns on the variables it sets, api the APIs it calls, patched every
    enabling switch (tfdet.patch() turns them all on); `same_as` aliases count too.
    """
    usable = [s for s in catalogue.switches if device in s.devices and _honoured(s, tf_version)]
    same_as = {s.id: tuple(s.same_as) for s in catalogue.switches}
    result = {}
    for mode, setup in setups.items():
        ids = {s.id for s in usable if s.kind == "env" and s.role == "enables_determinism" and s.name in setup.env
               and (s.value is None or str(setup.env[s.name]) == str(s.value))}
        called = {call["name"] for call in setup.api_calls}
        ids.update(s.id for s in usable if s.kind == "api" and s.name in called)
        if setup.patch:
            ids.update(s.id for s in usable if s.role == "enables_determinism")
        result[mode] = expand_switch_aliases(ids, same_as)
    return result


def _honoured(switch, tf_version):
    try:
        return switch.available_in(tf_version)
    except ValueError:
        return False
