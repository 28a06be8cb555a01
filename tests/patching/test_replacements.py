"""The four proofs for every replacement in tfdet.patching.replacements (the fourth, cost,
is benchmarks/bench_replacements.py):

(a) forward and gradient match the stock op within the tolerances stated in
    patch_cases.TOLERANCES, on edge cases and every dtype the stock op takes on CPU;
(b) bitwise-identical results across 20 runs in one process and across processes;
(c) no op the catalogue marks nondeterministic on GPU in the forward or gradient graph.

Everything runs the order-fixed path (the fixture in conftest.py), the one used on GPUs.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

import tensorflow as tf

from tfdet.patching import primitive, registry
from tfdet.patching import replacements as R
from tfdet.tfinfo import op_determinism_enabled


import patch_cases as C  # noqa: E402
from replacement_examples import GRAPH_CASES  # noqa: E402  (each family lists the cases walked)
TF_VERSION = "%d.%d" % C.tf_version()


# --------------------------------------------------------------------------- (a) matches stock


def test_stock_runs_without_op_determinism():
    """The comparisons below are against the stock ops as users run them by default."""
    assert not op_determinism_enabled()
    assert os.environ.get("TF_DETERMINISTIC_OPS", "") in ("", "0", "false")


@pytest.mark.parametrize("name,dtype", C.case_params())
def test_matches_stock(name, dtype):
    C.compare(C.CASES[name], dtype)


@pytest.mark.parametrize("name", ["unsorted_segment_sum/basic", "segment_sum/basic", "indexed_slices_to_dense",
                                  "scatter_nd", "bias_add/NHWC", "resize_nearest_neighbor/11x13-ac0-hp1"])
def test_auto_method_matches_stock(name):
    """The dispatching default, told the stock kernels are deterministic (as patch() does on CPUs), agrees too."""
    previous = primitive.set_stock_deterministic(True)
    try:
        with primitive.method_scope("auto"):
            assert primitive.resolve_method() == "stock"
            C.compare(C.CASES[name], "float32")
    finally:
        primitive.set_stock_deterministic(previous)


@pytest.mark.parametrize("stock,implementation", registry.drop_in_pairs())
def test_replacements_have_stock_signatures(stock, implementation):
    """Every drop-in named in the registry exists, says it is deterministic, and takes the stock arguments."""
    import inspect

    from tfdet.tfinfo import resolve_api

    ours = getattr(R, implementation)
    assert R.REPLACEMENTS[stock] is ours and ours.__doc__ and "determin" in ours.__doc__.lower()
    if not stock.startswith("tf."):
        return  # a conversion with no public function of its own (IndexedSlices->Tensor)
    target = resolve_api(tf, stock)
    assert target is not None, stock

    def params(fn):  # names, kinds and defaults (the stock generated ops carry type annotations)
        return [(p.name, p.kind, p.default) for p in inspect.signature(inspect.unwrap(fn)).parameters.values()]

    if stock.startswith("tf.raw_ops."):  # keyword-only generated ops: the names, in order
        assert [p for p in inspect.signature(ours).parameters if p != "name"] == [
            p for p in inspect.signature(target).parameters if p != "name"]
    else:
        assert params(ours) == params(target)


def test_gradient_swaps_take_op_and_grad():
    import inspect

    for op_type, fn in R.GRADIENTS.items():
        assert list(inspect.signature(fn).parameters) == ["op", "grad"], op_type
        assert fn.__doc__ and "determin" in fn.__doc__.lower()


def test_raw_gradient_functions_match_raw_ops():
    rng = np.random.default_rng(3)
    grads = rng.standard_normal((2, 11, 13, 3)).astype(np.float32)
    for ac, hp in [(False, False), (True, False), (False, True)]:
        ours = R.resize_nearest_neighbor_grad(grads, [5, 7], align_corners=ac, half_pixel_centers=hp)
        stock = tf.raw_ops.ResizeNearestNeighborGrad(grads=grads, size=[5, 7], align_corners=ac,
                                                     half_pixel_centers=hp)
        C.assert_close(ours, stock, tf.raw_ops.ResizeNearestNeighborGrad(
            grads=np.abs(grads), size=[5, 7], align_corners=ac, half_pixel_centers=hp), "float32", "rnn grad")
    image = rng.standard_normal((2, 9, 11, 3)).astype(np.float32)
    boxes = np.array([[0.1, 0.2, 0.8, 0.9], [-0.2, 0.0, 1.3, 0.5], [0.3, 0.1, 0.9, 0.7]], np.float32)
    box_ind = np.array([0, 1, 0], np.int32)
    g = rng.standard_normal((3, 4, 5, 3)).astype(np.float32)
    for method in ["bilinear", "nearest"]:
        ours = R.crop_and_resize_grad_image(g, boxes, box_ind, [2, 9, 11, 3], tf.float32, method=method)
        stock = tf.raw_ops.CropAndResizeGradImage(grads=g, boxes=boxes, box_ind=box_ind, image_size=[2, 9, 11, 3],
                                                  T=tf.float32, method=method)
        scale = tf.raw_ops.CropAndResizeGradImage(grads=np.abs(g), boxes=boxes, box_ind=box_ind,
                                                  image_size=[2, 9, 11, 3], T=tf.float32, method=method)
        C.assert_close(ours, stock, scale, "float32", "crop grad image " + method)
    ours = R.crop_and_resize_grad_boxes(g, image, boxes, box_ind)
    stock = tf.raw_ops.CropAndResizeGradBoxes(grads=g, image=image, boxes=boxes, box_ind=box_ind)
    C.assert_close(ours, stock, np.full((3, 4), 4 * np.abs(image).max() * np.abs(g).sum() * 11), "float32",
                   "crop grad boxes")


def _both_raise(fn_ours, fn_stock, errors=(tf.errors.InvalidArgumentError,)):
    with pytest.raises(errors):
        fn_stock()
    with pytest.raises(errors):
        fn_ours()


def test_out_of_range_and_invalid_inputs_raise_like_cpu_kernels():
    data = tf.ones([3, 2])
    _both_raise(lambda: R.unsorted_segment_sum(data, [0, 1, 5], 3),
                lambda: tf.math.unsorted_segment_sum(data, [0, 1, 5], 3))
    _both_raise(lambda: R.unsorted_segment_prod(data, [0, 3, 1], 3),
                lambda: tf.math.unsorted_segment_prod(data, [0, 3, 1], 3))
    _both_raise(lambda: R.segment_sum(data, [0, 2, 1]), lambda: tf.math.segment_sum(data, [0, 2, 1]))
    _both_raise(lambda: R.segment_sum(data, [-1, 0, 0]), lambda: tf.math.segment_sum(data, [-1, 0, 0]))
    _both_raise(lambda: R.scatter_nd([[3]], [1.0], [3]), lambda: tf.scatter_nd([[3]], [1.0], [3]))
    _both_raise(lambda: R.scatter_nd([[-1]], [1.0], [3]), lambda: tf.scatter_nd([[-1]], [1.0], [3]))
    _both_raise(lambda: R.bincount([1, -1, 2]), lambda: tf.math.bincount([1, -1, 2]))
    _both_raise(lambda: R.resize_nearest_neighbor(tf.ones([1, 2, 2, 1]), [4, 4], True, half_pixel_centers=True),
                lambda: tf.compat.v1.image.resize_nearest_neighbor(tf.ones([1, 2, 2, 1]), [4, 4], True,
                                                                   half_pixel_centers=True))
    with pytest.raises(ValueError):
        R.bias_add(tf.ones([2, 3]), tf.ones([3]), data_format="CHW")
    with pytest.raises(ValueError):
        R.bincount([1, 2], weights=[1.0, 2.0], binary_output=True)


def test_scatter_nd_ignore_policy():
    import inspect

    if "bad_indices_policy" not in inspect.signature(inspect.unwrap(tf.scatter_nd)).parameters:
        pytest.skip("this TF has no bad_indices_policy")
    idx = tf.constant([[0], [5], [2], [0], [-1]])
    upd = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0], [9.0, 10.0]])
    ours = R.scatter_nd(idx, upd, [3, 2], bad_indices_policy="IGNORE")
    stock = tf.scatter_nd(idx, upd, [3, 2], bad_indices_policy="IGNORE")
    assert np.array_equal(ours.numpy(), stock.numpy())


def gradient_error(fn):
    """The exception class fn's gradient to the updates raises (None if it returns)."""
    idx = tf.constant([[0], [5], [2]])
    upd = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    try:
        with tf.GradientTape() as tape:
            tape.watch(upd)
            y = fn(idx, upd, [3, 2], bad_indices_policy="IGNORE")
        tape.gradient(y, upd)
    except Exception as exc:  # noqa: BLE001 - the class is what is compared
        return type(exc)
    return None


