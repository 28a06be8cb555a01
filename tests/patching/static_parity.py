"""Registry-wide parity of every replacement with its stock op: static shapes, ranks and dtypes of the
outputs and gradients in graph mode, errors, and values (issue 25).

A Problem is one call of a public API on NumPy inputs: `call(*tensors)` calls the API by its public
name (tf.math.bincount, ...), so what runs is whatever the API holds then. It is run twice in each
mode under a plan: as patched (the replacement installed), then with the replacement taken out again
(its aliases pointed back at the stock function, or TF's own gradient put back in the registry), the
rest of the plan unchanged. The two records must agree:

- both raise, with the same exception class; or
- both return, with the same static shape (TensorShape.as_list(), None for unknown rank) and dtype of
  the output and of every gradient as the graph knows them when built, and the same values within the
  dtype's tolerance (relative to `scale`, the magnitudes summed).

MODES: eager; tf.function whose input_signature has the inputs' shapes, unknown dimensions, unknown
rank; v1 graphs with placeholders of the inputs' shapes and of unknown rank. PLANS: this CPU's plan,
the GPU plan (patch(device="gpu")), the GPU plan on the order-fixed path, and every replacement forced
in at once on this CPU's plan.

CASES holds, for every registry entry, a hypothesis strategy of Problems and fixed Problems for static
shapes and for errors (test_static_parity.py checks that none is missing). Run as a script, it counts
the comparisons a fuzz makes and the ones that differ:

    PYTHONPATH=. python -u tests/patching/static_parity.py --examples 8   (from the checkout's root)
"""

import collections
import contextlib
import sys
import warnings

import numpy as np
from hypothesis import strategies as st

import tensorflow as tf

import tfdet
from tfdet.patching import bindings, primitive, registry
from tfdet.patching import replacements as R

import parity_harness as H
import parity_strategies as S

MODES = ("eager", "function", "function_unknown_shape", "function_unknown_rank", "v1_graph",
         "v1_graph_unknown_rank")
PLANS = ("cpu", "gpu", "order_fixed", "forced")
RTOL = H.RTOL

Problem = collections.namedtuple("Problem", "inputs call diff dtype scale")
Problem.__doc__ = """inputs: NumPy arrays, fed as tensors; call(*tensors) -> a tensor; diff: indices of the
inputs the gradient is taken to; dtype: the tolerance's dtype name ("exact" for none, "round" for
integers that may differ by one); scale: the
magnitudes the tolerance is relative to."""
Cases = collections.namedtuple("Cases", "problems statics errors")
Cases.__doc__ = """problems: a strategy of Problems (valid and invalid input); statics: fixed valid Problems
whose static shapes are compared; errors: fixed Problems the stock op rejects."""


# --------------------------------------------------------------------------- plans and the stock side


_HOLDERS = {}  # inside a plan_scope: implementation -> the modules holding it (a scan of every module is slow)


@contextlib.contextmanager
def plan_scope(plan, *names):
    """tfdet's patch for `plan`, with the replacements `names` installed (every one for "forced")."""
    device = "gpu" if plan in ("gpu", "order_fixed") else "cpu"
    method = "order_fixed" if plan == "order_fixed" else "auto"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tfdet.deterministic(device=device, quiet=True) as status:
            wanted = sorted(registry.names()) if plan == "forced" else names
            extra = []
            try:
                for each in wanted:
                    if each not in status.replacements:
                        extra.extend(bindings.INSTALLERS[each](tf))
                with primitive.method_scope(method):
                    for name in names:
                        H.assert_installed(registry.by_name(name))
                    yield
            finally:
                _HOLDERS.clear()
                bindings.undo(extra)


@contextlib.contextmanager
def stock_scope(name):
    """The replacement `name` taken out inside the block: its API's aliases hold the stock function again
    (or TF's own gradient is registered), everything else as the plan left it."""
    replacement = registry.by_name(name)
    if replacement.install == registry.GRADIENT:
        with H.stock_gradient(replacement.stock):
            yield
        return
    changes = []
    for api, implementation in ((replacement.stock, replacement.implementation),) + replacement.also:
        function = getattr(R, implementation)
        if function not in _HOLDERS:
            _HOLDERS[function] = [module for module, _ in bindings.find_aliases(function)]
        changes.extend(bindings.rebind(function, R._stock(api), _HOLDERS[function]))
    try:
        yield
    finally:
        bindings.undo(changes)


