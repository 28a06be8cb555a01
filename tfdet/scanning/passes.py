"""Which pass of a training step created an op, from its creation stack. Pure.

The innermost frame that belongs to a known part of Keras or TensorFlow names
the pass: an optimizer's update, a metric's update, a loss, the gradient
(TensorFlow's gradient functions), the input pipeline (tf.data); anything else
is the forward pass. (The user's own line: tfdet.graph.frames.)
"""

from ..graph.frames import path_of

FORWARD, GRADIENT, LOSS, METRIC, OPTIMIZER, INPUT = "forward", "gradient", "loss", "metric", "optimizer", "input"
INITIALISATION = "initialisation"  # a Keras initializer drawing the first weights (keras_sources.py)
PASSES = (FORWARD, GRADIENT, LOSS, METRIC, OPTIMIZER, INPUT, INITIALISATION)

# (path fragment, pass), tried on each frame from the innermost out. Paths use "/".
_MARKERS = (
    ("keras/src/optimizers/", OPTIMIZER),
    ("tf_keras/src/optimizers/", OPTIMIZER),
    ("keras/optimizers/", OPTIMIZER),
    ("tensorflow/python/training/", OPTIMIZER),  # tf.compat.v1 optimizers
    ("keras/src/metrics/", METRIC),
    ("tf_keras/src/metrics/", METRIC),
    ("keras/metrics/", METRIC),
    ("keras/src/losses/", LOSS),
    ("tf_keras/src/losses/", LOSS),
    ("tensorflow/python/data/", INPUT),
    ("tensorflow/python/eager/backprop.py", GRADIENT),
    ("tensorflow/python/ops/gradients_util.py", GRADIENT),
    ("tensorflow/python/eager/imperative_grad.py", GRADIENT),
)


def pass_of(stack, default=FORWARD):
    """The pass the innermost recognisable frame of `stack` (outermost first) belongs to."""
    for frame in reversed(stack):
        path = path_of(frame.filename)
        for fragment, name in _MARKERS:
            if fragment in path:
                return name
        if path.endswith("_grad.py") and "/tensorflow/python/ops/" in path:
            return GRADIENT
    return default