def test_scatter_nd_ignore_policy_gradient_is_tfs():
    """TF's gradient of ScatterNd (a gather_nd with the default policy) ignores bad_indices_policy: a bad
    index raises on a CPU. The replacement returned zeros there (issue 25)."""
    import inspect

    if "bad_indices_policy" not in inspect.signature(inspect.unwrap(tf.scatter_nd)).parameters:
        pytest.skip("this TF has no bad_indices_policy")
    assert gradient_error(R.scatter_nd) is gradient_error(tf.scatter_nd) is tf.errors.InvalidArgumentError


def test_sparse_xent_invalid_labels_give_nan_on_gpu():
    """As the stock GPU kernel (the CPU kernel raises: tests/patching/test_parity.py)."""
    from unittest import mock

    with mock.patch.object(R, "_on_gpu", lambda tensor: True):
        out = R.sparse_softmax_cross_entropy_with_logits(tf.constant([0, 5, -1]), tf.zeros([3, 5])).numpy()
    assert np.isfinite(out[0]) and np.isnan(out[1]) and np.isnan(out[2])


def test_adjust_contrast_uint8_within_one_level():
    """uint8 images round (x - mean) * f + mean computed in float32: at most one level off."""
    images = np.random.default_rng(0).integers(0, 256, size=(2, 6, 7, 3)).astype(np.uint8)
    ours = R.adjust_contrast(images, 1.3).numpy().astype(int)
    stock = tf.image.adjust_contrast(images, 1.3).numpy().astype(int)
    assert np.abs(ours - stock).max() <= 1 and np.mean(ours != stock) < 0.05


