"""Batch invariance: does an example give the same bits alone as inside a batch?

A model's output for one example can change with the batch around it although
the example is the same: a matrix product of one row takes another kernel path
(matrix-vector) than one of many rows (blocked matrix-matrix, whose blocking
depends on the shape), so the row's sums are added in another order. On this
project's 2-core CPUs with TF 2.21, a Keras Dense layer's output for one row
differs by about 1e-6 between a batch of 1 and a batch of 2 (oneDNN on and off).

check() runs the function on the example alone and inside batches of the other
sizes (at the first and the last position; the other rows are the caller's other
examples, cycled), compares the example's row bitwise, and where a size differs,
runs the two calls again eagerly with an op callback that keeps each op's row of
the example, to name the first op whose row differs: the one that broke
invariance (its inputs' rows still matched, being earlier).
"""

import collections

import numpy as np

from ..graph.frames import library_frame, python_stack, user_frame
from . import measure

DEFAULT_SIZES = (1, 2, 3, 8, 32)

Mismatch = collections.namedtuple("Mismatch", "size position max_abs_diff max_ulps values_differing values")
OpRow = collections.namedtuple("OpRow", "index op_type row source library")
Culprit = collections.namedtuple("Culprit", "op_type size position source library max_abs_diff max_ulps eager")


class BatchInvariance(object):
    """What check() found: .mismatches (size, position, distances), .culprit
    (the first op whose row differed, or None), .checked (the (size, position)
    pairs compared) and .verdict (one sentence, also what a pass ruled out)."""

    def __init__(self, target, checked, mismatches, culprit, note):
        self.target = target
        self.checked = checked
        self.mismatches = mismatches
        self.culprit = culprit
        self.note = note

    @property
    def invariant(self):
        return not self.mismatches

    @property
    def verdict(self):
        sizes = sorted({size for size, _ in self.checked})
        if self.invariant:
            return ("the example's output was bitwise the same alone and first and last in batches of %s; other "
                    "batch sizes, positions and neighbouring rows were not tried" % _join(sizes))
        differing = sorted({m.size for m in self.mismatches})
        return "the example's output changed with the batch: batches of %s differ from the example alone" % (
            _join(differing))


def _join(numbers):
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else "%s and %s" % (", ".join(words[:-1]), words[-1])


def _rows(x, size, position):
    """A batch of `size` rows with x[0] at `position`, the others x[1:], cycled (x[0] itself when x has one row)."""
    others = x[1:] if len(x) > 1 else x[:1]
    picks = [others[i % len(others)] for i in range(size - 1)]
    picks.insert(position, x[0])
    return np.stack(picks)


def _flat_outputs(outputs):
    import tensorflow as tf

    return [np.asarray(t) for t in tf.nest.flatten(outputs)]


def _row_of(outputs, position, size):
    """The example's row of every output whose first dimension is the batch."""
    rows = []
    for array in _flat_outputs(outputs):
        if array.ndim == 0 or array.shape[0] != size:
            raise ValueError("an output of shape %s has no batch dimension of %d: batch invariance compares the "
                             "example's row of each output" % (array.shape, size))
        rows.append(array[position])
    return rows


def _differences(reference, rows):
    worst = None
    for a, b in zip(reference, rows):
        d = measure.difference(a, b)
        if d["values_differing"]:
            if worst is None or (d["max_abs_diff"] or 0) > (worst["max_abs_diff"] or 0):
                worst = d
    return worst


class _RowRecorder(object):
    """An op callback that keeps, for each eagerly executed op, its outputs' row
    `position` when their first dimension is the batch size."""

    def __init__(self, size, position):
        self.size, self.position, self.ops = size, position, []

    def __call__(self, op_type, inputs, attrs, outputs, op_name=None, graph=None):
        if graph is not None or not outputs:
            return None
        rows = []
        for tensor in outputs:
            try:
                shape = tensor.shape
                if shape.rank and shape[0] == self.size:
                    rows.append(np.array(tensor.numpy()[self.position]))
            except Exception:  # resource handles, strings without numpy, ...: no row to compare
                continue
        if rows:
            stack = python_stack()
            self.ops.append(OpRow(len(self.ops), op_type, rows, user_frame(stack), library_frame(stack)))
        return None


