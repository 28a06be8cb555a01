"""Programs the locate tests run in fresh processes (each imports this module
again): a step whose state outlives a call, and one that leaves a process behind."""

import os
import subprocess

_STATE = {}
EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                        "examples", "locate")


def counting_step():
    """Deterministic, but every call starts from what the last one left: a module's
    variable grows each call (as a model trained by a step does). A call is only
    comparable with the same call of another process."""
    import tensorflow as tf

    if "total" not in _STATE:
        _STATE["total"] = tf.Variable(tf.zeros([16]))
    _STATE["total"].assign_add(tf.range(16, dtype=tf.float32))
    return float(tf.reduce_sum(_STATE["total"]))


def starts_a_sleep(pid_dir):
    """Runs one op and leaves a `sleep` behind (as a data loader's worker might);
    its pid is written into pid_dir."""
    import tensorflow as tf

    child = subprocess.Popen(["sleep", "300"])
    with open(os.path.join(pid_dir, "%d.pid" % child.pid), "w") as handle:
        handle.write(str(child.pid))
    return float(tf.reduce_sum(tf.square(tf.constant([1.0, 2.0]))))


def traced_once_step():
    """A tf.function traced on the first call only; later calls reuse its graph."""
    import tensorflow as tf

    if "step" not in _STATE:
        table = tf.Variable(tf.zeros([8]))

        @tf.function
        def step():
            table.assign_add(tf.range(8, dtype=tf.float32))
            return tf.reduce_sum(table)
        _STATE["step"] = step
    return float(_STATE["step"]())


def line_of(marker):
    """'programs.py:N' of the line holding `marker`."""
    with open(__file__.replace(".pyc", ".py")) as handle:
        for number, line in enumerate(handle, 1):
            if marker in line and "line_of(" not in line:
                return "programs.py:%d" % number
    raise AssertionError(marker)


def unknown_varying_op_in_a_chain(steps=3):
    """examples/locate/steps.py's crop_and_resize training step (its image gradient varies on
    a 2-core CPU: many boxes add into the same pixels; the gradient is read only by a Mul),
    with capture told the catalogue does not know that op: its output is folded into the
    Mul's, as the output of an op that varies but that the catalogue does not list would be."""
    import sys

    from tfdet.locating import capture

    for recorder in list(capture._INSTALLED):  # noqa: SLF001 (the op the catalogue does not know)
        recorder._varying = frozenset()  # noqa: SLF001
    sys.path.insert(0, EXAMPLES)
    import steps as example_steps

    return example_steps.crop_and_resize_step(steps)
