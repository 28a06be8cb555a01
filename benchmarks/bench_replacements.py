#!/usr/bin/env python
"""Cost of the deterministic replacements against the stock ops, on this machine.

    python benchmarks/bench_replacements.py [--size N] [--rounds R] [--only NAME,...] [--plans P,...]
                                            [--gpu-machine] [--markdown]
    python benchmarks/bench_replacements.py --profile --only NAME,... [--plans here]

For each replacement, tf.functions are timed on the same inputs: the stock op
and the replacement as each plan runs it:

- "here": this machine's plan, what tfdet.patch() installs here (the plan of
  tfdet.patching.plan for the detected device; the primitive's "auto" method
  takes TF's own segment kernels where that plan says they are deterministic,
  and the CPU kernels of tfdet.patching.kernels where TF sees no GPU);
- "gpu": the GPU plan of the installed TF, what tfdet.patch(device="gpu")
  installs (the same, with the GPU plan's answer for TF's segment kernels: on
  TF >= 2.7 they are deterministic under op determinism, so "auto" is TF's
  kernel, as on a CPU plan). The kernels of tfdet.patching.kernels still
  apply where TF sees no GPU, as they do under patch(device="gpu") here;
  --gpu-machine makes the dispatch assume a GPU instead (bincount then reaches
  UnsortedSegmentSum, as on a GPU machine, timed with its CPU kernel);
- "order_fixed": the replacement forced onto the order-fixed path, what GPU
  plans of TF < 2.7 run (no segment kernel of TF's is deterministic there);
- "exact" (only when asked for with --plans): the order-fixed path with the
  float sums of tfdet.patching.exact_sum instead of the sort (opt-in:
  primitive.set_order_fixed_sum("exact"));
- "fixed_point" (only when asked for with --plans): the same with the sums of
  tfdet.patching.fixed_point, one grid per call (opt-in:
  primitive.set_order_fixed_sum("fixed_point")).

Two plans whose settings resolve alike build the same graph: it is timed once
and its samples serve both columns (the header says which). Each variant is
timed forward only and forward + gradient, inside a tf.function and called
eagerly ("eager" columns: the stock function and the replacement called op by
op, as in an input pipeline or a notebook; the replacement reads the plan's
settings at each call), after warm-up, in interleaved rounds (stock, here, gpu,
order-fixed, stock, ...) so that machine drift hits all alike. --passes picks
some of: forward, forward+gradient, eager forward, eager forward+gradient.

The output is one table: replacement x plan x pass -> the ratio of medians to
the stock op, with a 95% bootstrap interval (tfdet.results.stats.ratio_interval);
"here" and "gpu" mark the replacements each plan installs; then one summary
line per plan. Progress goes to stderr. No assertions: this is a measurement.

--profile prints, instead of the table, the operator time of the stock op and
of the order-fixed path by op type (TF1 session runs with full tracing): where
the order-fixed path spends, to guide work on it; with --plans here, of this
machine's plan instead.

--size is the number of data elements of the segment-sum benchmarks (default
1e6, with 1e4 segments or bins); images are [32, 256, 256, 3] at the default.
"""

import argparse
import os
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests", "patching"))  # the replacements' example inputs

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

from tfdet.patching import kernels, primitive  # noqa: E402

import replacement_examples  # noqa: E402


def _fwd_grad(fn, diff):
    """A function returning fn's output and its gradients w.r.t. the tensors in `diff` positions."""

    def run(*args):
        xs = [args[i] for i in diff]
        with tf.GradientTape() as tape:
            for x in xs:
                tape.watch(x)
            y = fn(*args)
        grads = tape.gradient(y, xs, output_gradients=tf.ones_like(y))
        return [y] + [tf.convert_to_tensor(g) for g in grads]

    return run


def benchmarks(size, rng):
    """(name, args, stock fn, replacement fn, positions to differentiate or None): every
    replacement's example inputs (tests/patching/replacement_examples.py) at `size`."""
    return [(e.label, e.args, e.stock, e.replacement, e.diff) for e in replacement_examples.examples(size, rng)]


