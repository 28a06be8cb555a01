"""The contract between `tfdet diverge --script train.py` and the script.

tfdet runs the script once per training, each time in a new process, with the
mode already applied (determinism switches, tfdet.patch()) before the script
starts. The script asks for its seeds and saves what it predicted:

    import tfdet.diverge
    ctx = tfdet.diverge.context()
    keras.utils.set_random_seed(ctx.init_seed)       # the initialisation
    order = np.random.default_rng(ctx.batch_seed)    # the batch order
    lr = ctx.lr or 0.01                               # --lr, when given
    ...train...
    ctx.save(model.predict(x_test), weights=model.get_weights(), labels=y_test, steps=steps)

The same values arrive as environment variables (TFDET_DIVERGE_INIT_SEED,
TFDET_DIVERGE_BATCH_SEED, TFDET_DIVERGE_LR, TFDET_DIVERGE_OUT) for scripts
that would rather not import tfdet. Run outside tfdet diverge, context()
gives seed 1 for both and save() writes nothing. Standard library and numpy.
"""

import os

INIT_SEED, BATCH_SEED, LR, OUT = ("TFDET_DIVERGE_INIT_SEED", "TFDET_DIVERGE_BATCH_SEED", "TFDET_DIVERGE_LR",
                                  "TFDET_DIVERGE_OUT")
# tfdet compare's "data" source: the seed of the training set's bootstrap resample
# (unset: train on the whole set; context().data_seed is None).
DATA_SEED = "TFDET_DIVERGE_DATA_SEED"
# tfdet compare's "augment" source: the seed of the augmentation and dropout
# layers (unset: context().augment_seed is the init seed, as keras.utils.set_random_seed
# would make them); and its "hparams" source: the drawn hyperparameters, as JSON.
AUGMENT_SEED = "TFDET_DIVERGE_AUGMENT_SEED"
HPARAMS = "TFDET_DIVERGE_HPARAMS"


class Context(object):
    def __init__(self, init_seed, batch_seed, lr, out):
        self.init_seed = init_seed
        self.batch_seed = batch_seed
        self.lr = lr  # None: no --lr given; the script uses its own
        self.out = out  # where save() writes; None outside tfdet diverge
        self.data_seed = None  # tfdet compare --sources data: resample the training set with it
        self.augment_seed = init_seed  # tfdet compare --sources augment: seed the augmentation/dropout layers with it
        self.hparams = {}  # tfdet compare --sources hparams --space ...: lr, momentum, epochs, batch_size drawn

    def save(self, predictions, weights=None, labels=None, steps=None):
        """predictions: class ids [examples] or logits/probabilities [examples, classes];
        weights: a list of arrays (final weights; for the weight distances); labels: the
        true classes (for accuracy and per-class figures); steps: training steps taken."""
        if self.out is None:
            return
        import numpy as np

        arrays = {"predictions": np.asarray(predictions)}
        if labels is not None:
            arrays["labels"] = np.asarray(labels)
        if steps is not None:
            arrays["steps"] = np.asarray(int(steps))
        for i, w in enumerate(weights or []):
            arrays["w%03d" % i] = np.asarray(w)
        np.savez(self.out, **arrays)


def context(environ=None):
    environ = os.environ if environ is None else environ
    lr = environ.get(LR)
    ctx = Context(int(environ.get(INIT_SEED, 1)), int(environ.get(BATCH_SEED, 1)),
                  float(lr) if lr else None, environ.get(OUT))
    if environ.get(DATA_SEED):
        ctx.data_seed = int(environ[DATA_SEED])
    if environ.get(AUGMENT_SEED):
        ctx.augment_seed = int(environ[AUGMENT_SEED])
    if environ.get(HPARAMS):
        import json

        ctx.hparams = json.loads(environ[HPARAMS])
    return ctx
