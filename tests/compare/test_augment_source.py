"""The augment source reaches the layers it names and nothing else: the
digits-augment workload trained for real, and the script contract's values."""

import numpy as np
import pytest

from tfdet.diverge import contract


pytestmark = pytest.mark.usefixtures("no_global_seed_left")  # they set keras.utils.set_random_seed


def _train(augment_seed, init_seed=1, epochs=1):
    tf = pytest.importorskip("tensorflow")
    keras = pytest.importorskip("keras")
    pytest.importorskip("sklearn")
    from tfdet.diverge.workloads import WORKLOADS, train

    result = train(tf, np, keras, WORKLOADS["digits-augment"], init_seed, 1, 0.05, 0.0, epochs, 32, None,
                   augment_seed)
    return result["weights"]


def _same(a, b):
    return all(np.array_equal(x, y) for x, y in zip(a, b))


def test_the_augment_seed_changes_training_and_repeats_bitwise():
    first, again, other = _train(5), _train(5), _train(6)
    assert _same(first, again)  # the seed alone decides the shifts and the dropped units (a CPU conv net repeats)
    assert not _same(first, other)


def test_the_augment_seed_leaves_the_initialisation_alone():
    keras = pytest.importorskip("keras")
    from tfdet.diverge.workloads import digits_augment_model

    weights = []
    for augment_seed in (5, 6):
        keras.utils.set_random_seed(3)
        weights.append(digits_augment_model(keras, augment_seed).get_weights())
    assert _same(*weights)


def test_a_script_reads_the_augment_seed_and_the_drawn_hyperparameters():
    given = contract.context({contract.INIT_SEED: "4", contract.AUGMENT_SEED: "2007",
                              contract.HPARAMS: '{"lr": 0.03, "batch_size": 64}'})
    assert (given.init_seed, given.augment_seed, given.hparams) == (4, 2007, {"lr": 0.03, "batch_size": 64})
    alone = contract.context({contract.INIT_SEED: "4"})
    assert (alone.augment_seed, alone.hparams) == (4, {})  # outside compare: the init seed, as set_random_seed makes it
