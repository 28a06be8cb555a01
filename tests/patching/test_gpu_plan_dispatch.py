"""What the GPU plan's replacements run, read from the plan: on TF >= 2.7 TF's own
deterministic segment kernel (the primitive's "auto" method resolves to "stock"),
on older TF the order-fixed path; and the graphs that installed TF builds under
the GPU plan's setting (the README's benchmark paragraph and
benchmarks/bench_replacements.py's "gpu" column say so)."""

import importlib.util
import os

import numpy as np
import pytest

import tensorflow as tf

from tfdet.catalog import COVERED_TF_VERSIONS, default_catalogue, tf_minor
from tfdet.patching import kernels as K
from tfdet.patching import primitive as P
from tfdet.patching import registry
from tfdet.patching import replacements as R
from tfdet.patching.plan import plan_patch
from tfdet.patching.plan_preview import preview

import patch_cases as C  # noqa: E402

FIRST_DETERMINISTIC_GPU_SEGMENT_SUM = tf_minor("2.7")  # the claim under test (catalogue: segment_reductions.yaml)


def _resolved(plan):
    """What the primitive's "auto" method means once patch() has told it the plan's answer."""
    previous = P.set_stock_deterministic(plan.stock_segments_deterministic)
    try:
        return P.resolve_method("auto")
    finally:
        P.set_stock_deterministic(previous)


@pytest.mark.parametrize("version", [str(v) for v in COVERED_TF_VERSIONS])
def test_gpu_plans_take_tf_kernel_from_2_7_and_the_order_fixed_path_before(version):
    plan = plan_patch(default_catalogue(), version, "gpu", registry.names(), seeded=False)
    expected = "stock" if tf_minor(version) >= FIRST_DETERMINISTIC_GPU_SEGMENT_SUM else "order_fixed"
    assert _resolved(plan) == expected, (version, plan.stock_segments_deterministic)


def _ops(fn, *specs):
    return C.op_types(tf.function(fn, autograph=False).get_concrete_function(*specs).graph.as_graph_def())


def _bincount_ops():
    return _ops(lambda a, w: R.bincount(a, weights=w, minlength=10),
                tf.TensorSpec([None], tf.int32), tf.TensorSpec([None], tf.float32))


def _crop_grad_ops():
    box_ind = tf.constant([0, 1], tf.int32)

    def fwd_grad(image, boxes):
        with tf.GradientTape() as tape:
            tape.watch(image)
            y = R.crop_and_resize(image, boxes, box_ind, [4, 4])
        return tape.gradient(y, image, output_gradients=tf.ones_like(y))

    return _ops(fwd_grad, tf.TensorSpec([2, 16, 16, 3], tf.float32), tf.TensorSpec([2, 4], tf.float32))


SORT_OPS = {"DynamicPartition", "TopKV2"}  # the order-fixed path's stable sort


@pytest.mark.skipif(tf_minor(tf.__version__) < FIRST_DETERMINISTIC_GPU_SEGMENT_SUM,
                    reason="GPU plans of this TF run the order-fixed path")
@pytest.mark.parametrize("gpu_machine", [False, True])
def test_gpu_plan_of_this_tf_builds_tf_segment_kernels_not_the_sort(gpu_machine):
    plan = preview(device="gpu").plan
    assert {"bincount", "crop_and_resize_grad"} <= set(plan.replacements)
    previous = P.set_stock_deterministic(plan.stock_segments_deterministic)
    cpu_before = K.assume_cpu_only(False) if gpu_machine else None
    try:
        with P.method_scope("auto"):
            bincount, crop = _bincount_ops(), _crop_grad_ops()
    finally:
        P.set_stock_deterministic(previous)
        if gpu_machine:
            K.assume_cpu_only(cpu_before)
    assert not (bincount | crop) & SORT_OPS
    assert "UnsortedSegmentSum" in crop and "CropAndResizeGradImage" not in crop  # rows of 3 channels
    if gpu_machine or not K.cpu_only():  # a GPU machine: TF's deterministic UnsortedSegmentSum
        assert "UnsortedSegmentSum" in bincount and "RaggedBincount" not in bincount
    else:  # TF sees no GPU: the serial CPU kernel over fixed pieces (tfdet.patching.kernels)
        assert "RaggedBincount" in bincount and not bincount & {"Bincount", "DenseBincount"}


def test_order_fixed_path_sorts():
    """The other side: what GPU plans of TF < 2.7 run sorts and calls no TF segment kernel."""
    with P.method_scope("order_fixed"):
        ops = _bincount_ops()
    assert ops & SORT_OPS and not ops & C.FORBIDDEN_OPS


def _bench():
    path = os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "bench_replacements.py")
    spec = importlib.util.spec_from_file_location("bench_replacements", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_benchmark_columns_are_the_plans():
    bench = _bench()
    here, gpu = preview().plan, preview(device="gpu").plan
    settings = bench.settings(here, gpu)
    assert settings["here"].resolved() == _resolved(here)
    assert settings["gpu"].resolved() == _resolved(gpu)
    assert settings["order_fixed"].resolved() == "order_fixed"
    with settings["gpu"].scope():  # the scope tells the primitive what patch(device="gpu") tells it
        assert P.resolve_method() == _resolved(gpu)
    assert bench.settings(here, gpu, gpu_machine=True)["gpu"].cpu_only is False
    for opt_in in ("exact", "fixed_point"):  # the order-fixed path with each opt-in sum
        assert settings[opt_in].resolved() == "order_fixed"
        with settings[opt_in].scope():
            assert P.get_order_fixed_sum() == opt_in


def test_benchmark_table_summarises_each_plan():
    bench = _bench()
    rng = np.random.default_rng(0)
    stock = list(1.0 + 0.01 * rng.standard_normal(9))
    results = {("bincount weighted 10->2", "forward"): {"stock": stock, "here": [2 * s for s in stock],
                                                        "gpu": [3 * s for s in stock],
                                                        "order_fixed": [5 * s for s in stock]}}
    text = bench.table(results, {"here": {"bincount"}, "gpu": set(), "order_fixed": None})
    assert "this machine's plan (installed replacements): median 2.00x, worst 2.00x" in text
    assert "GPU plan of this TF (installed replacements)" not in text  # it installs none of these
    assert "order-fixed path (GPU plans of TF < 2.7) (all replacements): median 5.00x" in text