# --------------------------------------------------------------------------- one record per mode


def _static(tensor):
    shape = tensor.shape
    return (None if shape.rank is None else shape.as_list(), tensor.dtype.name)


def record(problem, mode):
    """("ok", static shapes and dtypes, values) or ("raise", exception class, message)."""
    statics = []

    def traced(*xs):
        if problem.diff:
            outs = H.value_and_grads(problem.call, problem.diff)(*xs)
        else:
            outs = [problem.call(*xs)]
        outs = [tf.convert_to_tensor(o) if isinstance(o, tf.IndexedSlices) else o for o in outs]
        statics[:] = [None if o is None else _static(o) for o in outs]
        return outs

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            values = _run(traced, problem.inputs, mode)
    except Exception as exc:  # noqa: BLE001 - the class and message are what is compared
        return ("raise", type(exc), str(exc))
    return ("ok", list(statics), [None if v is None else np.asarray(v) for v in values])


def _spec(x, mode):
    x = np.asarray(x)
    shape = {"function": x.shape, "function_unknown_shape": [None] * x.ndim}.get(mode)
    return tf.TensorSpec(shape, tf.as_dtype(x.dtype))


def _run(traced, inputs, mode):
    if mode == "eager":
        return [None if o is None else o.numpy() for o in traced(*[tf.constant(x) for x in inputs])]
    if mode.startswith("function"):
        fn = tf.function(traced, input_signature=[_spec(x, mode) for x in inputs], autograph=False)
        return [None if o is None else o.numpy() for o in fn(*[tf.constant(x) for x in inputs])]
    with tf.Graph().as_default():
        holders = [tf.compat.v1.placeholder(tf.as_dtype(np.asarray(x).dtype),
                                            shape=None if mode.endswith("unknown_rank") else np.shape(x))
                   for x in inputs]
        outs = traced(*holders)
        fetch = [o for o in outs if o is not None]
        with tf.compat.v1.Session() as session:
            got = iter(session.run(fetch, dict(zip(holders, inputs))))
        return [None if o is None else next(got) for o in outs]


def difference(ours, stock, problem):
    """None when the records agree (see the module docstring), else what differs."""
    if ours[0] != stock[0] or (stock[0] == "raise" and ours[1] is not stock[1]):
        return "patched %s, stock %s" % (_describe(ours), _describe(stock))
    if stock[0] == "raise":
        return None
    if ours[1] != stock[1]:
        return "static shapes/dtypes: patched %s, stock %s" % (ours[1], stock[1])
    tolerance = RTOL.get(problem.dtype)
    for a, b in zip(ours[2], stock[2]):
        if (a is None) != (b is None):
            return "a gradient is None on one side only"
        if b is None:
            continue
        if a.shape != b.shape or a.dtype != b.dtype:
            return "values: patched %s %s, stock %s %s" % (a.shape, a.dtype, b.shape, b.dtype)
        if problem.dtype == "round":
            same = np.abs(a.astype(np.int64) - b.astype(np.int64)).max(initial=0) <= 1
        elif tolerance is None or b.dtype.kind not in "fc":
            same = np.array_equal(a, b)
        else:
            wide = np.complex128 if b.dtype.kind == "c" else np.float64
            a64, b64 = a.astype(wide), b.astype(wide)
            same = bool((np.isclose(a64, b64, rtol=tolerance, atol=tolerance * problem.scale)
                         | (np.isnan(a64) & np.isnan(b64))).all())
        if not same:
            return "values differ beyond the %s tolerance: patched %s, stock %s" % (problem.dtype, a, b)
    return None


def _describe(rec):
    if rec[0] == "raise":
        return "raised %s (%s)" % (rec[1].__name__, rec[2].splitlines()[0][:160] if rec[2] else "")
    return "returned %s" % (rec[1],)


def records(name, problem, plan=None, modes=MODES):
    """{mode: (patched record, stock record)} for one Problem of the replacement `name` under `plan`
    (None: inside a plan_scope already)."""
    if plan is not None:
        with plan_scope(plan, name):
            return records(name, problem, None, modes)
    found = {}
    for mode in modes:
        ours = record(problem, mode)
        with stock_scope(name):
            stock = record(problem, mode)
        found[mode] = (ours, stock)
    return found


