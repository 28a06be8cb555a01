"""What a comparison trains: the seeds of each pair, the mode, the spec a
training process gets (tfdet.diverge.training's), and when the rule looks. Pure.

A source is randomised or held fixed:
  data      a bootstrap resample of the training set (the test set never changes)
  init      the initialisation seed (keras.utils.set_random_seed)
  order     the batch-order seed
  augment   the seed of the model's augmentation and dropout layers (held
            fixed: seed 1 in every training)
  hparams   the hyperparameters, drawn from the declared space (compare.space);
            held fixed, each setup trains with its own
  numerics  TF's kernels as they come (mode baseline); held fixed, every training
            runs under tfdet.patch() (mode patched)
Pair i of A and pair i of B get the same seeds, so they differ only by setup.
"""

from collections import namedtuple

from ..results.compare_records import SOURCES
from . import space as spaces

FIXED_SEED = 1  # diverge's fixed seed: a held-fixed init or order is the same in every training
BASE = {"data": 3000, "init": 1000, "order": 1500, "augment": 2000, "hparams": 2500}  # seeds of pair i: BASE + i (init/order as diverge's random ones)
AA_OFFSET = 100000  # the second A of an A/A comparison: the same setup on other seeds
SHARE_OFFSET = 50000  # the trainings of the variance shares: seeds no pair uses

Planned = namedtuple("Planned", "arm pair mode init_seed batch_seed data_seed augment_seed hparams")


def parse_sources(text_items):
    """The sources in canonical order; ValueError naming the choices."""
    bad = [s for s in text_items if s not in SOURCES]
    if bad:
        raise ValueError("unknown source %s (choose from %s)" % (", ".join(bad), ", ".join(SOURCES)))
    return [s for s in SOURCES if s in text_items]


def fixed_sources(sources):
    return [s for s in SOURCES if s not in sources]


def _seed(source, varied, index):
    if source not in varied:
        return None if source == "data" else FIXED_SEED
    return BASE[source] + index


def _planned(arm, pair, varied, index, space):
    mode = "baseline" if "numerics" in varied else "patched"
    hparams = spaces.draw(space, BASE["hparams"] + index) if "hparams" in varied and space else {}
    return Planned(arm, pair, mode, _seed("init", varied, index), _seed("order", varied, index),
                   _seed("data", varied, index), _seed("augment", varied, index), hparams)


def pair_trainings(pair, sources, aa=False, space=None, candidates=("B",)):
    """The trainings of pair `pair`: A and each candidate (B, C, ...) on the same seeds
    and hyperparameters (A/A: B on other seeds and other draws)."""
    return [_planned("A", pair, sources, pair, space)] + [
        _planned(arm, pair, sources, pair + (AA_OFFSET if aa else 0), space) for arm in candidates]


def share_trainings(source, runs, space=None):
    """`runs` trainings of A that vary `source` alone (every other source fixed)."""
    return [_planned("share:" + source, k, [source], SHARE_OFFSET + k, space) for k in range(runs)]


def spec(setup, planned, mode_spec):
    """The spec tfdet.diverge.job.run_training takes for one training of `setup`."""
    out = {"workload": setup.workload, "lr": setup.lr, "momentum": setup.momentum, "epochs": setup.epochs,
           "batch_size": setup.batch_size, "init_seed": planned.init_seed, "batch_seed": planned.batch_seed,
           "data_seed": planned.data_seed, "augment_seed": planned.augment_seed}
    if planned.hparams:  # drawn values replace the setup's own (the CLI refuses a setup that sets them)
        out.update(planned.hparams)
        out["hparams"] = dict(planned.hparams)  # a script reads them from tfdet.diverge.context().hparams
    if setup.script:
        out.update(script=setup.script, script_args=list(setup.script_args))
    if setup.function:
        out.update(function=setup.function, labels=None)
    out.update(mode_spec)
    return out
