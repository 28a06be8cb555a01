"""Gradients of a 2-layer MLP (256-128-1, 12 rows per replica) all-reduced by MirroredStrategy on N logical
CPU devices, against the per-replica gradients summed one after the other on one device. Prints a digest
of the reduced gradients, so that fresh processes can be compared:

    python reports/measured/allreduce_order_cpu.py N
"""

import hashlib
import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402


def grads(v1, v2, xb, yb):
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum((tf.matmul(tf.nn.relu(tf.matmul(xb, v1)), v2) - yb) ** 2)
    return tape.gradient(loss, [v1, v2])


def main(n):
    cpu = tf.config.list_physical_devices("CPU")[0]
    tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * n)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((12 * n, 256)).astype("float32")
    y = rng.standard_normal((12 * n, 1)).astype("float32")
    w1 = rng.standard_normal((256, 128)).astype("float32") * 0.1
    w2 = rng.standard_normal((128, 1)).astype("float32") * 0.1
    per = [[g.numpy() for g in grads(tf.Variable(w1), tf.Variable(w2), x[12 * i:12 * i + 12], y[12 * i:12 * i + 12])]
           for i in range(n)]
    sequential = []
    for j in range(2):
        total = per[0][j].copy()
        for replica in per[1:]:
            total = total + replica[j]
        sequential.append(total)
    strategy = tf.distribute.MirroredStrategy(["/cpu:%d" % i for i in range(n)])
    with strategy.scope():
        v1, v2 = tf.Variable(w1), tf.Variable(w2)
    batch = next(iter(strategy.experimental_distribute_dataset(
        tf.data.Dataset.from_tensor_slices((x, y)).batch(12 * n))))

    @tf.function
    def step(batch):
        def replica(xb, yb):
            return tf.distribute.get_replica_context().all_reduce("sum", grads(v1, v2, xb, yb))
        return strategy.run(replica, args=batch)

    reduced = [strategy.experimental_local_results(g)[0].numpy() for g in step(batch)]
    digest = hashlib.sha256(b"".join(r.tobytes() for r in reduced)).hexdigest()[:16]
    same = all(np.array_equal(a, b) for a, b in zip(reduced, sequential))
    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(reduced, sequential))
    print("replicas=%d cross_device_ops=%s digest=%s equals_sequential_sum=%s max_abs_diff=%.3g" % (
        n, type(strategy.extended._cross_device_ops).__name__, digest, same, diff))


if __name__ == "__main__":
    main(int(sys.argv[1]))
