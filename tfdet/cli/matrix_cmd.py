"""`tfdet matrix`: probe every TensorFlow from 1.15 to 2.21 on this CPU, one
cached virtual environment per version."""

import argparse
import json
import os
import signal

from . import arguments
from .exitcodes import ENVIRONMENT, FINDING, INVALID_INPUT, OK, USAGE, WRITE_FAILED, CommandError
from .probe_cmd import _end_like_ctrl_c_on_sigterm
from .tables import FIXED, KEY, Column, print_table

HELP = "probe every TensorFlow from 1.15 to 2.21 on this CPU, one cached environment per version"

EPILOG = """\
For each TF version (1.15 and every minor 2.0 ... 2.21) the matrix makes a
virtual environment -- a pyenv Python that has CPU wheels for it, and the pins
that version needs (see --list) -- and runs `tfdet probe --python` in it, in
the modes that TF has: baseline (TF as it comes), env (TF_DETERMINISTIC_OPS /
TF_CUDNN_DETERMINISTIC) and api (enable_op_determinism, TF 2.8 and later).

Environments are cached in --venvs DIR (default $TFDET_VENVS, else
~/.cache/tfdet/venvs), one per version, named tf<X.Y>-py<A.B>; one that
already imports the wanted TF and passes a smoke test (import, an eager op, a
gradient) is reused. pip runs with --no-cache-dir (a TF wheel is 0.2-0.6 GB;
the environments alone take about 1.5 GB each). A version that cannot be
installed or imported is recorded -- which step, the last lines it printed --
and the others go on.

Results go to --out DIR (default reports/matrix): one ordinary probe results
file per version, probe-tf<X.Y>-cpu.jsonl (tfdet report and tfdet.results.load
read it), and matrix.json, the manifest: per version its Python, pins,
installed versions, status, environment creation and probe wall times. Each
version is written as it finishes. --resume keeps complete versions and runs
only the rest (an interrupted version's probe continues where it stopped);
--overwrite starts again. Versions run through the executor: --jobs N at once
on this machine, or on a Dask cluster (--executor dask --scheduler ADDR).

examples:
  tfdet matrix --list                                  # the versions, Pythons and pins
  tfdet matrix --create-only                           # build every environment, probe nothing
  tfdet matrix --versions 1.15,2.6,2.21 --out /tmp/m   # three versions
  tfdet matrix --resume                                # finish an interrupted matrix
  tfdet matrix --executor dask --scheduler tcp://10.0.0.5:8786 --jobs 8

exit codes: 0 every version installed and probed; 1 some version failed to
install or to probe (recorded in matrix.json; the others ran); 2 usage (a bad
flag, an unknown version or mode, earlier results in --out without --resume or
--overwrite, --resume where --out has none); 3 matrix.json or a results file in --out is not one; 4
environment (dask missing, a scheduler that does not answer); 5 --out could not
be written; 130 interrupted (finished versions kept; --resume continues).
"""

# The probe settings a matrix uses unless told otherwise: enough runs to catch
# the CPU ops that vary (the probe escalates up to --max-repeats for ops the
# catalogue says vary), few enough that every version fits in minutes.
PROBE_DEFAULTS = {"repeats": 3, "processes": 2, "max_repeats": 30, "rounds": 1}


