"""`tfdet diverge`: train the same network K times per condition and mode;
how much the runs disagree, what removes it, and what that costs."""

import argparse
import datetime
import glob
import importlib.util
import json
import os
import sys

from . import arguments
from .exitcodes import ENVIRONMENT, FINDING, INVALID_INPUT, OK, USAGE, CommandError
from .tables import FIXED, KEY, Column, print_table
from .training_runs import training_run

HELP = "train one network k times per condition and mode: how much identical runs disagree, and the cost"

EPILOG = """\
Every training runs in its own process. --script TRAIN.py runs your own
training instead: tfdet runs it once per training with the mode applied; it
reads its seeds from tfdet.diverge.context() (init_seed, batch_seed, lr) and
saves its test predictions (class ids or scores) and, optionally, its final
weights and the true labels with context().save(...). A condition is INIT-BATCHES: the
initialisation seed and the batch-order seed are either the same in every run
(fixed) or differ per run (random). Cells are also named as in Zhuang et al.,
MLSys 2022: IMPL (fixed-fixed, baseline: only the kernels differ), ALGO+IMPL
(random-random, baseline), ALGO (random-random, deterministic mode), control
(fixed-fixed, deterministic mode). Modes are the probe's: baseline (TF as it
comes), env (TF_DETERMINISTIC_OPS), api (enable_op_determinism), patched
(tfdet.patch()).

Trainings are written to --out as they finish (JSON lines, schema
diverge-1.json; final weights in OUT.weights/), then a summary of every cell.
An interrupted run keeps what finished; --resume runs only what is missing
(and what failed). --resume also grows a run: more --runs, or --lr, --modes or
--conditions beyond the file's, trains only the new cells and runs; a choice
left out is the file's. Cost: median time per step and per training, as a ratio
to baseline's of the same lr and condition (the modes run interleaved).

examples:
  tfdet diverge --workload embedding                        # 4 conditions x baseline,patched x 5 runs x 2 lrs
  tfdet diverge --workload digits-cnn --conditions fixed-fixed,random-random --modes baseline,env,patched
  tfdet diverge --workload embedding --lr 0.01,0.1,0.5 --jobs 2 --out emb.jsonl
  tfdet diverge --workload embedding --out emb.jsonl --resume --runs 10 --lr 1.0   # grow it: K=10, one lr more
  tfdet diverge --workload embedding --executor dask --scheduler tcp://10.0.0.5:8786
  tfdet diverge --workload cifar10-resnet18 --epochs 2 --executor dask --scheduler tcp://10.0.0.5:8786
                                        # downloads CIFAR-10 (170 MB) once; meant for GPUs
  tfdet diverge --script train.py --conditions fixed-fixed --modes baseline,env --runs 3

exit codes: 0 every training finished, 1 some trainings failed or timed out
(recorded; --resume retries them), 2 usage (bad flag, results file in use or
written with other parameters, --resume of a file that does not exist), 3 the results file to resume is not a diverge
file, no such --script, or its runs cannot be compared, 4 environment (no TensorFlow, scikit-learn or dask, a scheduler that does
not answer), 5 the results could not be written, 130 interrupted (finished
trainings kept).
"""

def _list(kind, choices=None):
    def parse(text):
        items = [t.strip() for t in text.split(",") if t.strip()]
        if not items:
            raise argparse.ArgumentTypeError("empty %s list" % kind)
        bad = [t for t in items if choices is not None and t not in choices]
        if bad:
            raise argparse.ArgumentTypeError("unknown %s %s (choose from %s)" % (kind, ", ".join(bad),
                                                                                ", ".join(choices)))
        return list(dict.fromkeys(items))
    return parse


def _lrs(text):
    values = []
    for item in _list("learning rate")(text):
        try:
            values.append(arguments.learning_rate(item))
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError("learning rate %s" % exc) from None
    return values


