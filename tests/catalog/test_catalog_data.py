"""The shipped catalogue data against facts taken by hand from the reference
tables (NVIDIA's GPU status table, TF's release notes, the list of ops that
raise under op determinism).

The expectations are written out here, not read from the reference files, so
the tests run anywhere. Each case names the entry it expects a name to reach,
and checks the status at a boundary version: the last version before a fix and
the first fixed one, the first version that raises and the one where raising
stops.
"""

import pytest

import tfdet.catalog as catalog
from tfdet.catalog import COVERED_TF_VERSIONS, STATUSES, default_catalogue

ND = "nondeterministic"
DWS = "deterministic_with_switch"
RAISES = "raises_under_determinism"
DET = "deterministic"
UNKNOWN = "unknown"
NA = "not_applicable"

TCD = "TF_CUDNN_DETERMINISTIC"
TDO = "TF_DETERMINISTIC_OPS"
EOD = "enable_op_determinism"
FE = "TF_CUDNN_USE_FRONTEND"

# (name looked up, entry it must reach, TF version, device, status, switches that must be listed, patch)
# switches=None: not checked; patch=None: the range must name no patch.
CASES = [
    # cuDNN autotuning: TCD in 1.14-2.0, TDO in 2.1-2.4, TDO+FE in 2.5-2.7, EOD from 2.8.
    ("cudnn-conv-autotuning", "cudnn-conv-autotuning", "1.14", "gpu", DWS, {TCD}, None),
    ("tf.nn.conv2d", "cudnn-conv-autotuning", "2.0", "gpu", DWS, {TCD}, None),
    ("tf.keras.layers.Conv2D", "cudnn-conv-autotuning", "2.1", "gpu", DWS, {TDO}, None),
    ("Conv2D", "cudnn-conv-autotuning", "2.4", "gpu", DWS, {TDO}, None),
    ("tf.nn.conv2d", "cudnn-conv-autotuning", "2.5", "gpu", DWS, {TDO, FE}, None),
    ("tf.nn.conv3d", "cudnn-conv-autotuning", "2.7", "gpu", DWS, {TDO, FE}, None),
    ("tf.nn.conv1d", "cudnn-conv-autotuning", "2.8", "gpu", DWS, {EOD}, None),
    # cuDNN convolution backprop.
    ("tf.nn.conv2d", "conv2d-backprop", "1.14", "gpu", DWS, {TCD}, None),
    ("tf.keras.layers.Conv2D", "conv2d-backprop", "2.0", "gpu", DWS, {TCD}, None),
    ("Conv2DBackpropFilter", "conv2d-backprop", "1.15", "gpu", DWS, {TCD}, None),
    ("tf.nn.conv1d", "conv1d-backprop", "2.1", "gpu", DWS, {TDO}, None),
    ("tf.keras.layers.Conv1D", "conv1d-backprop", "2.0", "gpu", DWS, {TCD}, None),
    ("tf.nn.conv3d", "conv3d-backprop", "2.7", "gpu", DWS, {TDO}, None),
    ("tf.keras.layers.Conv3D", "conv3d-backprop", "2.8", "gpu", DWS, {EOD}, None),
    ("Conv2DBackpropInput", "conv2d-transpose", "2.21", "gpu", DWS, {EOD}, None),
    # cuDNN max-pooling backprop.
    ("tf.nn.max_pool2d", "max-pool-backprop", "2.0", "gpu", DWS, {TCD}, None),
    ("tf.nn.max_pool1d", "max-pool-backprop", "1.14", "gpu", DWS, {TCD}, None),
    ("tf.keras.layers.MaxPool1D", "max-pool-backprop", "2.1", "gpu", DWS, {TDO}, None),
    ("tf.keras.layers.MaxPool2D", "max-pool-backprop", "2.7", "gpu", DWS, {TDO}, None),
    ("tf.nn.max_pool3d", "max-pool3d-backprop", "2.8", "gpu", DWS, {EOD}, None),
    ("tf.keras.layers.MaxPool3D", "max-pool3d-backprop", "2.0", "gpu", DWS, {TCD}, None),
    ("MaxPoolGrad", "max-pool-backprop", "2.21", "gpu", DWS, {EOD}, None),
    # bias_add backprop: patch on 1.14-2.0, TDO from 2.1.
    ("tf.nn.bias_add", "bias-add-backprop", "1.14", "gpu", ND, None, "bias_add"),
    ("tf.nn.bias_add", "bias-add-backprop", "2.0", "gpu", ND, None, "bias_add"),
    ("tf.nn.bias_add", "bias-add-backprop", "2.1", "gpu", DWS, {TDO}, None),
    ("BiasAddGrad", "bias-add-backprop", "2.7", "gpu", DWS, {TDO}, None),
    ("BiasAddGrad", "bias-add-backprop", "2.8", "gpu", DWS, {EOD}, None),
    # XLA reductions on GPU: TDO from 2.2 (NVIDIA status page); no primary source for
    # "deterministic by default from 2.7", so the switch stays.
    ("xla-reductions-gpu", "xla-reductions-gpu", "2.1", "gpu", ND, None, None),
    ("xla-reductions-gpu", "xla-reductions-gpu", "2.2", "gpu", DWS, {TDO}, None),
    ("xla-reductions-gpu", "xla-reductions-gpu", "2.6", "gpu", DWS, {TDO}, None),
    ("xla-reductions-gpu", "xla-reductions-gpu", "2.7", "gpu", DWS, {TDO}, None),
    ("xla-reductions-gpu", "xla-reductions-gpu", "2.8", "gpu", DWS, {EOD}, None),
    # XLA scatter on GPU: fixed in 2.8 (commit 4dc6d).
    ("xla-scatter-gpu", "xla-scatter-gpu", "2.7", "gpu", ND, None, None),
    ("xla-scatter-gpu", "xla-scatter-gpu", "2.8", "gpu", DWS, {EOD}, None),
    # CTC loss: no source for before 2.3, unsure 2.3-2.5, TDO confirmed from 2.6.
    ("tf.nn.ctc_loss", "ctc-loss-backprop", "2.2", "gpu", UNKNOWN, None, None),
    ("tf.nn.ctc_loss", "ctc-loss-backprop", "2.3", "gpu", UNKNOWN, None, None),
    ("tf.nn.ctc_loss", "ctc-loss-backprop", "2.5", "gpu", UNKNOWN, None, None),
    ("tf.nn.ctc_loss", "ctc-loss-backprop", "2.6", "gpu", DWS, {TDO}, None),
    ("tf.nn.ctc_loss", "ctc-loss-backprop", "2.8", "gpu", DWS, {EOD}, None),
    # Bilinear resize backprop: TDO from 2.4.
    ("tf.compat.v1.image.resize_bilinear", "resize-bilinear-backprop", "2.3", "gpu", ND, None, None),
    ("tf.compat.v1.image.resize_bilinear", "resize-bilinear-backprop", "2.4", "gpu", DWS, {TDO}, None),
    ("tf.keras.layers.UpSampling2D", "resize-bilinear-backprop", "2.4", "gpu", DWS, {TDO}, None),
    ("tf.image.resize", "resize-bilinear-backprop", "2.7", "gpu", DWS, {TDO}, None),
    ("ResizeBilinearGrad", "resize-bilinear-backprop", "2.8", "gpu", DWS, {EOD}, None),
    # Nearest resize backprop: no fix; raises from 2.7.
    ("tf.compat.v1.image.resize_nearest_neighbor", "resize-nearest-backprop", "2.6", "gpu", ND, None,
     "resize_nearest_neighbor_grad"),
    ("tf.image.resize", "resize-nearest-backprop", "2.6", "gpu", ND, None, "resize_nearest_neighbor_grad"),
    ("ResizeNearestNeighborGrad", "resize-nearest-backprop", "2.7", "gpu", RAISES, {TDO},
     "resize_nearest_neighbor_grad"),
    ("tf.keras.layers.UpSampling2D", "resize-nearest-backprop", "2.8", "gpu", RAISES, {EOD},
     "resize_nearest_neighbor_grad"),
    ("tf.keras.layers.UpSampling2D", "resize-nearest-backprop", "2.21", "gpu", RAISES, {EOD},
     "resize_nearest_neighbor_grad"),
    # Fused softmax cross-entropy: TDO from 2.6.
    ("tf.nn.softmax_cross_entropy_with_logits", "softmax-xent", "2.5", "gpu", ND, None, "softmax_cross_entropy"),
    ("tf.keras.losses.categorical_crossentropy", "softmax-xent", "2.5", "gpu", ND, None, "softmax_cross_entropy"),
    ("tf.nn.softmax_cross_entropy_with_logits", "softmax-xent", "2.6", "gpu", DWS, {TDO}, None),
    ("tf.keras.losses.CategoricalCrossentropy", "softmax-xent", "2.8", "gpu", DWS, {EOD}, None),
    # Fused sparse softmax cross-entropy: raises in 2.6 only, TDO from 2.7.
    ("tf.nn.sparse_softmax_cross_entropy_with_logits", "sparse-softmax-xent", "2.5", "gpu", ND, None,
     "sparse_softmax_cross_entropy"),
    ("tf.nn.sparse_softmax_cross_entropy_with_logits", "sparse-softmax-xent", "2.6", "gpu", RAISES, {TDO},
     "sparse_softmax_cross_entropy"),
    ("tf.keras.losses.sparse_categorical_crossentropy", "sparse-softmax-xent", "2.6", "gpu", RAISES, {TDO},
     "sparse_softmax_cross_entropy"),
    ("tf.nn.sparse_softmax_cross_entropy_with_logits", "sparse-softmax-xent", "2.7", "gpu", DWS, {TDO}, None),
    ("tf.keras.losses.SparseCategoricalCrossentropy", "sparse-softmax-xent", "2.8", "gpu", DWS, {EOD}, None),
    # Raw fused ops: raise (dense from 2.7, sparse from 2.6) because the Python API reroutes.
    ("tf.raw_ops.SoftmaxCrossEntropyWithLogits", "softmax-xent-raw-op", "2.6", "gpu", ND, None, None),
    ("tf.raw_ops.SoftmaxCrossEntropyWithLogits", "softmax-xent-raw-op", "2.7", "gpu", RAISES, {TDO}, None),
    ("SoftmaxCrossEntropyWithLogits", "softmax-xent-raw-op", "2.21", "gpu", RAISES, {EOD}, None),
    ("tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits", "sparse-softmax-xent-raw-op", "2.5", "gpu", ND, None, None),
    ("tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits", "sparse-softmax-xent-raw-op", "2.6", "gpu", RAISES, {TDO},
     None),
    ("tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits", "sparse-softmax-xent-raw-op", "2.7", "gpu", RAISES, {TDO},
     None),
    # adjust_contrast forward: raises from 2.7.
    ("tf.image.adjust_contrast", "adjust-contrast", "2.6", "gpu", ND, None, "adjust_contrast"),
    ("tf.image.adjust_contrast", "adjust-contrast", "2.7", "gpu", RAISES, {TDO}, "adjust_contrast"),
    ("AdjustContrastv2", "adjust-contrast", "2.10", "gpu", RAISES, {EOD}, "adjust_contrast"),
    # crop_and_resize backprop on GPU: raises from 2.6 (image and boxes).
    ("tf.image.crop_and_resize", "crop-and-resize-backprop-image", "2.5", "gpu", ND, None, "crop_and_resize_grad"),
    ("tf.image.crop_and_resize", "crop-and-resize-backprop-image", "2.6", "gpu", RAISES, {TDO},
     "crop_and_resize_grad"),
    ("CropAndResizeGradImage", "crop-and-resize-backprop-image", "2.8", "gpu", RAISES, {EOD},
     "crop_and_resize_grad"),
    ("CropAndResizeGradBoxes", "crop-and-resize-backprop-boxes", "2.5", "gpu", ND, None, "crop_and_resize_grad"),
    ("CropAndResizeGradBoxes", "crop-and-resize-backprop-boxes", "2.6", "gpu", RAISES, {TDO},
     "crop_and_resize_grad"),
    # crop_and_resize backprop to the image on CPU: ND before 2.6, TDO from 2.6.
    ("tf.image.crop_and_resize", "crop-and-resize-backprop-image", "2.5", "cpu", ND, None, "crop_and_resize_grad"),
    ("tf.image.crop_and_resize", "crop-and-resize-backprop-image", "2.6", "cpu", DWS, {TDO}, None),
    ("tf.image.crop_and_resize", "crop-and-resize-backprop-image", "2.8", "cpu", DWS, {EOD}, None),
    # Bincount: raises from 2.7.
    ("tf.math.bincount", "bincount", "2.6", "gpu", ND, None, "bincount"),
    ("tf.math.bincount", "bincount", "2.7", "gpu", RAISES, {TDO}, "bincount"),
    ("tf.raw_ops.DenseBincount", "dense-bincount", "2.6", "gpu", ND, None, "bincount"),
    ("DenseBincount", "dense-bincount", "2.7", "gpu", RAISES, {TDO}, "bincount"),
    # Segment sum: ND, raises 2.5-2.6, TDO 2.7, EOD 2.8+.
    ("tf.math.segment_sum", "segment-sum", "2.4", "gpu", ND, None, "segment_sum"),
    ("tf.math.segment_sum", "segment-sum", "2.5", "gpu", RAISES, {TDO}, "segment_sum"),
    ("tf.math.segment_sum", "segment-sum", "2.6", "gpu", RAISES, {TDO}, "segment_sum"),
    ("tf.math.segment_sum", "segment-sum", "2.7", "gpu", DWS, {TDO}, None),
    ("SegmentSum", "segment-sum", "2.8", "gpu", DWS, {EOD}, None),
    # Unsorted segment sum.
    ("tf.math.unsorted_segment_sum", "unsorted-segment-sum", "2.4", "gpu", ND, None, "unsorted_segment_sum"),
    ("tf.math.unsorted_segment_sum", "unsorted-segment-sum", "2.5", "gpu", RAISES, {TDO}, "unsorted_segment_sum"),
    ("tf.math.unsorted_segment_sum", "unsorted-segment-sum", "2.7", "gpu", DWS, {TDO}, None),
    ("UnsortedSegmentSum", "unsorted-segment-sum", "2.8", "gpu", DWS, {EOD}, None),
    # Unsorted segment mean / sqrt_n / prod.
    ("tf.math.unsorted_segment_mean", "unsorted-segment-mean", "2.4", "gpu", ND, None, "unsorted_segment_mean"),
    ("tf.math.unsorted_segment_mean", "unsorted-segment-mean", "2.5", "gpu", RAISES, {TDO},
     "unsorted_segment_mean"),
    ("tf.math.unsorted_segment_mean", "unsorted-segment-mean", "2.7", "gpu", DWS, {TDO}, None),
    ("tf.math.unsorted_segment_sqrt_n", "unsorted-segment-sqrt-n", "2.4", "gpu", ND, None,
     "unsorted_segment_sqrt_n"),
    ("tf.math.unsorted_segment_sqrt_n", "unsorted-segment-sqrt-n", "2.6", "gpu", RAISES, {TDO},
     "unsorted_segment_sqrt_n"),
    ("tf.math.unsorted_segment_sqrt_n", "unsorted-segment-sqrt-n", "2.7", "gpu", DWS, {TDO}, None),
    ("tf.math.unsorted_segment_prod", "unsorted-segment-prod", "2.4", "gpu", ND, None, "unsorted_segment_prod"),
    ("tf.math.unsorted_segment_prod", "unsorted-segment-prod", "2.5", "gpu", RAISES, {TDO},
     "unsorted_segment_prod"),
    ("UnsortedSegmentProd", "unsorted-segment-prod", "2.7", "gpu", DWS, {TDO}, None),
    # Sorted segment prod (GPU kernel from 2.5) and mean (GPU kernel from 2.7).
    ("tf.math.segment_prod", "segment-prod", "2.4", "gpu", NA, None, None),
    ("tf.math.segment_prod", "segment-prod", "2.5", "gpu", RAISES, {TDO}, None),
    ("tf.math.segment_prod", "segment-prod", "2.7", "gpu", DWS, {TDO}, None),
    ("tf.math.segment_mean", "segment-mean", "2.6", "gpu", NA, None, None),
    ("tf.math.segment_mean", "segment-mean", "2.7", "gpu", DWS, {TDO}, None),
    # Sparse-gradient reduction: gather backprop, convert_to_tensor(IndexedSlices), dense_image_warp.
    ("tf.gather", "gather-backprop", "2.4", "gpu", ND, None, "indexed_slices_to_dense"),
    ("tf.gather", "gather-backprop", "2.5", "gpu", RAISES, {TDO}, "indexed_slices_to_dense"),
    ("tf.gather", "gather-backprop", "2.7", "gpu", DWS, {TDO}, None),
    ("tfa.image.dense_image_warp", "gather-backprop", "2.6", "gpu", RAISES, {TDO}, "indexed_slices_to_dense"),
    ("tf.convert_to_tensor", "convert-to-tensor-indexed-slices", "2.4", "gpu", ND, None, "indexed_slices_to_dense"),
    ("tf.convert_to_tensor", "convert-to-tensor-indexed-slices", "2.6", "gpu", RAISES, {TDO},
     "indexed_slices_to_dense"),
    ("tf.convert_to_tensor", "convert-to-tensor-indexed-slices", "2.7", "gpu", DWS, {TDO}, None),
    # Fused batch norm backprop with is_training=False: raises from 2.7.
    ("tf.compat.v1.nn.fused_batch_norm", "fused-batch-norm-inference-backprop", "2.6", "gpu", ND, None, None),
    ("tf.compat.v1.nn.fused_batch_norm", "fused-batch-norm-inference-backprop", "2.7", "gpu", RAISES, {TDO}, None),
    ("tf.keras.layers.BatchNormalization", "fused-batch-norm-inference-backprop", "2.21", "gpu", RAISES, {EOD},
     None),
    ("FusedBatchNormGradV3", "fused-batch-norm-inference-backprop", "2.7", "gpu", RAISES, {TDO}, None),
    # Depthwise conv backprop to filter: raises 2.7-2.9, EOD from 2.10.
    ("tf.nn.depthwise_conv2d", "depthwise-conv-backprop-filter", "2.6", "gpu", ND, None, None),
    ("tf.nn.depthwise_conv2d", "depthwise-conv-backprop-filter", "2.7", "gpu", RAISES, {TDO}, None),
    ("tf.keras.layers.DepthwiseConv2D", "depthwise-conv-backprop-filter", "2.9", "gpu", RAISES, {EOD}, None),
    ("tf.keras.layers.DepthwiseConv2D", "depthwise-conv-backprop-filter", "2.10", "gpu", DWS, {EOD}, None),
    ("DepthwiseConv2dNativeBackpropFilter", "depthwise-conv-backprop-filter", "2.21", "gpu", DWS, {EOD}, None),
    # DebugNumericSummaryV2: raises from 2.7.
    ("tf.raw_ops.DebugNumericSummaryV2", "debug-numeric-summary-v2-concise-health", "2.6", "gpu", ND, None, None),
    ("tf.raw_ops.DebugNumericSummaryV2", "debug-numeric-summary-v2-concise-health", "2.7", "gpu", RAISES, {TDO},
     None),
    ("DebugNumericSummaryV2", "debug-numeric-summary-v2-full-health", "2.8", "gpu", RAISES, {EOD}, None),
    # sparse_dense_matmul: raises from 2.6.
    ("tf.sparse.sparse_dense_matmul", "sparse-dense-matmul", "2.5", "gpu", ND, None, "sparse_dense_matmul"),
    ("tf.sparse.sparse_dense_matmul", "sparse-dense-matmul", "2.6", "gpu", RAISES, {TDO}, "sparse_dense_matmul"),
    ("SparseTensorDenseMatMul", "sparse-dense-matmul", "2.8", "gpu", RAISES, {EOD}, "sparse_dense_matmul"),
    # Scatter-ND family: TDO (on CPU) from 2.7.
    ("tf.scatter_nd", "scatter-nd", "2.6", "gpu", ND, None, "scatter_nd"),
    ("tf.scatter_nd", "scatter-nd", "2.7", "gpu", DWS, {TDO}, None),
    ("ScatterNd", "scatter-nd", "2.8", "gpu", DWS, {EOD}, None),
    ("tf.tensor_scatter_nd_add", "tensor-scatter-nd-add", "2.6", "gpu", ND, None, None),
    ("tf.tensor_scatter_nd_add", "tensor-scatter-nd-add", "2.7", "gpu", DWS, {TDO}, None),
    ("tf.tensor_scatter_nd_sub", "tensor-scatter-nd-sub", "2.6", "gpu", ND, None, None),
    ("tf.tensor_scatter_nd_sub", "tensor-scatter-nd-sub", "2.7", "gpu", DWS, {TDO}, None),
    ("tf.tensor_scatter_nd_update", "tensor-scatter-nd-update", "2.6", "gpu", ND, None, None),
    ("tf.tensor_scatter_nd_update", "tensor-scatter-nd-update", "2.7", "gpu", DWS, {TDO}, None),
    ("tf.compat.v1.scatter_nd_update", "scatter-nd-update-variable", "2.6", "gpu", ND, None, None),
    ("tf.compat.v1.scatter_nd_update", "scatter-nd-update-variable", "2.7", "gpu", DWS, {TDO}, None),
    # Historic GPU reduce_sum / reduce_mean: deterministic throughout.
    ("tf.math.reduce_sum", "reduce-sum-mean-gpu", "1.14", "gpu", DET, None, None),
    ("tf.math.reduce_mean", "reduce-sum-mean-gpu", "2.21", "gpu", DET, None, None),
    # tf.data stateful map/interleave: ND until the 2.7 make_deterministic pass.
    ("tf.data.Dataset.map", "data-stateful-parallel-map", "2.4", "cpu", ND, None, None),
    ("tf.data.Dataset.interleave", "data-stateful-parallel-map", "2.7", "cpu", DWS, {TDO}, None),
    ("tf.data.Dataset.map", "data-stateful-parallel-map", "2.8", "gpu", DWS, {EOD}, None),
    ("tf.data.Dataset.map", "data-nondeterministic-order", "2.8", "cpu", DWS, {EOD}, None),
    # MirroredStrategy reshuffle: fixed in 2.3.
    ("mirrored-strategy-shuffle", "mirrored-strategy-shuffle", "2.2", "gpu", ND, None, None),
    ("mirrored-strategy-shuffle", "mirrored-strategy-shuffle", "2.3", "gpu", DET, None, None),
    # sample_from_datasets over several GPUs: open issue.
    ("tf.data.experimental.sample_from_datasets", "sample-from-datasets-multi-gpu", "2.4", "gpu", UNKNOWN, None,
     None),
    # while_loop parallelism in TF1 graphs: work-around only.
    ("tf.while_loop", "while-loop-parallel-iterations", "1.14", "cpu", ND, None, None),
    ("tf.while_loop", "while-loop-parallel-iterations", "2.21", "gpu", ND, None, None),
    # Horovod fusion: HOROVOD_FUSION_THRESHOLD=0.
    ("horovod.tensorflow.allreduce", "horovod-tensor-fusion", "2.4", "gpu", DWS, {"HOROVOD_FUSION_THRESHOLD"}, None),
    # CPU multithreading: unknown, with a work-around.
    ("cpu-multithreading", "cpu-multithreading", "2.21", "cpu", DET, None, None),  # measured (matrix, --settle)
    # Ops that raise on every device (CPU as well as GPU).
    ("tf.random.normal", "unseeded-random-ops", "2.6", "cpu", ND, None, None),
    ("tf.random.normal", "unseeded-random-ops", "2.7", "cpu", RAISES, {TDO}, None),
    ("tf.random.uniform", "unseeded-random-ops", "2.21", "gpu", RAISES, {EOD}, None),
    ("tf.nn.dropout", "unseeded-random-ops", "2.8", "cpu", RAISES, {EOD}, None),
    ("RandomStandardNormal", "unseeded-random-raw-ops", "2.7", "gpu", RAISES, {TDO}, None),
    ("tf.random.Generator.from_non_deterministic_state", "random-generator-non-deterministic-state", "2.6", "cpu",
     ND, None, None),
    ("tf.random.Generator.from_non_deterministic_state", "random-generator-non-deterministic-state", "2.7", "cpu",
     RAISES, {TDO}, None),
    ("tf.random.Generator.from_non_deterministic_state", "random-generator-non-deterministic-state", "2.7", "gpu",
     RAISES, {TDO}, None),
    ("tf.random.get_global_generator", "random-global-generator-unset", "2.6", "gpu", ND, None, None),
    ("tf.random.get_global_generator", "random-global-generator-unset", "2.8", "cpu", RAISES, {EOD}, None),
    ("tf.image.sample_distorted_bounding_box", "sample-distorted-bounding-box", "2.6", "cpu", ND, None, None),
    ("tf.image.sample_distorted_bounding_box", "sample-distorted-bounding-box", "2.8", "cpu", RAISES, {EOD}, None),
    ("tf.image.sample_distorted_bounding_box", "sample-distorted-bounding-box", "2.21", "gpu", RAISES, {EOD}, None),
    ("tf.compat.v1.image.sample_distorted_bounding_box", "sample-distorted-bounding-box-v1", "2.8", "gpu", RAISES,
     {EOD}, None),
    ("tf.nn.fractional_max_pool", "fractional-max-pool", "2.6", "gpu", ND, None, None),
    ("tf.nn.fractional_max_pool", "fractional-max-pool", "2.8", "cpu", RAISES, {EOD}, None),
    ("tf.compat.v1.nn.fractional_max_pool", "fractional-max-pool-v1", "2.21", "cpu", RAISES, {EOD}, None),
    ("tf.timestamp", "timestamp", "2.6", "cpu", ND, None, None),
    ("tf.timestamp", "timestamp", "2.7", "cpu", RAISES, {TDO}, None),
    ("Timestamp", "timestamp", "2.7", "gpu", RAISES, {TDO}, None),
    ("Timestamp", "timestamp", "2.21", "cpu", RAISES, {EOD}, None),
    # GPU-only raisers from the list of ops that raise.
    ("tf.linalg.svd", "svd-one-column", "2.6", "gpu", ND, None, None),
    ("Svd", "svd-one-column", "2.7", "gpu", RAISES, {TDO}, None),
    ("tf.nn.dilation2d", "dilation2d-backprop-input", "2.6", "gpu", ND, None, None),
    ("Dilation2DBackpropInput", "dilation2d-backprop-input", "2.7", "gpu", RAISES, {TDO}, None),
    ("Dilation2DBackpropFilter", "dilation2d-backprop-filter", "2.8", "gpu", RAISES, {EOD}, None),
    ("tf.nn.max_pool_with_argmax", "max-pool-with-argmax-backprop", "2.6", "gpu", ND, None, None),
    ("MaxPoolGradWithArgmax", "max-pool-with-argmax-backprop", "2.7", "gpu", RAISES, {TDO}, None),
    ("tf.quantization.fake_quant_with_min_max_vars", "fake-quant-vars-gradient", "2.7", "gpu", ND, None, None),
    ("FakeQuantWithMinMaxVarsGradient", "fake-quant-vars-gradient", "2.8", "gpu", RAISES, {EOD}, None),
    ("FakeQuantWithMinMaxVarsPerChannelGradient", "fake-quant-vars-per-channel-gradient", "2.7", "gpu", ND, None,
     None),
    ("FakeQuantWithMinMaxVarsPerChannelGradient", "fake-quant-vars-per-channel-gradient", "2.8", "gpu", RAISES,
     {EOD}, None),
    ("tf.compat.v1.scatter_add", "ref-variable-scatter", "2.6", "gpu", ND, None, None),
    ("ScatterUpdate", "ref-variable-scatter", "2.7", "gpu", RAISES, {TDO}, None),
    # before the 2.8 check no source says what XLA's GPU max-pool gradient does (issue 25)
    ("xla-maxpool-gradient-gpu", "xla-maxpool-gradient-gpu", "2.7", "gpu", UNKNOWN, None, None),
    ("xla-maxpool-gradient-gpu", "xla-maxpool-gradient-gpu", "2.8", "gpu", RAISES, {EOD}, None),
    # Runs under determinism and still varies.
    ("tf.raw_ops.NonDeterministicInts", "non-deterministic-ints", "2.21", "cpu", ND, None, None),
    ("NonDeterministicInts", "non-deterministic-ints", "2.8", "gpu", ND, None, None),
    # Release-notes changes that are not op fixes.
    ("tf.math.argmax", "argmax-ties", "2.3", "gpu", DET, None, None),
    ("tf.math.argmin", "argmin-ties", "2.3", "cpu", DET, None, None),
    ("tf.math.argmax", "argmax-ties", "2.2", "gpu", UNKNOWN, None, None),
    ("grappler-timeout", "grappler-timeout", "2.5", "cpu", ND, None, None),
    ("grappler-timeout", "grappler-timeout", "2.6", "cpu", DET, None, None),
    ("tf32-matmul-conv", "tf32-matmul-conv", "2.3", "gpu", NA, None, None),
    ("tf32-matmul-conv", "tf32-matmul-conv", "2.4", "gpu", DET, None, None),
    ("onednn-cpu-numerics", "onednn-cpu-numerics", "2.9", "cpu", DET, None, None),
    ("onednn-cpu-numerics", "onednn-cpu-numerics", "2.15", "cpu", DET, None, None),
    ("tf.data.Dataset.shuffle", "data-unseeded-random", "2.6", "cpu", ND, None, None),
    ("tf.data.Dataset.random", "data-unseeded-random", "2.12", "cpu", RAISES, {EOD}, None),
    ("tf.image.stateless_random_contrast", "stateless-random-image-ops", "2.3", "cpu", NA, None, None),
    ("tf.image.stateless_random_contrast", "stateless-random-image-ops", "2.4", "cpu", DET, None, None),
    ("tf.keras.initializers.GlorotUniform", "keras-unseeded-rng", "2.10", "cpu", ND, None, None),
    ("tf.keras.initializers.GlorotUniform", "keras-unseeded-rng", "2.8", "gpu", RAISES, {EOD}, None),
    ("tf.keras.layers.Dropout", "keras-unseeded-dropout", "2.15", "cpu", RAISES, {EOD}, None),
    ("tf.keras.layers.Dropout", "keras-unseeded-dropout", "2.16", "cpu", ND, None, None),
    ("tf.keras.layers.RandomFlip", "keras-unseeded-random-layers", "2.12", "cpu", ND, None, None),
    ("tf.image.sample_distorted_bounding_box", "sample-distorted-bounding-box", "2.7", "cpu", RAISES,
     {"TF_DETERMINISTIC_OPS"}, None),
]