def _time(fn, args, cpu_seconds=None):
    """Wall seconds of one call; its CPU seconds (this process's, every thread) appended to cpu_seconds."""
    cpu_start, start = time.process_time(), time.perf_counter()
    result = fn(*args)
    # On CPU a tf.function call returns when its kernels are done; touching a shape
    # makes sure nothing is deferred.
    tf.nest.map_structure(lambda t: t.shape, result)
    wall = time.perf_counter() - start
    if cpu_seconds is not None:
        cpu_seconds.append(time.process_time() - cpu_start)
    return wall


# The registry name (tfdet.patching.registry) behind each benchmark, by the benchmark's first word.
PATCH_OF = {"gather": "indexed_slices_to_dense", "resize_nearest": "resize_nearest_neighbor_grad",
            "crop_and_resize": "crop_and_resize_grad"}
PLANS = ("here", "gpu", "order_fixed", "exact", "fixed_point")
DEFAULT_PLANS = ("here", "gpu", "order_fixed")
PLAN_TITLES = {"here": "this machine's plan", "gpu": "GPU plan of this TF",
               "order_fixed": "order-fixed path (GPU plans of TF < 2.7)",
               "exact": "order-fixed path with exact sums (opt-in)",
               "fixed_point": "order-fixed path with fixed-point sums (opt-in)"}
PASSES = ("forward", "forward+gradient", "eager forward", "eager forward+gradient")
FUNCTION_PASSES = PASSES[:2]


def _eager(fn, setting=None):
    """fn called eagerly (no tf.function), under `setting`'s scope when given: eagerly the
    replacement reads the plan's settings at each call, as a user's eager call does."""
    if setting is None:
        return fn

    def run(*args):
        with setting.scope():
            return fn(*args)

    return run


def patch_of(name):
    word = name.split()[0]
    return PATCH_OF.get(word, word)


class Setting(object):
    """How one plan's replacements are built: the primitive's method, what it is told about TF's
    segment kernels, and whether the kernels of tfdet.patching.kernels may assume a CPU-only machine
    (None: as detected)."""

    def __init__(self, method, stock_deterministic, cpu_only=None, order_fixed_sum="sort"):
        self.method, self.stock_deterministic, self.cpu_only = method, bool(stock_deterministic), cpu_only
        self.order_fixed_sum = order_fixed_sum

    def key(self):
        return (self.method, self.stock_deterministic, self.cpu_only, self.order_fixed_sum)

    def resolved(self):
        """'stock' or 'order_fixed': what the primitive's dispatch picks under this setting."""
        with self.scope():
            return primitive.resolve_method()

    def scope(self):
        """A context in which replacements build as this plan builds them."""
        import contextlib

        @contextlib.contextmanager
        def scope():
            before = primitive.set_stock_deterministic(self.stock_deterministic)
            cpu_before = kernels.assume_cpu_only(self.cpu_only) if self.cpu_only is not None else None
            try:
                with primitive.method_scope(self.method), primitive.order_fixed_sum_scope(self.order_fixed_sum):
                    yield
            finally:
                primitive.set_stock_deterministic(before)
                if self.cpu_only is not None:
                    kernels.assume_cpu_only(cpu_before)

        return scope()


def settings(here_plan, gpu_plan, gpu_machine=False):
    """{plan: Setting}: this machine's plan and the GPU plan as patch() and patch(device="gpu") set the
    primitive up (from the plans' stock_segments_deterministic), and the order-fixed path."""
    return {
        "here": Setting("auto", here_plan.stock_segments_deterministic),
        "gpu": Setting("auto", gpu_plan.stock_segments_deterministic, False if gpu_machine else None),
        "order_fixed": Setting("order_fixed", False),
        "exact": Setting("order_fixed", False, order_fixed_sum="exact"),
        "fixed_point": Setting("order_fixed", False, order_fixed_sum="fixed_point"),
    }


