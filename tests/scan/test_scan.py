"""tfdet scan on real models, saved in each format it reads: the catalogued ops
they hit, the pass each comes from, the outcome with and without tfdet.patch(),
for TF 2.6 and 2.21 on GPU and CPU; the CLI, its gate and its errors."""

import json
import os
import subprocess
import sys

import fresh_python
import pytest

from tfdet.cli.exitcodes import FINDING, INVALID_INPUT, OK

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import tfdet  # noqa: E402
import tfdet.catalog  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _embedding_model():
    """A text model: an Embedding (its gradient is densified in the optimizer) and an AUC metric."""
    inputs = keras.Input((5,), dtype="int32")
    x = keras.layers.Flatten()(keras.layers.Embedding(50, 4)(inputs))
    model = keras.Model(inputs, keras.layers.Dense(1, activation="sigmoid")(x))
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=[keras.metrics.AUC()])
    return model


def _upsampling_model():
    # Keras 3's UpSampling2D repeats (Tile) instead of resizing; Resizing(nearest)
    # calls tf.image.resize, whose gradient is ResizeNearestNeighborGrad.
    inputs = keras.Input((8, 8, 3))
    x = keras.layers.Conv2D(4, 3, padding="same")(inputs)
    x = keras.layers.Resizing(16, 16, interpolation="nearest")(x)
    model = keras.Model(inputs, keras.layers.GlobalAveragePooling2D()(x))
    model.compile(optimizer="sgd", loss="mse")
    return model


def _clean_model():
    inputs = keras.Input((4,))
    model = keras.Model(inputs, keras.layers.Dense(2)(keras.layers.Dense(3, activation="relu")(inputs)))
    model.compile(optimizer="sgd", loss="mse")
    return model


def _by_op(report):
    return {hit.op_type: hit for hit in report.hits}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    paths = {}
    for name, build in (("embedding", _embedding_model), ("upsampling", _upsampling_model), ("clean", _clean_model)):
        paths[name] = str(folder / (name + ".keras"))
        build().save(paths[name])
    return paths


