"""Issue 25's script (examples/patch/fit_then_bincount_loop.py): a Keras Embedding model trained with
model.fit, then a tf.function loop that rescales the table's update by a weighted bincount and applies
it with Variable.assign_sub. It died under tfdet.patch() in every process (the patched bincount had no
static rank inside the tf.function); it must run patched and give one weight digest in fresh processes."""

import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

import static_parity as P

keras = pytest.importorskip("keras")

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "examples", "patch", "fit_then_bincount_loop.py")


def example():
    spec = importlib.util.spec_from_file_location("fit_then_bincount_loop", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("plan", ["cpu", "order_fixed"])
def test_the_loop_builds_and_updates_a_keras_table_as_stock(plan):
    """In process and without the fit: the example's loop on a Keras variable, patched and stock."""
    loop = example()
    ids, _, strengths = loop.data()
    start = np.linspace(0.5, 1.5, loop.VOCAB * loop.DIM, dtype=np.float32).reshape(loop.VOCAB, loop.DIM)
    with P.plan_scope(plan, "bincount"):
        ours = keras.Variable(start)
        hits = loop.adjust(ours, ids[:32], strengths[:32], steps=2)
        with P.stock_scope("bincount"):
            stock = keras.Variable(start)
            stock_hits = loop.adjust(stock, ids[:32], strengths[:32], steps=2)
    np.testing.assert_allclose(hits.numpy(), stock_hits.numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(stock), rtol=1e-6)
    assert not np.array_equal(np.asarray(ours), start), "the loop changed nothing: the test proves nothing"


@pytest.mark.slow
def test_the_script_runs_patched_with_one_digest_in_three_processes():
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=REPO + os.pathsep + os.environ.get("PYTHONPATH", ""))
    runs = [subprocess.Popen([sys.executable, SCRIPT], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, cwd=REPO) for _ in range(3)]
    digests = []
    for run in runs:
        out, err = run.communicate(timeout=900)
        assert run.returncode == 0, err[-3000:]
        digests.extend(line.split()[1] for line in out.splitlines() if line.startswith("WEIGHTS "))
    assert len(digests) == 3 and len(set(digests)) == 1, digests
