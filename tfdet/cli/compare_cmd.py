"""`tfdet compare`: is setup A really better than setup B? Paired trainings,
P(A>B) with a bootstrap interval, a verdict, and the runs it took."""

import argparse
import dataclasses
import datetime
import importlib.util
import json
import os
import sys

from . import arguments
from ..results.compare_records import CANDIDATES
from .exitcodes import ENVIRONMENT, FINDING, INVALID_INPUT, OK, USAGE, CommandError
from .training_runs import training_run

HELP = "is setup A really better than B? paired trainings, P(A>B) with an interval, a verdict, the runs it took"

EPILOG = """\
A setup is KEY=VALUE,... of workload (a built-in one), script (your training,
under the tfdet.diverge.context() contract), lr, momentum, epochs,
batch_size; what --a or --b leaves out comes from --workload, --lr, --epochs,
... --aa compares A with itself on other seeds: the noise floor. Repeat --b
for more setups (C, D, ...): each is compared with A on the same seeds, and
the intervals widen to hold over every comparison (Bonferroni).

Pair i of A and of B share every randomised seed. --sources picks what varies
from pair to pair: data (a bootstrap resample of the training set; the test
set stays), init (the initialisation seed), order (the batch order), augment
(the seed of the augmentation and dropout layers: the digits-augment workload,
or a script's tfdet.diverge.context().augment_seed), hparams (lr, momentum,
epochs, batch_size drawn per pair from the --space you declare, the same draw
for A and B), numerics (TF's kernels as they come; left out, every training
runs under tfdet.patch()). What is not picked is held fixed, and the output
says so. Default: data, init, order, numerics.

--space KEY=SPEC, once per hyperparameter: LOW:HIGH (uniform), LOW:HIGH:log
(log-uniform) or A|B|C (a choice), e.g. --space lr=0.01:0.2:log --space
batch_size=16|32|64. A setup may not also set a key the space draws.

The statistic is P(A>B), the share of pairs where A's test accuracy is higher
(ties count one half), with a bootstrap interval (--interval percentile or
bca, seeded by --seed: the same scores give the same interval). The verdict
(Bouthillier et al., "Accounting for Variance in Machine Learning
Benchmarks", MLSys 2021): A better when the interval lies above 0.5 and
P(A>B) > gamma (default 0.75, the paper's threshold of a meaningful
improvement); B better, the mirror image; no meaningful difference when the
interval lies inside (1-gamma, gamma); undecided otherwise. A look decides
only from the fewest pairs at which A winning every pair passes the exact
sign test at the look's level (6 pairs at 95%, 8 at 99%).

Sequential: the rule looks at --min-runs pairs, then every --step pairs up to
--max-runs, and stops at the first look that decides. Each of the L planned
looks uses a 1-(1-level)/L interval (Bonferroni), so all looks together err at
most 1-level. Undecided at the budget: the output says how many pairs would
likely decide. --fixed looks once, at --max-runs. --shares K then trains A K
times per source varying that source alone: each source's share of the
variance.

Trainings are written to --out as they finish (JSON lines, schema
compare-1.json), one process each, through the executor (--jobs, --executor
dask). An interrupted run keeps what finished; --resume continues it (and
--max-runs can grow). tfdet report OUT -o page.html draws the page.

examples:
  tfdet compare --workload digits-cnn --a lr=0.05 --b lr=0.005 --epochs 3
  tfdet compare --workload digits-cnn --lr 0.05 --aa --sources init,order,numerics
  tfdet compare --a script=train_new.py --b script=train_old.py --max-runs 40 --gate
  tfdet compare --workload embedding --a lr=1.0 --b lr=0.1 --executor dask --jobs 2
  tfdet compare --a workload=digits-cnn --b workload=digits-augment \
      --sources data,init,order,augment,hparams --space lr=0.02:0.2:log

exit codes: 0 done (with --gate: decided), 1 --gate and undecided within the
budget, 2 usage (bad flag, results file in use or written for another
comparison), 3 invalid input (no such script, not a compare results file),
4 environment (no TensorFlow, scikit-learn or dask), 5 the results could not
be written, 130 interrupted (finished trainings kept).
"""

