"""What `import tfdet; tfdet.patch()` adds to a script's start-up.

Runs fresh interpreters in interleaved pairs (A B A B ..., so machine drift
cancels): A imports TensorFlow alone, B imports it and patches. Prints each
side's median wall time, the median of the per-pair differences and the ratio.

    python benchmarks/bench_startup.py [--pairs 7] [--seed] [--tfdet-path DIR] [--cold]

--tfdet-path puts another tfdet source tree first on PYTHONPATH (e.g. an older
commit exported with `git archive <commit> tfdet | tar -x -C /tmp/old`), to
measure before and after on the same machine.
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

BASE = "import tensorflow"
# B also times its own `import tfdet; tfdet.patch()` from inside: the same cost
# without the noise of two whole interpreter start-ups. It also times the full
# garbage collections in that span: with TensorFlow's ~330k objects loaded one
# takes ~0.15 s, and any ~20k new objects (ours, or the program's first model)
# set one off, so it is shown apart.
PATCHED = """\
import gc, time
import tensorflow
full = []
def _timer(phase, info):
    if phase == "start":
        _timer.started = time.perf_counter()
    elif info["generation"] == 2:
        full.append(time.perf_counter() - _timer.started)
gc.callbacks.append(_timer)
started, cpu_started = time.perf_counter(), time.process_time()
import tfdet
tfdet.patch(%s)
print("INSIDE", time.perf_counter() - started, sum(full), time.process_time() - cpu_started)
"""


def _children_cpu():
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def wall(code, environ, cwd, cpu_seconds=None):
    """(wall seconds of a fresh interpreter running code, what it printed); its CPU seconds (user +
    system, every thread) appended to cpu_seconds: a figure that does not grow with the machine's load."""
    started, cpu_started = time.perf_counter(), _children_cpu()
    done = subprocess.run([sys.executable, "-c", code], check=True, env=environ, capture_output=True, text=True,
                          cwd=cwd)
    if cpu_seconds is not None:
        cpu_seconds.append(_children_cpu() - cpu_started)
    return time.perf_counter() - started, done.stdout


def measure(pairs=7, seed=False, tfdet_path=None, cold=False):
    """{"base", "with_patch", "inside", "collecting", and *_cpu}: seconds per interleaved pair (see main).
    The shipped catalogue's parsed files are kept between processes (tfdet.catalog.parsed_cache): by
    default an untimed patched run first stores them, as any earlier run of a program does; cold=True
    gives every patched run an empty cache directory instead (a machine's first run)."""
    environ = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    # Byte code as an installed package has it (pip compiles it; TensorFlow's is there): with
    # PYTHONDONTWRITEBYTECODE set, as on this project's machines, every run compiled tfdet's
    # modules from source, about 0.05 s of CPU time that no installed tfdet costs. The untimed
    # first runs below write it (into __pycache__, ignored by git).
    environ.pop("PYTHONDONTWRITEBYTECODE", None)
    if tfdet_path:
        environ["PYTHONPATH"] = os.path.abspath(tfdet_path) + os.pathsep + environ.get("PYTHONPATH", "")
    patched = PATCHED % ("seed=0, quiet=True" if seed else "quiet=True")
    # An empty working directory: `python -c` puts it first on sys.path, where
    # a checkout's tfdet/ would shadow the one being measured.
    cwd = tempfile.mkdtemp(prefix="bench_startup_")
    wall(BASE, environ, cwd)  # warm the file cache once, untimed
    caches = tempfile.mkdtemp(prefix="bench_startup_cache_")
    patched_environ = dict(environ, TFDET_CACHE_DIR=caches)
    # untimed: writes tfdet's byte code and (unless cold) stores the parsed catalogue
    wall(patched, dict(patched_environ, TFDET_CACHE_DIR=os.path.join(caches, "first")) if cold else patched_environ, cwd)
    base, with_patch, inside, collecting = [], [], [], []
    base_cpu, with_patch_cpu, inside_cpu = [], [], []
    for index in range(pairs):
        base.append(wall(BASE, environ, cwd, base_cpu)[0])
        if cold:
            patched_environ["TFDET_CACHE_DIR"] = os.path.join(caches, str(index))
        seconds, printed = wall(patched, patched_environ, cwd, with_patch_cpu)
        with_patch.append(seconds)
        spent, in_gc, cpu = printed.split("INSIDE")[1].split()
        inside.append(float(spent))
        collecting.append(float(in_gc))
        inside_cpu.append(float(cpu))
    os.rmdir(cwd)
    shutil.rmtree(caches, ignore_errors=True)
    return {"base": base, "with_patch": with_patch, "inside": inside, "collecting": collecting,
            "base_cpu": base_cpu, "with_patch_cpu": with_patch_cpu, "inside_cpu": inside_cpu}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=7)
    parser.add_argument("--seed", action="store_true", help="patch(seed=0) rather than patch()")
    parser.add_argument("--tfdet-path", help="a tfdet source tree to measure instead of the installed one")
    parser.add_argument("--cold", action="store_true",
                        help="every patched run with an empty catalogue cache (a machine's first run)")
    args = parser.parse_args(argv)
    timed = measure(args.pairs, args.seed, args.tfdet_path, args.cold)
    base, with_patch, inside, collecting = (timed[k] for k in ("base", "with_patch", "inside", "collecting"))
    differences = [b - a for a, b in zip(base, with_patch)]
    print("pairs: %d (interleaved), python %s" % (args.pairs, sys.version.split()[0]))
    print("import tensorflow                       median %.3f s" % statistics.median(base))
    print("import tensorflow + tfdet.patch(%s)  median %.3f s" % (
        "seed=0" if args.seed else "", statistics.median(with_patch)))
    print("added by tfdet: median of pair differences %.3f s (ratio of medians %.3f)" % (
        statistics.median(differences), statistics.median(with_patch) / statistics.median(base)))
    print("import tfdet + patch() timed inside the process: median %.3f s (min %.3f, max %.3f)" % (
        statistics.median(inside), min(inside), max(inside)))
    print("  of which full garbage collections: median %.3f s; without them: median %.3f s" % (
        statistics.median(collecting), statistics.median(a - b for a, b in zip(inside, collecting))))
    base_cpu, with_patch_cpu = timed["base_cpu"], timed["with_patch_cpu"]
    print("CPU seconds (user + system of the interpreters): import tensorflow median %.3f s, with tfdet.patch() "
          "median %.3f s; added: median of pair differences %.3f s; inside the process: median %.3f s" % (
              statistics.median(base_cpu), statistics.median(with_patch_cpu),
              statistics.median(b - a for a, b in zip(base_cpu, with_patch_cpu)),
              statistics.median(timed["inside_cpu"])))
    print("load (1 min): %.1f" % os.getloadavg()[0])


if __name__ == "__main__":
    main()
