#!/usr/bin/env python
"""Every speed figure of tfdet against its target, in one run.

    python benchmarks/run_all.py --quick [--skip probe,suite,...] [--suite-log FILE]
                                 [--markdown] [--write-readme]
    python benchmarks/run_all.py --full

Each figure comes from the benchmark that owns it, imported as a module (no
copy): bench_startup (patch import overhead), bench_replacements (replacement
ratios per plan, in a tf.function and eagerly), bench_locate (locate's capture
against a step), bench_op_callback (patch()'s op callback); the probe's wall
time is the README's main command (`tfdet probe --report report.html`) run in a
fresh directory; the test suite's time is read from a saved pytest output
(--suite-log: its last line, "N passed ... in S s") or, with --full, measured
by running `python -m pytest -q`.

Every figure is printed as a ratio or a time with its interval (ratio of
medians with a 95% bootstrap interval, tfdet.results.stats.ratio_interval;
a single run has none and says so), its target and where the target comes
from, and "met" or "not met (why)". Beside each: the machine's 1-minute load
average (os.getloadavg) before and after, since this project's machines are
shared: a figure taken at a load above the core count is slower than the same
code on an idle machine, and a ratio less so (both sides share the load).

--quick: few rounds, this machine's plan for every replacement it installs
and the order-fixed path for the three cells issue 30 names; a few minutes
plus the probe's own time. --full: the default rounds of each benchmark and
every replacement. --markdown prints the table as Markdown; --write-readme
writes it between the markers of README.md's Performance section (see
readme_section()). No assertions: this is a measurement.
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, ROOT)
sys.path.insert(0, HERE)

START, END = "<!-- run_all.py:start -->", "<!-- run_all.py:end -->"
FIGURES = ("probe", "suite", "import", "replacements", "locate", "callback")

# Targets and where each comes from.
PROBE_TARGET_S = 120.0  # issue 30 item 1: the README's main command <= 2 minutes on an idle 2-core machine
SUITE_TARGET_S = 300.0  # issue 30 item 2: the README's test command <= 5 minutes
IMPORT_TARGET_S = 0.3  # docs/topics/patch.md: patch() adds about 0.1-0.3 s to `import tensorflow`
HERE_TARGET = 1.2  # issue 30 item 4: every replacement of this machine's plan, eager and tf.function
ORDER_FIXED_TARGET = 5.0  # issue 30 item 4: order-fixed GPU plans (TF < 2.7), every cell
LOCATE_TARGET = 1.5  # issue 30 item 3: the Keras CNN step of bench_locate.py
CALLBACK_STEP_TARGET = 1.05  # docs/topics/patch.md: "nothing measurable on a tf.function training step"
CALLBACK_EAGER_TARGET_US = 1.5  # docs/topics/patch.md: "about 1-1.5 us per eager op"
QUICK_ORDER_FIXED = ("bincount", "crop_and_resize", "resize_nearest")  # the cells issue 30 names


class Figure(object):
    """One figure: what, the measured value as text, the target as text, met (True/False/None) and why."""

    def __init__(self, name, value, target, met, why="", load=None):
        self.name, self.value, self.target, self.met, self.why, self.load = name, value, target, met, why, load

    def verdict(self):
        if self.target.startswith("-"):
            return "no target"
        if self.met is None:
            return "not measured (%s)" % self.why if self.why else "not measured"
        return "met" if self.met else "not met (%s)" % self.why


def _load():
    try:
        return os.getloadavg()[0]
    except OSError:  # pragma: no cover - no load average on this platform
        return float("nan")


def _interval(interval):
    return "%.2fx [%.2f, %.2f]" % (interval["ratio"], interval["low"], interval["high"])


# --------------------------------------------------------------------------- the figures


def probe_figure(quick):
    """The README's main command, timed in a fresh directory (one run with --quick, three with --full)."""
    runs = 1 if quick else 3
    seconds, failed = [], None
    for _ in range(runs):
        workdir = tempfile.mkdtemp(prefix="run_all_probe_")
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "tfdet", "probe", "--report", "report.html"], cwd=workdir,
                              env=dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")),
                              capture_output=True, text=True)
        seconds.append(time.perf_counter() - started)
        shutil.rmtree(workdir, ignore_errors=True)
        if done.returncode:
            failed = "exit code %d: %s" % (done.returncode, (done.stderr.strip().splitlines() or [""])[-1])
            break
    value = "%.0f s" % seconds[0] if len(seconds) == 1 else "median %.0f s (%.0f-%.0f s, %d runs)" % (
        sorted(seconds)[len(seconds) // 2], min(seconds), max(seconds), len(seconds))
    if failed:
        return [Figure("probe: README main command", value, "<= 120 s idle (issue 30)", False, failed)]
    median = sorted(seconds)[len(seconds) // 2]
    note = "one run, no interval" if len(seconds) == 1 else ""
    met = median <= PROBE_TARGET_S
    return [Figure("probe: README main command (`tfdet probe --report report.html`)",
                   value + (" (%s)" % note if note else ""), "<= 120 s idle (issue 30)", met,
                   "" if met else "%.0f s over" % (median - PROBE_TARGET_S))]


_PYTEST_TAIL = re.compile(r"(\d+) passed.* in ([0-9.]+)s")


def suite_seconds(text):
    """(passed, seconds) from a pytest output's last summary line, or None."""
    found = None
    for line in text.splitlines():
        match = _PYTEST_TAIL.search(line)
        if match:
            found = (int(match.group(1)), float(match.group(2)))
    return found


def suite_figure(quick, log):
    name = "test suite: README test command (`python -m pytest`)"
    target = "<= 300 s idle (issue 30)"
    if quick and not log:
        return [Figure(name, "-", target, None, "run with --full, or pass --suite-log with a saved pytest output")]
    if log:
        with open(log, encoding="utf-8") as handle:
            found = suite_seconds(handle.read())
        source = "read from %s" % log
    else:
        done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=ROOT,
                              capture_output=True, text=True)
        found = suite_seconds(done.stdout)
        source = "one run"
    if found is None:
        return [Figure(name, "-", target, None, "no pytest summary line found")]
    passed, seconds = found
    met = seconds <= SUITE_TARGET_S
    return [Figure(name, "%.0f s, %d tests (%s, no interval)" % (seconds, passed, source), target, met,
                   "" if met else "%.0f s over: both cores are already busy with the suite's TensorFlow processes "
                   "(docs/development.md, where the time goes)" % (seconds - SUITE_TARGET_S))]


def import_figure(quick):
    import bench_startup

    from tfdet.results import stats

    timed = bench_startup.measure(pairs=3 if quick else 7, tfdet_path=ROOT)
    added = sorted(b - a for a, b in zip(timed["base"], timed["with_patch"]))
    interval = stats.ratio_interval(timed["base"], timed["with_patch"])
    median_added = added[len(added) // 2]
    met = median_added <= IMPORT_TARGET_S
    return [Figure("patch import overhead: `import tensorflow` + `import tfdet; tfdet.patch()`",
                   "+%.2f s (median of %d interleaved pairs; %s the import alone)" % (
                       median_added, len(added), _interval(interval)),
                   "<= +0.3 s (docs/topics/patch.md)", met, "" if met else "median %.2f s added" % median_added)]


def replacement_figures(quick):
    import bench_replacements as bench

    from tfdet.patching.plan_preview import preview
    from tfdet.results import stats

    here_plan, gpu_plan = preview().plan, preview(device="gpu").plan
    every = bench.settings(here_plan, gpu_plan)
    installed = sorted(here_plan.replacements)
    figures = []
    rounds = 7 if quick else 11
    size = 1e6
    # this machine's plan: every replacement it installs, in a tf.function and eagerly
    words = {registry: word for word, registry in bench.PATCH_OF.items()}
    only = [words.get(name, name) for name in installed]  # the benchmarks' first words (bench.patch_of)
    here = bench.run(size, rounds, {"here": every["here"]}, only=only, passes=bench.PASSES) if only else {}
    for (name, kind), samples in here.items():
        if bench.patch_of(name) not in installed:
            continue
        interval = stats.ratio_interval(samples["stock"], samples["here"])
        met = interval["ratio"] <= HERE_TARGET
        figures.append(Figure("replacement, this machine's plan: %s, %s" % (name, kind), _interval(interval),
                              "<= 1.2x stock (issue 30)", met, "" if met else "ratio of medians above 1.2x; stock sums on both "
                              "cores, the fixed-order sum's kernels cost 1.1-1.2x its CPU (docs/topics/patch.md, "
                              "weighted bincount on a CPU)"))
    # the order-fixed path (GPU plans of TF < 2.7): the cells issue 30 names (--quick) or every one
    only = list(QUICK_ORDER_FIXED) if quick else None
    # with the opt-in fixed-point sums (primitive.set_order_fixed_sum("fixed_point")) timed in the same rounds
    fixed = bench.run(size, rounds, {"order_fixed": every["order_fixed"], "fixed_point": every["fixed_point"]},
                      only=only, passes=bench.FUNCTION_PASSES)
    for (name, kind), samples in fixed.items():
        interval = stats.ratio_interval(samples["stock"], samples["order_fixed"])
        opt_in = stats.ratio_interval(samples["stock"], samples["fixed_point"])
        met = interval["ratio"] <= ORDER_FIXED_TARGET
        figures.append(Figure("replacement, order-fixed path (GPU plans of TF < 2.7): %s, %s" % (name, kind),
                              _interval(interval), "<= 5x stock (issue 30)", met,
                              "" if met else "the sort of the order-fixed path (docs/topics/patch.md); opt-in "
                              "fixed-point sums %s" % _interval(opt_in)))
        met = opt_in["ratio"] <= ORDER_FIXED_TARGET
        figures.append(Figure("replacement, order-fixed path with opt-in fixed-point sums: %s, %s" % (name, kind),
                              _interval(opt_in), "<= 5x stock (issue 30, the opt-in alternative)", met,
                              "" if met else "docs/topics/patch.md, fixed-point sums"))
    return figures


def locate_figures(quick):
    import bench_locate

    figures = []
    for row in bench_locate.results(rounds=12 if quick else 30):
        cnn = row["step"].startswith("small Keras CNN")
        wall, cpu = row["wall"], row["cpu"]
        value = "%s (CPU time %s; step %.1f ms)" % (_interval(wall), _interval(cpu), row["plain_ms"])
        if cnn:
            # both the step's wall time and its CPU time (which a loaded machine does not inflate)
            met = max(wall["ratio"], cpu["ratio"]) <= LOCATE_TARGET
            figures.append(Figure("locate capture: %s" % row["step"], value, "<= 1.5x the step, wall and CPU (issue 30)",
                                  met, "" if met else "hashing the outputs folding leaves (docs/topics/locate.md)"))
        else:
            figures.append(Figure("locate capture: %s" % row["step"], value, "- (no target)", None, ""))
    return figures


def callback_figures(quick):
    import bench_op_callback

    from tfdet.results import stats

    results = bench_op_callback.measure(rounds=2 if quick else 5, steps=100 if quick else 300,
                                        eager_ops=5000 if quick else 20000)
    steps_with = [r["step"] for r in results["with"]]
    steps_without = [r["step"] for r in results["without"]]
    interval = stats.ratio_interval(steps_without, steps_with)
    eager_with = sorted(r["eager_op"] for r in results["with"])
    eager_without = sorted(r["eager_op"] for r in results["without"])
    added_us = (eager_with[len(eager_with) // 2] - eager_without[len(eager_without) // 2]) * 1e6
    step_met = interval["ratio"] <= CALLBACK_STEP_TARGET
    eager_met = added_us <= CALLBACK_EAGER_TARGET_US
    return [
        Figure("patch()'s op callback: tf.function training step", _interval(interval),
               "<= 1.05x (docs/topics/patch.md)", step_met, "" if step_met else "ratio of medians above 1.05x"),
        Figure("patch()'s op callback: one eager op (tf.add)", "%+.2f us (median of %d processes an arm)" % (
            added_us, len(eager_with)), "<= +1.5 us (docs/topics/patch.md)", eager_met,
            "" if eager_met else "%.2f us added" % added_us),
    ]


def measure(quick=True, skip=(), suite_log=None, log=sys.stderr):
    """[Figure, ...] for every figure not skipped, each with the load before and after it."""
    makers = {"probe": lambda: probe_figure(quick), "suite": lambda: suite_figure(quick, suite_log),
              "import": lambda: import_figure(quick), "replacements": lambda: replacement_figures(quick),
              "locate": lambda: locate_figures(quick), "callback": lambda: callback_figures(quick)}
    figures = []
    for key in FIGURES:
        if key in skip:
            continue
        before, started = _load(), time.perf_counter()
        made = makers[key]()
        after = _load()
        for figure in made:
            figure.load = (before, after)
        figures.extend(made)
        log.write("run_all: %s done in %.0f s\n" % (key, time.perf_counter() - started))
        log.flush()
    return figures


# --------------------------------------------------------------------------- output


def table(figures, markdown=False):
    header = ("figure", "measured", "target", "verdict", "load (1 min, before-after)")
    rows = [(f.name, f.value, f.target, f.verdict(),
             "-" if f.load is None else "%.1f-%.1f" % f.load) for f in figures]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines.extend("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows)
        return "\n".join(lines)
    lines = []
    for row in rows:
        lines.append("%s\n    %s  | target %s | %s | load %s" % row)
    return "\n".join(lines)


def header_line(quick):
    import platform

    return "%s, python %s, %d CPUs, %s; `python benchmarks/run_all.py %s` at %s UTC" % (
        platform.platform(terse=True), platform.python_version(), os.cpu_count() or 0, _tf_version(),
        "--quick" if quick else "--full", time.strftime("%Y-%m-%d %H:%M", time.gmtime()))


def _tf_version():
    try:
        import tensorflow as tf

        return "TF %s" % tf.__version__
    except ImportError:  # pragma: no cover
        return "no TF"


def readme_section(text, body):
    """README text with `body` between the Performance section's markers (ValueError if they are missing)."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError("README.md has no %s ... %s markers" % (START, END))
    return text[:start + len(START)] + "\n" + body.strip("\n") + "\n" + text[end:]


def readme_body(text):
    """What is between the markers now (the inverse of readme_section)."""
    start, end = text.find(START), text.find(END)
    if start < 0 or end < start:
        raise ValueError("README.md has no %s ... %s markers" % (START, END))
    return text[start + len(START):end].strip("\n")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="few rounds, the cells issue 30 names (default)")
    mode.add_argument("--full", action="store_true", help="every benchmark at its default rounds; runs the suite")
    parser.add_argument("--skip", default="", help="comma-separated figures to leave out: " + ",".join(FIGURES))
    parser.add_argument("--suite-log", help="a saved pytest output to read the test suite's time from")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    parser.add_argument("--write-readme", action="store_true",
                        help="write the Markdown table between the markers of README.md's Performance section")
    args = parser.parse_args(argv)
    skip = [s.strip() for s in args.skip.split(",") if s.strip()]
    unknown = [s for s in skip if s not in FIGURES]
    if unknown:
        parser.error("--skip takes a comma-separated subset of %s, got %r" % (",".join(FIGURES), args.skip))
    quick = not args.full
    figures = measure(quick, skip, args.suite_log)
    heading = header_line(quick)
    if args.markdown or args.write_readme:
        body = heading + ". Load: the machine's 1-minute load average (2 cores; shared).\n\n" + table(
            figures, markdown=True)
        if args.write_readme:
            path = os.path.join(ROOT, "README.md")
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(readme_section(text, body))
        print(body)
    else:
        print(heading)
        print(table(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