def test_bias_add_forward_is_bitwise_the_stock_op():
    rng = np.random.default_rng(0)
    v = C.wide(rng, (4, 5, 6, 7))
    b = C.wide(rng, (7,))
    assert np.array_equal(R.bias_add(v, b).numpy(), tf.nn.bias_add(v, b).numpy())
    bc = C.wide(rng, (5,))
    assert np.array_equal(R.bias_add(v, bc, "NCHW").numpy(), tf.nn.bias_add(v, bc, "NCHW").numpy())


def test_indexed_slices_from_gather_gradient():
    """The real path: gather's gradient is an IndexedSlices; densifying it deterministically."""
    rng = np.random.default_rng(1)
    table = tf.constant(C.wide(rng, (50, 8)))
    ids = tf.constant(rng.integers(0, 50, 300))
    with tf.GradientTape() as tape:
        tape.watch(table)
        y = tf.gather(table, ids)
    g = tape.gradient(y, table, output_gradients=tf.constant(C.wide(rng, (300, 8))))
    assert isinstance(g, tf.IndexedSlices)
    ours = R.indexed_slices_to_dense(g)
    stock = tf.convert_to_tensor(g)
    scale = tf.convert_to_tensor(tf.IndexedSlices(tf.abs(g.values), g.indices, g.dense_shape))
    C.assert_close(ours, stock, scale, "float32", "gather backprop", terms=16)
    with pytest.raises(ValueError):
        R.indexed_slices_to_dense(g, dtype=tf.int32)


SESSION_CASES = ["unsorted_segment_sum/basic", "unsorted_segment_prod/zeros", "indexed_slices_to_dense",
                 "resize_nearest_neighbor/11x13-ac0-hp1", "crop_and_resize/bilinear-4x5",
                 "unsorted_segment_sum/empty"]


@pytest.mark.parametrize("name,mode", [(n, "function") for n in C.GRAPH_MODE_CASES]
                         + [(n, "session") for n in SESSION_CASES]
                         + [pytest.param(n, "session", marks=pytest.mark.slow) for n in C.GRAPH_MODE_CASES
                            if n not in SESSION_CASES])
def test_graph_modes_match_eager(name, mode):
    """Inside tf.function and in a TF1-style graph + Session, with unknown shapes."""
    C.check_graph_mode(name, mode)


# --------------------------------------------------------------------------- (b) repeatability


def test_repeat_inputs_are_order_sensitive():
    """The repeatability inputs are ones where the order of summation changes the bits."""
    inputs = C.repeat_inputs(C.CASES["unsorted_segment_sum/basic"], np.random.default_rng(123))
    data, ids = inputs["data"], inputs["ids"]
    changed = 0
    for s in range(9):
        x = data[ids == s]
        forward = np.float32(0)
        for v in x[:, 0]:
            forward = np.float32(forward + v)
        backward = np.float32(0)
        for v in x[::-1, 0]:
            backward = np.float32(backward + v)
        changed += forward != backward
    assert changed >= 5


@pytest.mark.parametrize("name", C.REPEAT_CASES)
def test_bitwise_identical_across_20_runs(name):
    runs = C.repeat_digests([name], runs=20)[name]
    assert len(runs) == 20 and len(set(runs)) == 1


