"""Whose code a stack frame is: the user's, or a library's. Pure.

Scan names the user's line that made an op; locate names the user's line
where two runs first differ. Both ask the same question of a creation stack,
here: the innermost frame outside TensorFlow, Keras, tfdet, installed
packages, the standard library and AutoGraph's generated copies of user
functions (those carry a temporary file name, not the user's).
"""

import collections
import os
import sys

Frame = collections.namedtuple("Frame", "filename lineno name")

LIBRARY_MARKERS = ("/tensorflow/", "/keras/", "/tf_keras/", "/tfdet/", "/site-packages/", "/dist-packages/",
                   "<frozen ", "/lib/python3", "__autograph_generated")


def path_of(filename):
    """A frame's file name with '/' separators, as the markers are written."""
    return filename.replace(os.sep, "/")


def is_user_code(filename):
    path = path_of(filename)
    return not path.startswith("<") and not any(marker in path for marker in LIBRARY_MARKERS)


def user_frame(frames):
    """'file.py:12' of the innermost frame of the user's own code, or None.

    `frames`: outermost first; Frame tuples, traceback frames or (filename, lineno) pairs."""
    for frame in reversed(frames):
        filename, lineno = frame[0], frame[1]
        if is_user_code(filename):
            return "%s:%d" % (filename, lineno)
    return None


def library_frame(stack):
    """The innermost Keras frame ('keras/src/optimizers/adam.py:120 update_step'), or None:
    where in Keras an op was made when the user's code only called fit()."""
    for frame in reversed(stack):
        path = path_of(frame.filename)
        for marker in ("/keras/src/", "/tf_keras/src/"):
            if marker in path and "/backend/" not in path and "/ops/" not in path:
                return "%s:%d %s" % (path[path.index(marker) + 1:], frame.lineno, frame.name)
    return None


def python_stack():
    """The caller's Python stack, outermost first, as Frame tuples (what user_frame and
    library_frame read): for an op that runs now, where no TF traceback is kept."""
    frame, frames = sys._getframe(1), []
    while frame is not None:
        frames.append(Frame(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        frame = frame.f_back
    return list(reversed(frames))
