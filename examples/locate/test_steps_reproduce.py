"""An example of tfdet.testing in a project's own test suite (a minute or two:
each test calls its step 10 times in each of two fresh processes):

    pytest examples/locate/test_steps_reproduce.py

Each test runs a training step in fresh processes and fails naming the first op
whose output differed, the line of the step that made it and the fix. The
functions come from steps.py beside this file: each process imports them again,
so they must be top-level functions of an importable module.
"""

import pytest

import steps


def test_a_dense_step_reproduces(reproducible):
    reproducible(steps.deterministic_step, 3)


@pytest.mark.reproducible(patch=True)  # tfdet.patch() in each process: the scatter is made deterministic
def test_the_embedding_style_update_reproduces_under_the_patch(reproducible):
    reproducible(steps.scatter_add_step, 3)


def test_without_the_patch_it_does_not():
    from tfdet.testing import assert_reproducible

    with pytest.raises(AssertionError, match="ResourceScatterAdd"):
        assert_reproducible(steps.scatter_add_step, 3)