def test_xla_entries_count_only_where_xla_compiles():
    def pool(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.reduce_sum(tf.nn.max_pool2d(x, 2, 2, "VALID"))
        return tape.gradient(y, x)

    args = (tf.ones([1, 4, 4, 1]),)
    plain = _by_op(tfdet.scan(pool, example_inputs=args, tf_version="2.21", assume_patched=False))
    assert "xla-maxpool-gradient-gpu" not in plain.get("MaxPoolGrad", make_empty_hit()).entries
    jitted = _by_op(tfdet.scan(tf.function(pool, jit_compile=True), example_inputs=args, tf_version="2.21",
                               assume_patched=False))
    assert "xla-maxpool-gradient-gpu" in jitted["MaxPoolGrad"].entries


def test_metric_and_optimizer_ops_are_found_with_their_pass():
    report = tfdet.scan(_embedding_model(), tf_version="2.21", device="gpu", assume_patched=False)
    segment = _by_op(report)["UnsortedSegmentSum"]
    assert set(segment.passes) >= {"metric", "optimizer"}  # AUC's confusion matrix, Adam's sparse update
    assert segment.outcome == "nondeterministic" and "unsorted-segment-sum" in segment.entries
    assert any("optimizers/adam.py" in w for w in segment.where) and any("metrics" in w for w in segment.where)
    assert report.graphs == ["inference", "training step"]
    patched = _by_op(tfdet.scan(_embedding_model(), tf_version="2.21", device="gpu"))["UnsortedSegmentSum"]
    assert patched.outcome == "fixed" and "tfdet.patch()" in patched.fix


@pytest.mark.parametrize("version", ["2.6", "2.21"])
def test_the_upsampling_gradient_is_flagged_per_version_and_device(version):
    model = _upsampling_model()
    gpu = _by_op(tfdet.scan(model, tf_version=version, device="gpu", assume_patched=False))
    grad = gpu["ResizeNearestNeighborGrad"]
    assert grad.passes == ["gradient"] and grad.outcome == "nondeterministic"
    catalogued = tfdet.catalog.lookup("ResizeNearestNeighborGrad", version, "gpu")[0]
    assert grad.status == catalogued.status  # the catalogue is the one source of the status
    cpu = _by_op(tfdet.scan(model, tf_version=version, device="cpu", assume_patched=False))
    assert cpu["ResizeNearestNeighborGrad"].status == tfdet.catalog.lookup(
        "ResizeNearestNeighborGrad", version, "cpu")[0].status


def test_a_function_with_weighted_bincount_and_its_fix_per_version():
    @tf.function
    def histogram(ids, weights):
        return tf.math.bincount(ids, weights=weights, minlength=10)

    args = (tf.constant([1, 2, 2, 3]), tf.constant([0.5, 1.0, 1.5, 2.0]))
    for version in ("2.6", "2.21"):
        stock = tfdet.scan(histogram, example_inputs=args, tf_version=version, assume_patched=False)
        hits = [h for h in stock.hits if "bincount" in h.entries or "dense-bincount" in h.entries]
        assert hits and all(h.outcome in ("nondeterministic", "raises") for h in hits)
        patched = tfdet.scan(histogram, example_inputs=args, tf_version=version)
        assert all(h.outcome == "fixed" for h in patched.hits if set(h.entries) & {"bincount", "dense-bincount"})


def test_a_tf1_graph_is_scanned_as_built_for_its_session():
    # found by the corpus (tf1_word2vec_session): a tf.compat.v1 program has a tf.Graph, no
    # function to trace; its sparse update into a reference variable is ScatterSub
    v1 = tf.compat.v1
    graph = tf.Graph()
    with graph.as_default():
        ids = v1.placeholder(tf.int32, [8])
        table = v1.Variable(tf.ones([20, 4]), use_resource=False)
        loss = tf.reduce_sum(tf.nn.embedding_lookup(table, ids))
        v1.train.GradientDescentOptimizer(0.1).minimize(loss)
    stock = {h.op_type: h for h in tfdet.scan(graph, device="cpu", assume_patched=False).hits}
    assert stock["ScatterSub"].outcome == "nondeterministic"
    assert "test_scan.py" in " ".join(stock["ScatterSub"].where)
    patched = {h.op_type: h for h in tfdet.scan(graph, device="cpu").hits}
    assert patched["ScatterSub"].outcome == "fixed" and patched["ScatterSub"].fix.startswith("tfdet.patch()")


def test_a_saved_model_is_scanned_through_its_signatures(tmp_path):
    class Segments(tf.Module):
        def __init__(self):
            self.scale = tf.Variable(2.0)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32), tf.TensorSpec([None], tf.int32)])
        def __call__(self, data, ids):
            return tf.math.unsorted_segment_sum(data * self.scale, ids, 4)

    module = Segments()
    tf.saved_model.save(module, str(tmp_path / "sm"), signatures=module.__call__.get_concrete_function())
    done = _cli("scan", str(tmp_path / "sm"), "--tf-version", "2.6", "--no-assume-patched", "--json")
    assert done.returncode == OK, done.stderr
    report = json.loads(done.stdout)
    assert "UnsortedSegmentSum" in {h["op_type"] for h in report["hits"]}
    assert report["graphs"] == ["signature serving_default", "gradient of signature serving_default"]


def _cli(*argv):  # `python -m tfdet ...`, forked from a process that imported TF (tests/fresh_python.py)
    return fresh_python.run(["-m", "tfdet"] + list(argv), dict(os.environ), ROOT, 300)


def test_the_cli_agrees_with_the_api_and_validates_against_its_schema(saved):
    import jsonschema

    from tfdet.results import schema

    done = _cli("scan", saved["embedding"], "--tf-version", "2.6", "--json")
    assert done.returncode == OK, done.stderr
    printed = json.loads(done.stdout)
    jsonschema.Draft7Validator(schema.committed_schema("scan")).validate(printed)
    from tfdet.scanning import load_model

    report = tfdet.scan(load_model(saved["embedding"]), tf_version="2.6", name=saved["embedding"], fresh=False)
    assert printed == report.to_json()


def test_the_gate_fails_on_what_remains_and_passes_a_clean_model(saved):
    stock = _cli("scan", saved["upsampling"], "--tf-version", "2.21", "--no-assume-patched",
                 "--fail-on", "nondeterministic")
    assert stock.returncode == FINDING, stock.stderr
    assert "will vary or raise on GPU with TF 2.21" in stock.stdout.splitlines()[0]
    assert "ResizeNearestNeighborGrad" in stock.stdout
    groups = [line for line in stock.stdout.splitlines() if line.endswith("):")]
    assert groups[0].startswith("Will vary from run to run (")  # grouped, most severe first
    clean = _cli("scan", saved["clean"], "--fail-on", "unknown")  # dense layers: all fixed by the patch's switches
    assert clean.returncode == OK, clean.stdout + clean.stderr
    assert "remain" not in clean.stdout.splitlines()[0]


