"""Measure a corpus program's EXPECT: fresh stock runs and fresh runs under tfdet.patch().

    python corpus/check_program.py NAME [--stock 2] [--patched 3] [--steps N] [--jobs 1]

Each run is its own process (TensorFlow reads its determinism switches once per
process), --jobs at a time (default one after another: the machine is shared). Prints one line per run
(mode, wall and CPU seconds, sha256) and one summary line per mode with the distinct hashes.
A small stand-in until the corpus harness replaces it.
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Patch first, then run the program as __main__ (patch() must come before any op).
PATCHED = ("import sys, runpy, tfdet; tfdet.patch(); "
           "sys.argv = sys.argv[1:]; runpy.run_path(sys.argv[0], run_name='__main__')")


def run_once(name, patched, extra):
    path = os.path.join("corpus", "programs", name + ".py")
    argv = ([sys.executable, "-c", PATCHED, path] if patched else [sys.executable, path]) + extra
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.monotonic()
        child = subprocess.Popen(argv, cwd=ROOT, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(child.pid, 0)     # this child's own CPU time
        seconds = (time.monotonic() - start, usage.ru_utime + usage.ru_stime)
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            return seconds, "failed rc=%d: %s" % (os.waitstatus_to_exitcode(status), err.read().strip()[-300:])
        return seconds, json.loads(out.read().strip().splitlines()[-1])["sha256"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name")
    parser.add_argument("--stock", type=int, default=2)
    parser.add_argument("--patched", type=int, default=3)
    parser.add_argument("--steps", type=int)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args()
    extra = [] if args.steps is None else ["--steps", str(args.steps)]
    pool = concurrent.futures.ThreadPoolExecutor(args.jobs)
    for mode, count in (("stock", args.stock), ("patched", args.patched)):
        hashes = []
        runs = [pool.submit(run_once, args.name, mode == "patched", extra) for _ in range(count)]
        for run in concurrent.futures.as_completed(runs):
            seconds, sha = run.result()
            hashes.append(sha)
            print("%-8s %6.1fs wall %6.1fs cpu  %s" % ((mode,) + seconds + (sha[:16] if len(sha) == 64 else sha,)),
                  flush=True)
        if count:
            print("%s: %d runs, %d distinct" % (mode, count, len(set(hashes))), flush=True)


if __name__ == "__main__":
    main()