def add_parser(commands):
    parser = commands.add_parser("matrix", help=HELP, description=HELP[0].upper() + HELP[1:] + ".", epilog=EPILOG,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--versions", metavar="X.Y,...|all", default="all",
                        help="TF versions, comma-separated, or all (default)")
    parser.add_argument("--modes", metavar="MODE,...", default=None,
                        help="from baseline, env, api (default: all three; each version runs those it has)")
    arguments.add_output_file(parser, "results directory (default: %(default)s)",
                              default=os.path.join("reports", "matrix"), metavar="DIR")
    parser.add_argument("--venvs", metavar="DIR",
                        help="environments directory (default: $TFDET_VENVS, else ~/.cache/tfdet/venvs)")
    parser.add_argument("--ops", metavar="NAME,...",
                        help="probe only these (catalogue ids, API aliases or raw op names; default: all)")
    parser.add_argument("--repeats", type=arguments.runs, default=PROBE_DEFAULTS["repeats"], metavar="N",
                        help="probe runs per process (default %(default)s)")
    parser.add_argument("--max-repeats", type=arguments.max_repeats, default=PROBE_DEFAULTS["max_repeats"],
                        metavar="N", help="probe runs per case and mode at most, for ops the catalogue says vary "
                        "(default %(default)s)")
    parser.add_argument("--settle", action="store_true",
                        help="probe runs up to --max-repeats also where the catalogue has no claim (unknown), so "
                             "that quiet ops are measured well enough for tfdet catalog update to claim them "
                             "(slower)")
    parser.add_argument("--rounds", type=arguments.rounds, default=PROBE_DEFAULTS["rounds"], metavar="N",
                        help="probe timing rounds per process (default %(default)s)")
    parser.add_argument("--timeout", type=arguments.timeout, default=None, metavar="SECONDS",
                        help="per-case limit of the probe (default: the probe's)")
    arguments.add_executor(parser, jobs_help="versions at once (default 1: probes time their cases, and share the "
                                             "cores)")
    parser.add_argument("--create-only", action="store_true", help="create (or check) the environments, probe nothing")
    parser.add_argument("--resume", action="store_true", help="keep complete versions in --out, run the rest")
    parser.add_argument("--overwrite", action="store_true", help="discard earlier results in --out")
    parser.add_argument("--list", action="store_true", help="print the versions table (and what --out has) and exit")
    parser.add_argument("--json", action="store_true", help="print the outcome as JSON instead of a table")
    arguments.add_quiet(parser)
    parser.set_defaults(run=run)


def _config(args):
    from ..matrix import MatrixConfig, PlanError, parse_modes, parse_versions, venvs_dir

    try:
        versions, modes = parse_versions(args.versions), parse_modes(args.modes)
    except PlanError as exc:
        raise CommandError(str(exc), USAGE) from None
    if args.resume and args.overwrite:
        raise CommandError("--resume and --overwrite exclude each other", USAGE)
    if args.resume and not _has_results(args.out):
        raise arguments.nothing_to_resume("matrix results in", args.out, "run without --resume to start them")
    arguments.check_executor(args)
    probe = {"repeats": args.repeats, "processes": PROBE_DEFAULTS["processes"], "max_repeats": args.max_repeats,
             "rounds": args.rounds, "timeout": args.timeout, "ops": _ops(args.ops), "settle": args.settle}
    return MatrixConfig(versions=versions, modes=modes, out_dir=os.path.abspath(args.out),
                        venvs=venvs_dir(args.venvs), probe=probe, executor=args.executor, jobs=args.jobs,
                        scheduler=args.scheduler, create_only=args.create_only, resume=args.resume,
                        overwrite=args.overwrite)


def _has_results(directory):
    """Whether a directory holds an earlier matrix's manifest or results files."""
    return os.path.isdir(directory) and any(name.endswith((".json", ".jsonl")) for name in os.listdir(directory))


def _ops(text):
    if text is None:
        return None
    ops = [part.strip() for part in text.split(",") if part.strip()]
    if not ops:
        raise CommandError("--ops: empty list", USAGE)
    return ops


def _manifest(out_dir):
    from ..matrix import MANIFEST_NAME, ManifestError, load_manifest

    try:
        return load_manifest(os.path.join(out_dir, MANIFEST_NAME))
    except ManifestError as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None


