"""The cifar10-resnet18 workload: the network it names, and a download that
happens only when asked, failing with one clear line offline."""

import os
import subprocess
import sys

import pytest


def test_resnet18_is_the_cifar_variant_with_its_parameter_count():
    keras = pytest.importorskip("keras")
    from tfdet.diverge.workloads import resnet18_model

    model = resnet18_model(keras)
    # 3x3 stem + [2, 2, 2, 2] basic blocks of 64-128-256-512 filters + 3 projection shortcuts + dense(10)
    convolutions = [layer for layer in model.layers if isinstance(layer, keras.layers.Conv2D)]
    assert len(convolutions) == 1 + 2 * 2 * 4 + 3
    assert model.output_shape == (None, 10)
    trainable = sum(int(w.numpy().size) for w in model.trainable_weights)
    assert trainable == 11173962  # the usual CIFAR ResNet-18's trainable parameters (BN moving statistics apart)


@pytest.mark.slow
def test_offline_without_a_cached_copy_is_one_line_and_exit_4(tmp_path):
    pytest.importorskip("keras")
    unreachable = "http://127.0.0.1:9"  # nothing listens on the discard port: the download is refused at once
    env = dict(os.environ, KERAS_HOME=str(tmp_path / "keras"), HTTPS_PROXY=unreachable, https_proxy=unreachable,
               HTTP_PROXY=unreachable, http_proxy=unreachable)
    done = subprocess.run([sys.executable, "-m", "tfdet", "diverge", "--workload", "cifar10-resnet18", "--runs", "2",
                           "--out", str(tmp_path / "c.jsonl"), "--json"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
    assert done.returncode == 4
    errors = [line for line in done.stderr.splitlines() if line.startswith("tfdet: error:")]
    assert len(errors) == 1 and "CIFAR-10" in errors[0] and "network access" in errors[0]
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not os.path.exists(str(tmp_path / "c.jsonl"))


def _write_batches(directory, per_batch, np):
    """Small batches in the original python format (pickled dicts of uint8 rows and labels)."""
    import pickle

    os.makedirs(directory)
    rng = np.random.default_rng(0)
    for name in ["data_batch_%d" % i for i in range(1, 6)] + ["test_batch"]:
        labels = rng.integers(0, 10, per_batch)
        data = (rng.integers(0, 64, (per_batch, 3072)) + labels[:, None] * 19).astype("uint8")
        with open(os.path.join(directory, name), "wb") as handle:
            pickle.dump({b"data": data, b"labels": labels.tolist()}, handle)


@pytest.mark.slow
def test_resnet18_trains_from_a_local_copy_and_patched_runs_are_bitwise_equal(tmp_path):
    np = pytest.importorskip("numpy")
    pytest.importorskip("keras")
    from tfdet.results import load

    local = str(tmp_path / "cifar-10-batches-py")
    _write_batches(local, 100, np)
    env = dict(os.environ, TFDET_CIFAR10_DIR=local, TFDET_CIFAR_TRAIN="128", TFDET_CIFAR_TEST="64")
    out = str(tmp_path / "c.jsonl")
    done = subprocess.run([sys.executable, "-m", "tfdet", "diverge", "--workload", "cifar10-resnet18", "--runs", "2",
                           "--conditions", "fixed-fixed", "--modes", "patched", "--epochs", "1", "--batch-size", "64",
                           "--lr", "0.05", "--out", out, "--jobs", "2"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    results = load(out)
    trainings = [r for r in results.trainings if r.outcome == "ok"]
    assert len(trainings) == 2 and all(r.steps == 2 for r in trainings)
    assert len({r.weights_sha256 for r in trainings}) == 1  # same seeds, patched: the same weights bit for bit
    [cell] = results.summary.cells
    assert cell.weight_distance_max == 0 and cell.disagreement_any == 0