def _case_id(case):
    name, entry_id, version, device = case[:4]
    return "%s@%s-%s->%s" % (name, version, device, entry_id)


def _verdict(name, entry_id, version, device):
    verdicts = catalog.lookup(name, version, device)
    found = [v for v in verdicts if v.entry.id == entry_id]
    assert found, "%r does not reach entry %r (reaches %s)" % (
        name, entry_id, sorted(v.entry.id for v in verdicts) or "nothing")
    return found[0]


@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_status_at_boundary_versions(case):
    name, entry_id, version, device, status, switches, patch = case
    verdict = _verdict(name, entry_id, version, device)
    assert verdict.range is not None, "%s has no range for TF %s on %s" % (entry_id, version, device)
    assert verdict.status == status
    if switches is not None:
        assert switches <= set(verdict.range.switches), verdict.range.switches
    assert verdict.range.patch == patch


# Exact error text per entry, as TF prints it (from the list of ops that raise
# under determinism and the kernels' sources).
SEGMENT_SORTED = "Deterministic GPU implementation of sorted segment reduction op not available."
SEGMENT_UNSORTED = "Deterministic GPU implementation of unsorted segment reduction op not available."
RANDOM_SEED = ("Random ops require a seed to be set when determinism is enabled. Please set a seed before running "
               "the op, e.g. by calling tf.random.set_seed(1).")