def test_bitwise_identical_across_20_runs_in_tf_function():
    case = C.CASES["unsorted_segment_sum/basic"]
    inputs = C.repeat_inputs(case, np.random.default_rng(5))
    ids = tf.constant(inputs["ids"])

    @tf.function
    def step(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = R.unsorted_segment_sum(x, ids, 9)
        return y, tape.gradient(y, x, output_gradients=tf.ones_like(y) * 0.5)

    x = tf.constant(inputs["data"])
    digests = set(C.digest([t.numpy() for t in step(x)]) for _ in range(20))
    assert len(digests) == 1


def test_bitwise_identical_across_processes():
    """Two fresh interpreters, same seed: same bits, and the same bits as this process."""
    procs = [C.digests_in_subprocess(popen=True), C.digests_in_subprocess(popen=True)]
    results = [C.parse_digests(p) for p in procs]
    here = C.repeat_digests()
    assert results[0] == results[1]
    assert results[0] == here
    assert len(here) == len([n for n in C.REPEAT_CASES if C.tf_version() >= C.CASES[n].min_tf])


@pytest.mark.slow
def test_same_bits_with_op_determinism_enabled():
    """TF_DETERMINISTIC_OPS=1 (sticky, so in a subprocess) changes nothing on the order-fixed path."""
    on = C.parse_digests(C.digests_in_subprocess(popen=True, env={"TF_DETERMINISTIC_OPS": "1"}))
    assert on == C.repeat_digests()


# --------------------------------------------------------------------------- (c) graphs


def _graph_op_types(name):
    """Op types of a tf.function computing the case's output and gradient, with unknown shapes."""
    graph_def = C.gradient_graph(tf, name)
    return C.op_types(graph_def), C.loop_parallel_iterations(graph_def)




@pytest.mark.parametrize("version", sorted({TF_VERSION, "2.4", "2.6"}))
def test_catalogue_forbidden_set_is_populated(version):
    forbidden, conditional = C.catalogue_forbidden(version)
    assert {"SparseTensorDenseMatMul", "CropAndResizeGradImage", "ResizeNearestNeighborGrad"} <= forbidden
    if version in ("2.4", "2.6"):  # no deterministic segment kernels yet
        assert {"UnsortedSegmentSum", "SegmentSum", "ScatterNd", "UnsortedSegmentProd"} <= forbidden
    assert "GatherV2" not in forbidden  # gather's forward is fine; its gradient is what we replace


@pytest.mark.parametrize("name", GRAPH_CASES)
def test_graphs_hold_no_nondeterministic_op(name):
    types, loops = _graph_op_types(name)
    for version in sorted({TF_VERSION, "2.4"}):
        forbidden, conditional = C.catalogue_forbidden(version)
        bad = types & (forbidden | C.FORBIDDEN_OPS)
        assert not bad, "%s: %s in the forward/gradient graph (TF %s catalogue)" % (name, sorted(bad), version)
        # tf.while_loop is catalogued as nondeterministic only with parallel_iterations > 1
        # and stateful ops in the body: ours run one iteration at a time.
        for ops in conditional.values():
            if types & ops:
                assert loops and all(p == 1 for p in loops), (name, loops)
    assert len(types - {"Const", "Identity", "NoOp", "Placeholder"}) >= 4  # the walk saw the body


def test_graph_walk_finds_ops_in_nested_functions():
    """Sanity check of the walk itself: a stock segment sum inside a while body is found."""

    def body(i, acc):
        return i + 1, acc + tf.math.unsorted_segment_sum(tf.ones([4]), [0, 1, 1, 0], 2)

    fn = tf.function(lambda: tf.while_loop(lambda i, a: i < 3, body, [0, tf.zeros([2])]))
    assert "UnsortedSegmentSum" in C.op_types(fn.get_concrete_function().graph.as_graph_def())


# --------------------------------------------------------------------------- other TF versions


VENV_DIRS = [os.environ.get("TFDET_VENVS", os.path.expanduser("~/.cache/tfdet/venvs")), "/work/venvs"]
VENV_NAMES = ["tf1.15-py3.7", "tf2.4-py3.7", "tf2.6-py3.9", "tf2.10-py3.10", "tf2.21-py3.13"]


def _venv_python(name):
    for d in VENV_DIRS:
        p = os.path.join(d, name, "bin", "python")
        if os.path.exists(p):
            return p
    return None


@pytest.mark.multiversion
@pytest.mark.parametrize("name", VENV_NAMES)
def test_cases_under_other_tf_versions(name):
    """(a) and (b) under another TF: patch_cases.standalone_main in that interpreter."""
    python = _venv_python(name)
    if python is None:
        pytest.fail("missing venv %s: python tests/multiversion/make_venvs.py" % name)
    env = dict(os.environ, PYTHONPATH=C.REPO, TF_CPP_MIN_LOG_LEVEL="2")
    code = "import sys; sys.path.insert(0, %r); import patch_cases; sys.exit(patch_cases.standalone_main())" % C.HERE
    done = subprocess.run([python, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          universal_newlines=True, timeout=1800)
    summary = [line for line in done.stdout.splitlines() if line.startswith("SUMMARY ")]
    assert done.returncode == 0 and summary, (done.stdout[-4000:], done.stderr[-4000:])
    assert sys.version_info[0] == 3