def compare(name, problem, plan=None, modes=MODES):
    """{mode: what differs or None} for one Problem of the replacement `name` under `plan` (None: inside
    a plan_scope already)."""
    return {mode: difference(ours, stock, problem)
            for mode, (ours, stock) in records(name, problem, plan, modes).items()}


# --------------------------------------------------------------------------- problems per replacement


def _cast(x, dtype):
    return tf.cast(x, dtype) if dtype == "bfloat16" else x


def _abs_sum(*arrays):
    return float(sum(np.sum(np.abs(np.asarray(a).astype(np.complex128))) for a in arrays)) + 1.0


def _grads(dtype, *indices):
    return list(indices) if dtype in ("float32", "float64") else []


def segment_sum_problem(p):
    data, ids, dtype, _ = p
    return Problem([data, ids], lambda d, i: tf.math.segment_sum(_cast(d, dtype), i), _grads(dtype, 0), dtype,
                   _abs_sum(data))


def unsorted_problem(p, num_as_input):
    reduction, data, ids, num, dtype, _ = p
    api = "unsorted_segment_" + reduction
    scale = _abs_sum(data)
    if reduction == "prod":
        scale = float(np.prod(np.maximum(np.abs(data.astype(np.float64)), 1.0))) if data.size else 1.0
    if num_as_input:
        return Problem([data, ids, np.array(num, ids.dtype)],
                       lambda d, i, n: getattr(tf.math, api)(_cast(d, dtype), i, n), _grads(dtype, 0), dtype, scale)
    return Problem([data, ids], lambda d, i: getattr(tf.math, api)(_cast(d, dtype), i, num), _grads(dtype, 0), dtype,
                   scale)


def gather_gradient_problem(p):
    params, ids, dtype = p

    def call(x, i):  # the IndexedSlices gradient of a gather, made dense by TF's conversion
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = tf.gather(x, i)
            loss = tf.reduce_sum(y * tf.cast(tf.reshape(tf.math.cos(tf.cast(tf.range(tf.size(y)), tf.float32)),
                                                        tf.shape(y)), y.dtype))
        return tf.convert_to_tensor(tape.gradient(loss, x))

    return Problem([params, ids], call, [], dtype, _abs_sum(params) * 8)


def bias_add_problem(p):
    value, bias, data_format, dtype = p
    return Problem([value, bias], lambda v, b: tf.nn.bias_add(v, b, data_format=data_format), _grads(dtype, 0, 1),
                   dtype, _abs_sum(value))


def bincount_problem(p):
    arr, kwargs, _ = p
    kwargs = dict(kwargs)
    weights = kwargs.pop("weights", None)
    dtype = str(weights.dtype) if weights is not None else kwargs.get("dtype", "int32")
    dtype = dtype if dtype in RTOL else "exact"
    if weights is None:
        return Problem([arr], lambda a: tf.math.bincount(a, **kwargs), [], dtype, 1.0)
    return Problem([arr, weights], lambda a, w: tf.math.bincount(a, weights=w, **kwargs), [], dtype,
                   _abs_sum(weights))


def sparse_dense_matmul_problem(p):
    indices, vals, dense_shape, b, adjoint_a, adjoint_b, dtype, _, _ = p

    def call(i, v, s, d):
        return tf.sparse.sparse_dense_matmul(tf.SparseTensor(i, v, s), d, adjoint_a=adjoint_a, adjoint_b=adjoint_b)

    return Problem([indices, vals, dense_shape, b], call, _grads(dtype, 1, 3), dtype, _abs_sum(vals) * _abs_sum(b))


def scatter_nd_problem(p, policy, shape_as_input):
    indices, updates, shape, dtype, _, _ = p
    grads = [1] if dtype in ("float16", "float32", "float64") else []
    if shape_as_input:
        return Problem([indices, updates, shape], lambda i, u, s: tf.scatter_nd(i, _cast(u, dtype), s,
                                                                                 bad_indices_policy=policy),
                       grads, dtype, _abs_sum(updates))
    return Problem([indices, updates], lambda i, u: tf.scatter_nd(i, _cast(u, dtype), shape,
                                                                  bad_indices_policy=policy),
                   grads, dtype, _abs_sum(updates))