ERRORS = {
    "segment-sum": ("UnimplementedError", SEGMENT_SORTED),
    "segment-prod": ("UnimplementedError", SEGMENT_SORTED),
    "unsorted-segment-sum": ("UnimplementedError", SEGMENT_UNSORTED),
    "unsorted-segment-mean": ("UnimplementedError", SEGMENT_UNSORTED),
    "unsorted-segment-sqrt-n": ("UnimplementedError", SEGMENT_UNSORTED),
    "unsorted-segment-prod": ("UnimplementedError", SEGMENT_UNSORTED),
    "gather-backprop": ("UnimplementedError", SEGMENT_UNSORTED),
    "convert-to-tensor-indexed-slices": ("UnimplementedError", SEGMENT_UNSORTED),
    "unseeded-random-ops": ("RuntimeError", RANDOM_SEED),
    "data-unseeded-random": ("RuntimeError", RANDOM_SEED),
    "unseeded-random-raw-ops": ("InvalidArgumentError",
                                "When determinism is enabled, random ops must have a seed specified."),
    "random-generator-non-deterministic-state": (
        "RuntimeError", '"from_non_deterministic_state" cannot be called when determinism is enabled.'),
    "random-global-generator-unset": (
        "RuntimeError", '"get_global_generator" cannot be called if determinism is enabled, unless '
        '"set_global_generator" has already been called. Please call "set_global_generator" first.'),
    "sample-distorted-bounding-box": (
        "ValueError", "tf.image.sample_distorted_bounding_box requires a non-zero seed to be passed in when "
        'determinism is enabled, but got seed=0. Please pass in a non-zero seed, e.g. by passing "seed=1".'),
    "fractional-max-pool": (
        "ValueError", "tf.nn.fractional_max_pool requires a non-zero seed to be passed in when determinism is "
        'enabled, but got seed=0. Please pass in a non-zero seed, e.g. by passing "seed=1".'),
    # The TF1 forms print the seeds they got (here the defaults).
    "sample-distorted-bounding-box-v1": (
        "ValueError", 'tf.compat.v1.image.sample_distorted_bounding_box requires "seed" or "seed2" to be non-zero '
        'when determinism is enabled. Please pass in a non-zero seed, e.g. by passing "seed=1". Got seed=None and '
        "seed2=None"),
    "fractional-max-pool-v1": (
        "ValueError", 'tf.compat.v1.nn.fractional_max_pool requires "seed" and "seed2" to be non-zero and '
        '"deterministic" to be true when op determinism is enabled. Please pass in such values, e.g. by '
        'passing"seed=1, seed2=1, deterministic=True". Got: seed=0, seed2=0, deterministic=False'),
    "timestamp": ("FailedPreconditionError", "Timestamp cannot be called when determinism is enabled"),
    "softmax-xent-raw-op": (
        "UnimplementedError", "The GPU implementation of SoftmaxCrossEntropyWithLogits that would have been "
        "executed is not deterministic. Note that the Python API uses an alternative, deterministic, "
        "GPU-accelerated path when determinism is enabled."),
    "sparse-softmax-xent-raw-op": (
        "UnimplementedError", "The GPU implementation of SparseSoftmaxCrossEntropyWithLogits that would have been "
        "executed is not deterministic. Note that the Python API uses an alternative, deterministic, "
        "GPU-accelerated path when determinsim is enabled."),
    "sparse-softmax-xent": (
        "UnimplementedError", "The GPU implementation of SparseSoftmaxCrossEntropyWithLogits that would have been "
        "executed is not deterministic. Note that the Python API uses an alternative, deterministic, "
        "GPU-accelerated path when determinsim is enabled."),
    "resize-nearest-backprop": (
        "UnimplementedError", "A deterministic GPU implementation of ResizeNearestNeighborGrad is not currently "
        "available."),
    "crop-and-resize-backprop-image": (
        "UnimplementedError", "Deterministic GPU implementation of CropAndResizeBackpropImage not available."),
    "crop-and-resize-backprop-boxes": (
        "UnimplementedError", "Deterministic GPU implementation of CropAndResizeBackpropBoxes not available."),
    "adjust-contrast": (
        "UnimplementedError", "A deterministic GPU implementation of AdjustContrastv2 is not currently available."),
    "sparse-dense-matmul": (
        "UnimplementedError", "A deterministic GPU implementation of SparseTensorDenseMatmulOp is not currently "
        "available."),
    "bincount": ("UnimplementedError", "Determinism is not yet supported in GPU implementation of Bincount."),
    "dense-bincount": ("UnimplementedError",
                       "Determinism is not yet supported in GPU implementation of DenseBincount."),
    "fused-batch-norm-inference-backprop": (
        "UnimplementedError", "A deterministic GPU implementation of fused batch-norm backprop, when training is "
        "disabled, is not currently available."),
    "debug-numeric-summary-v2-concise-health": (
        "UnimplementedError", "Determinism is not yet supported for DebugNumericSummaryV2 when tensor_debug_mode "
        "is CONCISE_HEALTH."),
    "debug-numeric-summary-v2-full-health": (
        "UnimplementedError", "Determinism is not yet supported for DebugNumericSummaryV2 when tensor_debug_mode "
        "is FULL_HEALTH."),
    "ref-variable-scatter": ("UnimplementedError",
                             "Determinism is not yet supported in GPU implementation of Scatter ops"),
    "svd-one-column": ("UnimplementedError", "Determinism is not yet supported for SVD of matrices with 1 column."),
    "dilation2d-backprop-input": ("UnimplementedError",
                                  "Determinism is not yet supported for Dilation2DBackpropInput."),
    "dilation2d-backprop-filter": ("UnimplementedError",
                                   "Determinism is not yet supported for Dilation2DBackpropFilter."),
    "max-pool-with-argmax-backprop": ("UnimplementedError",
                                      "Determinism is not yet supported for MaxPoolGradWithArgmax."),
    "fake-quant-vars-gradient": (
        "UnimplementedError",
        "Determinism is not yet supported in GPU implementation of FakeQuantWithMinMaxVarsGradient."),
    "fake-quant-vars-per-channel-gradient": (
        "UnimplementedError",
        "Determinism is not yet supported in GPU implementation of FakeQuantWithMinMaxVarsPerChannelGradient."),
    "xla-maxpool-gradient-gpu": (
        "UnimplementedError", "GPU MaxPool gradient ops do not yet have a deterministic XLA implementation."),
    # Users' reports of the 2.7-2.9 text; the kernel's 2.10+ text (old cuDNN only) is in the range note.
    "depthwise-conv-backprop-filter": (
        "UnimplementedError",
        "A deterministic GPU implementation of DepthwiseConvBackpropFilter is not currently available."),
}