@pytest.mark.parametrize("make, words", [
    (lambda p: p.write_bytes(b"not a zip"), "not a .keras file (not a zip archive"),
    (lambda p: None, "no such file or directory"),
])
def test_bad_model_files_are_exit_3_with_one_line(tmp_path, make, words):
    path = tmp_path / "broken.keras"
    make(path)
    done = _cli("scan", str(path))
    assert done.returncode == INVALID_INPUT and "Traceback" not in done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("tfdet:")]
    assert len(errors) == 1 and errors[0].startswith("tfdet: error: %s: " % path) and words in errors[0]
    (tmp_path / "model.onnx").write_text("x")
    other = _cli("scan", str(tmp_path / "model.onnx"))
    assert other.returncode == INVALID_INPUT and "unknown model format" in other.stderr


def _crop_and_resize(image, boxes):
    return tf.image.crop_and_resize(image, boxes, tf.zeros([2], tf.int32), [4, 4])


FUNCTIONS = {  # raw op the function's training step must show -> (function, example inputs)
    "CropAndResizeGradImage": (_crop_and_resize, (tf.random.uniform([1, 8, 8, 3]), tf.constant([[0, 0, .5, .5]] * 2))),
    "SegmentSum": (lambda d, i: tf.math.segment_sum(d, i), (tf.ones([6, 2]), tf.constant([0, 0, 1, 1, 2, 2]))),
    "Conv2DBackpropFilter": (lambda x, k: tf.nn.conv2d(x, k, 1, "SAME"), (tf.ones([1, 5, 5, 2]), tf.ones([3, 3, 2, 4]))),
    "DenseBincount": (lambda i, w: tf.math.bincount(i, weights=w, minlength=4),
                      (tf.constant([0, 1, 1, 3]), tf.constant([1.0, 2.0, 3.0, 4.0]))),
}


def _training_step(function):
    def step(*args):
        with tf.GradientTape() as tape:
            for arg in args:
                if arg.dtype.is_floating:
                    tape.watch(arg)
            total = tf.reduce_sum(function(*args))
        return total, tape.gradient(total, [a for a in args if a.dtype.is_floating])
    return step


@pytest.mark.parametrize("op_type", sorted(FUNCTIONS))
def test_each_varying_op_is_judged_as_the_catalogue_says_per_version_and_device(op_type):
    function, args = FUNCTIONS[op_type]
    step = function if op_type == "DenseBincount" else _training_step(function)  # bincount has no gradient
    for version in ("2.6", "2.21"):
        for device in ("gpu", "cpu"):
            report = tfdet.scan(step, example_inputs=args, tf_version=version, device=device,
                                assume_patched=False)
            by_op = _by_op(report)
            # an entry with no row for this device (a cuDNN entry on a CPU) does not apply there
            expected = [v for v in tfdet.catalog.default_catalogue().lookup(op_type, version, device, missing_ok=True)
                        if op_type in v.entry.raw_ops and device in v.entry.devices]
            varying = [v for v in expected if v.status in tfdet.catalog.VARYING_STATUSES]
            unknown = [v for v in expected if v.status == "unknown"]
            if varying:
                hit = by_op[op_type]
                assert hit.outcome == "nondeterministic" and hit.status in {v.status for v in varying}
                assert set(hit.entries) >= {v.entry.id for v in varying}
            elif unknown:
                assert by_op[op_type].outcome == "unknown"
            else:
                assert op_type not in by_op or by_op[op_type].outcome == "fixed"


