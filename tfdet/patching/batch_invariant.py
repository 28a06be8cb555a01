"""Batch-invariant replacements, installed by tfdet.patch(batch_invariant=True).

Measured on this project's CPUs (TF 2.21, oneDNN on and off; docs/guides/batch-invariance.md):
of the common layers' ops, only the matrix product of a [rows, K] operand by a [K, N] weight gives
one row other bits alone than inside a batch (from K = 512 up with oneDNN on; more shapes with it
off, and every shape tried under XLA): one row takes a matrix-vector
kernel, two or more rows a matrix-matrix one, which adds the K products in another order.

The replacement multiplies every row inside a fixed 8-row block: the rows are padded to a multiple
of 8 and each block is one stock MatMul of [8, K] x [K, N], in a loop (tf.map_fn), so a row meets
the same kernel on the same shapes alone and in any batch. Measured (benchmarks/
bench_batch_invariant_matmul.py): invariant at every size and block position tried, eagerly, in
tf.function and under XLA, oneDNN on and off. A cheaper form is not: one BatchMatMulV3 of
[blocks, 8, K] x [K, N] (eagerly, K = 64 and 100: other bits with one block than with two or more;
under XLA at K = 784 from 31 rows up). A product per row (tf.map_fn of 1-row products) is invariant
but costs 1.7-9x the stock product.
Anything else (integer or sparse products, an explicit output_type, batched weights, an operand
whose rank is unknown) runs the stock function; the last is the one such case that can vary, and
it warns once.
"""

import warnings

import tensorflow as tf

from .errors import TfdetWarning

BLOCK = 8  # rows per product: fixed, whatever the batch
_FLOAT_DTYPES = (tf.float16, tf.bfloat16, tf.float32, tf.float64, tf.complex64, tf.complex128)

# The stock function, read when this module is first imported (before patch() rebinds it).
_STOCK_MATMUL = tf.linalg.matmul
_warned = set()


def stock_matmul():
    return _STOCK_MATMUL


def _tensor(value, dtype=None):
    if isinstance(value, tf.Tensor):
        return value
    if isinstance(value, (tf.SparseTensor, tf.RaggedTensor)):
        return None
    try:
        return tf.convert_to_tensor(value, dtype_hint=dtype)
    except (TypeError, ValueError):
        return None


def _warn_once(key, text):
    if key not in _warned:
        _warned.add(key)
        warnings.warn("tfdet batch_invariant: " + text, TfdetWarning, stacklevel=4)


def _in_blocks(rows, b, transpose_b, adjoint_b):
    """rows [m, K] @ op(b), one stock MatMul of [BLOCK, K] x op(b) per block of rows, in a loop:
    every block is the same kernel on the same shapes, whatever m."""
    depth = rows.shape[-1] if rows.shape[-1] is not None else tf.shape(rows)[-1]
    m = rows.shape[0] if rows.shape[0] is not None else tf.shape(rows)[0]
    padded = tf.reshape(tf.pad(rows, [[0, (-m) % BLOCK], [0, 0]]), [-1, BLOCK, depth])
    out = tf.map_fn(lambda block: _STOCK_MATMUL(block, b, transpose_b=transpose_b, adjoint_b=adjoint_b), padded,
                    fn_output_signature=rows.dtype, parallel_iterations=1)
    width = tf.shape(out)[-1]
    return tf.reshape(out, [-1, width])[:m]


def _real_rows_product(rows, b, transpose_b):
    """_in_blocks for real dtypes, with a gradient that keeps a row's gradient batch-invariant too
    (the same blocks) and takes b's, a sum over the batch's rows, from one stock product."""
    @tf.custom_gradient
    def product(rows, b):
        def grad(upstream):
            if transpose_b:  # out = rows @ b^T, b [N, K]
                return _in_blocks(upstream, b, False, False), _STOCK_MATMUL(upstream, rows, transpose_a=True)
            return _in_blocks(upstream, b, True, False), _STOCK_MATMUL(rows, upstream, transpose_a=True)
        return _in_blocks(rows, b, transpose_b, False), grad

    return product(rows, b)


def _blocked(a, b, transpose_a, adjoint_a, transpose_b, adjoint_b):
    """a @ op(b) with a's rows (all its leading dimensions) multiplied BLOCK at a time."""
    if transpose_a or adjoint_a:
        a = tf.transpose(a, conjugate=bool(adjoint_a))
    depth = a.shape[-1] if a.shape[-1] is not None else tf.shape(a)[-1]
    lead = a.shape[:-1]
    rows = tf.reshape(a, [-1, depth])
    if a.dtype.is_complex:  # TF's gradients of complex products conjugate: left to autodiff through the loop
        out = _in_blocks(rows, b, transpose_b, adjoint_b)
    else:
        out = _real_rows_product(rows, b, bool(transpose_b or adjoint_b))
    width = b.shape[0] if (transpose_b or adjoint_b) else b.shape[1]
    width_dyn = width if width is not None else tf.shape(out)[-1]
    if lead.is_fully_defined():
        shape = lead.as_list() + [width_dyn]
    else:
        shape = tf.concat([tf.shape(a)[:-1], [width_dyn]], 0)
    out = tf.reshape(out, shape)
    out.set_shape(lead.concatenate([width]))
    return out


def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False, a_is_sparse=False,
           b_is_sparse=False, output_type=None, grad_a=False, grad_b=False, name=None):
    """tf.linalg.matmul whose rows do not depend on the batch (see the module's text)."""
    def stock():
        return _STOCK_MATMUL(a, b, transpose_a=transpose_a, transpose_b=transpose_b, adjoint_a=adjoint_a,
                             adjoint_b=adjoint_b, a_is_sparse=a_is_sparse, b_is_sparse=b_is_sparse,
                             output_type=output_type, grad_a=grad_a, grad_b=grad_b, name=name)

    if a_is_sparse or b_is_sparse or output_type is not None or grad_a or grad_b:
        return stock()
    ta = _tensor(a)
    tb = _tensor(b, ta.dtype if ta is not None else None)
    if ta is None or tb is None or ta.dtype != tb.dtype or ta.dtype not in _FLOAT_DTYPES:
        return stock()  # sparse/ragged/symbolic Keras inputs, integer products (exact), or stock's dtype error
    rank_a, rank_b = ta.shape.rank, tb.shape.rank
    if rank_a is None or rank_b is None:
        _warn_once("rank", "tf.linalg.matmul of an operand of unknown rank runs the stock MatMul, whose rows may "
                           "change with the batch; give the operands a known rank")
        return stock()
    if rank_b != 2 or rank_a < 2 or (rank_a > 2 and (transpose_a or adjoint_a)):
        return stock()  # batched weights (a product per example: invariant here) or stock's shape error
    inner_a = ta.shape[0] if (transpose_a or adjoint_a) else ta.shape[-1]
    inner_b = tb.shape[1] if (transpose_b or adjoint_b) else tb.shape[0]
    if inner_a is not None and inner_b is not None and inner_a != inner_b:
        return stock()  # stock's own error
    if any(d == 0 for d in ta.shape):
        return stock()  # no rows or no products to sum (and XLA cannot loop over zero blocks)
    with tf.name_scope(name or "MatMul"):
        return _blocked(ta, tb, transpose_a, adjoint_a, transpose_b, adjoint_b)
