"""python -m corpus.harness [--programs a,b] [--promises a,b,...] [--out corpus/results.jsonl] [--table]

Checks each (program, promise) not yet in --out, in fresh processes, appending one
JSON line each; --table then rewrites the corpus table of docs/topics/corpus.md from --out.
--table alone (with --promises none) only rewrites the table."""

import argparse
import os
import signal
import sys
import time

from . import programs, promises, results, table


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m corpus.harness", description=__doc__.split("\n\n")[1])
    parser.add_argument("--programs", help="comma-separated names (default: every corpus/programs/*.py)")
    parser.add_argument("--promises", default=",".join(promises.PROMISES),
                        help="comma-separated, of %s, or 'none' (default: all)" % ",".join(promises.PROMISES))
    parser.add_argument("--out", default=os.path.join("corpus", "results.jsonl"))
    parser.add_argument("--redo", action="store_true", help="check again what --out already has")
    parser.add_argument("--timeout", type=float, default=promises.TIMEOUT, help="seconds per program run")
    parser.add_argument("--jobs", type=int, default=2, help="program runs at a time (promises a and b)")
    parser.add_argument("--steps", type=int, help="training steps of the runs of a and b (default: each program's STEPS)")
    parser.add_argument("--table", action="store_true", help="rewrite the corpus table of docs/topics/corpus.md from --out")
    args = parser.parse_args(argv)
    known = programs.names()
    names = args.programs.split(",") if args.programs else known
    wanted = [] if args.promises == "none" else args.promises.split(",")
    unknown = [n for n in names if n not in known] + [p for p in wanted if p not in promises.PROMISES]
    if unknown:
        print("corpus harness: unknown program or promise: %s" % ", ".join(unknown), file=sys.stderr)
        return 2
    ws = promises.Workspace(args.out, timeout=args.timeout, steps=args.steps, jobs=args.jobs)
    signal.signal(signal.SIGTERM, _interrupt)  # as Ctrl-C: the running program's processes go with the harness
    latest = results.read(args.out)
    started = time.perf_counter()
    try:
        for name in names:
            for promise in promises.PROMISES:  # in order: c, d, e lean on b and d
                if promise not in wanted or ((name, promise) in latest and not args.redo):
                    continue
                rec = promises.check(promise, name, ws, latest)
                results.append(args.out, rec)
                latest[(name, promise)] = rec
                print("%-22s %s %-8s %6.0fs  %s" % (name, promise, rec["status"], rec["seconds"], rec["detail"]),
                      flush=True)
    except KeyboardInterrupt:
        print("interrupted: finished records are in %s (run again to resume)" % args.out, file=sys.stderr)
        return 130
    if wanted:
        print("corpus harness: %.0f s" % (time.perf_counter() - started), flush=True)
    if args.table:
        print(table.write(results.read(args.out), programs.names()))
    bad = [r for r in results.read(args.out).values() if r["status"] in ("fail", "error")]
    return 1 if bad else 0


def _interrupt(signum, frame):
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