# Ranges whose error differs from the entry's usual one: 2.7 checked the seed in
# the kernel (guarded_philox_random.cc) before the Python API did (2.8).
KERNEL_SEED_CHECK = ("InvalidArgumentError", "When determinism is enabled, random ops must have a seed specified.")
ERRORS_OF_RANGE = {
    ("sample-distorted-bounding-box", ">=2.7,<2.8"): KERNEL_SEED_CHECK,
    ("sample-distorted-bounding-box-v1", ">=2.7,<2.8"): KERNEL_SEED_CHECK,
}
ERRORS.update({"keras-unseeded-rng": ("RuntimeError", RANDOM_SEED), "keras-unseeded-dropout": ("RuntimeError", RANDOM_SEED)})


@pytest.mark.parametrize("entry_id", sorted(ERRORS))
def test_raising_ranges_carry_the_exact_error(entry_id):
    entry = default_catalogue().get(entry_id)
    raising = [r for ranges in entry.devices.values() for r in ranges if r.status == RAISES]
    assert raising, "%s has no raising range" % entry_id
    for version_range in raising:
        assert version_range.error is not None
        expected = ERRORS_OF_RANGE.get((entry_id, str(version_range.versions)), ERRORS[entry_id])
        assert (version_range.error.type, version_range.error.message) == expected


