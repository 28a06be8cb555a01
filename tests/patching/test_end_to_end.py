"""Proof (d): a training script that starts with tfdet.patch(seed=0) gives
bitwise-identical trained weights in separate processes, and the same script
unpatched does not (the control: without it, a script that never varies would
pass as well)."""

import os
import subprocess
import sys

import fresh_python
import pytest

pytest.importorskip("tensorflow")

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_script.py")
STOCK_RUNS = 4  # each unpatched run differs from another with probability near 1 (see train_script.py)


def start(mode):
    return subprocess.Popen([sys.executable, SCRIPT, mode], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            universal_newlines=True, env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))


def digest_of(process):
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err[-2000:]
    (line,) = [text for text in out.splitlines() if text.startswith("WEIGHTS ")]
    return line.split()[1]


# slow (6 TF processes, 30 steps of an 8e6-element bincount each): in the default suite,
# tests/corpus/test_promises.py (promise b: patched runs of every program that varies stock,
# imbalanced_bincount's weighted bincount among them, train to identical bits in separate
# processes) and tests/diverge/test_diverge_run.py::test_patched_fixed_seeds_give_identical_
# weights_in_separate_processes hold the same promise; this one adds the stock control.
@pytest.mark.slow
def test_patched_training_reproduces_bitwise_across_processes_and_stock_does_not():
    # Two at a time: both kernels' thread pools must stay busy for the stock runs to vary.
    stock = []
    for _ in range(STOCK_RUNS // 2):
        pair = [start("stock"), start("stock")]
        stock.extend(digest_of(p) for p in pair)
    patched = [digest_of(p) for p in [start("patched"), start("patched")]]
    assert len(set(stock)) >= 2, "the unpatched control reproduced in %d runs: the test proves nothing" % STOCK_RUNS
    assert len(set(patched)) == 1, patched


def test_the_script_uses_a_replaced_op():
    # it imports TF first: forked from a process that imported it (tests/fresh_python.py)
    done = fresh_python.run(["-c", (
        "import warnings, tensorflow as tf, tfdet\n"
        "warnings.simplefilter('ignore')\n"
        "s = tfdet.patch(seed=0)\n"
        "print('REPLACED', sorted(s.replacements))")], dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"), os.getcwd(), 300)
    assert "'bincount'" in done.stdout, done.stdout + done.stderr[-2000:]