def softmax_xent_problem(p, api):
    labels, logits, axis, dtype = p
    if api == "v1_v2":
        def call(lab, log):
            return tf.compat.v1.nn.softmax_cross_entropy_with_logits_v2(labels=lab, logits=log, axis=axis)
    else:
        def call(lab, log):
            return tf.nn.softmax_cross_entropy_with_logits(labels=lab, logits=log, axis=axis)
    return Problem([labels, logits], call, _grads(dtype, 0, 1), dtype, _abs_sum(logits) * 4)


def sparse_softmax_xent_problem(p):
    labels, logits, dtype = p
    return Problem([labels, logits], lambda lab, log: tf.nn.sparse_softmax_cross_entropy_with_logits(
        labels=lab, logits=log), _grads(dtype, 1), dtype, _abs_sum(logits) * 4)


def adjust_contrast_problem(p, gradient=False):
    """gradient: ask for the gradient to the images (the stock op has none: LookupError)."""
    images, factor, dtype, _ = p
    scale = float(np.max(np.abs(images.astype(np.float64)))) * 4 + 1.0 if images.size else 1.0
    # computed in float32 (float16 in float16) as stock; integers rounded back: a float32 x.5 may differ by one
    tolerance = "float16" if dtype == "float16" else ("float32" if dtype.startswith("float") else "round")
    return Problem([images, factor], lambda im, f: tf.image.adjust_contrast(im, f), [0] if gradient else [],
                   tolerance, scale)


def resize_nearest_problem(p, size_as_input):
    images, size, align_corners, half_pixel_centers, dtype, _ = p
    kw = {"align_corners": bool(align_corners), "half_pixel_centers": bool(half_pixel_centers)}
    grads = [0] if dtype != "bfloat16" else []
    if size_as_input:
        return Problem([images, size], lambda im, s: tf.compat.v1.image.resize_nearest_neighbor(
            _cast(im, dtype), s, **kw), grads, dtype, _abs_sum(images))
    return Problem([images], lambda im: tf.compat.v1.image.resize_nearest_neighbor(_cast(im, dtype), size, **kw),
                   grads, dtype, _abs_sum(images))


def crop_and_resize_problem(p):
    image, boxes, box_ind, crop, method, dtype, _ = p
    grads = [0, 1] if dtype in ("float32", "float64") else [1]
    return Problem([image, boxes, box_ind], lambda im, b, i: tf.image.crop_and_resize(im, b, i, crop, method=method),
                   grads, "float32" if dtype != "float64" else dtype, _abs_sum(image) * 16)


def _p(inputs, call, diff=(), dtype="float32", scale=None):
    return Problem([np.asarray(x) for x in inputs], call, list(diff), dtype,
                   scale if scale is not None else _abs_sum(*[x for x in inputs if np.asarray(x).dtype.kind in "fc"]))


_F = np.float32
_X = np.arange(12, dtype=_F).reshape(4, 3) / 7.0
_IMG = (np.arange(2 * 4 * 5 * 3, dtype=_F).reshape(2, 4, 5, 3) % 7) / 7.0
_I = np.int32


def _segment(api, ids, num, data=_X, diff=(0,)):
    return _p([data, np.array(ids, _I)], lambda d, i: getattr(tf.math, api)(d, i, num), diff)


def _unsorted_cases(reduction):
    api = "unsorted_segment_" + reduction
    strategy = st.builds(unsorted_problem, S.unsorted_segment_problems(reductions=(reduction,)), st.booleans())
    return Cases(strategy,
                 statics=[_segment(api, [0, 2, 0, 1], 3), _segment(api, [1, -1, 1, 0], 2)],
                 errors=[_segment(api, [0, 5, 0, 1], 3),  # an id >= num_segments
                         _segment(api, [0, 1, 0], 3)])  # ids shorter than data


