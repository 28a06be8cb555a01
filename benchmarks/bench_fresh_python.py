#!/usr/bin/env python
"""What a test's fresh interpreter costs: plain `python SCRIPT` against one forked
from the tests' TF server (tests/fresh_python.py).

    python benchmarks/bench_fresh_python.py [--pairs 3]

The script imports TensorFlow and tfdet, patches, runs one replaced op and prints
the CPU seconds of its own process (getrusage: a forked child starts at 0), which
hardly depend on the machine's load; the wall time and the load average are shown
beside. Pairs alternate plain and forked. The server's own start (one TF import a
test process) is paid once and shown first. No assertions: a measurement.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tests"))

import fresh_python  # noqa: E402

SCRIPT = """import tensorflow as tf
import tfdet
import resource
tfdet.patch(quiet=True)
print(float(tf.reduce_sum(tf.math.bincount([1, 2, 2], weights=[1.0, 2.0, 3.0]))))
usage = resource.getrusage(resource.RUSAGE_SELF)
print("CPU %.3f" % (usage.ru_utime + usage.ru_stime))
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=3)
    args = parser.parse_args(argv)
    scratch = tempfile.mkdtemp(prefix="bench-fresh-python-")
    path = os.path.join(scratch, "script.py")
    with open(path, "w") as handle:
        handle.write(SCRIPT)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    started = time.perf_counter()
    fresh_python.run(path, env, scratch, 900)
    print("server start and first run: %.1f s wall (load %.1f)" % (time.perf_counter() - started, os.getloadavg()[0]))
    cpu = {"plain": [], "forked": []}
    for _ in range(args.pairs):
        for mode in ("plain", "forked"):
            if mode == "plain":
                os.environ["TFDET_TESTS_FORK"] = "0"
            else:
                os.environ.pop("TFDET_TESTS_FORK", None)
            began = time.perf_counter()
            done = fresh_python.run(path, env, scratch, 900)
            seconds = float([line for line in done.stdout.splitlines() if line.startswith("CPU ")][0].split()[1])
            cpu[mode].append(seconds)
            print("%-6s CPU %.2f s, wall %.1f s, load %.1f" % (mode, seconds, time.perf_counter() - began,
                                                               os.getloadavg()[0]), flush=True)
    plain, forked = statistics.median(cpu["plain"]), statistics.median(cpu["forked"])
    print("median CPU a script: plain %.2f s, forked %.2f s (%.1fx less)" % (plain, forked, plain / forked))


if __name__ == "__main__":
    main()