def _record(call, batch, size, position):
    import tensorflow as tf
    from tensorflow.python.framework import op_callbacks

    recorder = _RowRecorder(size, position)
    eager_before = tf.config.functions_run_eagerly()
    tf.config.run_functions_eagerly(True)  # each op of a tf.function runs eagerly, so the callback sees its value
    op_callbacks.add_op_callback(recorder)
    try:
        call(batch)
    finally:
        op_callbacks.remove_op_callback(recorder)
        tf.config.run_functions_eagerly(eager_before)
    return recorder.ops


def _culprit(call, x, size, position):
    """The first op (in execution order, matched by its place among ops of its type)
    whose row of the example differs between the example alone and this batch."""
    alone = _record(call, x[:1], 1, 0)
    batched = _record(call, _rows(x, size, position), size, position)
    seen_alone, seen_batched = collections.Counter(), collections.Counter()
    by_key = {}
    for op in alone:
        seen_alone[op.op_type] += 1
        by_key[(op.op_type, seen_alone[op.op_type])] = op
    for op in batched:
        seen_batched[op.op_type] += 1
        twin = by_key.get((op.op_type, seen_batched[op.op_type]))
        if twin is None or len(twin.row) != len(op.row):
            continue
        worst = _differences(twin.row, op.row)
        if worst is not None:
            return Culprit(op.op_type, size, position, op.source, op.library, worst["max_abs_diff"],
                           worst["max_ulps"], True)
    return None


def _as_call(fn):
    """A callable batch -> outputs: a Keras model is called in inference mode."""
    if hasattr(fn, "predict_on_batch") or (hasattr(fn, "layers") and callable(fn)):
        return lambda batch: fn(batch, training=False)
    return fn


def check(fn, x, sizes=DEFAULT_SIZES, name_op=True):
    """Compare fn on x[0] alone with fn on batches of `sizes` holding x[0] first and last."""
    x = np.asarray(x)
    if x.ndim == 0 or len(x) == 0:
        raise ValueError("x must hold at least one example along its first dimension")
    sizes = sorted({int(s) for s in sizes} - {1})
    if not sizes or sizes[0] < 2:
        raise ValueError("sizes must include a batch size of 2 or more (1 is the example alone)")
    call = _as_call(fn)
    reference = _row_of(call(x[:1]), 0, 1)
    checked, mismatches = [], []
    for size in sizes:
        for position in sorted({0, size - 1}):
            checked.append((size, position))
            worst = _differences(reference, _row_of(call(_rows(x, size, position)), position, size))
            if worst is not None:
                mismatches.append(Mismatch(size, position, worst["max_abs_diff"], worst["max_ulps"],
                                           worst["values_differing"], worst["values"]))
    culprit, note = None, None
    if mismatches and name_op:
        first = mismatches[0]
        culprit = _culprit(call, x, first.size, first.position)
        if culprit is None:
            note = ("run op by op (eagerly), no op's row differed: the difference comes from running it as a graph "
                    "(e.g. grappler's fused kernels such as _FusedMatMul), which an op callback cannot split")
    target = getattr(fn, "name", None) or getattr(fn, "__qualname__", None) or type(fn).__name__
    return BatchInvariance(target, checked, mismatches, culprit, note)


def message(result):
    lines = ["%s is not batch-invariant: %s" % (result.target, result.verdict)]
    for m in result.mismatches[:6]:
        lines.append("  batch of %d, example %s: %d of %d values differ (max |a-b| %s, %s ulp)" % (
            m.size, "first" if m.position == 0 else "last", m.values_differing, m.values, m.max_abs_diff, m.max_ulps))
    c = result.culprit
    if c is not None:
        lines.append("  first op whose row differs (batch of %d vs alone, run eagerly): %s%s%s (max |a-b| %s)" % (
            c.size, c.op_type, " made at %s" % c.library if c.library else "",
            ", called from %s" % c.source if c.source else "", c.max_abs_diff))
    elif result.note:
        lines.append("  " + result.note)
    return "\n".join(lines)