SETUP_KEYS = {"workload": str, "script": str, "lr": float, "momentum": float, "epochs": int, "batch_size": int}


def setup_text(text):
    """KEY=VALUE,... of SETUP_KEYS -> dict; a usage error otherwise."""
    values = {}
    for item in [t.strip() for t in text.split(",") if t.strip()]:
        key, eq, value = item.partition("=")
        key = key.strip().replace("-", "_")
        if not eq or key not in SETUP_KEYS:
            raise argparse.ArgumentTypeError("%r is not KEY=VALUE of %s" % (item, ", ".join(SETUP_KEYS)))
        try:
            values[key] = SETUP_KEYS[key](value.strip())
        except ValueError:
            raise argparse.ArgumentTypeError("%s=%s is not a %s" % (key, value, SETUP_KEYS[key].__name__)) from None
    return values


def sources_text(text):
    from ..compare.plan import parse_sources

    try:
        return parse_sources([t.strip() for t in text.split(",") if t.strip()])
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def gamma_text(text):
    value = float(text)
    if not 0.5 < value < 1.0:
        raise argparse.ArgumentTypeError("gamma must be between 0.5 and 1, got %s" % text)
    return value


def level_text(text):
    value = float(text)
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError("the level must be between 0 and 1, got %s" % text)
    return value