def test_every_raising_range_has_an_error_and_switches():
    for entry in default_catalogue():
        for device, ranges in entry.devices.items():
            for r in ranges:
                if r.status == RAISES:
                    assert r.error is not None and r.error.message, (entry.id, device, r.versions)
                    assert r.switches, (entry.id, device, r.versions)


def test_every_raising_entry_is_checked_here():
    raising = {e.id for e in default_catalogue()
               if any(r.status == RAISES for ranges in e.devices.values() for r in ranges)}
    assert raising <= set(ERRORS), sorted(raising - set(ERRORS))


# Names from the reference tables (GPU status table, raise list, release notes).
REFERENCE_NAMES = [
    "tf.nn.conv1d", "tf.nn.conv2d", "tf.nn.conv3d", "tf.keras.layers.Conv1D", "tf.keras.layers.Conv2D",
    "tf.keras.layers.Conv3D", "tf.nn.max_pool1d", "tf.nn.max_pool2d", "tf.nn.max_pool3d",
    "tf.keras.layers.MaxPool1D", "tf.keras.layers.MaxPool2D", "tf.keras.layers.MaxPool3D", "tf.nn.bias_add",
    "tf.nn.ctc_loss", "tf.image.resize", "tf.compat.v1.image.resize_bilinear", "tf.keras.layers.UpSampling2D",
    "tf.compat.v1.image.resize_nearest_neighbor", "tf.nn.softmax_cross_entropy_with_logits",
    "tf.keras.losses.categorical_crossentropy", "tf.keras.losses.CategoricalCrossentropy",
    "tf.nn.sparse_softmax_cross_entropy_with_logits", "tf.keras.losses.sparse_categorical_crossentropy",
    "tf.keras.losses.SparseCategoricalCrossentropy", "tf.image.adjust_contrast", "tf.image.random_contrast",
    "tf.image.crop_and_resize", "tf.math.bincount", "tf.raw_ops.DenseBincount", "tf.math.segment_sum",
    "tf.math.unsorted_segment_sum", "tf.math.unsorted_segment_mean", "tf.math.unsorted_segment_sqrt_n",
    "tf.math.unsorted_segment_prod", "tf.math.segment_prod", "tf.math.segment_mean", "tf.gather",
    "tf.convert_to_tensor", "tfa.image.dense_image_warp", "tf.compat.v1.nn.fused_batch_norm",
    "tf.keras.layers.BatchNormalization", "tf.nn.depthwise_conv2d", "tf.keras.layers.DepthwiseConv2D",
    "tf.raw_ops.DebugNumericSummaryV2", "tf.sparse.sparse_dense_matmul", "tf.scatter_nd",
    "tf.tensor_scatter_nd_add", "tf.tensor_scatter_nd_sub", "tf.tensor_scatter_nd_update",
    "tf.compat.v1.scatter_nd_update", "tf.math.reduce_sum", "tf.math.reduce_mean", "tf.data.Dataset.map",
    "tf.data.Dataset.interleave", "tf.data.Dataset.shuffle", "tf.data.experimental.sample_from_datasets",
    "tf.while_loop", "tf.random.normal", "tf.random.uniform", "tf.random.shuffle", "tf.random.categorical",
    "tf.nn.dropout", "tf.random.Generator.from_non_deterministic_state", "tf.random.get_global_generator",
    "tf.image.sample_distorted_bounding_box", "tf.compat.v1.image.sample_distorted_bounding_box",
    "tf.nn.fractional_max_pool", "tf.compat.v1.nn.fractional_max_pool", "tf.timestamp",
    "tf.raw_ops.SoftmaxCrossEntropyWithLogits", "tf.raw_ops.SparseSoftmaxCrossEntropyWithLogits",
    "tf.linalg.svd", "tf.nn.dilation2d", "tf.nn.max_pool_with_argmax",
    "tf.quantization.fake_quant_with_min_max_vars", "tf.quantization.fake_quant_with_min_max_vars_per_channel",
    "tf.Variable.scatter_add", "tf.compat.v1.scatter_add", "tf.raw_ops.NonDeterministicInts",
    "tf.math.argmin", "tf.math.argmax", "tf.data.Dataset.random", "tf.data.Dataset.sample_from_datasets",
    "tf.keras.initializers.GlorotUniform", "tf.image.stateless_random_contrast", "tf.function",
    "horovod.tensorflow.allreduce", "tf.distribute.MirroredStrategy", "tf.data.Dataset.batch",
    # Raw op names as they appear in graphs.
    "RandomStandardNormal", "Timestamp", "SoftmaxCrossEntropyWithLogits", "SparseSoftmaxCrossEntropyWithLogits",
    "ResizeNearestNeighborGrad", "ResizeBilinearGrad", "CropAndResizeGradImage", "CropAndResizeGradBoxes",
    "AdjustContrastv2", "SparseTensorDenseMatMul", "Bincount", "DenseBincount", "FusedBatchNormGradV3",
    "DepthwiseConv2dNativeBackpropFilter", "DebugNumericSummaryV2", "ScatterAdd", "ScatterUpdate", "Svd",
    "Dilation2DBackpropInput", "Dilation2DBackpropFilter", "MaxPoolGradWithArgmax",
    "FakeQuantWithMinMaxVarsGradient", "FakeQuantWithMinMaxVarsPerChannelGradient", "NonDeterministicInts",
    "UnsortedSegmentSum", "UnsortedSegmentProd", "SegmentSum", "SegmentProd", "SegmentMean", "BiasAddGrad",
    "Conv2DBackpropInput", "Conv2DBackpropFilter", "Conv3DBackpropFilterV2", "MaxPoolGrad", "MaxPool3DGrad",
    "ScatterNd", "TensorScatterAdd", "TensorScatterSub", "TensorScatterUpdate", "CTCLossV2", "ArgMax", "ArgMin",
    "SampleDistortedBoundingBoxV2", "FractionalMaxPool", "StatelessSampleDistortedBoundingBox",
]