def run(size, rounds, plans, only=None, passes=PASSES, log=sys.stderr, cpu=None):
    """{(benchmark name, pass): {"stock": [s, ...], plan: [...], ...}} in benchmark order: wall seconds.
    plans: {plan: Setting}; plans with equal settings build the same graph, timed once.
    cpu: a dict filled the same way with the CPU seconds of the same calls (every thread of this
    process: a measure that does not grow with the machine's load, though stock's two threads may
    spend more of it waiting for each other under load)."""
    rng = np.random.default_rng(0)
    results = {}
    timed = {}  # setting key -> the first plan with it
    for plan, setting in plans.items():
        timed.setdefault(setting.key(), plan)
    for name, args, stock, ours, diff in benchmarks(size, rng):
        if only and not any(o in name for o in only):
            continue
        targs = [tf.constant(a) for a in args]
        for kind in passes:
            if kind.endswith("forward+gradient") and diff is None:
                continue
            forward = kind.endswith("forward")
            stock_fn = stock if forward else _fwd_grad(stock, diff)
            eager = kind.startswith("eager")
            variants = [("stock", stock_fn if eager else tf.function(stock_fn, autograph=False))]
            for plan, setting in plans.items():
                if timed[setting.key()] != plan:
                    continue
                ours_fn = ours if forward else _fwd_grad(ours, diff)
                if eager:
                    variants.append((plan, _eager(ours_fn, setting)))
                    continue
                with setting.scope():
                    tf_fn = tf.function(ours_fn, autograph=False)
                    tf_fn.get_concrete_function(*targs)  # trace under this plan's setting
                variants.append((plan, tf_fn))
            for _, f in variants:  # warm-up
                _time(f, targs)
                _time(f, targs)
            samples = dict((label, []) for label, _ in variants)
            cpu_samples = dict((label, []) for label, _ in variants)
            for _ in range(rounds):
                for label, f in variants:
                    samples[label].append(_time(f, targs, cpu_samples[label]))
            for plan, setting in plans.items():
                samples[plan] = samples[timed[setting.key()]]
                cpu_samples[plan] = cpu_samples[timed[setting.key()]]
            results[(name, kind)] = samples
            if cpu is not None:
                cpu[(name, kind)] = cpu_samples
            med = dict((label, 1e3 * float(np.median(v))) for label, v in samples.items())
            med_cpu = dict((label, 1e3 * float(np.median(v))) for label, v in cpu_samples.items())
            log.write("%-44s %-17s stock %9.2f ms" % (name, kind, med["stock"]) + "".join(
                "   %s %9.2f ms (%5.2fx; CPU %5.2fx)" % (plan, med[plan], med[plan] / med["stock"],
                                                        med_cpu[plan] / max(med_cpu["stock"], 1e-9))
                for plan in plans) + "\n")
            log.flush()
    return results


def _cell(interval):
    return "%.2fx [%.2f, %.2f]" % (interval["ratio"], interval["low"], interval["high"])


def table(results, installed, markdown=False):
    """The one table: rows replacement (benchmark), columns plan x pass; and one summary line per plan.
    installed: {plan: set of registry names it installs, or None for every replacement}."""
    from tfdet.results.stats import ratio_interval

    names = []
    for name, _ in results:
        if name not in names:
            names.append(name)
    plans = [p for p in PLANS if any(p in samples for samples in results.values())]
    short = {"here": "here", "gpu": "gpu", "order_fixed": "order-fixed", "exact": "exact", "fixed_point": "fixed-point",
             "forward": "fwd",
             "forward+gradient": "fwd+grad", "eager forward": "eager fwd", "eager forward+gradient": "eager fwd+grad"}
    kinds = [k for k in PASSES if any(kind == k for _, kind in results)]
    marked = [p for p in plans if installed.get(p) is not None]
    header = ["replacement"] + marked + ["%s %s" % (short[plan], short[kind]) for plan in plans for kind in kinds]
    rows, cells = [], dict((p, []) for p in plans)
    for name in names:
        row = [name] + ["yes" if patch_of(name) in installed[p] else "" for p in marked]
        for plan in plans:
            for kind in kinds:
                samples = results.get((name, kind))
                if samples is None:
                    row.append("-")
                    continue
                interval = ratio_interval(samples["stock"], samples[plan])
                row.append(_cell(interval))
                if installed.get(plan) is None or patch_of(name) in installed[plan]:
                    cells[plan].append((interval["ratio"], name, kind))
        rows.append(row)
    lines = []
    if markdown:
        lines.append("| " + " | ".join(header) + " |")
        lines.append("|" + "|".join("---" for _ in header) + "|")
        lines.extend("| " + " | ".join(row) + " |" for row in rows)
    else:
        widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
        for row in [header] + rows:
            lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    lines.append("")
    for plan in plans:
        found = cells[plan]
        if not found:
            lines.append("- %s: installs none of these replacements" % PLAN_TITLES[plan])
            continue
        ratio, name, kind = max(found)
        which = "all replacements" if installed.get(plan) is None else "installed replacements"
        lines.append("- %s (%s): median %.2fx, worst %.2fx (%s, %s) over %d cells"
                     % (PLAN_TITLES[plan], which, float(np.median([c[0] for c in found])), ratio, name, kind,
                        len(found)))
    return "\n".join(lines)


