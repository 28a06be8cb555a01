#!/usr/bin/env python
"""How often assert_reproducible catches a step that varies, on this machine.

    python benchmarks/detection_rate.py [--attempts 20] [--runs 2] [--repeats 10] [--markdown]
    python benchmarks/detection_rate.py --windows 40 [--repeats 10] [--markdown]

Two real varying steps from examples/locate/steps.py: a stock
Variable.scatter_sub with repeated indices, and a weighted tf.math.bincount.
For each, first its per-run rate here: the step's output hashed over
--rate-calls calls in this process (no capture), and the share of calls whose
output is not the most common one. Then `--attempts` calls of
tfdet.testing.assert_reproducible with the given runs and repeats: the share
that failed naming the step's op is the detection rate, given with a 95%
Wilson interval. No assertions: this is a measurement.

--windows N measures the same thing for a machine too busy for N x 2 fresh
TensorFlow start-ups: two processes each call the step N x repeats times with
capture on (what assert_reproducible's processes do, for longer), every call
is compared with the same call of the other process (tfdet.locating.align),
and each block of `repeats` consecutive calls is one attempt: caught when any
of its comparisons differed. It also gives the share of compared calls that
differed (the pairwise rate).

--probe N runs the README's main command (`tfdet probe --report report.html`,
each run its own --out in --dir) N times, one after another, and counts the
runs where weighted bincount varied under both baseline and env; with
--against FILE (a results file of another version, e.g. main's) it also
compares the set of (case, pass, mode) cells that varied in each run with that
file's. --files F... does the same for results files already written.
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
    """Share of `calls` whose varying output (the scattered table, the bincount) differs from
    the most common one: plain TF, no capture, in this process."""
    import numpy as np
    import tensorflow as tf
    from tensorflow.python.ops import resource_variable_ops

    seen = collections.Counter()
    variables = resource_variable_ops.BaseResourceVariable  # what tf.Variable(...) makes
    originals = {"scatter_sub": (variables, variables.scatter_sub), "bincount": (tf.math, tf.math.bincount)}
    for _ in range(calls):
        outputs = []

        def keeping(name, original, outputs=outputs):
            def keep(self_or_first, *args, **kwargs):
                result = original(self_or_first, *args, **kwargs)
                outputs.append(self_or_first.numpy() if name == "scatter_sub" else result.numpy())
                return result
            return keep
        for name, (owner, original) in originals.items():
            setattr(owner, name, keeping(name, original))
        try:
            step()
        finally:
            for name, (owner, original) in originals.items():
                setattr(owner, name, original)
        data = np.concatenate([np.ravel(o) for o in outputs])
        seen[hashlib.blake2b(np.ascontiguousarray(data).tobytes(), digest_size=8).hexdigest()] += 1
    return 1.0 - seen.most_common(1)[0][1] / float(calls)


def windows(step, count, repeats):
    """(attempts caught, attempts, compared calls that differed, compared calls, median s per call)."""
    import shutil
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    from tfdet.locating import align, runs

    target = runs.function_target(step, (), {})
    workdir = tempfile.mkdtemp(prefix="tfdet-detection-")
    try:
        with ThreadPoolExecutor(2) as pool:
            a, b = pool.map(lambda index: runs.run_once(target, workdir, index, repeats=count * repeats), (0, 1))
        calls = min(len(a), len(b))
        differed = []
        for call in range(calls):
            (run_a, _), (run_b, _) = a[call], b[call]
            comparison = align.compare(run_a, run_b)
            differed.append(bool(comparison.roots or comparison.spread))
        caught = sum(any(differed[start:start + repeats]) for start in range(0, calls - repeats + 1, repeats))
        # the old default, 3 runs (2 compared with the first), as windows of 2 comparisons of the same data
        old = sum(any(differed[start:start + 2]) for start in range(0, calls - 1, 2))
        seconds = sorted(outcome.seconds for _, outcome in a)
        return caught, calls // repeats, sum(differed), calls, seconds[len(seconds) // 2], old, calls // 2
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def wilson(hits, n, z=1.96):
    if n == 0:
        return 0.0, 1.0
    p = hits / float(n)
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def varying_cells(path):
    from tfdet.results import read_probe

    return {(r.case, r.pass_name, r.mode) for r in read_probe(path).measured if r.outcome == "varies"}


def probe_runs(count, directory, files, against):
    """The README's main command `count` times (or the `files` given): bincount caught, varying cells."""
    import subprocess

    reference = set().union(*(varying_cells(f) for f in against)) if against else None
    results = list(files or [])
    caught = 0
    for index in range(count):
        out = os.path.join(directory, "run-%d.jsonl" % index)
        load, began = os.getloadavg()[0], time.monotonic()
        done = subprocess.run([sys.executable, "-m", "tfdet", "probe", "--report", out[:-len(".jsonl")] + ".html",
                               "--out", out, "--overwrite", "--quiet"])
        print("run %d: rc %d, %.1f s, load %.1f -> %.1f" % (index, done.returncode, time.monotonic() - began, load,
                                                           os.getloadavg()[0]), flush=True)
        results.append(out)
    for path in results:
        cells = varying_cells(path)
        modes = {mode for case, _, mode in cells if case == "bincount"}
        caught += {"baseline", "env"} <= modes
        line = "%s: bincount varied under %s; %d cells varied" % (path, ", ".join(sorted(modes)) or "-", len(cells))
        if reference is not None:
            line += "; not in the reference: %s; only in the reference: %s" % (
                sorted(cells - reference) or "none", sorted(reference - cells) or "none")
        print(line, flush=True)
    print("bincount varied under baseline and env in %d of %d runs" % (caught, len(results)))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=20)
    parser.add_argument("--runs", type=int, default=2, help="processes per attempt")
    parser.add_argument("--repeats", type=int, default=10, help="calls in each process")
    parser.add_argument("--rate-calls", type=int, default=40)
    parser.add_argument("--windows", type=int, help="attempts as windows of two long processes (see above)")
    parser.add_argument("--only", choices=[op for _, _, op in STEPS])
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--probe", type=int, metavar="N", help="run the README's main command N times (see above)")
    parser.add_argument("--files", nargs="+", help="results files to judge as --probe judges its own")
    parser.add_argument("--against", nargs="+", help="results files whose varying cells are the reference")
    parser.add_argument("--dir", default=".", help="where --probe writes its results files")
    args = parser.parse_args(argv)
    if args.probe or args.files:
        return probe_runs(args.probe or 0, args.dir, args.files, args.against)
    rows = []
    for label, step, op in STEPS:
        if args.only and op != args.only:
            continue
        rate = per_run_rate(step, args.rate_calls)
        if args.windows:
            caught, count, differed, calls, per_call, old, old_count = windows(step, args.windows, args.repeats)
            low, high = wilson(caught, count)
            rows.append((label, rate, caught, count, low, high, "%d of %d calls differed from their counterpart; "
                         "with 2 comparisons (the old 3-run default) %d of %d caught; %.2f s per call" % (
                             differed, calls, old, old_count, per_call)))
            continue
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
        rows.append((label, rate, caught, args.attempts, low, high, "%.0f s per attempt (median)" % (
            seconds[len(seconds) // 2])))
    head = ("step", "per-run rate here (%d calls)" % args.rate_calls,
            "caught (%s x repeats=%d)" % ("2 processes, windows" if args.windows else "runs=%d" % args.runs,
                                          args.repeats), "95% interval", "cost")
    lines = [head] + [(label, "%.0f%%" % (100 * rate), "%d of %d" % (caught, n), "%.0f-%.0f%%" % (100 * lo, 100 * hi),
                       cost) for label, rate, caught, n, lo, hi, cost in rows]
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