@pytest.mark.parametrize("name", REFERENCE_NAMES)
def test_reference_name_is_catalogued(name):
    assert catalog.lookup(name, "2.21", "gpu") or catalog.lookup(name, "2.21", "cpu"), name


def test_every_alias_and_raw_op_resolves_to_its_entry():
    for entry in default_catalogue():
        device = sorted(entry.devices)[0]
        for name in entry.names + (entry.id,):
            ids = {v.entry.id for v in catalog.lookup(name, "2.21", device)}
            assert entry.id in ids, (name, entry.id)
        # The same name spelled with the tensorflow. prefix resolves too.
        for api in entry.apis:
            if api.startswith("tf."):
                ids = {v.entry.id for v in catalog.lookup("tensorflow." + api[3:], "2.21", device)}
                assert entry.id in ids, (api, entry.id)


def test_catalogue_size_and_sources():
    cat = default_catalogue()
    assert len(cat) >= 50
    for entry in cat:
        assert entry.sources, entry.id
        for device, ranges in entry.devices.items():
            for r in ranges:
                assert len(r.sources) >= 1, (entry.id, device, r.versions)
                assert r.status in STATUSES


def test_every_device_covers_every_release_exactly_once():
    for entry in default_catalogue():
        for device, ranges in entry.devices.items():
            for version in COVERED_TF_VERSIONS:
                hits = [r for r in ranges if r.covers(version)]
                assert len(hits) == 1, (entry.id, device, str(version), [r.versions for r in hits])