def run(args, out):
    config = _config(args)
    if args.list:
        return _list(args, out, config)
    from ..executor import ExecutorError
    from ..matrix import ManifestError, MatrixExists, run_matrix
    from .progress import Display
    from ..results import ResultsError

    catalogue = arguments.load_catalogue_or_exit()
    progress = Display(args.err, "matrix", quiet=args.quiet or args.json)
    terminate = _end_like_ctrl_c_on_sigterm()  # SIGTERM ends the run as Ctrl-C does: finished versions kept
    try:
        manifest, plans = run_matrix(config, catalogue, progress)
    except MatrixExists as exc:
        raise CommandError(str(exc), USAGE) from None
    except (ManifestError, ResultsError) as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
    except ExecutorError as exc:
        raise CommandError(str(exc), ENVIRONMENT) from None
    except OSError as exc:
        raise CommandError(str(exc), WRITE_FAILED) from None
    finally:
        progress.close()
        if terminate is not None:
            signal.signal(signal.SIGTERM, terminate)
    wanted = [v.tf for v in config.versions]
    _show(args, out, manifest, config.out_dir, wanted)
    bad = [tf for tf in wanted if manifest["versions"].get(tf, {}).get("status") in ("failed", "probe-failed")]
    return FINDING if bad else OK


def _list(args, out, config):
    from ..matrix import env_name, results_path

    manifest = _manifest(config.out_dir)
    rows = []
    for version in config.versions:
        entry = manifest["versions"].get(version.tf, {})
        python = os.path.join(config.venvs, env_name(version), "bin", "python")
        rows.append({"tf": version.tf, "python": version.python, "env": env_name(version),
                     "requirements": list(version.requirements), "env_exists": os.path.exists(python),
                     "status": entry.get("status", "-"),
                     "results": results_path(config.out_dir, version) if os.path.exists(
                         results_path(config.out_dir, version)) else None})
    if args.json:
        json.dump({"venvs": config.venvs, "out": config.out_dir, "versions": rows}, out, indent=1)
        out.write("\n")
        return OK
    print_table(out, [Column("TF", FIXED), Column("python", FIXED), Column("requirements", KEY),
                      Column("env", FIXED), Column("status", FIXED)],
                [[r["tf"], r["python"], " ".join(r["requirements"]), "yes" if r["env_exists"] else "-",
                  r["status"]] for r in rows])
    out.write("environments: %s\nresults: %s\n" % (config.venvs, config.out_dir))
    return OK


def _count(cases):
    return "-" if cases is None else str(len(cases))


def _show(args, out, manifest, out_dir, wanted):
    from ..matrix import summary_changes, summary_rows

    rows = summary_rows(manifest, out_dir, wanted)
    if args.json:
        json.dump({"out": out_dir, "versions": rows, "last_run": manifest.get("last_run")}, out, indent=1)
        out.write("\n")
        return
    table = []
    for r in rows:
        env, probe, varied = r.get("environment") or {}, r.get("probe") or {}, r.get("varied") or {}
        why = "" if r["status"] != "failed" else " (%s)" % env.get("failed_step")
        table.append([r["tf"], r["python"], env.get("tf_version") or "-", r["status"] + why,
                      "%.0f" % r["creation_seconds"] if r.get("creation_seconds") else "-",
                      "%.0f" % probe["seconds"] if probe.get("seconds") is not None else "-",
                      _count(varied.get("baseline")), _count(varied.get("env")), _count(varied.get("api"))])
    print_table(out, [Column("TF", FIXED), Column("python", FIXED), Column("installed", FIXED),
                      Column("status", FIXED), Column("env s", FIXED), Column("probe s", FIXED),
                      Column("vary: baseline", FIXED), Column("env", FIXED), Column("api", FIXED)], table)
    changed = summary_changes(rows)
    if changed:
        out.write("\nchanges against the version before (cases both measured):\n")
        for tf, mode, moved in changed:
            out.write("  %-5s %-8s %s\n" % (tf, mode, ", ".join(
                "%s %s" % (case, "now varies" if now == "varies" else "now " + now) for case, _, now in moved)))
    from ..matrix.run import summary_line

    for r in rows:
        if r["status"] in ("failed", "probe-failed"):
            out.write("TF %s: %s\n" % (r["tf"], summary_line(r)))
        elif r.get("results_error"):
            out.write("TF %s: %s\n" % (r["tf"], r["results_error"]))
    last = manifest.get("last_run") or {}
    out.write("results: %s (manifest %s)%s\n" % (out_dir, "matrix.json", "; this run: %.0f s" % last["seconds"]
                                                  if last.get("seconds") is not None else ""))