CASES = {
    "segment_sum": Cases(
        st.builds(segment_sum_problem, S.sorted_segment_problems()),
        statics=[_p([_X, np.array([0, 0, 1, 3], _I)], lambda d, i: tf.math.segment_sum(d, i), [0])],
        errors=[_p([_X, np.array([1, 0, 1, 2], _I)], lambda d, i: tf.math.segment_sum(d, i), [0]),  # not sorted
                _p([_X, np.array([[0, 0], [1, 1]], _I)], lambda d, i: tf.math.segment_sum(d, i))]),  # not a vector
    "unsorted_segment_sum": _unsorted_cases("sum"),
    "unsorted_segment_mean": _unsorted_cases("mean"),
    "unsorted_segment_sqrt_n": _unsorted_cases("sqrt_n"),
    "unsorted_segment_prod": _unsorted_cases("prod"),
    "indexed_slices_to_dense": Cases(
        st.builds(gather_gradient_problem, S.gather_problems()),
        statics=[gather_gradient_problem((_X, np.array([0, 3, 3, 1], _I), "float32"))],
        errors=[gather_gradient_problem((_X, np.array([0, 4], _I), "float32"))]),  # an id out of range
    "bias_add": Cases(
        st.builds(bias_add_problem, S.bias_add_problems()),
        statics=[bias_add_problem((_IMG, np.ones([3], _F), None, "float32")),
                 bias_add_problem((_IMG, np.ones([4], _F), "NCHW", "float32"))],
        errors=[bias_add_problem((_IMG, np.ones([4], _F), None, "float32")),  # as many biases as channels
                bias_add_problem((_IMG, np.ones([1, 3], _F), None, "float32"))]),  # a bias of rank 2
    "bincount": Cases(
        st.builds(bincount_problem, S.bincount_problems()),
        statics=[bincount_problem((np.array([0, 1, 1, 4], _I), {}, None)),
                 bincount_problem((np.array([0, 1, 1, 4], _I), {"weights": np.ones(4, _F), "minlength": 7}, None)),
                 bincount_problem((np.array([0, 1, 1, 4], _I), {"weights": np.ones(4, _F), "maxlength": 3}, None)),
                 bincount_problem((np.array([[0, 1], [1, 4]], _I), {"axis": -1, "weights": np.ones([2, 2], _F)},
                                   None)),
                 bincount_problem((np.array([[0, 1], [1, 4]], _I), {"axis": -1, "minlength": 6}, None))],
        errors=[bincount_problem((np.array([0, 1, 1, 2], _I), {"weights": np.ones(3, _F)}, None)),  # the issue's
                bincount_problem((np.array([[0, 1], [1, 2]], _I), {"weights": np.ones([2, 3], _F), "axis": -1},
                                  None)),
                bincount_problem((np.array([0, -1], _I), {}, None))]),  # a negative value
    "sparse_dense_matmul": Cases(
        st.builds(sparse_dense_matmul_problem, S.sparse_dense_matmul_problems()),
        statics=[sparse_dense_matmul_problem((np.array([[0, 1], [2, 0]], np.int64), np.array([1.0, 2.0], _F),
                                              np.array([3, 4], np.int64), _X, False, False, "float32", "", ""))],
        errors=[sparse_dense_matmul_problem((np.array([[0, 1], [2, 0]], np.int64), np.array([1.0, 2.0], _F),
                                             np.array([3, 5], np.int64), _X, False, False, "float32", "", "")),
                sparse_dense_matmul_problem((np.array([[0, 9], [2, 0]], np.int64), np.array([1.0, 2.0], _F),
                                             np.array([3, 4], np.int64), _X, False, False, "float32", "", ""))]),
    "scatter_nd": Cases(
        st.builds(scatter_nd_problem, S.scatter_nd_problems(), st.sampled_from(["", "ERROR", "IGNORE"]),
                  st.booleans()),
        statics=[scatter_nd_problem((np.array([[1], [3], [1]], _I), _X[:3], np.array([5, 3], _I), "float32", "", ""),
                                    "", False),
                 scatter_nd_problem((np.array([[1], [3], [1]], _I), _X[:3], np.array([5, 3], _I), "float32", "", ""),
                                    "IGNORE", True)],
        errors=[scatter_nd_problem((np.array([[1], [7]], _I), _X[:2], np.array([5, 3], _I), "float32", "", ""),
                                   policy, False) for policy in ("IGNORE", "", "ERROR")]),  # IGNORE: the gradient
    "softmax_cross_entropy": Cases(
        st.builds(softmax_xent_problem, S.softmax_xent_problems(), st.sampled_from(["tf.nn", "v1_v2"])),
        statics=[softmax_xent_problem((np.full([4, 3], 1 / 3.0, _F), _X, -1, "float32"), "tf.nn"),
                 softmax_xent_problem((np.full([4, 3], 1 / 4.0, _F), _X, 0, "float32"), "v1_v2")],
        errors=[softmax_xent_problem((np.full([4, 2], 0.5, _F), _X, -1, "float32"), "tf.nn")]),
    "sparse_softmax_cross_entropy": Cases(
        st.builds(sparse_softmax_xent_problem, S.sparse_softmax_xent_problems()),
        statics=[sparse_softmax_xent_problem((np.array([0, 2, 1, 1], _I), _X, "float32"))],
        errors=[sparse_softmax_xent_problem((np.array([0, 3, 1, 1], _I), _X, "float32")),  # a label >= classes
                sparse_softmax_xent_problem((np.array([0, 2, 1], _I), _X, "float32"))]),  # one label too few
    "adjust_contrast": Cases(
        st.builds(adjust_contrast_problem, S.adjust_contrast_problems()),
        statics=[adjust_contrast_problem((_IMG, np.float32(1.5), "float32", "")),
                 adjust_contrast_problem(((_IMG * 255).astype(np.uint8), np.float32(0.5), "exact", ""))],
        errors=[adjust_contrast_problem((_IMG, np.float64(1.5), "float32", "")),  # a float64 factor
                adjust_contrast_problem((_IMG, np.array([1.5], _F), "float32", "")),  # not a scalar
                adjust_contrast_problem((_IMG, np.float32(1.5), "float32", ""), gradient=True)]),  # stock: none
    "resize_nearest_neighbor_grad": Cases(
        st.builds(resize_nearest_problem, S.resize_nearest_problems(), st.booleans()),
        statics=[resize_nearest_problem((_IMG, np.array([7, 3], _I), False, True, "float32", ""), False),
                 resize_nearest_problem((_IMG, np.array([7, 3], _I), True, False, "float32", ""), True)],
        errors=[resize_nearest_problem((_IMG, np.array([7, 3], _I), True, True, "float32", ""), False)]),
    "crop_and_resize_grad": Cases(
        st.builds(crop_and_resize_problem, S.crop_and_resize_problems()),
        statics=[crop_and_resize_problem((_IMG, np.array([[0.1, 0.2, 0.9, 0.7], [0, 0, 1, 1]], _F),
                                          np.array([1, 0], _I), np.array([3, 2], _I), "bilinear", "float32", ""))],
        errors=[crop_and_resize_problem((_IMG, np.array([[0.1, 0.2, 0.9, 0.7]], _F), np.array([2], _I),
                                         np.array([3, 2], _I), "bilinear", "float32", ""))]),  # box index
}


