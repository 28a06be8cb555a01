"""tfdet scan on saved model FILES, in each format it reads (.keras, .h5, a
SavedModel directory): one compiled model holding Conv2D, UpSampling2D(nearest),
Resizing(nearest), crop_and_resize, segment sums, an Embedding and a weighted
bincount (tests/scan/scan_op_layers.py), plus a tf.data pipeline with
deterministic=False passed as dataset= (no model file holds a pipeline). Each
file is traced once; the trace is judged for TF 2.6 and 2.21 on GPU and CPU,
and every op must come out with the status and fix the catalogue gives."""

import importlib.util
import json
import os
import re

import fresh_python
import pytest

from tfdet.cli.exitcodes import OK

tf = pytest.importorskip("tensorflow")
keras = pytest.importorskip("keras")

import tfdet.catalog  # noqa: E402
from tfdet.results.scan_records import SEVERITY  # noqa: E402
from tfdet.scanning import judge, load_model, trace_model  # noqa: E402
from tfdet.scanning.conditions import CatalogueChecks  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
LAYERS = os.path.join(HERE, "scan_op_layers.py")
XLA_ENTRIES = CatalogueChecks(tfdet.catalog.default_catalogue()).xla  # the catalogue's requires: [xla]

FORMATS = ("keras", "h5", "savedmodel")
PAIRS = [(version, device) for version in ("2.6", "2.21") for device in ("gpu", "cpu")]
# raw op -> what in the model makes it
OPS = {
    "Conv2D": "Conv2D", "Conv2DBackpropFilter": "Conv2D's gradient",
    "ResizeNearestNeighborGrad": "Resizing(nearest)'s gradient", "CropAndResizeGradImage": "crop_and_resize's gradient",
    "CropAndResize": "crop_and_resize (two entries: on CPU one varies, one is unknown; the hit is the worse)",
    "SegmentSum": "segment_sum", "UnsortedSegmentSum": "unsorted_segment_sum (and Adam's sparse update)",
    "GatherV2": "Embedding", "DenseBincount": "bincount with weights",
}
MAP_OP = "ParallelMapDatasetV2"  # the dataset's map(..., deterministic=False)