def add_parser(commands):
    from ..diverge import CONDITIONS, DEFAULT_MODES, WORKLOAD_NAMES
    from ..diverge.workloads import WORKLOADS
    from ..results.vocabulary import MODES

    parser = commands.add_parser("diverge", help=HELP, description="Train one network K times per condition and "
                                 "mode: how much identical runs disagree, and the cost.", epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--workload", choices=WORKLOAD_NAMES, help="the built-in training to run")
    what.add_argument("--script", metavar="TRAIN.py",
                      help="your own training, run once per training (the contract: tfdet.diverge.context())")
    parser.add_argument("--runs", type=arguments.runs, default=None,
                        help="trainings per cell, K (default 5; with --resume, the file's, or more)")
    parser.add_argument("--conditions", type=_list("condition", CONDITIONS), default=None,
                        help="init-batches, comma-separated (default: all four; with --resume, the file's, plus any "
                             "given)")
    parser.add_argument("--modes", type=_list("mode", MODES), default=None,
                        help="comma-separated, of %s (default: %s; with --resume, the file's, plus any given)" % (
                            ", ".join(MODES), ",".join(DEFAULT_MODES)))
    parser.add_argument("--lr", type=_lrs, default=None,
                        help="learning rate, or a comma-separated sweep (default: %s; a --script gets it as "
                        "context().lr, and none by default)" % "; ".join(
                            "%s for %s" % (",".join("%g" % x for x in w.lrs), name) for name, w in WORKLOADS.items()))
    parser.add_argument("--momentum", type=arguments.momentum, default=0.0, help="SGD momentum (default 0: plain SGD)")
    parser.add_argument("--epochs", type=arguments.epochs, default=5, help="default 5")
    parser.add_argument("--batch-size", type=arguments.batch_size, default=None,
                        help="default: %s" % ", ".join("%d for %s" % (w.batch_size, n) for n, w in WORKLOADS.items()))
    arguments.add_executor(parser, jobs_help="trainings at once (local processes, or LocalCluster workers)")
    arguments.add_output_file(parser, "results file (default: tfdet-diverge-WORKLOAD-TIME.jsonl)")
    parser.add_argument("--resume", action="store_true", help="continue --out: run only the missing trainings")
    parser.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    parser.add_argument("--timeout", type=arguments.timeout, default=600.0,
                        help="seconds one training may take before it is killed and recorded (default 600)")
    parser.add_argument("--json", action="store_true", help="print the cells as JSON instead of a table")
    arguments.add_quiet(parser)
    parser.set_defaults(run=run)


def _check_environment(args):
    from ..tfinfo import installed_tf_version

    if installed_tf_version() is None:
        raise CommandError("tfdet diverge needs TensorFlow: pip install tensorflow", ENVIRONMENT)
    if args.script and not os.path.isfile(args.script):
        raise CommandError("--script %s: no such file" % args.script, INVALID_INPUT)
    if args.workload == "digits-cnn" and importlib.util.find_spec("sklearn") is None:
        raise CommandError("the digits-cnn workload needs scikit-learn: pip install 'tfdet[diverge]'", ENVIRONMENT)
    arguments.check_executor(args)
    if args.workload == "cifar10-resnet18":
        _fetch_cifar10(args)
    if args.resume and args.overwrite:
        raise CommandError("--resume and --overwrite exclude each other", USAGE)


def _fetch_cifar10(args):
    """CIFAR-10 is downloaded here, once, only when its workload is asked for."""
    from ..diverge.workloads import DatasetUnavailable, cifar10_prefetch

    if not (args.quiet or args.json):
        local = os.environ.get("TFDET_CIFAR10_DIR")
        args.err.write("tfdet diverge: %s\n" % ("reading CIFAR-10 from TFDET_CIFAR10_DIR=%s" % local if local else
                                               "loading CIFAR-10 (Keras downloads it, about 170 MB, into "
                                               "~/.keras/datasets the first time)"))
    try:
        cifar10_prefetch(log=args.err)
    except DatasetUnavailable as exc:
        raise CommandError(str(exc), ENVIRONMENT) from None


def _results_path(args, name, stamp):
    """--out, or a new tfdet-diverge-NAME-TIME.jsonl, or (--resume) the newest such file here."""
    default = "tfdet-diverge-%s-%s.jsonl" % (name, stamp)
    if args.resume and not args.out:
        found = sorted(glob.glob("tfdet-diverge-%s-*.jsonl" % glob.escape(name)), key=os.path.getmtime)
        if not found:
            raise arguments.nothing_to_resume("results file", default.replace(stamp, "*"),
                                              "name the file with --out FILE")
        return found[-1]
    if args.resume and not os.path.exists(args.out):
        raise arguments.nothing_to_resume("results file", args.out, "run without --resume to start it")
    return args.out or default


def run(args, out):
    from ..diverge import DivergeConfig, DivergeError, DivergeInputError, run_diverge
    from .progress import Display

    _check_environment(args)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    if args.script:
        workload, lrs, epochs, batch_size = "script:" + args.script, args.lr, 0, 0
    else:
        from ..diverge.workloads import WORKLOADS

        workload, lrs = args.workload, args.lr
        epochs, batch_size = args.epochs, args.batch_size or WORKLOADS[args.workload].batch_size
    name = os.path.splitext(os.path.basename(args.script))[0] if args.script else args.workload
    config = DivergeConfig(
        workload=workload, out=_results_path(args, name, stamp),
        lrs=lrs, conditions=args.conditions, modes=args.modes, runs=args.runs, momentum=args.momentum,
        epochs=epochs, batch_size=batch_size, jobs=args.jobs, executor=args.executor, scheduler=args.scheduler,
        resume=args.resume, overwrite=args.overwrite, timeout=args.timeout, argv=list(sys.argv), script=args.script)
    with Display(args.err, "diverge", quiet=args.quiet or args.json) as progress, \
            training_run(environment=(DivergeError,), invalid_input=(DivergeInputError,)):
        header, records, summary = run_diverge(config, progress)
    if args.json:
        json.dump(summary.to_json(), out, indent=1, sort_keys=True)
        out.write("\n")
    else:
        print_summary(out, summary)
        failed = sum(c.failed for c in summary.cells)
        out.write("results: %s%s\n" % (config.out, "; %d training%s failed (--resume retries them)" % (
            failed, "" if failed == 1 else "s") if failed else ""))
    return OK if summary.complete else FINDING


def _pct(value):
    return "-" if value is None else "%.1f%%" % (100.0 * value)


def _num(value, form="%.3g"):
    return "-" if value is None else form % value


def print_summary(out, summary):
    columns = [Column("lr", FIXED), Column("condition", KEY), Column("cell", FIXED), Column("mode", FIXED),
               Column("runs", FIXED), Column("differ", FIXED), Column("pairwise", FIXED),
               Column("weights", FIXED), Column("L2 max", FIXED), Column("accuracy", FIXED),
               Column("step x", FIXED)]
    rows = []
    for c in summary.cells:
        rows.append(["%g" % c.lr, c.condition, c.cell_name or "-", c.mode,
                     "%d" % c.runs + ("+%d failed" % c.failed if c.failed else ""),
                     _pct(c.disagreement_any), _pct(c.disagreement_pairwise_mean),
                     "%d/%d" % (c.distinct_weights, c.runs), _num(c.weight_distance_max),
                     "-" if c.accuracy_mean is None else "%.1f%% ±%.1f" % (100 * c.accuracy_mean,
                                                                            100 * (c.accuracy_std or 0)),
                     _num(c.step_time_ratio, "%.2f")])
    print_table(out, columns, rows)
    out.write("differ: test examples on which not all runs agree; pairwise: mean over pairs of runs; weights: "
              "distinct final weights / runs; step x: time per step / baseline's\n")