def test_a_dataset_is_scanned_for_order_seeds_and_stateful_maps():
    def step(x):
        return x * 2

    args = (tf.constant([1.0]),)
    noisy = (tf.data.Dataset.range(100).shuffle(10)
             .map(lambda x: x + tf.random.uniform([], 0, 2, dtype=tf.int64), num_parallel_calls=4,
                  deterministic=False).batch(4))
    by_op = _by_op(tfdet.scan(step, example_inputs=args, dataset=noisy, tf_version="2.21", assume_patched=False))
    assert {"data-stateful-parallel-map", "data-nondeterministic-order"} <= set(by_op["ParallelMapDatasetV2"].entries)
    assert "data-unseeded-random" in by_op["ShuffleDatasetV3"].entries
    assert by_op["ShuffleDatasetV3"].passes == ["input"]
    quiet = tf.data.Dataset.range(100).shuffle(10, seed=3).map(lambda x: x * 2, num_parallel_calls=4).batch(4)
    by_op = _by_op(tfdet.scan(step, example_inputs=args, dataset=quiet, tf_version="2.21", assume_patched=False))
    assert "ParallelMapDatasetV2" not in by_op  # deterministic order, no stateful op: neither condition holds
    assert "data-unseeded-random" not in by_op.get("ShuffleDatasetV3", make_empty_hit()).entries


def make_empty_hit():
    from tfdet.results.scan_records import ScanHit

    return ScanHit("", 0, [], "", "fixed", "", [], [])


def test_seeded_random_ops_and_serial_loops_are_not_counted():
    steps = tf.Variable(0)

    def noisy(x):  # parallel iterations and a variable write in the body: the entry's condition
        loop = tf.while_loop(lambda i: i < 3, lambda i: i + steps.assign_add(1) * 0, [tf.constant(0)],
                             parallel_iterations=10)
        return x + tf.random.uniform([1]) + tf.cast(loop, tf.float32)

    def quiet(x):
        loop = tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)], parallel_iterations=1)
        return x + tf.random.uniform([1], seed=7) + tf.cast(loop, tf.float32)

    args = (tf.constant([1.0]),)
    loud = _by_op(tfdet.scan(noisy, example_inputs=args, tf_version="2.21", device="cpu", assume_patched=False))
    assert "unseeded-random-ops" in loud["RandomUniform"].entries
    assert "unseeded-random-raw-ops" not in loud["RandomUniform"].entries  # made by tf.random.uniform
    raw = _by_op(tfdet.scan(lambda x: x + tf.raw_ops.RandomUniform(shape=[1], dtype=tf.float32), example_inputs=args,
                            tf_version="2.21", device="cpu", assume_patched=False))
    assert "unseeded-random-raw-ops" in raw["RandomUniform"].entries
    assert any("while-loop-parallel-iterations" in h.entries for h in loud.values())
    calm = _by_op(tfdet.scan(quiet, example_inputs=args, tf_version="2.21", device="cpu", assume_patched=False))
    assert "RandomUniform" not in calm
    assert not any("while-loop-parallel-iterations" in h.entries and h.outcome != "fixed" for h in calm.values())


CUSTOM_LAYER = '''
import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="scan_test")
class SegmentPool(keras.layers.Layer):
    """Sums rows into 2 segments: an unsorted segment sum inside a user's own layer."""

    def call(self, x):
        ids = tf.math.floormod(tf.range(tf.shape(x)[0]), 2)
        return tf.transpose(tf.math.unsorted_segment_sum(tf.transpose(x), tf.math.floormod(
            tf.range(tf.shape(x)[1]), 2), 2))
'''


def test_h5_and_keras_files_with_a_custom_layer_need_its_module(tmp_path):
    module = tmp_path / "layers_mod.py"
    module.write_text(CUSTOM_LAYER)
    script = tmp_path / "make.py"
    script.write_text(
        "import sys; sys.path.insert(0, %r)\n"
        "import keras, layers_mod\n"
        "inputs = keras.Input((4,))\n"
        "model = keras.Model(inputs, keras.layers.Dense(1)(layers_mod.SegmentPool()(inputs)))\n"
        "model.compile(optimizer='sgd', loss='mse')\n"
        "model.save(%r); model.save(%r)\n" % (str(tmp_path), str(tmp_path / "m.keras"), str(tmp_path / "m.h5")))
    made = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    without = _cli("scan", str(tmp_path / "m.keras"))
    assert without.returncode == INVALID_INPUT, without.stdout + without.stderr
    assert "'SegmentPool'" in without.stderr and "--custom-objects" in without.stderr.splitlines()[-1]
    found = _cli("scan", str(tmp_path / "m.keras"), "--custom-objects", str(module), "--no-assume-patched", "--json")
    assert found.returncode == OK, found.stderr
    hits = {h["op_type"]: h for h in json.loads(found.stdout)["hits"]}
    assert "UnsortedSegmentSum" in hits and "forward" in hits["UnsortedSegmentSum"]["passes"]
    assert any("layers_mod.py" in w for w in hits["UnsortedSegmentSum"]["where"])  # the user's own line
    # the .h5 file, through the API in this process (the CLI's path is the same load_model)
    from tfdet.scanning import ScanError, load_model

    with pytest.raises(ScanError, match="--custom-objects"):
        load_model(str(tmp_path / "m.h5"))
    sys.path.insert(0, str(tmp_path))
    try:
        import layers_mod

        notes = []
        model = load_model(str(tmp_path / "m.h5"), {"SegmentPool": layers_mod.SegmentPool}, notes)
        report = tfdet.scan(model, tf_version="2.21", assume_patched=False, notes=notes)
    finally:
        sys.path.remove(str(tmp_path))
    assert "UnsortedSegmentSum" in _by_op(report)


