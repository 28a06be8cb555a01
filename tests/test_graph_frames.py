"""The one answer to "whose code is this frame?", shared by scan and locate."""

from tfdet.graph import Frame
from tfdet.graph.frames import is_user_code, library_frame, user_frame

SITE = "/home/u/venv/lib/python3.11/site-packages"


def test_the_innermost_user_frame_wins_over_libraries_stdlib_and_autograph_copies():
    stack = [Frame("/home/u/train.py", 40, "<module>"), Frame("/home/u/model.py", 12, "call"),
             Frame(SITE + "/keras/src/layers/core/dense.py", 140, "call"),
             Frame("/tmp/__autograph_generated_filex1y2.py", 9, "tf__call"),
             Frame("/usr/lib/python3.11/threading.py", 975, "run"),
             Frame(SITE + "/tensorflow/python/ops/math_ops.py", 300, "matmul")]
    assert user_frame(stack) == "/home/u/model.py:12"
    assert user_frame([(f.filename, f.lineno) for f in stack]) == "/home/u/model.py:12"  # pairs work too
    assert user_frame(stack[2:]) is None
    assert not is_user_code("<string>") and not is_user_code("<frozen runpy>")


def test_the_keras_frame_names_where_fit_made_an_op():
    stack = [Frame("/home/u/train.py", 40, "<module>"),
             Frame(SITE + "/keras/src/optimizers/base_optimizer.py", 380, "apply"),
             Frame(SITE + "/keras/src/backend/tensorflow/optimizer.py", 90, "_apply"),
             Frame(SITE + "/keras/src/ops/math.py", 20, "segment_sum")]
    assert library_frame(stack) == "keras/src/optimizers/base_optimizer.py:380 apply"
