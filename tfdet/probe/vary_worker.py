"""The worker of `tfdet probe --vary`: one arm (one setting) in one fresh TensorFlow process.

Started by probe/vary_run.py through the runtime (runtime.launch) with the
arm's environment (TF_ENABLE_ONEDNN_OPTS is read when TF loads); reads one
JSON line on stdin (the arm: threads, execution, logical devices, cases,
repeats, scratch directory), applies what must come before TensorFlow's
runtime starts (thread pools, logical CPU devices), then runs each case
`repeats` times and answers one JSON line per (case, variant) on its protocol
stream as each finishes, so the parent keeps what finished if it is stopped.

Variants: "main" (the case as the arm runs it), "alone" (row 0 of a batched
forward case on its own: the batch setting) and "replicas=K" (a gradient over
a global batch split across K MirroredStrategy replicas).

A workers arm is K of these processes, started together with TF_CONFIG naming
K localhost ports: each is one replica of a MultiWorkerMirroredStrategy, and
all K run the same cases in the same order, so their collectives meet.

Runs in the interpreter under test: standard library, numpy and TF only, Python 3.7 syntax.
"""

import io
import json
import os
import sys
import time
import traceback

from tfdet.probe.worker import _describe_error, _protocol_stream


def _save(np, path, array):
    buffer = io.BytesIO()
    np.save(buffer, array)
    with open(path, "wb") as handle:
        handle.write(buffer.getbuffer())


def _digest(array):
    from tfdet.results import stats

    return stats.digest(array)


def configure(tf, arm):
    """What must happen before TensorFlow's runtime starts: logical CPU devices, thread pools,
    and a workers arm's MultiWorkerMirroredStrategy (returned; None for other arms)."""
    devices = int(arm.get("logical_devices") or 0)
    if devices > 1:
        cpus = tf.config.list_physical_devices("CPU")
        tf.config.set_logical_device_configuration(cpus[0], [tf.config.LogicalDeviceConfiguration()] * devices)
    threads = arm.get("threads")
    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(int(threads))
        tf.config.threading.set_inter_op_parallelism_threads(int(threads))
    if int(arm.get("workers") or 0) > 1:
        return multi_worker_strategy(tf, float(arm.get("collective_timeout") or 120.0))
    return None


def multi_worker_strategy(tf, timeout):
    """The strategy of one worker of the cluster TF_CONFIG names (created before any op, as
    TensorFlow requires); a collective that waits longer than `timeout` raises instead of hanging."""
    strategy_class = getattr(tf.distribute, "MultiWorkerMirroredStrategy", None) or \
        tf.distribute.experimental.MultiWorkerMirroredStrategy  # before TF 2.4
    options_class = getattr(tf.distribute.experimental, "CommunicationOptions", None)  # TF >= 2.3
    if options_class is None:
        return strategy_class()
    return strategy_class(communication_options=options_class(timeout_seconds=timeout))


def wrap(tf, body, execution):
    """The body as the arm runs it: eagerly, in tf.function, or compiled by XLA."""
    if execution == "eager":
        return body
    if execution == "xla":
        try:
            return tf.function(body, jit_compile=True)
        except TypeError:  # before TF 2.5 the argument had another name
            return tf.function(body, experimental_compile=True)
    return tf.function(body)