def _layers_module():
    spec = importlib.util.spec_from_file_location("scan_op_layers", LAYERS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # registers the layers with Keras
    return module


def _dataset():
    def example(i):
        value = tf.cast(i, tf.float32)
        return (tf.fill([8, 8, 3], value), tf.fill([5], tf.cast(i % 20, tf.int32))), tf.reshape(value, [1])

    return tf.data.Dataset.range(64).map(example, num_parallel_calls=2, deterministic=False).batch(4)


def _save(model, folder, fmt):
    if fmt == "savedmodel":
        path = str(folder / "op_zoo")
        model.export(path, verbose=False)
    else:
        path = str(folder / ("op_zoo." + fmt))
        model.save(path)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("formats")
    model = _layers_module().build()
    return {fmt: _save(model, folder, fmt) for fmt in FORMATS}


@pytest.fixture(scope="module")
def traced(files):
    """Each file loaded as the CLI loads it and traced once, with the pipeline."""
    found = {}
    for fmt, path in files.items():
        notes = []
        found[fmt] = trace_model(load_model(path, None, notes), name=path, notes=notes, fresh=False,
                                 dataset=_dataset())
    return found


def _stock_outcome(verdict):
    if verdict.range is None or verdict.status == "unknown":
        return "unknown"
    return "nondeterministic" if verdict.status in tfdet.catalog.VARYING_STATUSES else "fixed"


def _catalogued(op_type, version, device, excluded=()):
    """The catalogue's verdicts for a raw op (not an API of that name; XLA's only where XLA compiles)."""
    return [v for v in tfdet.catalog.default_catalogue().lookup(op_type, version, device, missing_ok=True)
            if op_type in v.entry.raw_ops and v.entry.id not in XLA_ENTRIES and v.entry.id not in excluded
            and device in v.entry.devices]  # no row for the device: the entry does not apply there


def _check_against_catalogue(hit, verdicts):
    """The hit carries the catalogue's entries, and the status and fix of its most severe verdict."""
    assert verdicts, "%s is found but the catalogue has nothing on it" % hit.op_type
    assert set(hit.entries) == {v.entry.id for v in verdicts}
    worst = max(SEVERITY[_stock_outcome(v)] for v in verdicts)
    assert SEVERITY[hit.outcome] == worst, (hit.op_type, hit.outcome)
    top = [v for v in verdicts if SEVERITY[_stock_outcome(v)] == worst]
    assert hit.status in {v.status for v in top}
    assert hit.fix in {v.fix if v.range is not None else "" for v in top}


@pytest.mark.parametrize("fmt", FORMATS)
def test_each_op_in_each_file_is_judged_as_the_catalogue_says(traced, fmt):
    flagged = set()
    for version, device in PAIRS:
        stock = {h.op_type: h for h in judge(traced[fmt], version, device, assume_patched=False).hits}
        for op_type in OPS:
            verdicts = _catalogued(op_type, version, device)
            if not verdicts:
                assert op_type not in stock
                continue
            _check_against_catalogue(stock[op_type], verdicts)
            if stock[op_type].outcome != "fixed":
                flagged.add(op_type)
        # the pipeline's map is stateless: only its order (deterministic=False) counts
        data = stock[MAP_OP]
        assert data.passes == ["input"] and "data-stateful-parallel-map" not in data.entries
        _check_against_catalogue(data, _catalogued(MAP_OP, version, device, excluded={"data-stateful-parallel-map"}))
        assert "data-nondeterministic-order" in data.entries
        # with tfdet.patch(): never worse; an entry the plan fixes says so, and the hit then
        # shows its most severe remaining entry (crop_and_resize on CPU: the boxes' gradient, unknown)
        patched = {h.op_type: h for h in judge(traced[fmt], version, device).hits}
        for op_type in OPS:
            if op_type not in stock:
                continue
            after, before = patched[op_type], stock[op_type]
            assert set(after.entries) == set(before.entries)
            assert SEVERITY[after.outcome] <= SEVERITY[before.outcome]
            verdicts = {v.entry.id: v for v in _catalogued(op_type, version, device)}
            if after.outcome == "fixed" and before.outcome != "fixed":
                assert after.fix.startswith("tfdet.patch()")
            elif after.outcome != "fixed":
                assert after.status in {v.status for v in verdicts.values()}
    assert flagged == set(OPS)  # each op varies somewhere in the matrix: the checks above were not vacuous


@pytest.mark.parametrize("fmt", FORMATS)
def test_upsampling_nearest_is_not_flagged_while_resizing_nearest_is(traced, fmt):
    # Keras 3's UpSampling2D(nearest) repeats pixels (Tile); Resizing(nearest) calls
    # tf.image.resize, whose gradient is ResizeNearestNeighborGrad.
    sites = traced[fmt].sites
    assert "Tile" in {s.op_type for s in sites}
    hits = judge(traced[fmt], "2.6", "gpu", assume_patched=False).hits
    assert "Tile" not in {h.op_type for h in hits}
    resize = [h for h in hits if h.op_type == "ResizeNearestNeighborGrad"]
    assert resize and resize[0].outcome == "nondeterministic" and resize[0].passes == ["gradient"]
    if fmt != "savedmodel":  # a SavedModel keeps no creation stacks: its ops say only their function
        assert any("up_sampling2d.py" in s.where for s in sites if s.op_type == "Tile")
        assert any("resize_nearest" in w for w in resize[0].where)
        flagged = [w for h in hits if h.outcome != "fixed" for w in h.where]  # (its gradient's Sum is catalogued
        assert not any("upsample_nearest" in w or "up_sampling2d" in w for w in flagged)  # as deterministic)


def test_the_files_keep_their_training_step_where_the_format_can(traced):
    assert traced["keras"].graphs[:2] == ["inference", "training step"]
    assert traced["h5"].graphs[:2] == ["inference", "training step"]
    assert traced["savedmodel"].graphs[0].startswith("signature ")
    assert all(g[-1] == "input pipeline" for g in (t.graphs for t in traced.values()))
    for fmt in ("keras", "h5"):  # (Keras 3 loads an .h5 file's optimizer built for no variables: built anew)
        stock = {h.op_type: h for h in judge(traced[fmt], "2.21", "gpu", assume_patched=False).hits}
        assert {"forward", "optimizer"} <= set(stock["UnsortedSegmentSum"].passes)  # the layer's, and Adam's


def _cli(*argv):  # `python -m tfdet ...`, forked from a process that imported TF (tests/fresh_python.py)
    return fresh_python.run(["-m", "tfdet"] + list(argv), dict(os.environ), ROOT, 300)


@pytest.mark.slow  # a TF process (~10 s); test_scan.py already runs the CLI on .keras and .h5 files
def test_the_cli_on_an_h5_file_with_custom_objects_agrees_with_one_trace_judged(files):
    done = _cli("scan", files["h5"], "--custom-objects", LAYERS, "--tf-version", "2.6", "--device", "gpu", "--json")
    assert done.returncode == OK, done.stderr
    notes = []
    traced = trace_model(load_model(files["h5"], None, notes), name=files["h5"], notes=notes, fresh=False)
    assert json.loads(done.stdout) == judge(traced, "2.6", "gpu").to_json()


@pytest.mark.slow
@pytest.mark.parametrize("fmt", FORMATS)
def test_the_cli_agrees_with_one_trace_judged_for_every_version_and_device(files, fmt):
    notes = []
    traced = trace_model(load_model(files[fmt], None, notes), name=files[fmt], notes=notes, fresh=False)
    for version, device in PAIRS:
        for patched in (device == "gpu",):  # stock TF on CPU, patched on GPU: both paths, 4 runs per format
            argv = ["scan", files[fmt], "--tf-version", version, "--device", device, "--json"]
            if fmt != "savedmodel":
                argv += ["--custom-objects", LAYERS]
            if not patched:
                argv.append("--no-assume-patched")
            done = _cli(*argv)
            assert done.returncode == OK, done.stderr
            printed, judged = json.loads(done.stdout), judge(traced, version, device, patched).to_json()
            if fmt == "savedmodel":  # its functions are renamed on loading with a per-process counter,
                printed, judged = _uncounted(printed), _uncounted(judged)  # which also orders the library
            assert printed == judged, (version, device)


def _uncounted(report):
    for hit in report["hits"]:
        hit["where"] = sorted(re.sub(r"\d+", "N", where) for where in hit["where"])
    return report
