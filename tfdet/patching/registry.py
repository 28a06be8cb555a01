"""The one list of tfdet's replacements: what each stands in for, which function
implements it, and how patch() puts it in place.

Everything else is derived from here: the installers (bindings.INSTALLERS),
replacements.REPLACEMENTS, the names the catalogue's `patch:` fields may use,
and the tests' lists of replacement/stock pairs. A test ties REGISTRY to the
catalogue both ways. Pure data, no imports: `tfdet status` reads it without
TensorFlow.
"""

from collections import namedtuple

# How a replacement is installed.
REBIND = "rebind"  # every module attribute holding the stock function points at the implementation
GRADIENT = "gradient"  # the op type's entry in TF's gradient registry is swapped

Replacement = namedtuple("Replacement", "name stock install implementation why also")
Replacement.__doc__ = """One tfdet replacement.

name: the catalogue's `patch:` name.
stock: REBIND: the public API whose function (and all its aliases) is rebound;
    GRADIENT: the op type whose registered gradient is swapped.
install: REBIND or GRADIENT.
implementation: the function in tfdet.patching.replacements put in its place.
why: for a replacement whose stock target is not the catalogued API, the reason.
also: REBIND only: ((stock API, implementation), ...) rebound by the same installer, for
    public functions of the same op that do not call `stock` (tf.compat.v1 variants).
"""


def _r(name, stock, implementation, install=REBIND, why="", also=()):
    return Replacement(name, stock, install, implementation, why, tuple(also))


REGISTRY = (
    _r("segment_sum", "tf.math.segment_sum", "segment_sum"),
    _r("unsorted_segment_sum", "tf.math.unsorted_segment_sum", "unsorted_segment_sum"),
    _r("indexed_slices_to_dense", "tf.math.unsorted_segment_sum", "unsorted_segment_sum",
       why="gather's gradient and tf.convert_to_tensor(IndexedSlices) densify through the stock "
           "unsorted_segment_sum, so rebinding it covers both"),
    _r("unsorted_segment_mean", "tf.math.unsorted_segment_mean", "unsorted_segment_mean"),
    _r("unsorted_segment_sqrt_n", "tf.math.unsorted_segment_sqrt_n", "unsorted_segment_sqrt_n"),
    _r("unsorted_segment_prod", "tf.math.unsorted_segment_prod", "unsorted_segment_prod"),
    _r("bias_add", "tf.nn.bias_add", "bias_add"),
    _r("bincount", "tf.math.bincount", "bincount"),
    _r("sparse_dense_matmul", "tf.sparse.sparse_dense_matmul", "sparse_dense_matmul"),
    _r("scatter_nd", "tf.scatter_nd", "scatter_nd"),
    _r("softmax_cross_entropy", "tf.nn.softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits",
       also=(("tf.compat.v1.nn.softmax_cross_entropy_with_logits_v2", "softmax_cross_entropy_with_logits_v1_v2"),)),
    _r("sparse_softmax_cross_entropy", "tf.nn.sparse_softmax_cross_entropy_with_logits",
       "sparse_softmax_cross_entropy_with_logits"),
    _r("adjust_contrast", "tf.image.adjust_contrast", "adjust_contrast"),
    _r("resize_nearest_neighbor_grad", "ResizeNearestNeighbor", "resize_nearest_neighbor_gradient", GRADIENT),
    _r("crop_and_resize_grad", "CropAndResize", "crop_and_resize_gradient", GRADIENT),
)

# Opt-in replacements for batch invariance (tfdet.patch(batch_invariant=True)): not catalogue fixes
# of run-to-run nondeterminism, so no catalogue range names them; implemented in
# tfdet.patching.batch_invariant. Measured here: the only common op whose row changes with the batch.
BATCH_INVARIANT = (
    _r("batch_invariant_matmul", "tf.linalg.matmul", "matmul",
       why="a row alone takes a matrix-vector kernel, rows in a batch a matrix-matrix one (another order of "
           "the K products, from K = 512 here); every row is multiplied in a fixed 8-row block instead"),
)

# Ops measured batch-invariant or that cannot be made so, for patch()'s report and the docs:
# (op or layer, why no batch-invariant replacement).
NOT_MADE_BATCH_INVARIANT = (
    ("BatchNormalization (training)", "normalises each row with the batch's mean and variance: rows are mixed by "
                                      "definition"),
    ("Dropout and random ops (training)", "draw from one stream per call: a row's draws depend on how many rows "
                                          "came before it"),
    ("reductions and log_softmax under XLA (jit_compile)",
     "XLA's CPU emitter tiles the loop from the whole shape (here reduce_sum of 4096 features changed from 8 rows "
     "up, log_softmax of 1000 classes at 64 rows); an op written in TF is compiled by the same emitter"),
    ("Conv1D/Conv2D, BatchMatMul (batched weights), reductions, softmax, LayerNorm, Embedding, LSTM/GRU",
     "measured batch-invariant here, so not replaced; oneDNN picks their kernels from the shapes, batch "
     "included, so another CPU may differ: check with tfdet.testing.assert_batch_invariant"),
)

# Deterministic drop-ins that no catalogue range installs (the stock op is
# deterministic, or they are the parts a gradient replacement is built from),
# kept for direct use and held to the same proofs: (stock API or raw op, function).
DROP_INS = (
    ("tf.math.unsorted_segment_max", "unsorted_segment_max"),
    ("tf.math.unsorted_segment_min", "unsorted_segment_min"),
    ("tf.tensor_scatter_nd_add", "tensor_scatter_nd_add"),
    ("tf.compat.v1.image.resize_nearest_neighbor", "resize_nearest_neighbor"),
    ("tf.image.crop_and_resize", "crop_and_resize"),
    ("tf.raw_ops.ResizeNearestNeighborGrad", "resize_nearest_neighbor_grad"),
    ("tf.raw_ops.CropAndResizeGradImage", "crop_and_resize_grad_image"),
    ("tf.raw_ops.CropAndResizeGradBoxes", "crop_and_resize_grad_boxes"),
    ("IndexedSlices->Tensor", "indexed_slices_to_dense"),
)


def names():
    """The `patch:` names the catalogue may use."""
    return frozenset(r.name for r in REGISTRY)


def by_name(name):
    for replacement in REGISTRY:
        if replacement.name == name:
            return replacement
    raise KeyError("no tfdet replacement named %r (known: %s)" % (name, ", ".join(sorted(names()))))


def batch_invariant_names():
    return frozenset(r.name for r in BATCH_INVARIANT)


def label(replacement):
    """What the patch-time line and `tfdet status` call it."""
    return replacement.stock if replacement.install == REBIND else "gradient of " + replacement.stock


def drop_in_pairs():
    """(stock API or raw op, implementation) of every function in tfdet.patching.replacements
    that stands in for a stock one: the rebinding replacements and the drop-ins."""
    pairs = [(r.stock, r.implementation) for r in REGISTRY if r.install == REBIND]
    pairs.extend(pair for r in REGISTRY for pair in r.also)
    pairs.extend(DROP_INS)
    seen, unique = set(), []
    for pair in pairs:
        if pair not in seen:
            seen.add(pair)
            unique.append(pair)
    return unique
