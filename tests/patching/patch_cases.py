"""Shared cases, tolerances and helpers for the tfdet.patching tests.

A plain module (no fixtures: those are in patch_cases.py), also imported by the
cross-process digests and by the multi-version check, which run inside other
interpreters (TF 1.15 on Python 3.7 has no pytest): it imports TensorFlow only
inside functions and stays Python 3.7-compatible.

A case is one replacement exercised on one kind of input: `make(rng, dtype)`
builds numpy inputs, `ours(tf, inputs, *diff)` / `stock(tf, inputs, *diff)`
compute the output from the tensors being differentiated (`diff`), and
`evaluate` returns the output plus the gradient of <output, fixed random
upstream gradient> with respect to each `diff` tensor.
"""

import hashlib
import json
import os
import subprocess
import sys

import numpy as np

from tfdet import graph


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# --------------------------------------------------------------------------- tolerances
#
# A sum of n terms evaluated in any order satisfies |fl(s) - s| <= (n-1) u sum|x_i|
# (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., eq. 4.4), with
# u = eps/2. Two different orders (ours and the stock kernel's) therefore differ
# by at most (n-1) eps sum|x_i|. The cases keep n <= MAX_TERMS + 1 terms per
# output element, so the bound is TOLERANCES[dtype] * sum|x_i|, where sum|x_i| is
# obtained by running the stock op on absolute values in float64 (`scale`). The
# bound is relative to the magnitudes summed, not to the result, because the
# result may cancel to ~0. Products obey the same bound relative to |product|.
# Integer sums and products are exact in any order, and max/min never round:
# tolerance 0 (bitwise equality). The same factor covers terms that both sides
# form identically before summing (crop_and_resize, sparse matmul, resize).
MAX_TERMS = 32
EPS = {
    "float16": 2.0 ** -10,
    "bfloat16": 2.0 ** -7,
    "float32": 2.0 ** -23,
    "float64": 2.0 ** -52,
    "complex64": 2.0 ** -23,
    "complex128": 2.0 ** -52,
}
TOLERANCES = dict((name, MAX_TERMS * eps) for name, eps in EPS.items())
# Absolute floor: differences below the smallest normal number (subnormal noise).
TINY = {"float16": 2.0 ** -14, "bfloat16": 2.0 ** -126, "float32": 2.0 ** -126, "float64": 2.0 ** -1022,
        "complex64": 2.0 ** -126, "complex128": 2.0 ** -1022}

FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
INTS = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]

# Explicit list of op types that must never appear in a replacement's forward or
# gradient graph (the raw ops that accumulate with atomics on GPU).
FORBIDDEN_OPS = {
    "SegmentSum", "SegmentSumV2", "UnsortedSegmentSum", "UnsortedSegmentProd", "UnsortedSegmentMax",
    "UnsortedSegmentMin", "BiasAddGrad", "Bincount", "DenseBincount", "SparseTensorDenseMatMul",
    "ResizeNearestNeighborGrad", "CropAndResizeGradImage", "CropAndResizeGradBoxes", "ScatterNd",
    "TensorScatterAdd", "TensorScatterSub", "TensorScatterUpdate", "ScatterAdd", "ResourceScatterAdd",
}


def tolerance(dtype_name, terms=MAX_TERMS):
    """Relative tolerance (against sum of magnitudes) for `terms` terms per element."""
    if dtype_name not in TOLERANCES:
        return 0.0
    return TOLERANCES[dtype_name] * max(terms, 1) / float(MAX_TERMS)


def assert_close(actual, expected, scale, dtype_name, what="", terms=MAX_TERMS):
    """|actual - expected| <= tolerance * scale (+ TINY), elementwise; exact for integers."""
    actual = np.asarray(actual)
    expected = np.asarray(expected)
    assert actual.shape == expected.shape, "%s: shape %s != stock %s" % (what, actual.shape, expected.shape)
    if dtype_name not in TOLERANCES:
        assert np.array_equal(actual, expected), "%s: integer results differ\n%s\n%s" % (what, actual, expected)
        return
    a = _c128(actual)
    e = _c128(expected)
    same_special = (np.isnan(a) & np.isnan(e)) | (np.isinf(a) & (a == e))
    err = np.where(same_special, 0.0, np.abs(a - e))
    bound = tolerance(dtype_name, terms) * np.abs(np.asarray(scale, np.float64)) + TINY[dtype_name]
    bad = ~(err <= bound)
    assert not bad.any(), "%s (%s): %d elements beyond tolerance; worst err %g vs bound %g" % (
        what, dtype_name, int(bad.sum()), float(np.max(err[bad])), float(bound[bad][np.argmax(err[bad])])
        if np.ndim(bound) else float(bound))


# --------------------------------------------------------------------------- TF helpers


def tf_module():
    """tensorflow.compat.v2, eager on TF 1.x too."""
    import tensorflow as tf1

    if tf1.__version__.startswith("1."):
        tf1.compat.v1.enable_eager_execution()
    import tensorflow.compat.v2 as tf

    return tf


def tf_version():
    tf = tf_module()
    return tuple(int(p) for p in tf.__version__.split(".")[:2])


def np_dtype(name):
    tf = tf_module()
    return tf.as_dtype(name).as_numpy_dtype


def cast_np(x, name):
    """numpy array of dtype `name` (bfloat16 through TF's numpy type)."""
    return np.asarray(x).astype(np_dtype(name))