# --------------------------------------------------------------------------- the fuzz, as a script


def _keeper(drawn):
    def keep(problem):
        drawn.append(problem)

    return keep


def fuzz(examples, plans=PLANS, modes=MODES, names=None, log=None):
    """Draw `examples` Problems per replacement (derandomized), compare each under every plan in every mode.
    Returns (comparisons, [(name, plan, mode, what differs)])."""
    from hypothesis import HealthCheck, given, settings

    count, differing = 0, []
    for name in sorted(names or CASES):
        drawn = []
        if examples:
            settings(max_examples=examples, deadline=None, database=None, derandomize=True,
                     suppress_health_check=list(HealthCheck))(given(CASES[name].problems)(_keeper(drawn)))()
        fixed = CASES[name].statics + CASES[name].errors
        before = (count, len(differing))
        for plan in plans:
            with plan_scope(plan, name):
                found = [compare(name, problem, None, modes) for problem in drawn[:examples] + fixed]
            for by_mode in found:
                for mode, what in by_mode.items():
                    count += 1
                    if what:
                        differing.append((name, plan, mode, what))
                        if log:
                            log("%s %s %s: %s" % (name, plan, mode, what[:300]))
        if log:
            log("= %s: %d comparisons, %d differ" % (name, count - before[0], len(differing) - before[1]))
    return count, differing


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--examples", type=int, default=8, help="drawn problems per replacement")
    parser.add_argument("--names", nargs="*", help="replacements (default: the whole registry)")
    parser.add_argument("--plans", nargs="*", default=list(PLANS))
    args = parser.parse_args(argv)
    count, differing = fuzz(args.examples, plans=args.plans, names=args.names,
                            log=lambda line: print(line, flush=True))
    print("%d comparisons, %d differ" % (count, len(differing)))
    severe = [d for d in differing if d[3].startswith("patched returned") and "stock raised" in d[3]]
    print("%d where patched succeeds and stock raises" % len(severe))
    return 0


if __name__ == "__main__":
    sys.exit(main())
