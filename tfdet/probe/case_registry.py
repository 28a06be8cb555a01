"""The registry of probe cases and what a case builder is given to work with.

The bottom of the probe's cases: the modules that define cases
(cases_fixtures.py, cases_ops.py, cases_runtime.py) import `case`, `Built`,
`elements` and `varied` from here; cases.py imports those modules to fill
CASES and is what the runner, the worker and the CLI import. Nothing here
imports a case module, so there is no circle.

Runs inside the worker: standard library only, Python 3.7 syntax.
"""

CASES = {}


class CaseSpec(object):
    def __init__(self, case_id, builder, passes, min_tf, fixture):
        self.id = case_id
        self.builder = builder
        self.passes = passes  # a fixture's own; None for a catalogue entry's (the catalogue's `passes`)
        self.min_tf = min_tf  # (major, minor) or None
        self.fixture = fixture


def case(case_id, min_tf=None, fixture=False, passes=None):
    """Register a case builder under a catalogue id (or a test fixture id).

    The passes an entry is probed in are a catalogue fact (its direction, or its
    probe_passes): only a fixture, which has no entry, names its own."""
    if fixture != (passes is not None):
        raise ValueError("probe case %r: %s" % (case_id, "a fixture names its passes" if fixture else
                                                "its passes come from the catalogue entry, not the case"))

    def register(builder):
        if case_id in CASES:
            raise ValueError("probe case %r registered twice" % case_id)
        CASES[case_id] = CaseSpec(case_id, builder, tuple(passes) if passes else None, min_tf, fixture)
        return builder
    return register


class Built(object):
    def __init__(self, inputs, fn, differentiable=()):
        self.inputs = list(inputs)
        self.fn = fn
        self.differentiable = tuple(differentiable)


# -- input helpers -----------------------------------------------------------

def elements(size, base):
    return max(1, int(base * size))


def varied(np, rng, shape, dtype="float32"):
    """Random values of both signs over eight orders of magnitude."""
    values = rng.standard_normal(shape) * 10.0 ** rng.uniform(-4, 4, shape)
    return values.astype(dtype)
