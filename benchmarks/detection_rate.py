#!/usr/bin/env python
"""How often assert_reproducible catches a step that varies, on this machine.

    python benchmarks/detection_rate.py [--attempts 20] [--runs 2] [--repeats 10] [--markdown]

Two real varying steps from examples/locate/steps.py: a stock
Variable.scatter_sub with repeated indices, and a weighted tf.math.bincount.
For each, first its per-run rate here: the step's output hashed over
--rate-calls calls in this process (no capture), and the share of calls whose
output is not the most common one. Then `--attempts` calls of
tfdet.testing.assert_reproducible with the given runs and repeats: the share
that failed naming the step's op is the detection rate, given with a 95%
Wilson interval. No assertions: this is a measurement.
"""

import argparse
import collections
import hashlib
import math
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples", "locate"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import steps  # noqa: E402 - examples/locate/steps.py: importable, so each process imports it again

from tfdet.testing import assert_reproducible  # noqa: E402

STEPS = [("Variable.scatter_sub, repeated indices", steps.scatter_sub_step, "ResourceScatterSub"),
         ("weighted tf.math.bincount", steps.weighted_bincount_step, "Bincount")]


def per_run_rate(step, calls):
    """Share of `calls` whose output differs from the most common output (plain TF, no capture)."""
    import numpy as np
    import tensorflow as tf

    seen = collections.Counter()
    original = tf.Variable.scatter_sub

    for _ in range(calls):
        outputs = []

        def keep(self, sparse_delta, *args, outputs=outputs, **kwargs):  # the table, not only its sum
            result = original(self, sparse_delta, *args, **kwargs)
            outputs.append(self.numpy())
            return result

        tf.Variable.scatter_sub = keep
        try:
            total = step()
        finally:
            tf.Variable.scatter_sub = original
        data = outputs[0] if outputs else np.float64(total)
        seen[hashlib.blake2b(np.ascontiguousarray(data).tobytes(), digest_size=8).hexdigest()] += 1
    return 1.0 - seen.most_common(1)[0][1] / float(calls)


def wilson(hits, n, z=1.96):
    if n == 0:
        return 0.0, 1.0
    p = hits / float(n)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=20)
    parser.add_argument("--runs", type=int, default=2, help="processes per attempt")
    parser.add_argument("--repeats", type=int, default=10, help="calls in each process")
    parser.add_argument("--rate-calls", type=int, default=40)
    parser.add_argument("--only", choices=[op for _, _, op in STEPS])
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args(argv)
    rows = []
    for label, step, op in STEPS:
        if args.only and op != args.only:
            continue
        rate = per_run_rate(step, args.rate_calls)
        caught, seconds, other = 0, [], 0
        for attempt in range(args.attempts):
            began = time.monotonic()
            try:
                assert_reproducible(step, runs=args.runs, repeats=args.repeats)
            except AssertionError as failed:
                if op in str(failed):
                    caught += 1
                else:
                    other += 1
                    print("attempt %d failed, not naming %s: %s" % (attempt, op, failed), file=sys.stderr)
            seconds.append(time.monotonic() - began)
            print("%s: attempt %d, caught %d so far" % (label, attempt + 1, caught), file=sys.stderr, flush=True)
        low, high = wilson(caught, args.attempts)
        seconds.sort()
        rows.append((label, rate, caught, args.attempts, low, high, seconds[len(seconds) // 2]))
    head = ("step", "per-run rate here (%d calls)" % args.rate_calls,
            "caught (runs=%d x repeats=%d)" % (args.runs, args.repeats), "95% interval", "median s per attempt")
    lines = [head] + [(label, "%.0f%%" % (100 * rate), "%d of %d" % (caught, n), "%.0f-%.0f%%" % (100 * lo, 100 * hi),
                       "%.0f" % sec) for label, rate, caught, n, lo, hi, sec in rows]
    if args.markdown:
        print("| " + " | ".join(lines[0]) + " |")
        print("|" + "---|" * len(lines[0]))
        for line in lines[1:]:
            print("| " + " | ".join(line) + " |")
    else:
        for line in lines:
            print("  ".join(line))


if __name__ == "__main__":
    main()
