"""What a diverge run trains: the conditions, their seeds, the MLSys 2022 cell
names, and the list of trainings (workload x lr x condition x mode x run). Pure.

A condition is "INIT-BATCHES": whether the initialisation seed and the
batch-order seed are the same in every run (fixed) or differ per run (random).
"""

from collections import namedtuple

from ..results.diverge_records import CONDITIONS

DEFAULT_MODES = ("baseline", "patched")

# The modes whose kernels are deterministic (op determinism on, or tfdet.patch());
# baseline is TF as it comes.
DETERMINISTIC_MODES = ("env", "api", "patched")

# The seed of every "fixed" choice; "random" choices of run k use BASE_RANDOM + k.
FIXED_SEED = 1
BASE_RANDOM = 1000

Training = namedtuple("Training", "workload lr condition mode run init_seed batch_seed")


def parse_condition(name):
    """(init fixed?, batches fixed?) of a condition name; ValueError naming the choices."""
    if name not in CONDITIONS:
        raise ValueError("unknown condition %r (choose from %s)" % (name, ", ".join(CONDITIONS)))
    init, batches = name.split("-")
    return init == "fixed", batches == "fixed"


def seeds(condition, run):
    """(init seed, batch-order seed) of run number `run` under a condition."""
    init_fixed, batches_fixed = parse_condition(condition)
    return (FIXED_SEED if init_fixed else BASE_RANDOM + run,
            FIXED_SEED if batches_fixed else BASE_RANDOM + 500 + run)


def cell_name(condition, mode):
    """The name Zhuang et al. (MLSys 2022, "Randomness in Neural Network Training")
    give the cell: IMPL (fixed seeds, nondeterministic kernels), ALGO+IMPL (random
    seeds, nondeterministic), ALGO (random, deterministic), control (fixed,
    deterministic). The mixed conditions (one seed fixed) have no name there: ''."""
    deterministic = mode in DETERMINISTIC_MODES
    if condition == "fixed-fixed":
        return "control" if deterministic else "IMPL"
    if condition == "random-random":
        return "ALGO" if deterministic else "ALGO+IMPL"
    return ""


def trainings(workload, lrs, conditions, modes, runs):
    """Every training, interleaved so that machine drift spreads evenly over the
    modes: for each (lr, condition, run), one training per mode, in turn."""
    for condition in conditions:
        parse_condition(condition)
    return [Training(workload, lr, condition, mode, run, *seeds(condition, run))
            for lr in lrs for condition in conditions for run in range(runs) for mode in modes]


def training_key(training):
    """The identity of a training in a results file (what --resume matches)."""
    return (training.workload, float(training.lr), training.condition, training.mode, int(training.run))


Sweep = namedtuple("Sweep", "lrs conditions modes runs")


def resolve_sweep(given, recorded=None, default=None):
    """What a run trains: the learning rates, conditions, modes and runs per cell. Pure.

    `given` holds what the user asked for (None where they left a choice out).
    A new run takes the given values, else `default`'s. A resumed run
    (`recorded`: the file's header) keeps everything the file planned and adds
    what is given beyond it (more lrs, conditions or modes; more runs), so a sweep
    grows without training again what it has; a choice left out is the file's.
    Returns (Sweep, [what grew, as text]).
    """
    if recorded is None:
        return Sweep(*(list(g) if isinstance(g, (list, tuple)) else g
                       for g in (value if value is not None else fallback
                                 for value, fallback in zip(given, default)))), []
    grew = []

    def union(name, old, new, order=None):
        merged = list(old) + [x for x in (new or []) if x not in old]
        if order is not None:
            merged.sort(key=list(order).index)
        if merged != list(old):
            grew.append("%s %s -> %s" % (name, ",".join(map(_text, old)), ",".join(map(_text, merged))))
        return merged

    lrs = union("lr", [float(x) for x in recorded.lrs], [float(x) for x in given.lrs or []])
    conditions = union("conditions", recorded.conditions, given.conditions, CONDITIONS)
    modes = union("modes", recorded.modes, given.modes)
    runs = max(recorded.runs, given.runs or 0)
    if runs != recorded.runs:
        grew.append("runs %d -> %d" % (recorded.runs, runs))
    return Sweep(lrs, conditions, modes, runs), grew


def _text(value):
    return "%g" % value if isinstance(value, float) else str(value)
