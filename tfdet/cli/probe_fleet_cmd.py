"""`tfdet probe --executor dask`: the probe on every machine of a Dask cluster,
one results file per machine in a directory, a table of what each found."""

import datetime
import os

from . import arguments
from .exitcodes import ENVIRONMENT, FINDING, INTERRUPTED, OK, USAGE, WRITE_FAILED, CommandError
from .tables import FIXED, KEY, Column, print_table

DEFAULT_DIR = "tfdet-fleet-%Y%m%d-%H%M%S"

COLUMNS = (Column("machine"), Column("host"), Column("device", FIXED), Column("TF", FIXED),
           Column("measured", FIXED), Column("varied (baseline)", FIXED), Column("state", KEY))


def check(args):
    """Flag combinations that cannot work, before anything starts."""
    if args.scheduler and args.executor != "dask":
        raise CommandError("--scheduler needs --executor dask", USAGE)
    if args.jobs is not None and args.executor != "dask":
        raise CommandError("--jobs needs --executor dask (the probe on this machine runs its own processes: "
                           "see --processes)", USAGE)
    arguments.check_executor(args)
    if args.executor == "dask" and args.resume and args.overwrite:
        raise CommandError("--resume and --overwrite exclude each other", USAGE)


def _directory(args):
    if args.out and os.path.isfile(args.out):
        raise CommandError("--out %s: a fleet writes one file per machine; give a directory" % args.out, USAGE)
    return arguments.newest_or_new(args, ("tfdet-fleet-*",), datetime.datetime.now().strftime(DEFAULT_DIR),
                                   "--resume: no tfdet-fleet-* directory here; name it with --out DIR")


def run(args, out):
    from ..probe.fleet import probe_flags
    from ..results import probe_settings
    from .progress import Display

    directory = _directory(args)
    flags = probe_flags({f.name: getattr(args, f.name, None) for f in probe_settings.fields()})

    message = Display(args.err, "probe", quiet=args.quiet).message

    outcomes = run_on_fleet(args, flags, directory, message, "cases")
    if outcomes is None:
        return INTERRUPTED
    rows, varied, missing = _rows(outcomes, args.fail_on_nondeterminism)
    if not args.quiet:
        print_table(out, COLUMNS, rows)
    paths = [o.path for o in outcomes if o.state != "failed"]
    if args.report and paths:
        from . import report_cmd

        report = report_cmd.render(paths, args.report, arguments.load_catalogue_or_exit(), out)
        if not args.quiet:
            out.write(report_cmd.describe(report, args.report) + "\n")
    failed = [o for o in outcomes if o.state == "failed"]
    if failed:
        args.err.write("tfdet probe: error: %s did not finish (exit %d)\n" % (
            ", ".join(o.machine for o in failed), ENVIRONMENT))
        return ENVIRONMENT
    if missing and not args.allow_missing_modes:
        args.err.write("tfdet probe: error: %s did not run (exit %d; --allow-missing-modes accepts that)\n" % (
            "; ".join(missing), ENVIRONMENT))
        return ENVIRONMENT
    if varied:
        return FINDING
    return OK


def run_on_fleet(args, flags, directory, message, finished="cases", kind="probe"):
    """Run `tfdet probe FLAGS` on every machine of the Dask cluster --scheduler names (a
    LocalCluster of --jobs workers without it): the machines' outcomes, or None when
    interrupted (said on stderr). Errors are CommandErrors with their exit codes."""
    from ..executor import ExecutorError, open_executor
    from ..probe.fleet import KINDS, FleetError, run_fleet

    try:
        with open_executor("dask", jobs=args.jobs or 2, scheduler=args.scheduler) as executor:
            message("on %s" % executor.describe())
            return run_fleet(executor, flags, directory, resume=args.resume, overwrite=args.overwrite,
                             message=message, kind=KINDS[kind])
    except KeyboardInterrupt:
        args.err.write("tfdet probe: interrupted; finished machines are in %s, and each machine keeps its "
                       "finished %s (continue with --resume --out %s)\n" % (directory, finished, directory))
        return None
    except ExecutorError as exc:
        raise CommandError(str(exc), ENVIRONMENT) from None
    except FleetError as exc:
        raise CommandError(str(exc), USAGE) from None
    except OSError as exc:
        from ..results import describe_os_error

        raise CommandError(describe_os_error(exc, directory), WRITE_FAILED) from None


def _rows(outcomes, gate_mode):
    """A row per machine; whether any machine varied under the --fail-on-nondeterminism
    mode; and the modes that did not run, per machine."""
    from ..results import ResultsError, interpret, read_probe

    rows, varied, missing = [], False, []
    for outcome in outcomes:
        if outcome.state == "failed" and not os.path.exists(outcome.path):
            rows.append([outcome.machine, outcome.host or "", "", "", "", "", "failed: %s" % outcome.error])
            continue
        try:
            results = read_probe(outcome.path)
        except ResultsError as exc:
            rows.append([outcome.machine, outcome.host or "", "", "", "", "", "failed: %s" % exc])
            continue
        environment = next(iter(results.header.environment.values()))
        gpus = ", ".join(sorted({g.get("name", "?") for g in environment.gpus})) if environment.gpus else ""
        baseline = len(interpret.varied_under(results, "baseline"))
        if gate_mode and interpret.varied_under(results, gate_mode):
            varied = True
        problems = [p.mode for p in interpret.mode_problems(results) if p.failure]
        if problems:
            missing.append("%s: mode %s" % (outcome.machine, ", ".join(problems)))
        state = outcome.state if not outcome.error else "%s: %s" % (outcome.state, outcome.error)
        rows.append([outcome.machine, outcome.host or "", environment.device + (" (%s)" % gpus if gpus else ""),
                     environment.tf_version, str(len({(r.case, r.pass_name) for r in results.measured})),
                     str(baseline), state])
    return rows, varied, missing