def test_patches_are_known_and_only_where_the_op_varies():
    from tfdet.patching import registry  # the one list of replacements

    PATCHES = set(registry.names())
    used = set()
    for entry in default_catalogue():
        for device, ranges in entry.devices.items():
            for r in ranges:
                if r.patch:
                    used.add(r.patch)
                    assert r.patch in PATCHES, (entry.id, r.patch)
                    assert r.status in (ND, RAISES), (entry.id, device, r.versions, r.status)
    assert used == PATCHES


def test_switch_eras():
    """TF_CUDNN_DETERMINISTIC for 1.14-2.0 cuDNN, TF_DETERMINISTIC_OPS for 2.1-2.7, enable_op_determinism from 2.8."""
    for entry in default_catalogue():
        for device, ranges in entry.devices.items():
            for r in ranges:
                if r.status not in (DWS, RAISES):
                    continue
                where = (entry.id, device, r.versions)
                releases = [(v.major, v.minor) for v in COVERED_TF_VERSIONS if r.covers(v)]
                if TDO in r.switches:
                    assert all((2, 1) <= v <= (2, 7) for v in releases), where
                if EOD in r.switches:
                    assert all(v >= (2, 8) for v in releases), where
                if TCD in r.switches:
                    assert all(v <= (2, 0) for v in releases), where


