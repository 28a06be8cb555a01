"""The default subset's cost: its quick runs against separate stock and patched runs.

    python corpus/subset_cost.py quick|forked|classic OUTDIR

Makes the runs promises a and b need, at 2 steps, for every program whose EXPECT says it
varies stock, 2 processes at a time, into OUTDIR; prints their wall time and the CPU
seconds of all the processes (load-independent: compare the modes by it). forked: the
quick runs as the default suite makes them, forked from a process that imported
TensorFlow (tests/fresh_python.py; its server's CPU included)."""

import os
import resource
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from corpus.harness import programs, promises  # noqa: E402


def main(argv):
    mode, out = argv
    varying = [n for n in programs.names() if programs.expect(n)["varies_stock"]]
    if mode == "forked":
        sys.path.insert(0, os.path.join(ROOT, "tests"))
        sys.path.insert(0, os.path.join(ROOT, "tests", "corpus"))
        import fresh_python
        from test_promises import plain_then_forked as runner_for
    else:
        runner_for = None
    ws = promises.Workspace(os.path.join(out, "results.jsonl"), timeout=900, steps=2, jobs=2, quick=mode != "classic",
                            runner_for=runner_for)
    started = time.perf_counter()
    ws.prepare(*varying)
    if mode == "forked":
        fresh_python.close(promises.launch.environ())  # reaped, so its children's CPU is counted
        if fresh_python._plain:
            print("%d runs were not forked: %s" % (len(fresh_python._plain), fresh_python._plain[0]))
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    print("%s: %d programs, %d processes, %.0f s wall, %.0f s CPU (children)" % (
        mode, len(varying), sum(len(ws.runs(n)) for n in varying), time.perf_counter() - started,
        usage.ru_utime + usage.ru_stime))


if __name__ == "__main__":
    main(sys.argv[1:])
