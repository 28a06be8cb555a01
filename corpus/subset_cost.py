"""The default subset's cost: its quick runs against separate stock and patched runs.

    python corpus/subset_cost.py quick|classic OUTDIR

Makes the runs promises a and b need, at 2 steps, for every program whose EXPECT says it
varies stock, 2 processes at a time, into OUTDIR; prints their wall time and the CPU
seconds of all the processes (load-independent: compare the two modes by it)."""

import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from corpus.harness import programs, promises  # noqa: E402


def main(argv):
    mode, out = argv
    varying = [n for n in programs.names() if programs.expect(n)["varies_stock"]]
    ws = promises.Workspace(os.path.join(out, "results.jsonl"), timeout=900, steps=2, jobs=2, quick=mode == "quick")
    started = time.perf_counter()
    ws.prepare(*varying)
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("%s: %d programs, %d processes, %.0f s wall, %.0f s CPU (children)" % (
        mode, len(varying), sum(len(ws.runs(n)) for n in varying), time.perf_counter() - started,
        usage.ru_utime + usage.ru_stime))


if __name__ == "__main__":
    main(sys.argv[1:])