def _statuses(version, device):
    return {v.entry.id: v.status for v in default_catalogue().affecting(version, device)}


def test_what_changes_between_2_6_and_2_7_on_gpu():
    before, after = _statuses("2.6", "gpu"), _statuses("2.7", "gpu")
    changed = {i for i in set(before) | set(after) if before.get(i) != after.get(i)}
    expected = {
        # segment reductions stop raising and become deterministic under the switch
        "segment-sum", "segment-prod", "unsorted-segment-sum", "unsorted-segment-mean", "unsorted-segment-sqrt-n",
        "unsorted-segment-prod", "gather-backprop", "convert-to-tensor-indexed-slices", "segment-mean",
        # sparse softmax cross-entropy stops raising
        "sparse-softmax-xent",
        # scatter-nd family runs on the CPU under the switch
        "scatter-nd", "tensor-scatter-nd-add", "tensor-scatter-nd-sub", "tensor-scatter-nd-update",
        "scatter-nd-update-variable",
        # begin to raise in 2.7
        "resize-nearest-backprop", "adjust-contrast", "bincount", "dense-bincount",
        "fused-batch-norm-inference-backprop", "depthwise-conv-backprop-filter", "svd-one-column",
        "dilation2d-backprop-input", "dilation2d-backprop-filter", "max-pool-with-argmax-backprop",
        "debug-numeric-summary-v2-concise-health", "debug-numeric-summary-v2-full-health", "ref-variable-scatter",
        "softmax-xent-raw-op", "timestamp", "unseeded-random-ops", "unseeded-random-raw-ops",
        "random-generator-non-deterministic-state", "random-global-generator-unset",
    }
    assert expected <= changed, sorted(expected - changed)
    assert before["segment-sum"] == RAISES and after["segment-sum"] == DWS
    assert before["sparse-softmax-xent"] == RAISES and after["sparse-softmax-xent"] == DWS
    assert before["scatter-nd"] == ND and after["scatter-nd"] == DWS
    assert before["resize-nearest-backprop"] == ND and after["resize-nearest-backprop"] == RAISES
