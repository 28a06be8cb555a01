"""A worker's saved array read back in the waiting process, and a Ctrl-C that lands
while it is read: the interrupt, never numpy's TypeError (tfdet probe printed a
traceback and exited 1 where it must exit 130)."""

import json
import subprocess
import sys

import numpy as np
import pytest

from tfdet.results.arrays import load_array


def test_the_array_comes_back_as_saved(tmp_path):
    for array in (np.arange(7, dtype=np.float32).reshape(7, 1), np.array([], dtype=np.int64), np.float64(3.5)):
        path = str(tmp_path / "a.npy")
        np.save(path, array)
        loaded = load_array(path)
        assert loaded.dtype == array.dtype and loaded.shape == array.shape
        np.testing.assert_array_equal(loaded, array)


def test_a_pickled_array_is_refused(tmp_path):
    path = str(tmp_path / "o.npy")
    np.save(path, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError):
        load_array(path)


# Run in a process of its own: the alarms must reach a main thread that nothing else
# (an earlier test, a library's thread) has touched, and a miss must not hang the suite.
INTERRUPTS = r"""
import collections, json, signal, sys
import numpy as np
from tfdet.results.arrays import load_array

path = sys.argv[1]
np.save(path, np.arange(200000, dtype=np.float32))

def interrupt(*_):
    raise KeyboardInterrupt

signal.signal(signal.SIGALRM, interrupt)
seen = collections.Counter()
for i in range(1500):
    try:  # the one alarm lands inside this try, however late this process gets the CPU
        signal.setitimer(signal.ITIMER_REAL, 0.0001 * (i % 20 + 1))
        while True:
            load_array(path)
    except KeyboardInterrupt:
        seen["interrupt"] += 1
    except Exception as exc:  # what np.load gives
        seen[type(exc).__name__] += 1
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
print(json.dumps(seen))
"""


def test_an_interrupt_while_reading_stays_an_interrupt(tmp_path):
    # SIGALRM at staggered short delays over many reads: np.load turns about 1 in 100 of
    # these into a TypeError (numpy.fromfile swallows the exception and retries the file
    # as a path); load_array must give KeyboardInterrupt every time.
    done = subprocess.run([sys.executable, "-c", INTERRUPTS, str(tmp_path / "big.npy")], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"interrupt": 1500}