def op_profile(size, only, runs=7, top=12, log=sys.stdout, setting=None, plan="order-fixed"):
    """Where the time goes: for each selected benchmark, its stock op and its order-fixed path
    (forward, and forward+gradient where there is one) built in a TF1 graph and run with full
    tracing; prints the total operator time (the sum over the ops of their run times, median
    over `runs` runs; ops running at the same time are all counted) and the op types that take
    the most, with their share. A measurement of where the order-fixed path spends, not a timing."""
    import collections

    rng = np.random.default_rng(0)
    for name, args, stock, ours, diff in benchmarks(size, rng):
        if only and not any(o in name for o in only):
            continue
        for kind in FUNCTION_PASSES:
            if kind == "forward+gradient" and diff is None:
                continue
            for label, fn in (("stock", stock), (plan, ours)):
                graph = tf.Graph()
                scope = setting.scope() if setting is not None else primitive.method_scope("order_fixed")
                with graph.as_default(), scope:
                    holders = [tf.compat.v1.placeholder(tf.as_dtype(a.dtype), a.shape) for a in args]
                    f = fn if kind == "forward" else _fwd_grad(fn, diff)
                    out = f(*holders)
                per_type = collections.defaultdict(list)
                with tf.compat.v1.Session(graph=graph) as sess:
                    feed = dict(zip(holders, args))
                    sess.run(out, feed)  # warm-up
                    for _ in range(runs):
                        meta = tf.compat.v1.RunMetadata()
                        sess.run(out, feed, run_metadata=meta, options=tf.compat.v1.RunOptions(
                            trace_level=tf.compat.v1.RunOptions.FULL_TRACE))
                        times = collections.Counter()
                        for dev in meta.step_stats.dev_stats:
                            for node in dev.node_stats:
                                label_text = node.timeline_label
                                op = label_text.split("=")[-1].split("(")[0].strip() if "=" in label_text \
                                    else node.node_name
                                times[op] += node.all_end_rel_micros / 1e3
                        for op, t in times.items():
                            per_type[op].append(t)
                medians = sorted(((float(np.median(v)), op) for op, v in per_type.items()), reverse=True)
                total = sum(t for t, _ in medians)
                log.write("%s, %s, %s: operator time %.1f ms\n" % (name, kind, label, total))
                for t, op in medians[:top]:
                    log.write("    %7.2f ms  %4.1f%%  %s\n" % (t, 100.0 * t / max(total, 1e-9), op))
                log.flush()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=float, default=1e6, help="elements of the segment-sum data (default 1e6)")
    parser.add_argument("--rounds", type=int, default=11, help="interleaved timing rounds (default 11)")
    parser.add_argument("--only", default="", help="comma-separated substrings of benchmark names")
    parser.add_argument("--plans", default=",".join(DEFAULT_PLANS),
                        help="comma-separated plans to time: here, gpu, order_fixed, exact (the order-fixed path "
                             "with tfdet.patching.exact_sum's sums, opt-in), fixed_point (the same with "
                             "tfdet.patching.fixed_point's, opt-in) (default: here,gpu,order_fixed)")
    parser.add_argument("--passes", default=",".join(PASSES),
                        help="comma-separated passes to time (default: %s)" % ",".join(PASSES))
    parser.add_argument("--gpu-machine", action="store_true",
                        help="build the gpu plan as on a machine with a GPU (tfdet.patching.kernels steps aside)")
    parser.add_argument("--markdown", action="store_true", help="print the table as Markdown (for the README)")
    parser.add_argument("--profile", action="store_true",
                        help="instead of timing: operator time by op type of the stock op and the order-fixed "
                             "path (one traced TF1 session run per repetition; use with --only)")
    args = parser.parse_args(argv)
    chosen = [p.strip() for p in args.plans.split(",") if p.strip()]
    if args.profile:  # --plans here: this machine's plan instead of the order-fixed path
        setting = None
        if chosen == ["here"]:
            from tfdet.patching.plan_preview import preview

            setting = settings(preview().plan, preview(device="gpu").plan)["here"]
        op_profile(args.size, [o for o in args.only.split(",") if o], setting=setting,
                   plan="here" if setting is not None else "order-fixed")
        return 0
    unknown = [p for p in chosen if p not in PLANS]
    if unknown or not chosen:
        parser.error("--plans takes a comma-separated subset of %s, got %r" % (",".join(PLANS), args.plans))
    # What tfdet.patch() and tfdet.patch(device="gpu") would install here (tfdet.patching.plan):
    # the primitive takes TF's own segment kernels only where the plan (the catalogue) says
    # they are deterministic.
    from tfdet.patching.plan_preview import preview

    here_plan, gpu_plan = preview().plan, preview(device="gpu").plan
    every = settings(here_plan, gpu_plan, gpu_machine=args.gpu_machine)
    plans = dict((p, every[p]) for p in PLANS if p in chosen)
    print("TF %s, numpy %s, %d CPUs, intra-op threads %s, TF_ENABLE_ONEDNN_OPTS=%s; %d interleaved rounds, "
          "--size %g" % (tf.__version__, np.__version__, os.cpu_count(),
                         tf.config.threading.get_intra_op_parallelism_threads() or "default",
                         os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default"), args.rounds, args.size))
    print("ratio of medians to the stock op [95%% bootstrap interval]. here = this machine's plan (%s, TF %s: "
          "segment sums %s), installs: %s. gpu = the GPU plan of TF %s (segment sums %s%s), installs: %s. "
          "order-fixed = the path of GPU plans of TF < 2.7, every replacement%s."
          % (here_plan.device, here_plan.tf_version, every["here"].resolved(),
             ", ".join(sorted(here_plan.replacements)) or "none", gpu_plan.tf_version, every["gpu"].resolved(),
             "; dispatch as on a GPU machine" if args.gpu_machine else "; CPU kernels where TF sees no GPU",
             ", ".join(sorted(gpu_plan.replacements)) or "none",
             "".join("; %s = the same with %s sums (primitive.set_order_fixed_sum('%s'))" % (p, p.replace("_", "-"), p)
                     for p in ("exact", "fixed_point") if p in plans)))
    same = [p for p in plans if p != "here" and "here" in plans and plans[p].key() == plans["here"].key()]
    if same:
        print("%s: the same settings as this machine's plan, so the same graphs: timed once, shown in both columns"
              % ", ".join(same))
    passes = [p.strip() for p in args.passes.split(",") if p.strip()]
    if not passes or any(p not in PASSES for p in passes):
        parser.error("--passes takes a comma-separated subset of %s, got %r" % (",".join(PASSES), args.passes))
    load_before = os.getloadavg()[0]
    cpu = {}
    results = run(args.size, args.rounds, plans, [o for o in args.only.split(",") if o], passes=passes, cpu=cpu)
    installed = {"here": set(here_plan.replacements), "gpu": set(gpu_plan.replacements), "order_fixed": None,
                 "exact": None, "fixed_point": None}
    print(table(results, installed, markdown=args.markdown))
    print("\nCPU time (every thread of this process), ratio of medians to the stock op [95% bootstrap interval]:")
    print(table(cpu, installed, markdown=args.markdown).split("\n\n")[0])
    print("load (1 min): %.1f before, %.1f after" % (load_before, os.getloadavg()[0]))
    return 0

if __name__ == "__main__":
    sys.exit(main())