def wide(rng, shape, dtype="float32"):
    """Values with random signs and magnitudes 10**uniform(-8, 8): summation order changes the result."""
    mags = 10.0 ** rng.uniform(-8, 8, size=shape)
    return (rng.choice([-1.0, 1.0], size=shape) * mags * rng.uniform(1, 2, size=shape)).astype(dtype)


def to_numpy(t):
    tf = tf_module()
    if isinstance(t, tf.IndexedSlices):
        t = tf.convert_to_tensor(t)
    return t.numpy()


def evaluate(fn, inputs, diff_keys, grad=True, upstream_seed=7, absolute=False, complex_upstream=False):
    """fn(*tensors of inputs[diff_keys]) -> output; returns [output, d<out, w>/d diff_0, ...] as numpy.

    w is a fixed random upstream gradient; gradients only when `grad` and the
    output is floating/complex. absolute=True returns |output| and the gradients
    for |w| (with |inputs| given, sums of magnitudes for linear ops).
    """
    tf = tf_module()
    xs = [tf.constant(inputs[k]) for k in diff_keys]
    with tf.GradientTape() as tape:
        for x in xs:
            tape.watch(x)
        y = fn(*xs)
    out = [to_numpy(y)]
    if grad and xs and (y.dtype.is_floating or y.dtype.is_complex):
        rng = np.random.RandomState(upstream_seed)
        w = rng.uniform(-1, 1, size=out[0].shape)
        if y.dtype.is_complex or complex_upstream:
            w = w + 1j * rng.uniform(-1, 1, size=out[0].shape)
        if absolute:
            w = np.abs(w)
        w = tf.cast(tf.constant(w), y.dtype)
        grads = tape.gradient(y, xs, output_gradients=w, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        out.extend(to_numpy(g) for g in grads)
    if absolute:
        out = [np.abs(o) for o in out]
    return out


def digest(arrays):
    h = hashlib.sha256()
    for a in arrays:
        a = np.ascontiguousarray(a)
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


# --------------------------------------------------------------------------- cases


class Case(object):
    """One replacement on one kind of input (see the module docstring)."""

    def __init__(self, name, make, ours, stock, dtypes, diff=("data",), scale="abs", terms=MAX_TERMS,
                 min_tf=(1, 15), grad_dtypes=None, stock_grad_min_tf=None, dtype_min_tf=None, computes_in=None):
        self.name = name
        self.make = make
        self.ours = ours
        self.stock = stock
        self.dtypes = list(dtypes)
        self.diff = tuple(diff)
        self.scale = scale  # "abs": stock op on |inputs| in float64; or a function(inputs) -> list
        self.terms = terms
        self.min_tf = min_tf
        self.grad_dtypes = grad_dtypes  # dtypes whose gradients are compared (default: float/complex)
        self.stock_grad_min_tf = stock_grad_min_tf  # stock gradient broken before this TF version
        self.dtype_min_tf = dtype_min_tf or {}  # dtype -> first TF version whose stock op is right for it
        self.computes_in = computes_in  # the dtype the stock op computes in, when narrower than its output

    def __repr__(self):
        return "Case(%s)" % self.name

    def wants_grad(self, dtype):
        if dtype in INTS:
            return False
        if self.grad_dtypes is not None and dtype not in self.grad_dtypes:
            return False
        if self.stock_grad_min_tf is not None and tf_version() < self.stock_grad_min_tf:
            return False
        return bool(self.diff)

    def run(self, which, inputs, dtype):
        tf = tf_module()
        fn = self.ours if which == "ours" else self.stock
        return evaluate(lambda *xs: fn(tf, inputs, *xs), inputs, self.diff, grad=self.wants_grad(dtype))

    def scales(self, inputs, dtype):
        """Per-output magnitudes the tolerance is relative to."""
        if callable(self.scale):
            return self.scale(inputs)
        tf = tf_module()
        abs_inputs = dict((k, _abs64(v)) for k, v in inputs.items())
        fn = self.stock
        return evaluate(lambda *xs: fn(tf, abs_inputs, *xs), abs_inputs, self.diff, grad=self.wants_grad(dtype),
                        absolute=True, complex_upstream=dtype in COMPLEX)


def _is_float_array(v):
    return isinstance(v, np.ndarray) and (v.dtype.kind in "fc" or v.dtype.name == "bfloat16")


def _abs64(v):
    """|v| as float64 for float/complex arrays; anything else unchanged."""
    if not _is_float_array(v):
        return v
    if v.dtype.kind == "c":
        return np.abs(v.astype(np.complex128))
    return np.abs(v.astype(np.float64))


def _c128(x):
    x = np.asarray(x)
    return x.astype(np.complex128) if x.dtype.kind == "c" else x.astype(np.float64).astype(np.complex128)


def compare(case, dtype, seed=0):
    """Run ours and stock on the case's inputs; assert every output within tolerance."""
    rng = np.random.default_rng(seed)
    inputs = case.make(rng, dtype)
    ours = case.run("ours", inputs, dtype)
    stock = case.run("stock", inputs, dtype)
    assert len(ours) == len(stock)
    scales = case.scales(inputs, dtype) if dtype not in INTS else [None] * len(ours)
    for i, (a, b) in enumerate(zip(ours, stock)):
        what = "%s[%s] %s" % (case.name, dtype, "output" if i == 0 else "gradient wrt %s" % case.diff[i - 1])
        # The tolerance follows the dtype the values are computed in (crop_and_resize
        # computes in float32 whatever the image dtype).
        result_dtype = case.computes_in or np.asarray(b).dtype.name
        assert_close(a, b, scales[i], result_dtype if result_dtype in TOLERANCES else dtype, what, case.terms)
    return ours, stock


def _segment_data(rng, dtype, n, shape=(), lo=-3.0, hi=3.0):
    if dtype in INTS:
        info = np.iinfo(np_dtype(dtype))
        top = min(5, int(info.max))
        bottom = max(-5, int(info.min))
        return cast_np(rng.integers(bottom, top + 1, size=(n,) + tuple(shape)), dtype)
    x = rng.uniform(lo, hi, size=(n,) + tuple(shape))
    if dtype in COMPLEX:
        x = x + 1j * rng.uniform(lo, hi, size=(n,) + tuple(shape))
    return cast_np(x, dtype)


def _ids(rng, n, num_segments, negative=True, shape=None):
    low = -2 if negative else 0
    ids = rng.integers(low, num_segments, size=n if shape is None else shape).astype(np.int32)
    return ids


def make_segment(variant):
    """Inputs for the unsorted segment ops: repeated, negative, absent ids; <= 32 terms per segment."""

    def make(rng, dtype):
        if variant == "basic":
            n, segs = 60, 9  # 11 segments ids in [-2, 9): negatives dropped, a few absent
            ids = _ids(rng, n, segs)
            ids[:3] = 4  # a repeated id for sure
            data = _segment_data(rng, dtype, n, (3,))
            num = segs + 2  # trailing empty segments
        elif variant == "empty":
            ids = np.zeros([0], np.int32)
            data = _segment_data(rng, dtype, 0, (2,))
            num = 4
        elif variant == "ids2d":
            ids = _ids(rng, None, 5, shape=(6, 4))
            data = _segment_data(rng, dtype, 6, (4, 2))
            num = 6
        elif variant == "int64_ids_1d":
            ids = rng.integers(-1, 7, size=40).astype(np.int64)
            data = _segment_data(rng, dtype, 40)
            num = np.int64(7)
        elif variant == "all_negative":
            ids = -np.ones([5], np.int32)
            data = _segment_data(rng, dtype, 5, (2,))
            num = 3
        else:
            raise ValueError(variant)
        return {"data": data, "ids": ids, "num": num}

    return make


def make_prod(rng, dtype):
    inputs = make_segment("basic")(rng, dtype)
    data = inputs["data"]
    if dtype not in INTS:
        data = cast_np(np.asarray(data, np.complex128 if dtype in COMPLEX else np.float64) * 0.3 + 1.0, dtype)
        ids = inputs["ids"]
        seg_one = np.nonzero(ids == 4)[0]
        data[seg_one[0], 0] = 0  # one zero in segment 4, column 0
        data[seg_one[0], 1] = 0
        data[seg_one[1], 1] = 0  # two zeros in segment 4, column 1
    inputs["data"] = data
    return inputs


def make_sorted(variant):
    def make(rng, dtype):
        if variant == "basic":
            ids = np.sort(rng.integers(0, 8, size=50)).astype(np.int32)
            ids[ids == 3] = 4  # a gap: segment 3 empty
            data = _segment_data(rng, dtype, 50, (2,))
        else:
            ids = np.zeros([0], np.int32)
            data = _segment_data(rng, dtype, 0, (2,))
        return {"data": data, "ids": ids}

    return make


def _seg_case(name, fn_name, make, dtypes, **kw):
    def ours(tf, inp, data):
        from tfdet.patching import replacements as R

        return getattr(R, fn_name)(data, inp["ids"], inp["num"])

    def stock(tf, inp, data):
        return getattr(tf.math, fn_name)(data, inp["ids"], inp["num"])

    return Case(name, make, ours, stock, dtypes, **kw)


def make_indexed_slices(rng, dtype):
    n, rows = 40, 9
    return {"data": _segment_data(rng, dtype, n, (3,)), "ids": rng.integers(0, rows, size=n).astype(np.int64),
            "rows": rows}


def _isd(tf, inp, data, fn):
    ids = tf.constant(inp["ids"])
    return fn(tf.IndexedSlices(data, ids, tf.constant([inp["rows"], 3], tf.int64)))


def make_bias(layout):
    def make(rng, dtype):
        v = _segment_data(rng, dtype, 2, (3, 4, 5))
        c = 3 if layout == "NCHW" else 5
        return {"value": v, "bias": _segment_data(rng, dtype, c), "layout": layout}

    return make


def make_bincount(variant):
    def make(rng, dtype):
        arr = rng.integers(0, 9, size=45).astype(np.int32)
        inp = {"arr": arr, "variant": variant}
        if variant in ("weights", "weights_maxlength"):
            inp["weights"] = _segment_data(rng, dtype, 45)
        if variant == "axis":
            inp["arr"] = rng.integers(0, 6, size=(4, 9)).astype(np.int32)
        if variant == "binary":
            inp["arr"] = rng.integers(0, 6, size=(5, 9)).astype(np.int32)
        if variant == "empty":
            inp["arr"] = np.zeros([0], np.int32)
        return inp

    return make


def _bincount_kwargs(tf, inp, dtype_name):
    v = inp["variant"]
    kw = {}
    if v in ("weights", "weights_maxlength"):
        kw["weights"] = tf.constant(inp["weights"])
    if v == "weights_maxlength":
        kw["maxlength"] = 5
    if v == "counts":
        kw["minlength"] = 12
        kw["dtype"] = tf.as_dtype(dtype_name)
    if v == "axis":
        kw["axis"] = -1
        kw["maxlength"] = 4
    if v == "binary":
        kw["axis"] = -1
        kw["binary_output"] = True
    return kw


def make_sdm(adj_a, adj_b):
    def make(rng, dtype):
        rows, cols, k = 4, 5, 3
        nnz = 12
        idx = np.stack([rng.integers(0, rows, nnz), rng.integers(0, cols, nnz)], 1).astype(np.int64)
        idx[1] = idx[0]  # a repeated index
        inner = rows if adj_a else cols
        return {
            "indices": idx, "shape": np.array([rows, cols], np.int64),
            "values": _segment_data(rng, dtype, nnz),
            "b": _segment_data(rng, dtype, k, (inner,)) if adj_b else _segment_data(rng, dtype, inner, (k,)),
            "adj": (adj_a, adj_b),
        }

    return make


def _sdm(tf, inp, values, b, fn):
    sp = tf.SparseTensor(inp["indices"], values, inp["shape"])
    return fn(sp, b, adjoint_a=inp["adj"][0], adjoint_b=inp["adj"][1])


RESIZE_VARIANTS = [
    # (size, align_corners, half_pixel_centers)
    ((11, 13), False, False), ((11, 13), True, False), ((11, 13), False, True),
    ((3, 4), False, False), ((3, 4), True, False), ((3, 4), False, True),
    ((10, 14), False, True), ((1, 1), True, False), ((5, 7), False, False),
]


def make_resize(variant):
    def make(rng, dtype):
        return {"images": _segment_data(rng, dtype, 2, (5, 7, 3)), "variant": variant}

    return make


def _resize(tf, inp, images, fn):
    size, ac, hp = inp["variant"]
    return fn(images, size, align_corners=ac, half_pixel_centers=hp)


def _stock_resize(images, size, align_corners, half_pixel_centers):
    tf = tf_module()
    return tf.raw_ops.ResizeNearestNeighbor(images=images, size=size, align_corners=align_corners,
                                            half_pixel_centers=half_pixel_centers)


def make_crop(variant):
    def make(rng, dtype):
        method, crop = variant
        boxes = np.array([[0.1, 0.2, 0.8, 0.9], [-0.2, 0.0, 1.3, 0.5], [0.5, 0.5, 0.5, 0.5],
                          [0.9, 0.8, 0.1, 0.3], [0.0, 0.0, 1.0, 1.0]], np.float32)
        boxes = boxes + rng.uniform(-0.01, 0.01, size=boxes.shape).astype(np.float32)
        return {"image": _segment_data(rng, dtype, 2, (9, 11, 3)), "boxes": boxes,
                "box_ind": np.array([0, 1, 1, 0, 1], np.int32), "variant": variant}

    return make


def _crop(tf, inp, image, boxes, fn):
    method, crop = inp["variant"]
    return fn(image, boxes, inp["box_ind"], crop, method=method)


def _crop_scale(inp):
    """Magnitudes for crop_and_resize: the stock op on |image| with |upstream| for image
    gradients; for the boxes gradient (differences of pixels) the sum of term magnitudes
    is bounded by 4 * max|image| * sum|upstream| * (size - 1) per box."""
    tf = tf_module()
    image = np.abs(np.asarray(inp["image"], np.float64))
    boxes = inp["boxes"]
    method, crop = inp["variant"]
    out = tf.image.crop_and_resize(image, boxes, inp["box_ind"], crop, method=method).numpy()
    w = np.abs(np.random.RandomState(7).uniform(-1, 1, size=out.shape))
    g_img = tf.raw_ops.CropAndResizeGradImage(grads=tf.constant(w, tf.float32), boxes=boxes, box_ind=inp["box_ind"],
                                              image_size=image.shape, T=tf.float64, method=method).numpy()
    per_box = 4 * image.max() * w.reshape(w.shape[0], -1).sum(1) * max(image.shape[1:3])
    return [np.abs(out), g_img, np.repeat(per_box[:, None], 4, 1)]


def make_scatter(rng, dtype):
    idx = np.array([[0, 1], [2, 2], [0, 1], [1, 0], [0, 1], [2, 3]], np.int32)
    return {"indices": idx, "updates": _segment_data(rng, dtype, 6, (3,)), "shape": np.array([3, 4, 3], np.int32),
            "tensor": _segment_data(rng, dtype, 3, (4, 3))}


def _r():
    from tfdet.patching import replacements as R

    return R


def build_cases():
    """All cases, by name."""
    cases = []
    all_seg = FLOATS + COMPLEX + INTS
    for v in ["basic", "empty", "ids2d", "int64_ids_1d", "all_negative"]:
        cases.append(_seg_case("unsorted_segment_sum/" + v, "unsorted_segment_sum", make_segment(v), all_seg))
    for v in ["basic", "ids2d"]:
        cases.append(_seg_case("unsorted_segment_mean/" + v, "unsorted_segment_mean", make_segment(v), FLOATS))
        cases.append(_seg_case("unsorted_segment_sqrt_n/" + v, "unsorted_segment_sqrt_n", make_segment(v), FLOATS))
        cases.append(_seg_case("unsorted_segment_max/" + v, "unsorted_segment_max", make_segment(v),
                               FLOATS + INTS, stock_grad_min_tf=(2, 0)))
        cases.append(_seg_case("unsorted_segment_min/" + v, "unsorted_segment_min", make_segment(v),
                               FLOATS + INTS, stock_grad_min_tf=(2, 0)))
    cases.append(_seg_case("unsorted_segment_max/empty", "unsorted_segment_max", make_segment("empty"),
                           ["float32", "int32"], stock_grad_min_tf=(2, 0)))
    cases.append(_seg_case("unsorted_segment_prod/zeros", "unsorted_segment_prod", make_prod, all_seg))
    cases.append(_seg_case("unsorted_segment_prod/empty", "unsorted_segment_prod", make_segment("empty"),
                           ["float32", "int32"]))

    for v in ["basic", "empty"]:
        cases.append(Case(
            "segment_sum/" + v, make_sorted(v),
            lambda tf, inp, data: _r().segment_sum(data, inp["ids"]),
            lambda tf, inp, data: tf.math.segment_sum(data, inp["ids"]),
            all_seg if v == "basic" else ["float32", "int32"]))

    cases.append(Case(
        "indexed_slices_to_dense", make_indexed_slices,
        lambda tf, inp, data: _isd(tf, inp, data, _r().indexed_slices_to_dense),
        lambda tf, inp, data: _isd(tf, inp, data, tf.convert_to_tensor),
        FLOATS + COMPLEX + ["int32", "int64"]))

    for layout in ["NHWC", "NCHW"]:
        cases.append(Case(
            "bias_add/" + layout, make_bias(layout),
            lambda tf, inp, v, b: _r().bias_add(v, b, data_format=inp["layout"]),
            lambda tf, inp, v, b: tf.nn.bias_add(v, b, data_format=inp["layout"]),
            ["float16", "float32", "float64", "complex64", "int32", "int64"], diff=("value", "bias"),
            terms=MAX_TERMS * 2))

    for v, dts in [("weights", ["float32", "float64", "int32", "int64"]), ("counts", ["int32", "int64", "float32"]),
                   ("weights_maxlength", ["float32", "float64"]), ("axis", ["int32"]), ("binary", ["int32"]),
                   ("empty", ["int32"])]:
        cases.append(Case(
            "bincount/" + v, make_bincount(v),
            lambda tf, inp, dtype_name=None: _r().bincount(inp["arr"], **_bincount_kwargs(tf, inp, _dt(inp))),
            lambda tf, inp, dtype_name=None: tf.math.bincount(inp["arr"], **_bincount_kwargs(tf, inp, _dt(inp))),
            dts, diff=(), min_tf=(2, 4) if v in ("axis", "binary") else ((2, 0) if v == "weights_maxlength"
                                                                           else (1, 15))))

    for adj_a in (False, True):
        for adj_b in (False, True):
            cases.append(Case(
                "sparse_dense_matmul/adj%d%d" % (adj_a, adj_b), make_sdm(adj_a, adj_b),
                lambda tf, inp, values, b: _sdm(tf, inp, values, b, _r().sparse_dense_matmul),
                lambda tf, inp, values, b: _sdm(tf, inp, values, b, tf.sparse.sparse_dense_matmul),
                ["float16", "float32", "float64", "complex64", "int32"], diff=("values", "b"),
                grad_dtypes=["float16", "float32", "float64"],
                # stock adjoint_a did not conjugate complex values before TF 2.6 (2.4 computes A^T b)
                dtype_min_tf={"complex64": (2, 6)} if adj_a else None))

    for variant in RESIZE_VARIANTS:
        cases.append(Case(
            "resize_nearest_neighbor/%dx%d-ac%d-hp%d" % (variant[0] + (variant[1], variant[2])),
            make_resize(variant),
            lambda tf, inp, images: _resize(tf, inp, images, _r().resize_nearest_neighbor),
            lambda tf, inp, images: _resize(tf, inp, images, _stock_resize),
            ["float16", "bfloat16", "float32", "float64", "int32", "uint8"], diff=("images",)))

    for method in ["bilinear", "nearest"]:
        for crop in [(4, 5), (1, 1), (1, 3)]:
            cases.append(Case(
                "crop_and_resize/%s-%dx%d" % ((method,) + crop), make_crop((method, crop)),
                lambda tf, inp, image, boxes: _crop(tf, inp, image, boxes, _r().crop_and_resize),
                lambda tf, inp, image, boxes: _crop(tf, inp, image, boxes, tf.image.crop_and_resize),
                ["float16", "float32", "float64"], diff=("image", "boxes"), scale=_crop_scale))

    cases.append(Case(
        "scatter_nd", make_scatter,
        lambda tf, inp, updates: _r().scatter_nd(inp["indices"], updates, inp["shape"]),
        lambda tf, inp, updates: tf.scatter_nd(inp["indices"], updates, inp["shape"]),
        all_seg, diff=("updates",)))
    cases.append(Case(
        "tensor_scatter_nd_add", make_scatter,
        lambda tf, inp, tensor, updates: _r().tensor_scatter_nd_add(tensor, inp["indices"], updates),
        lambda tf, inp, tensor, updates: tf.tensor_scatter_nd_add(tensor, inp["indices"], updates),
        FLOATS + COMPLEX + ["int32", "int64"], diff=("tensor", "updates"), min_tf=(2, 0)))
    for axis in (-1, 0):
        cases.append(Case(
            "softmax_cross_entropy_with_logits/axis%d" % axis, make_xent(axis),
            lambda tf, inp, labels, logits: _r().softmax_cross_entropy_with_logits(labels, logits, axis=inp["axis"]),
            lambda tf, inp, labels, logits: tf.nn.softmax_cross_entropy_with_logits(labels, logits, axis=inp["axis"]),
            ["float16", "float32", "float64"], diff=("labels", "logits")))
    for rank in (2, 3):
        cases.append(Case(
            "sparse_softmax_cross_entropy_with_logits/rank%d" % rank, make_sparse_xent(rank),
            lambda tf, inp, logits: _r().sparse_softmax_cross_entropy_with_logits(inp["labels"], logits),
            lambda tf, inp, logits: tf.nn.sparse_softmax_cross_entropy_with_logits(inp["labels"], logits),
            ["float16", "float32", "float64"], diff=("logits",)))
    cases.append(Case(
        "adjust_contrast", make_contrast,
        lambda tf, inp: _r().adjust_contrast(inp["images"], inp["factor"]),
        lambda tf, inp: tf.image.adjust_contrast(inp["images"], inp["factor"]),
        ["float32", "float64"], diff=(), scale=_contrast_scale, computes_in="float32"))
    return dict((c.name, c) for c in cases)


def make_xent(axis):
    def make(rng, dtype):
        logits = rng.uniform(-4, 4, size=(6, 5))
        labels = np.exp(rng.uniform(-2, 2, size=(6, 5)))
        labels /= labels.sum(1, keepdims=True)
        if axis == 0:
            logits, labels = logits.T.copy(), labels.T.copy()
        return {"logits": cast_np(logits, dtype), "labels": cast_np(labels, dtype), "axis": axis}

    return make


def make_sparse_xent(rank):
    def make(rng, dtype):
        shape = (7,) if rank == 2 else (2, 3)
        return {"logits": cast_np(rng.uniform(-4, 4, size=shape + (5,)), dtype),
                "labels": rng.integers(0, 5, size=shape).astype(np.int32)}

    return make


def make_contrast(rng, dtype):
    return {"images": cast_np(rng.uniform(0, 1, size=(2, 4, 5, 3)), dtype), "factor": 1.7}


def _contrast_scale(inp):
    """|x| f + mean|x| |1 - f|: the magnitudes (x - mean) * f + mean is made of."""
    x = np.abs(np.asarray(inp["images"], np.float64))
    f = inp["factor"]
    return [x * f + x.mean(axis=(1, 2), keepdims=True) * abs(1 - f)]


def _dt(inp):
    return inp.get("dtype_name", "int32")


def _with_dtype(make):
    def wrapped(rng, dtype):
        inp = make(rng, dtype)
        inp["dtype_name"] = dtype
        return inp

    return wrapped


CASES = build_cases()
for _name in list(CASES):
    if _name.startswith("bincount/"):
        CASES[_name].make = _with_dtype(CASES[_name].make)
del _name


def case_params(predicate=None):
    """(case name, dtype) pairs for parametrize, filtered by the installed TF version."""
    out = []
    for name, case in sorted(CASES.items()):
        if tf_version() < case.min_tf:
            continue
        for dtype in case.dtypes:
            if tf_version() < case.dtype_min_tf.get(dtype, (0, 0)):
                continue
            if predicate is None or predicate(case, dtype):
                out.append((name, dtype))
    return out


# --------------------------------------------------------------------------- repeatability


def repeat_inputs(case, rng):
    """Inputs for the repeatability proofs: the case's own structure, float32 values of
    widely varying magnitude and random sign, more terms per output element."""
    inputs = case.make(rng, "float32")
    for key in ("data", "values", "updates", "weights", "image", "images", "tensor", "value", "bias"):
        if key in inputs and np.asarray(inputs[key]).dtype.kind == "f":
            inputs[key] = wide(rng, np.shape(inputs[key]))
    if "ids" in inputs and np.size(inputs["ids"]) and case.name.startswith("unsorted_segment_sum/basic"):
        # many terms per segment, so that any change of order shows up
        n = 4000
        inputs["ids"] = rng.integers(-1, 9, size=n).astype(np.int32)
        inputs["data"] = wide(rng, (n, 3))
    return inputs


REPEAT_CASES = [
    "unsorted_segment_sum/basic", "unsorted_segment_sum/ids2d", "segment_sum/basic", "unsorted_segment_mean/basic",
    "unsorted_segment_sqrt_n/basic", "unsorted_segment_prod/zeros", "unsorted_segment_max/basic",
    "indexed_slices_to_dense", "bias_add/NHWC", "bias_add/NCHW", "bincount/weights", "sparse_dense_matmul/adj00",
    "sparse_dense_matmul/adj11", "resize_nearest_neighbor/3x4-ac0-hp0", "resize_nearest_neighbor/11x13-ac1-hp0",
    "crop_and_resize/bilinear-4x5", "crop_and_resize/nearest-4x5", "scatter_nd", "tensor_scatter_nd_add",
]


def repeat_digests(names=None, runs=1, seed=123, method="order_fixed"):
    """{case name: [digest per run]} of ours (output and gradients) on repeat_inputs."""
    from tfdet.patching import primitive

    names = [n for n in (names or REPEAT_CASES) if n in CASES and tf_version() >= CASES[n].min_tf]
    out = {}
    with primitive.method_scope(method):
        for name in names:
            case = CASES[name]
            inputs = repeat_inputs(case, np.random.default_rng(seed))
            out[name] = [digest(case.run("ours", inputs, "float32")) for _ in range(runs)]
    return out


DIGEST_SCRIPT = r"""
import json, os, sys
sys.path.insert(0, %(here)r)
sys.path.insert(0, %(repo)r)
import patch_cases
print("DIGESTS " + json.dumps(patch_cases.repeat_digests(%(names)r)))
"""


def digests_in_subprocess(python=None, names=None, env=None, popen=False):
    """Run repeat_digests in a fresh interpreter; returns the dict (or the Popen when popen=True)."""
    code = DIGEST_SCRIPT % {"here": HERE, "repo": REPO, "names": names}
    full_env = dict(os.environ)
    full_env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    full_env.update(env or {})
    proc = subprocess.Popen([python or sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=full_env, universal_newlines=True)
    if popen:
        return proc
    return parse_digests(proc)


def parse_digests(proc, timeout=600):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, err[-3000:]
    line = [ln for ln in out.splitlines() if ln.startswith("DIGESTS ")][-1]
    return json.loads(line[len("DIGESTS "):])


# --------------------------------------------------------------------------- graphs


# Integer segment ops that tfdet.patching.exact_sum builds, allowed in a replacement's graph only
# with int32 data: integer atomic additions and maxima give the same bits in any order, the
# GPU kernels exist for int32 data (before 2.5: segment_reduction_ops_gpu.cu.cc at 08a21974ed53,
# TF_CALL_int32(DEFINE_SUM_GPU_SPECS) / TF_CALL_int32(DEFINE_REAL_GPU_SPECS); TF 2.5-2.6:
# segment_reduction_ops_impl_*.cc, TF_CALL_int32(REGISTER_SUM_GPU_UNSORTED_KERNELS_ALL) /
# TF_CALL_int32(REGISTER_REAL_GPU_UNSORTED_KERNELS_ALL)), and TF 2.5-2.6 raise under
# TF_DETERMINISTIC_OPS only where ReductionF::is_associative is false, which
# segment_reduction_ops.h sets to std::is_integral<T>::value for AtomicSumOpGpu and to true
# for AtomicMaxOpGpu (2.5.3 wheel, lines 79-84 and 97-102; 2.6.4, lines 81-86 and 99-104).
# op_types names them "UnsortedSegmentSum[int32]" and "UnsortedSegmentMax[int32]", outside FORBIDDEN_OPS.
INTEGER_ATOMIC_OPS = {"UnsortedSegmentSum": "int32", "UnsortedSegmentMax": "int32"}


def gradient_graph(tf, name):
    """GraphDef of a tf.function computing case `name`'s output and its gradients
    (float32 inputs, every shape unknown): what the graph walks inspect."""
    case = CASES[name]
    inputs = case.make(np.random.default_rng(0), "float32")

    def fn(*xs):
        with tf.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            y = case.ours(tf, inputs, *xs)
        grads = tape.gradient(y, list(xs), output_gradients=tf.ones_like(y)) if xs else []
        return [y] + [g for g in grads if g is not None]

    specs = [tf.TensorSpec([None] * np.ndim(inputs[k]), tf.as_dtype(np.asarray(inputs[k]).dtype)) for k in case.diff]
    return tf.function(fn).get_concrete_function(*specs).graph.as_graph_def()


def op_types(graph_def):
    """Every op type in a GraphDef, including the bodies of all library functions; the integer
    segment ops of INTEGER_ATOMIC_OPS with their allowed data type as "Op[int32]"."""
    import tensorflow as tf

    types = set()
    for site in graph.walk(graph_def):
        allowed = INTEGER_ATOMIC_OPS.get(site.op_type)
        if allowed is not None and "T" in site.node.attr and tf.as_dtype(site.node.attr["T"].type).name == allowed:
            types.add("%s[%s]" % (site.op_type, allowed))
        else:
            types.add(site.op_type)
    return types


def loop_parallel_iterations(graph_def):
    """parallel_iterations attrs of every loop op in a GraphDef (with its library)."""
    return graph.loop_attrs(graph_def, "parallel_iterations")


def catalogue_forbidden(version):
    """Raw ops the catalogue marks nondeterministic (or raising under determinism) on GPU for `version`.

    Entries about a gradient list the forward op (whose stock gradient is the
    problem) with the gradient op; only the gradient ops (…Grad…, …Backprop…)
    are forbidden in a graph, since a replacement's gradient never goes through
    the stock one (the graph walk would find the gradient op otherwise).
    Conditioned entries whose condition these graphs provably avoid are
    returned separately, as {entry id: raw ops}, for the test to check.
    """
    import tfdet.catalog as catalog

    cat = catalog.default_catalogue()
    statuses = ("nondeterministic", "raises_under_determinism")
    forbidden, conditional = set(), {}
    for verdict in cat.affecting(version, "gpu", statuses=statuses):
        entry = verdict.entry
        ops = set(entry.raw_ops)
        if entry.direction == "gradient":
            ops = set(op for op in ops if "Grad" in op or "Backprop" in op)
        if entry.id == "while-loop-parallel-iterations":
            conditional[entry.id] = ops
            continue
        forbidden |= ops
    return forbidden, conditional


# --------------------------------------------------------------------------- graph modes


def _upstream(shape, dtype):
    rng = np.random.RandomState(7)
    w = rng.uniform(-1, 1, size=shape)
    if dtype.is_complex:
        w = w + 1j * rng.uniform(-1, 1, size=shape)
    return w


def graph_mode_outputs(name, mode, dtype="float32"):
    """The case's output and gradients (as evaluate) computed inside tf.function ("function")
    or in a TF1-style graph run by a Session ("session"), with unknown input shapes; the
    session result is computed twice and must be bitwise equal."""
    import tensorflow as tf_root

    tf = tf_module()
    case = CASES[name]
    inputs = case.make(np.random.default_rng(0), dtype)
    eager = case.run("ours", inputs, dtype)
    grad = len(eager) > 1
    keys = case.diff
    dtypes = [tf.as_dtype(np.asarray(inputs[k]).dtype) for k in keys]
    shapes = [[None] * np.ndim(inputs[k]) for k in keys]

    def body(*xs):
        if mode == "session":
            y = case.ours(tf, inputs, *xs)
            if not grad:
                return [y]
            w = tf.constant(_upstream(eager[0].shape, y.dtype), y.dtype)
            grads = tf_root.compat.v1.gradients(y, list(xs), grad_ys=w)
            return [y] + [tf.convert_to_tensor(g) if g is not None else tf.zeros_like(x) for g, x in zip(grads, xs)]
        with tf.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            y = case.ours(tf, inputs, *xs)
        if not grad:
            return [y]
        w = tf.constant(_upstream(eager[0].shape, y.dtype), y.dtype)
        grads = tape.gradient(y, list(xs), output_gradients=w, unconnected_gradients=tf.UnconnectedGradients.ZERO)
        return [y] + [tf.convert_to_tensor(g) for g in grads]

    if mode == "function":
        specs = [tf.TensorSpec(sh, dt) for sh, dt in zip(shapes, dtypes)]
        fn = tf.function(body, input_signature=specs)
        outs = [[t.numpy() for t in fn(*[inputs[k] for k in keys])] for _ in range(2)]
    else:
        graph = tf_root.Graph()
        with graph.as_default():
            phs = [tf_root.compat.v1.placeholder(dt, sh) for dt, sh in zip(dtypes, shapes)]
            fetches = body(*phs)
            with tf_root.compat.v1.Session(graph=graph) as sess:
                feed = dict((ph, inputs[k]) for ph, k in zip(phs, keys))
                outs = [sess.run(fetches, feed) for _ in range(2)]
    assert all(np.array_equal(a, b) for a, b in zip(outs[0], outs[1])), "%s %s: not repeatable" % (name, mode)
    return eager, outs[0], case.scales(inputs, dtype)


GRAPH_MODE_CASES = [
    "unsorted_segment_sum/basic", "unsorted_segment_sum/ids2d", "segment_sum/basic", "unsorted_segment_prod/zeros",
    "unsorted_segment_max/basic", "unsorted_segment_mean/basic", "indexed_slices_to_dense", "bias_add/NCHW",
    "bincount/weights", "sparse_dense_matmul/adj01", "resize_nearest_neighbor/11x13-ac0-hp1",
    "crop_and_resize/bilinear-4x5", "scatter_nd", "unsorted_segment_sum/empty",
]


def check_graph_mode(name, mode):
    eager, graph, scales = graph_mode_outputs(name, mode)
    assert len(eager) == len(graph)
    terms = CASES[name].terms
    if name.startswith("crop_and_resize/"):
        # Graph rewrites (constant folding of the box geometry) may round a sampling
        # position differently by an ulp of the image size (up to 11 here), which moves
        # up to 11 eps of weight between neighbouring pixels: allow 16 times more.
        terms *= 16
    for i, (a, b) in enumerate(zip(graph, eager)):
        dtype = np.asarray(b).dtype.name
        assert_close(a, b, scales[i], dtype if dtype in TOLERANCES else "float32", "%s %s #%d" % (name, mode, i),
                     terms)


# --------------------------------------------------------------------------- standalone (other TF versions)


def standalone_main(argv=None):
    """Forward/gradient comparisons and repeatability of every case, without pytest.

    Prints one JSON line per case and dtype, then a summary line; exit status 1 on failure.
    Used by the multiversion test to run the same checks under TF 1.15 / 2.4 / 2.6 / ...
    """
    import traceback

    from tfdet.patching import primitive

    tf = tf_module()
    failures = 0
    results = []
    with primitive.method_scope("order_fixed"):
        for name, dtype in case_params():
            case = CASES[name]
            rec = {"case": name, "dtype": dtype}
            try:
                compare(case, dtype)
                rec["outcome"] = "ok"
            except AssertionError as exc:
                rec["outcome"] = "mismatch"
                rec["detail"] = str(exc)[:500]
                failures += 1
            except Exception as exc:  # noqa: BLE001 - report and go on
                # The stock op may not exist / accept this input in this version: report it.
                try:
                    rng = np.random.default_rng(0)
                    case.run("stock", case.make(rng, dtype), dtype)
                    stock_ok = True
                except Exception:  # noqa: BLE001
                    stock_ok = False
                rec["outcome"] = "error" if stock_ok else "stock-unavailable"
                rec["detail"] = (traceback.format_exc() if stock_ok else repr(exc))[-800:]
                failures += int(stock_ok)
            results.append(rec)
            print(json.dumps(rec))
        for name in GRAPH_MODE_CASES:
            if tf_version() < CASES[name].min_tf:
                continue
            for mode in ("function", "session"):
                rec = {"case": name, "dtype": "float32", "mode": mode}
                try:
                    check_graph_mode(name, mode)
                    rec["outcome"] = "ok"
                except Exception:  # noqa: BLE001
                    rec["outcome"] = "error"
                    rec["detail"] = traceback.format_exc()[-800:]
                    failures += 1
                results.append(rec)
                print(json.dumps(rec))
    digests = repeat_digests(runs=3)
    unstable = sorted(n for n, d in digests.items() if len(set(d)) != 1)
    failures += len(unstable)
    summary = {"summary": True, "tf": tf.__version__, "python": sys.version.split()[0],
               "cases": len(results), "ok": sum(r["outcome"] == "ok" for r in results),
               "stock_unavailable": sum(r["outcome"] == "stock-unavailable" for r in results),
               "failures": failures, "unstable": unstable, "digests": dict((k, v[0]) for k, v in digests.items())}
    print("SUMMARY " + json.dumps(summary))
    return 1 if failures else 0
