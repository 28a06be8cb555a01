"""Follows: tensorflow/models research/object_detection/meta_architectures/faster_rcnn_meta_arch.py
         (second stage: crop_and_resize of the feature map at the proposals, max pool, box
         classifier) trained like research/object_detection/model_lib_v2.py eager_train_step
         (GradientTape inside tf.function).
Keeps: a convolutional backbone whose feature map is cropped with tf.image.crop_and_resize
       at normalised proposal boxes (so the gradient reaches the backbone through
       CropAndResizeGradImage), a 2x2 max pool of the crops, a box classifier with class
       logits and per-class box refinements, softmax cross-entropy plus Huber box loss on
       the foreground proposals, SGD with momentum, one tf.function training step.
Changes: synthetic 32x32 images with 1-2 coloured rectangles of 3 classes (the boxes are
       known), proposals are the ground-truth boxes jittered plus random background boxes
       instead of a trained RPN, 8 images per batch, 16 proposals per image.

Second stage of a two-stage detector: RoI crops of a trained backbone, box classifier head.
"""

import os
import sys

import numpy as np

if __package__ in (None, ""):  # run as a file: the repo root makes corpus.programs importable
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from corpus.programs import _data  # noqa: E402

NAME = "detection_roi_head"
STEPS = 10
EXPECT = dict(
    varies_stock=True,
    varying_ops=("CropAndResizeGradImage",),
    patch_reproduces=True,
)

# Measured: 4 stock processes at 3 steps ended in the same bits, and tfdet locate at 3 steps
# (2 processes x 10 calls) saw no difference; two stock runs at STEPS differed (promise b).
# The image gradient of crop_and_resize varies rarely per step here: locate runs STEPS.
LOCATE_STEPS = STEPS

IMAGE, CLASSES, BATCH, PROPOSALS, CROP = 32, 3, 1, 128, 14


def make_batch(rng):
    """Images, proposal boxes [B*P, 4] (normalised y1 x1 y2 x2), their image index, class, box targets."""
    images = rng.normal(0, 0.1, size=(BATCH, IMAGE, IMAGE, 3)).astype("float32")
    boxes, index, labels, targets = [], [], [], []
    for b in range(BATCH):
        truths = []
        for _ in range(rng.integers(1, 3)):
            h, w = rng.integers(8, 16, size=2)
            y, x = rng.integers(0, IMAGE - h), rng.integers(0, IMAGE - w)
            cls = int(rng.integers(0, CLASSES))
            images[b, y:y + h, x:x + w, cls] += 1.0
            truths.append((np.array([y, x, y + h, x + w], "float32") / IMAGE, cls))
        for p in range(PROPOSALS):
            if p < PROPOSALS // 2:        # foreground: a ground-truth box, jittered
                truth, cls = truths[p % len(truths)]
                box = np.clip(truth + rng.normal(0, 0.04, size=4), 0, 1).astype("float32")
                target = (truth - box) * 10.0
                label = cls + 1
            else:                          # background: anywhere, class 0, no box target
                y1, x1 = rng.uniform(0, 0.7, size=2)
                box = np.array([y1, x1, y1 + 0.3, x1 + 0.3], "float32")
                target, label = np.zeros(4, "float32"), 0
            boxes.append(box)
            index.append(b)
            labels.append(label)
            targets.append(target)
    return (images, np.stack(boxes), np.array(index, "int32"), np.array(labels, "int32"),
            np.stack(targets).astype("float32"))


def build(seed):
    import keras
    import tensorflow as tf

    keras.utils.set_random_seed(seed)
    backbone = keras.Sequential([
        keras.Input((IMAGE, IMAGE, 3)),
        keras.layers.Conv2D(16, 3, strides=2, padding="same", activation="relu"),
        keras.layers.Conv2D(32, 3, padding="same", activation="relu"),   # stride-2 feature map
    ], name="backbone")
    box_classifier = keras.Sequential([
        keras.Input((CROP // 2, CROP // 2, 32)),
        keras.layers.Conv2D(32, 3, activation="relu"),
        keras.layers.GlobalAveragePooling2D(),
        keras.layers.Dense(64, activation="relu"),
    ], name="box_classifier")
    class_head = keras.layers.Dense(CLASSES + 1, name="class_predictions")
    box_head = keras.layers.Dense(4 * (CLASSES + 1), name="box_encodings")
    optimizer = keras.optimizers.SGD(learning_rate=0.05, momentum=0.9)
    modules = [backbone, box_classifier, class_head, box_head]
    box_head.build((None, 64))
    class_head.build((None, 64))

    def forward(images, boxes, index):
        features = backbone(images, training=True)
        crops = tf.image.crop_and_resize(features, boxes, index, [CROP, CROP])
        crops = tf.nn.max_pool2d(crops, 2, 2, "VALID")
        hidden = box_classifier(crops, training=True)
        return class_head(hidden), tf.reshape(box_head(hidden), [-1, CLASSES + 1, 4])

    def losses(images, boxes, index, labels, targets):
        logits, encodings = forward(images, boxes, index)
        class_loss = tf.reduce_mean(
            tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
        chosen = tf.gather(encodings, labels, batch_dims=1)
        foreground = tf.cast(labels > 0, tf.float32)
        box_loss = tf.reduce_sum(keras.losses.Huber(reduction=None)(targets, chosen) * foreground)
        return class_loss + box_loss / tf.maximum(tf.reduce_sum(foreground), 1.0)

    def variables():
        return [v for m in modules for v in m.trainable_variables]

    @tf.function
    def train_step(images, boxes, index, labels, targets):
        with tf.GradientTape() as tape:
            loss = losses(images, boxes, index, labels, targets)
        grads = tape.gradient(loss, variables())
        optimizer.apply_gradients(zip(grads, variables()))
        return loss

    return forward, losses, variables, train_step


def train(steps=STEPS, seed=0, batch_seed=None):
    forward, _, variables, train_step = build(seed)
    rng = np.random.default_rng(seed if batch_seed is None else batch_seed)
    for _ in range(steps):
        train_step(*make_batch(rng))
    images, boxes, index, _, _ = make_batch(np.random.default_rng(1234))
    out = {"w%03d" % i: v.numpy() for i, v in enumerate(variables())}
    out["pred"] = forward(images, boxes, index)[0].numpy()
    return out


def first_step(seed=0):
    import tensorflow as tf

    _, losses, variables, _ = build(seed)
    batch = make_batch(np.random.default_rng(seed))
    with tf.GradientTape() as tape:
        loss = losses(*batch)
    grads = tape.gradient(loss, variables())
    out = {"loss": loss.numpy()}
    out.update({"g%03d" % i: g.numpy() for i, g in enumerate(grads)})
    return out


def scan_target():
    _, _, _, train_step = build(0)
    return train_step, make_batch(np.random.default_rng(0))


def main(argv=None):
    _data.main_with_context(NAME, train, STEPS, argv)


if __name__ == "__main__":
    main()
