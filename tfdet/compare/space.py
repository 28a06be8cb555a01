"""The hyperparameter space of the "hparams" source: each pair of trainings
draws its hyperparameters from it (A and B of a pair draw the same values, so
they still differ only by setup). Pure; numpy only.

One hyperparameter per text, KEY=SPEC:
  lr=0.01:0.1:log      log-uniform between 0.01 and 0.1
  momentum=0:0.9       uniform between 0 and 0.9
  batch_size=16|32|64  one of the listed values, each as likely

Bouthillier et al. (MLSys 2021, section 2) count the choice of hyperparameters
among the sources of variance of a benchmark; drawing them at random from a
declared space is the cheap stand-in for re-running the hyperparameter search.
"""

import math

from ..results.compare_records import HPARAMS

INTEGERS = ("epochs", "batch_size")


class SpaceError(ValueError):
    """A --space text that cannot be read; the message names it."""


def _number(key, text, whole):
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        raise SpaceError("--space %s: %r is not %s" % (key, text, "a whole number" if whole else "a number")) from None
    if not math.isfinite(value) or value < 0 or (key != "momentum" and value == 0):
        raise SpaceError("--space %s: %r is out of range (%s)" % (
            key, text, "0 or more" if key == "momentum" else "more than 0"))
    return value


def parse(text):
    """'KEY=SPEC' -> (key, canonical spec text); SpaceError naming what is wrong."""
    key, eq, spec = text.partition("=")
    key, spec = key.strip().replace("-", "_"), spec.strip()
    if not eq or key not in HPARAMS:
        raise SpaceError("--space %r is not KEY=SPEC with KEY one of %s" % (text, ", ".join(HPARAMS)))
    whole = key in INTEGERS
    if "|" in spec:
        values = [_number(key, v.strip(), whole) for v in spec.split("|")]
        if len(set(values)) < 2:
            raise SpaceError("--space %s: a choice needs two values or more, got %r" % (key, spec))
        return key, "|".join(repr(v) for v in values)
    parts = spec.split(":")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "log"):
        raise SpaceError("--space %s: %r is not LOW:HIGH, LOW:HIGH:log or A|B|C" % (key, spec))
    if whole:
        raise SpaceError("--space %s takes a choice of whole numbers (A|B|C), not a range" % key)
    low, high = _number(key, parts[0], False), _number(key, parts[1], False)
    if not low < high:
        raise SpaceError("--space %s: LOW %r must be below HIGH %r" % (key, parts[0], parts[1]))
    if len(parts) == 3 and low <= 0:
        raise SpaceError("--space %s: a log range needs LOW above 0" % key)
    return key, ":".join([repr(low), repr(high)] + parts[2:])


def parse_all(texts):
    """The space as {key: spec}, each key once."""
    space = {}
    for text in texts:
        key, spec = parse(text)
        if key in space:
            raise SpaceError("--space %s is given twice" % key)
        space[key] = spec
    return space


def draw(space, seed):
    """One draw of every hyperparameter, in key order, from numpy's PCG64 seeded
    with `seed`: the same space and seed give the same values anywhere."""
    import numpy as np

    rng = np.random.default_rng(seed)
    values = {}
    for key in sorted(space):
        spec = space[key]
        if "|" in spec:
            choices = spec.split("|")
            picked = choices[int(rng.integers(0, len(choices)))]
            values[key] = int(picked) if key in INTEGERS else float(picked)
            continue
        parts = spec.split(":")
        low, high = float(parts[0]), float(parts[1])
        u = float(rng.random())
        values[key] = math.exp(math.log(low) + u * (math.log(high) - math.log(low))) if parts[2:] else low + u * (
            high - low)
    return values