class Runner(object):
    def __init__(self, tf, np, arm, reply, cluster=None):
        self.tf, self.np, self.arm, self.reply = tf, np, arm, reply
        self.cluster = cluster  # a workers arm's MultiWorkerMirroredStrategy
        # One MirroredStrategy per replica count for the life of the process: each new
        # instance numbers its collective groups from 1 again, and a second instance of
        # another size joining group 1 aborts ("joining a group with size 3, but that
        # group has size 2").
        self.strategies = {}

    def strategy(self, count):
        if self.cluster is not None and count == self.cluster.num_replicas_in_sync:
            return self.cluster
        if count not in self.strategies:
            self.strategies[count] = self.tf.distribute.MirroredStrategy(["/cpu:%d" % i for i in range(count)])
        return self.strategies[count]

    def repeat(self, case_id, variant, run):
        """Run `repeats` times; answer digests, and save each distinct output once."""
        np, arm = self.np, self.arm
        digests, saved = [], {}
        started = time.perf_counter()
        try:
            for _ in range(int(arm["repeats"])):
                output = run()
                key = _digest(output)
                digests.append(key)
                if key not in saved:
                    path = os.path.join(arm["scratch"], "%s-%s-%s-%s.npy" % (
                        arm["name"], case_id, variant.replace("=", ""), key[:16]))
                    _save(np, path, output)
                    saved[key] = path
        except Exception as exc:  # an error is a result (XLA may not compile an op)
            self.reply({"case": case_id, "variant": variant, "raised": _describe_error(exc), "digests": digests,
                        "saved": saved, "seconds": time.perf_counter() - started})
            return
        self.reply({"case": case_id, "variant": variant, "raised": None, "digests": digests, "saved": saved,
                    "seconds": time.perf_counter() - started})

    def case(self, case_id):
        from tfdet.probe.cases_dense import DENSE_CASES, combine, gradient_body, upstream_for

        tf, np, arm = self.tf, self.np, self.arm
        spec = DENSE_CASES[case_id]
        try:
            built = spec.builder(tf, np, np.random.RandomState(int(arm["seed"])))
            upstream = upstream_for(tf, np, built, int(arm["seed"])) if spec.gradient else None
        except Exception as exc:
            self.reply({"case": case_id, "variant": "main", "raised": _describe_error(exc), "digests": [],
                        "saved": {}, "seconds": 0.0})
            return
        tensors = [tf.constant(x) for x in built.inputs]
        if "main" in arm["variants"]:
            body = gradient_body(tf, built, tf.constant(upstream)) if spec.gradient else built.fn
            body = wrap(tf, body, arm["execution"])
            self.repeat(case_id, "main", lambda: combine(np, body(*tensors)))
        if "alone" in arm["variants"] and spec.batched and not spec.gradient:
            alone = [tf.constant(x[:1]) if i in spec.batched else tf.constant(x) for i, x in enumerate(built.inputs)]
            body = wrap(tf, built.fn, arm["execution"])
            self.repeat(case_id, "alone", lambda: combine(np, body(*alone)))
        if arm.get("replicas") and spec.replicas:
            # One replica count above 1 per process: two MirroredStrategy instances of
            # different sizes in one process collide in the collective group they share.
            for count in arm["replicas"]:
                step = replicated_step(tf, np, spec, built, upstream, self.strategy(int(count)))
                self.repeat(case_id, "replicas=%d" % count, step)
                if int(count) > 1:  # the all-reduce alone: every replica the same batch, their mean
                    step = replicated_step(tf, np, spec, built, upstream, self.strategy(int(count)), split=False)
                    self.repeat(case_id, "mirrored=%d" % count, step)


def replicated_step(tf, np, spec, built, upstream, strategy, split=True):
    """The case's gradient as a data-parallel step: the global batch (the spec's batched
    inputs and the upstream gradient, along axis 0) split across the MirroredStrategy's
    replicas on logical CPU devices, each replica's gradients summed by the strategy's
    all-reduce (what an optimizer's apply does). split=False: every replica gets the
    whole batch and the all-reduce takes their mean, which isolates the all-reduce's
    own order (the mean of K equal values is exact for K = 1, 2). Returns replica 0's result."""
    from tfdet.probe.cases_dense import combine

    count = strategy.num_replicas_in_sync
    batched = sorted(spec.batched)
    if split:
        shards = [[np.array_split(built.inputs[i], count)[r] for i in batched] + [np.array_split(upstream, count)[r]]
                  for r in range(count)]
    else:
        shards = [[built.inputs[i] for i in batched] + [upstream] for _ in range(count)]
    constants = [tf.constant(x) for x in built.inputs]

    def shard(context):
        return tuple(tf.constant(x) for x in shards[context.replica_id_in_sync_group])

    values = strategy.experimental_distribute_values_from_function(shard)

    def replica(*args):
        xs = list(constants)
        for position, i in enumerate(batched):
            xs[i] = args[position]
        up = args[-1]
        with tf.GradientTape() as tape:
            for i in built.wrt:
                tape.watch(xs[i])
            y = built.fn(*xs)
        grads = tape.gradient(y, [xs[i] for i in built.wrt], output_gradients=up)
        grads = [tf.convert_to_tensor(g) for g in grads]
        return tf.distribute.get_replica_context().all_reduce("sum" if split else "mean", grads)

    @tf.function
    def step():
        return strategy.experimental_local_results(strategy.run(replica, args=values))[0]

    return lambda: combine(np, step())


def main():
    protocol = _protocol_stream()

    def reply(obj):
        protocol.write(json.dumps(obj) + "\n")
        protocol.flush()

    arm = json.loads(sys.stdin.readline())
    started = time.perf_counter()
    import warnings

    warnings.simplefilter("ignore")
    try:
        import numpy as np
        import tensorflow as tf

        cluster = configure(tf, arm)
    except Exception as exc:
        reply({"fatal": True, "error": _describe_error(exc), "traceback": traceback.format_exc()})
        return 4
    from tfdet.probe import environment

    reply({"hello": True, "import_seconds": time.perf_counter() - started,
           "environment": environment.describe(tf, np)})
    runner = Runner(tf, np, arm, reply, cluster)
    for case_id in arm["cases"]:
        try:
            runner.case(case_id)
        except Exception as exc:  # a bug in a case: say so and go on with the next
            reply({"case": case_id, "variant": "main", "raised": _describe_error(exc), "digests": [], "saved": {},
                   "seconds": 0.0, "traceback": traceback.format_exc()})
    reply({"bye": True})
    return 0


if __name__ == "__main__":
    sys.exit(main())
