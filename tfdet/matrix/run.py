"""A matrix run: plan the versions, run each through the executor, record each
in the manifest as it finishes."""

import datetime
import os
import time
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from .. import __version__
from ..progress import SILENT, Finished, Started
from . import manifest as manifests
from . import plan as planning
from .job import run_version
from .versions import env_name, version_key


@dataclass
class MatrixConfig:
    versions: list                     # rows of versions.VERSIONS
    modes: List[str]
    out_dir: str
    venvs: str
    probe: Dict[str, object] = field(default_factory=dict)  # repeats, processes, max_repeats, rounds, timeout
    executor: str = "local"
    jobs: int = 1
    scheduler: Optional[str] = None
    create_only: bool = False
    resume: bool = False
    overwrite: bool = False


class MatrixExists(Exception):
    """The output directory has results of an earlier run and neither --resume nor --overwrite was given."""


def make_plans(config, catalogue):
    """One VersionPlan per version: the modes it runs, why others do not, its results file and state."""
    from ..runtime.modes import mode_setups
    from ..results import read_probe
    from ..results.interpret import not_measured

    plans = []
    for version in config.versions:
        modes, not_run = planning.version_modes(config.modes, mode_setups(catalogue, version.tf, False))
        path = planning.results_path(config.out_dir, version)
        state = planning.MISSING if config.overwrite else planning.results_state(path, read_probe, not_measured)
        plans.append(planning.VersionPlan(version, modes, not_run, path, state))
    return plans


def _entry(plan, outcome, config):
    env, probe = outcome["env"], outcome["probe"]
    entry = {"tf": plan.version.tf, "python": plan.version.python, "env": env_name(plan.version),
             "requirements": list(plan.version.requirements), "environment": env,
             "modes": plan.modes, "modes_not_run": plan.not_run,
             # the first creation's wall time; a later run that reuses the environment keeps it
             "creation_seconds": env["seconds"] if env["status"] == "created" else None}
    if probe is not None:
        entry["probe"] = dict(probe, results=os.path.basename(plan.results),
                              parameters=dict(config.probe))
    status = "failed" if env["status"] == "failed" else "probed" if probe and probe["status"] == "probed" \
        else "probe-failed" if probe else "installed"
    entry["status"] = status
    return entry


def summary_line(entry):
    env = entry["environment"]
    if env["status"] == "failed":
        return "install failed at %s: %s" % (env["failed_step"], (env["error"].splitlines() or [""])[-1])
    text = "env %s (%.0f s, tensorflow %s, python %s)" % (env["status"], env["seconds"], env["tf_version"],
                                                          entry["python"])
    probe = entry.get("probe")
    if probe is None or entry["status"] == "installed":
        return text
    if probe["status"] != "probed":
        return text + "; probe FAILED (exit %s): %s" % (probe["exit_code"], (probe["error"].splitlines() or [""])[-1])
    return text + "; probed %s in %.0f s -> %s" % (",".join(entry["modes"]), probe["seconds"], probe["results"])


def _started(total, skipped, where):
    note = " (%d already complete, kept)" % skipped if skipped else ""
    return Started(total, "%d TF version%s to do on %s%s" % (total, "" if total == 1 else "s", where, note),
                   label="TF versions")


def run_matrix(config, catalogue, progress=SILENT):
    """Run every pending version; returns the manifest. Raises MatrixExists,
    manifests.ManifestError, ExecutorError, OSError (writing)."""
    from ..executor import JobError, open_executor

    manifest_path = os.path.join(config.out_dir, planning.MANIFEST_NAME)
    data = manifests.load(manifest_path)
    plans = make_plans(config, catalogue)
    earlier = [p for p in plans if p.state != planning.MISSING]
    if earlier and not (config.resume or config.overwrite) and not config.create_only:
        raise MatrixExists("%s already has results for TF %s; --resume continues (keeps complete versions), "
                           "--overwrite starts again" % (config.out_dir, ", ".join(p.version.tf for p in earlier)))
    todo = plans if config.create_only else planning.pending(plans)
    if not todo:  # everything is complete: the manifest (and its last run) stays as it is
        progress(_started(0, len(plans), "nothing"))
        return data, plans
    os.makedirs(config.out_dir, exist_ok=True)
    if config.overwrite:
        for plan in plans:
            if os.path.exists(plan.results):
                os.remove(plan.results)
    data = dict(data, tfdet_version=__version__, updated=_now())
    jobs = {plan.version.tf: (run_version, (plan.version.tf, config.venvs, plan.results, plan.modes, config.probe,
                                             plan.state == planning.PARTIAL, config.create_only), {})
            for plan in todo}
    by_tf = {plan.version.tf: plan for plan in todo}
    started = time.time()
    with open_executor(config.executor, config.jobs, config.scheduler) as executor:
        progress(_started(len(todo), len(plans) - len(todo), executor.describe()))
        for tf, outcome in executor.run(jobs):
            plan = by_tf[tf]
            if isinstance(outcome, JobError):
                outcome = {"env": {"status": "failed", "failed_step": "job", "error": str(outcome), "seconds": 0,
                                   "tf_version": None}, "probe": None}
            entry = _entry(plan, outcome, config)
            data = manifests.update(data, tf, entry)
            manifests.save(data, manifest_path)
            progress(Finished("TF %s: %s" % (tf, summary_line(entry)), notable=True))
    data = dict(data, last_run={"seconds": round(time.time() - started, 1), "versions": sorted(by_tf, key=version_key),
                                "executor": config.executor, "jobs": config.jobs, "finished": _now()})
    manifests.save(data, manifest_path)
    return data, plans


def _now():
    return datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat()
