"""Proof (d): a training script that starts with tfdet.patch(seed=0) gives
bitwise-identical trained weights in separate processes."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("tensorflow")

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train_script.py")


def trained_digest(mode):
    done = subprocess.run([sys.executable, SCRIPT, mode], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert done.returncode == 0, done.stderr[-2000:]
    (line,) = [text for text in done.stdout.splitlines() if text.startswith("WEIGHTS ")]
    return line.split()[1]


def test_patched_training_reproduces_bitwise_across_processes():
    first, second = trained_digest("patched"), trained_digest("patched")
    assert first == second


def test_the_script_uses_a_replaced_op():
    done = subprocess.run([sys.executable, "-c", (
        "import warnings, tensorflow as tf, tfdet\n"
        "warnings.simplefilter('ignore')\n"
        "s = tfdet.patch(seed=0)\n"
        "print('REPLACED', sorted(s.replacements))")], capture_output=True, text=True, timeout=300,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3"))
    assert "'bincount'" in done.stdout, done.stdout + done.stderr[-2000:]