def test_unseeded_initializers_and_random_layers_are_sources_seeds_remove():
    inputs = keras.Input((4,))
    seeded = keras.layers.Dense(3, kernel_initializer=keras.initializers.GlorotUniform(seed=1), name="seeded")
    x = keras.layers.Dropout(0.5, name="drop")(seeded(inputs))
    x = keras.layers.Reshape((3, 1, 1))(x)
    x = keras.layers.Flatten()(keras.layers.RandomFlip("horizontal", name="flip")(x))
    model = keras.Model(inputs, keras.layers.Dense(1, name="unseeded")(x))
    model.compile(optimizer="sgd", loss="mse")
    stock = _by_op(tfdet.scan(model, tf_version="2.21", assume_patched=False))
    assert stock["GlorotUniform initializer"].where == ["unseeded.kernel_initializer"]  # not the seeded one
    # each kind answers from its own catalogue entry
    assert stock["GlorotUniform initializer"].entries == ["keras-unseeded-rng"]
    assert stock["Dropout layer"].entries == ["keras-unseeded-dropout"]
    assert stock["RandomFlip layer"].entries == ["keras-unseeded-random-layers"]
    assert stock["RandomFlip layer"].where == ["flip"]
    # with tf.keras 2.8's behaviour op determinism makes Dropout raise, not vary
    assert _by_op(tfdet.scan(model, tf_version="2.12", assume_patched=False))["Dropout layer"].status \
        == "raises_under_determinism"
    assert stock["GlorotUniform initializer"].passes == ["initialisation"]
    assert stock["Dropout layer"].where == ["drop"] and stock["Dropout layer"].outcome == "nondeterministic"
    assert "set_random_seed" in stock["Dropout layer"].fix
    patched = _by_op(tfdet.scan(model, tf_version="2.21"))
    assert patched["Dropout layer"].outcome == "fixed" and "seed=" in patched["Dropout layer"].fix
    loaded = _by_op(tfdet.scan(model, tf_version="2.21", assume_patched=False, fresh=False))
    assert "GlorotUniform initializer" not in loaded and "Dropout layer" in loaded  # weights already drawn


def test_a_while_loop_counts_only_with_state_in_its_body():
    # found by the corpus (timeseries_lstm): the scan said an LSTM's loops (While,
    # StatelessWhile) will vary on CPU under the patch, yet its patched runs reproduce bitwise;
    # the entry's condition is parallel iterations *and* stateful ops in the body
    table = tf.Variable(tf.zeros([4]))

    @tf.function
    def pure(x):
        return tf.while_loop(lambda i, acc: i < 5, lambda i, acc: (i + 1, acc * x + table), (0, tf.ones([4])),
                             parallel_iterations=10)[1]

    @tf.function
    def writes(x):
        def body(i, acc):
            table.assign_add(acc)
            return i + 1, acc * x
        return tf.while_loop(lambda i, acc: i < 5, body, (0, tf.ones([4])), parallel_iterations=10)[1]

    def loops(fn):
        report = tfdet.scan(fn, example_inputs=(tf.ones([4]),), tf_version="2.21", device="cpu", assume_patched=True)
        return {h.op_type: h.outcome for h in report.hits if "while-loop-parallel-iterations" in h.entries}

    assert loops(pure) == {}
    assert loops(writes) == {"While": "nondeterministic"}
