"""Does a prediction change with the batch it is computed in?

A classifier served one request at a time and evaluated in batches of 32 should
give a request the same scores either way. On many CPUs it does not, by a few
units in the last place: one row's matrix product takes another kernel than
many rows'. tfdet.testing.assert_batch_invariant checks it and names the op.

    python -m pytest -q examples/testing/test_batch_invariance.py
"""

import numpy as np
import pytest

from tfdet.testing import assert_batch_invariant

keras = pytest.importorskip("keras")
tf = pytest.importorskip("tensorflow")


def make_classifier():
    keras.utils.set_random_seed(0)
    return keras.Sequential([keras.Input((784,)), keras.layers.Dense(128, activation="relu"),
                             keras.layers.Dense(10, activation="softmax")])


def requests():
    return np.random.default_rng(0).normal(size=(32, 784)).astype("float32")


def scale(batch):
    """Preprocessing, row by row: nothing here mixes the rows of a batch."""
    return tf.clip_by_value(batch / 4.0, -1.0, 1.0)


def test_preprocessing_is_batch_invariant():
    assert_batch_invariant(scale, requests())


def test_scores_do_not_depend_on_the_batch():
    assert_batch_invariant(make_classifier(), requests(), sizes=(1, 2, 8, 32))
