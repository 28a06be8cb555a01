"""The scan's advice on real models: an op made by a public function tfdet.patch()
replaces is fixed by it; an entry with no row for the device does not apply
there (TF32 and cuDNN autotuning on a CPU); what the catalogue does not know is
counted and worded as unknown, never as what will vary."""

import dataclasses

import pytest

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import tfdet  # noqa: E402
import tfdet.catalog  # noqa: E402
from tfdet.catalog.model import Catalogue  # noqa: E402
from tfdet.catalog.versions import parse_specifier  # noqa: E402
from tfdet.scanning import judge, trace_model  # noqa: E402

REMAINING = ("nondeterministic", "raises", "unknown")


def _dense_model():
    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(2)(keras.layers.Dense(3, activation="relu")(inputs)))
    model.compile(optimizer="sgd", loss="mse")
    return model


def _unet_like_model():
    """Two Conv2D levels, a max pool, an upsampling and a skip connection, trained with Adam."""
    inputs = keras.Input((16, 16, 3))
    down = keras.layers.Conv2D(4, 3, padding="same", activation="relu")(inputs)
    low = keras.layers.Conv2D(8, 3, padding="same", activation="relu")(keras.layers.MaxPooling2D()(down))
    up = keras.layers.Concatenate()([keras.layers.UpSampling2D()(low), down])
    model = keras.Model(inputs, keras.layers.Conv2D(1, 1)(up))
    model.compile(optimizer="adam", loss="mse")
    return model


def _by_op(report):
    return {hit.op_type: hit for hit in report.hits}


@pytest.fixture(scope="module")
def traced():
    return {"dense": trace_model(_dense_model(), fresh=False), "unet": trace_model(_unet_like_model(), fresh=False)}


@pytest.mark.parametrize("name, ops", [("dense", {"MatMul"}),
                                       ("unet", {"Conv2D", "Conv2DBackpropInput", "Conv2DBackpropFilter"})])
def test_plain_dense_and_conv_models_on_cpu_say_nothing_varies(traced, name, ops):
    for assume_patched in (False, True):
        report = judge(traced[name], "2.21", "cpu", assume_patched=assume_patched)
        assert not [h for h in report.hits if h.outcome in REMAINING], report.verdict
        assert report.verdict.startswith("Nothing the catalogue says varies on CPU"), report.verdict
        assert "will vary" not in report.verdict and "remain" not in report.verdict
        for op_type, hit in _by_op(report).items():
            entries = [tfdet.catalog.default_catalogue().get(e) for e in hit.entries]
            assert all("cpu" in e.devices for e in entries), (op_type, hit.entries)  # no GPU-only entry
    # the GPU-only entries still apply on a GPU: TF32 for MatMul, cuDNN autotuning for the convolutions
    on_gpu = _by_op(judge(traced[name], "2.21", "gpu", assume_patched=False))
    wanted = "tf32-matmul-conv" if name == "dense" else "cudnn-conv-autotuning"
    assert all(wanted in on_gpu[op].entries for op in ops if op in on_gpu) and ops & set(on_gpu)


def test_a_fresh_model_on_cpu_names_only_its_unseeded_initializers_as_fixed():
    report = tfdet.scan(_dense_model(), tf_version="2.21", device="cpu")
    assert [h.op_type for h in report.hits if h.outcome != "fixed"] == []
    assert report.verdict.startswith("Nothing catalogued varies or raises on CPU with TF 2.21 after tfdet.patch()")
    assert "GlorotUniform initializer" in report.verdict


def _weighted_bincount(ids, weights):
    return tf.math.bincount(ids, weights=weights, minlength=5)


def _raw_dense_bincount(ids, weights):
    return tf.raw_ops.DenseBincount(input=ids, size=5, weights=weights, binary_output=False)


BINCOUNT_ARGS = (tf.constant([1, 2, 2, 3]), tf.constant([0.5, 1.0, 1.5, 2.0]))


def test_weighted_bincount_through_tf_math_bincount_is_fixed_by_the_patch_on_cpu():
    function = tf.function(_weighted_bincount)
    stock = _by_op(tfdet.scan(function, example_inputs=BINCOUNT_ARGS, tf_version="2.21", device="cpu",
                              assume_patched=False))
    assert stock["DenseBincount"].outcome == "nondeterministic"  # the kernel varies on a CPU as shipped
    report = tfdet.scan(function, example_inputs=BINCOUNT_ARGS, tf_version="2.21", device="cpu")
    hit = _by_op(report)["DenseBincount"]
    assert hit.outcome == "fixed" and hit.fix.startswith("tfdet.patch()") and "tf.math.bincount" in hit.fix
    assert "rather than the raw op" not in hit.fix
    assert "0 are fixed" not in report.verdict and "remain" not in report.verdict
    assert "fixes the 1 op that would (DenseBincount)" in report.verdict


def test_a_direct_raw_dense_bincount_call_is_not_fixed_by_the_patch():
    report = tfdet.scan(tf.function(_raw_dense_bincount), example_inputs=BINCOUNT_ARGS, tf_version="2.21",
                        device="cpu")
    hit = _by_op(report)["DenseBincount"]
    verdict = tfdet.catalog.lookup("DenseBincount", "2.21", "cpu")[0]
    assert hit.outcome == "nondeterministic" and hit.fix == verdict.fix  # the catalogue's advice: call the API
    assert "1 remains: DenseBincount (nondeterministic)" in report.verdict


def _with_unknown_cpu_row(entry_id):
    """The shipped catalogue, with one entry's CPU claim made unknown for every version."""
    shipped = tfdet.catalog.default_catalogue()
    entry = shipped.get(entry_id)
    unknown = dataclasses.replace(entry.devices["cpu"][0], versions=">=1.0", specifier=parse_specifier(">=1.0"),
                                  status="unknown", patch=None, workaround=None, error=None, evidence=())
    devices = dict(entry.devices, cpu=(unknown,))
    return Catalogue([dataclasses.replace(entry, devices=devices) if e.id == entry_id else e for e in shipped],
                     shipped.switches)


def test_an_unknown_status_is_counted_and_worded_as_unknown_not_as_varying():
    catalogue = _with_unknown_cpu_row("dense-bincount")
    traced_fn = trace_model(tf.function(_raw_dense_bincount), BINCOUNT_ARGS, catalogue)
    for assume_patched in (False, True):
        report = judge(traced_fn, "2.21", "cpu", assume_patched=assume_patched, catalogue=catalogue)
        assert _by_op(report)["DenseBincount"].outcome == "unknown"
        assert report.verdict.startswith("Nothing the catalogue says varies on CPU with TF 2.21"), report.verdict
        assert "1 not known" in report.verdict and "DenseBincount" in report.verdict
        assert "will vary" not in report.verdict and "remain" not in report.verdict