def add_parser(commands):
    from ..diverge import WORKLOAD_NAMES

    parser = commands.add_parser("compare", help=HELP, description="Is setup A really better than setup B? "
                                 "Paired trainings, P(A>B) with a bootstrap interval, a verdict, the runs it took.",
                                 epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", type=setup_text, default={}, metavar="KEY=VALUE,...", help="setup A")
    parser.add_argument("--b", type=setup_text, action="append", default=None, metavar="KEY=VALUE,...",
                        help="setup B; repeat for more setups (C, D, ... up to H), each compared with A")
    parser.add_argument("--aa", action="store_true", help="compare A with itself on other seeds (the noise floor)")
    parser.add_argument("--workload", choices=WORKLOAD_NAMES, help="the built-in training of both setups")
    parser.add_argument("--lr", type=arguments.learning_rate, default=None, help="both setups' learning rate")
    parser.add_argument("--momentum", type=arguments.momentum, default=0.0)
    parser.add_argument("--epochs", type=arguments.epochs, default=3, help="default 3")
    parser.add_argument("--batch-size", type=arguments.batch_size, default=None)
    parser.add_argument("--sources", type=sources_text, default=["data", "init", "order", "numerics"],
                        help="what varies from pair to pair: data, init, order, augment, hparams, numerics "
                        "(default: data, init, order, numerics)")
    parser.add_argument("--space", action="append", default=[], metavar="KEY=SPEC",
                        help="a hyperparameter the hparams source draws per pair: lr=0.01:0.1:log, "
                        "momentum=0:0.9, batch_size=16|32|64 (repeat for each)")
    parser.add_argument("--gamma", type=gamma_text, default=0.75,
                        help="P(A>B) above it is meaningful (default 0.75, Bouthillier et al. 2021)")
    parser.add_argument("--level", type=level_text, default=0.95, help="interval level over all looks (0.95)")
    parser.add_argument("--interval", choices=("percentile", "bca"), default="percentile")
    parser.add_argument("--resamples", type=arguments.positive_int, default=5000, help="bootstrap resamples")
    parser.add_argument("--seed", type=arguments.seed, default=0, help="the bootstrap's seed (default 0)")
    parser.add_argument("--min-runs", type=arguments.runs, default=10, help="pairs at the first look (10)")
    parser.add_argument("--max-runs", type=arguments.runs, default=30, help="the budget in pairs (30)")
    parser.add_argument("--step", type=arguments.runs, default=5, help="pairs added per look (5)")
    parser.add_argument("--fixed", action="store_true", help="no sequential rule: one look at --max-runs")
    parser.add_argument("--shares", type=arguments.Bounded(int, 0, 10000), default=0, metavar="K",
                        help="K trainings of A per source, that source alone varied: the variance shares")
    arguments.add_executor(parser, jobs_help="trainings at once (local processes, or LocalCluster workers)")
    arguments.add_output_file(parser, "results file (default: tfdet-compare-TIME.jsonl)")
    parser.add_argument("--resume", action="store_true", help="continue --out (more runs with a larger --max-runs)")
    parser.add_argument("--overwrite", action="store_true")
    parser.add_argument("--timeout", type=arguments.timeout, default=600.0,
                        help="seconds one training may take before it is killed and recorded (600)")
    parser.add_argument("--gate", action="store_true", help="exit 1 when the budget ends undecided")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    arguments.add_quiet(parser)
    parser.set_defaults(run=run)


def _setup(name, given, args):
    from ..diverge.workloads import WORKLOADS
    from ..results.compare_records import Setup

    script = given.get("script")
    workload = given.get("workload", args.workload)
    if script:
        if not os.path.isfile(script):
            raise CommandError("--%s script=%s: no such file" % (name.lower(), script), INVALID_INPUT)
        return Setup(name=name, workload="script:" + script, script=os.path.abspath(script),
                     lr=given.get("lr", args.lr or 0.0), momentum=given.get("momentum", args.momentum))
    if workload is None:
        raise CommandError("setup %s trains nothing: give --workload, or workload= or script= in --%s" % (
            name, name.lower()), USAGE)
    if workload not in WORKLOADS:
        raise CommandError("setup %s: unknown workload %r (choose from %s)" % (name, workload, ", ".join(WORKLOADS)),
                           USAGE)
    builtin = WORKLOADS[workload]
    return Setup(name=name, workload=workload, lr=given.get("lr", args.lr or builtin.lrs[0]),
                 momentum=given.get("momentum", args.momentum), epochs=given.get("epochs", args.epochs),
                 batch_size=given.get("batch_size", args.batch_size or builtin.batch_size))


def _space(args):
    """The hparams source's space, checked against the sources and the setups."""
    from ..compare.space import SpaceError, parse_all

    try:
        space = parse_all(args.space)
    except SpaceError as exc:
        raise CommandError(str(exc), USAGE) from None
    if ("hparams" in args.sources) != bool(space):
        raise CommandError("--sources hparams needs a --space to draw from" if space == {} else
                           "--space is drawn only when --sources includes hparams", USAGE)
    given = {"lr": args.lr, "batch_size": args.batch_size}
    for key in space:
        setters = [name for name, setup in [("--a", args.a)] + [("--b", b) for b in args.b or []] if key in setup]
        if given.get(key) is not None:
            setters.append("--" + key.replace("_", "-"))
        if setters:
            raise CommandError("%s sets %s, which --space draws: leave it to the space" % (
                " and ".join(setters), key), USAGE)
    return space


def _check_augmentable(setups):
    """--sources augment seeds something in at least one setup (the other may have no such layer: comparing
    with and without augmentation is the point)."""
    from ..diverge.workloads import WORKLOADS

    if all(s.workload in WORKLOADS and not WORKLOADS[s.workload].augmented for s in setups):
        augmented = [name for name, w in WORKLOADS.items() if w.augmented]
        raise CommandError("--sources augment: %s has no augmentation or dropout layer to seed (built-in workloads "
                           "that do: %s; a script reads tfdet.diverge.context().augment_seed)" % (
                               " nor ".join(sorted({s.workload for s in setups})), ", ".join(augmented)), USAGE)


def config_of(args):
    from ..compare import CompareConfig

    if args.aa == (args.b is not None):
        raise CommandError("give --b, or --aa to compare A with itself", USAGE)
    if args.b and len(args.b) > len(CANDIDATES):
        raise CommandError("at most %d setups besides A (B to %s)" % (len(CANDIDATES), CANDIDATES[-1]), USAGE)
    if args.min_runs > args.max_runs and not args.fixed:  # --fixed looks once, at --max-runs
        raise CommandError("--min-runs %d is more than --max-runs %d" % (args.min_runs, args.max_runs), USAGE)
    if args.shares < 0:
        raise CommandError("--shares must be 0 or more", USAGE)
    if args.resume and args.overwrite:
        raise CommandError("--resume and --overwrite exclude each other", USAGE)
    arguments.check_executor(args)
    a = _setup("A", args.a, args)
    candidates = [dataclasses.replace(a, name="B")] if args.aa else [
        _setup(name, given, args) for name, given in zip(CANDIDATES, args.b)]
    for setup in ([] if args.aa else candidates):
        if a == dataclasses.replace(setup, name="A"):
            raise CommandError("--a and --b are the same setup: use --aa for the noise floor", USAGE)
    for i, setup in enumerate(candidates):
        twin = next((o for o in candidates[:i] if dataclasses.replace(o, name=setup.name) == setup), None)
        if twin is not None:
            raise CommandError("setups %s and %s are the same" % (twin.name, setup.name), USAGE)
    space = _space(args)
    drawn = {key: type(getattr(a, key))(0) for key in space}  # 0: not the setup's, the space's (per pair)
    a, candidates = dataclasses.replace(a, **drawn), [dataclasses.replace(c, **drawn) for c in candidates]
    if "augment" in args.sources:
        _check_augmentable([a] + candidates)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return CompareConfig(
        a=a, b=candidates[0], others=candidates[1:], aa=args.aa, out=args.out or "tfdet-compare-%s.jsonl" % stamp, sources=args.sources,
        gamma=args.gamma, level=args.level, interval=args.interval, resamples=args.resamples, seed=args.seed,
        min_runs=args.max_runs if args.fixed else args.min_runs, max_runs=args.max_runs, step=args.step,
        share_runs=args.shares, space=space, jobs=args.jobs, executor=args.executor, scheduler=args.scheduler,
        resume=args.resume, overwrite=args.overwrite, timeout=args.timeout, argv=list(sys.argv))


def _check_environment(config):
    from ..tfinfo import installed_tf_version

    if installed_tf_version() is None:
        raise CommandError("tfdet compare needs TensorFlow: pip install tensorflow", ENVIRONMENT)
    digits = [s.workload for s in [config.a, config.b] + list(config.others) if s.workload.startswith("digits-")]
    if digits and importlib.util.find_spec("sklearn") is None:
        raise CommandError("the %s workload needs scikit-learn: pip install 'tfdet[diverge]'" % digits[0], ENVIRONMENT)


def run(args, out):
    from ..compare import CompareError, run_compare
    from ..compare.summary import every_comparison_decided
    from .progress import Display

    config = config_of(args)
    _check_environment(config)
    with Display(args.err, "compare", quiet=args.quiet or args.json) as progress, \
            training_run(environment=(CompareError,)):
        header, _, looks, summary = run_compare(config, progress)
    if args.json:
        json.dump(summary.to_json(), out, indent=1, sort_keys=True)
        out.write("\n")
    else:
        print_verdict(out, header, summary)
        out.write("results: %s\n" % config.out)
    return FINDING if args.gate and not every_comparison_decided(summary) else OK


def _setup_line(setup):
    what = setup.script or setup.workload
    extra = ", ".join("%s=%g" % (k, getattr(setup, k)) for k in ("lr", "momentum") if getattr(setup, k))
    if setup.epochs:
        extra += ", epochs=%d" % setup.epochs
    return "%s (%s)" % (what, extra.strip(", ")) if extra else what


def _other_line(other):
    if other.p is None:
        return "A vs %s: no complete pair\n" % other.arm
    p, d = other.p, other.difference
    return "A vs %s: %s; P(A>%s) = %.3f [%.3f, %.3f]; %s %.2f%%; A - %s = %+.2f points [%+.2f, %+.2f]%s\n" % (
        other.arm, other.verdict.upper(), other.arm, p.value, p.lower, p.upper, other.arm, 100 * other.mean,
        other.arm, 100 * d.value, 100 * d.lower, 100 * d.upper,
        "; about %d pairs would likely decide" % other.runs_to_decide if other.runs_to_decide else "")


def print_verdict(out, header, summary):
    """One screen: the setups, what varied, the verdict and what it rests on."""
    w = out.write
    w("A: %s\n" % _setup_line(header.a))
    w("B: %s\n" % ("A again, other seeds (A/A: the noise floor)" if header.aa else _setup_line(header.b)))
    for other in header.others:
        w("%s: %s\n" % (other.name, _setup_line(other)))
    w("randomised: %s; held fixed: %s\n" % (", ".join(header.sources) or "nothing",
                                             ", ".join(header.fixed) or "nothing"))
    if header.space:
        w("hyperparameters drawn per pair (the same for every setup): %s\n" % ", ".join(
            "%s=%s" % item for item in sorted(header.space.items())))
    if summary.p is None:
        w("no complete pair of trainings: nothing to compare (%d excluded)\n" % summary.excluded)
        return
    p, d = summary.p, summary.difference
    w("\nverdict: %s%s\n" % (summary.verdict.upper(), "" if summary.complete else " (interrupted)"))
    w("  P(A>B) = %.3f, %g%% interval [%.3f, %.3f] (%s bootstrap, %d resamples, seed %d); gamma = %g\n" % (
        p.value, 100 * p.level, p.lower, p.upper, header.interval, header.resamples, header.seed, header.gamma))
    w("  accuracy: A %.2f%%, B %.2f%%; A - B = %+.2f points [%+.2f, %+.2f]\n" % (
        100 * summary.mean_a, 100 * summary.mean_b, 100 * d.value, 100 * d.lower, 100 * d.upper))
    w("  %s; the interval %s 0.5\n" % ("significant" if summary.significant else "not significant",
                                       "excludes" if summary.significant else "includes"))
    for other in summary.others:
        w(_other_line(other))
    setups = 2 + len(header.others)
    w("runs: %d pairs (%d trainings), %d look%s of %d planned, each at %g%% (Bonferroni over looks%s); %s\n" % (
        summary.pairs, setups * summary.pairs, summary.looks_taken, "" if summary.looks_taken == 1 else "s",
        header.looks, 100 * p.level, " and %d comparisons" % (setups - 1) if header.others else "", summary.stopped))
    if summary.runs_to_decide:
        w("  undecided: about %d pairs in all would likely decide (if P(A>B) stays at %.3f)\n" % (
            summary.runs_to_decide, p.value))
    if summary.excluded:
        w("excluded (crashed or timed out; their pairs left out): %s\n" % "; ".join(summary.notes))
    if summary.shares:
        w("variance shares (trainings of A varying one source alone): %s\n" % ", ".join(
            "%s %s (%d runs)" % (s.source, "-" if s.share is None else "%.0f%%" % (100 * s.share), s.runs)
            for s in summary.shares))
        if summary.additive_ratio is not None:
            w("  all of them at once (A over the pairs): variance %.3g; the sources alone add up to %.0f%% of it "
              "(100%%: they add; far from it: they interact, or too few runs to tell)\n" % (
                  summary.joint_variance, 100 * summary.additive_ratio))
    if summary.seconds is not None:
        w("wall time: %.0f s\n" % summary.seconds)
