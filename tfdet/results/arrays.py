"""Reading the .npy arrays a child process saved, in the process that waits on it."""

import io


def load_array(path):
    """np.load(path), read through Python's own file I/O.

    np.load hands an open file to numpy.fromfile, which swallows an exception
    raised inside it and retries the file as a path: a Ctrl-C landing there came
    out as "TypeError: expected str, bytes or os.PathLike object, not
    BufferedReader" with a traceback, instead of the interrupt (about 1 load in
    100 hit by a signal, tests/results/test_arrays.py). Read into memory, the
    array goes through numpy's reading from bytes, where an interrupt stays one.
    """
    import numpy as np

    with open(path, "rb") as handle:
        data = handle.read()
    return np.load(io.BytesIO(data), allow_pickle=False)
