"""A diverge run: plan the trainings, run the missing ones through the
executor, write each record as it finishes (weights beside the file), and
a summary of the cells at the end (also when interrupted)."""

import datetime
import hashlib
import os
import sys
from dataclasses import dataclass, field as dataclass_field
from typing import List, Optional

from .. import __version__
from ..progress import SILENT, Finished, Message, Started
from ..results.diverge_records import KIND, SCHEMA_VERSION, DivergeHeader, SummaryRecord, TrainingRecord
from ..results.errors import ResultsError, ResultsMismatch
from . import plan as planning
from . import summary as summarizing


class DivergeError(Exception):
    """The run cannot start (a mode this TF lacks, a workload that is missing a package)."""


class DivergeInputError(DivergeError):
    """What the user's training gave cannot be summarised, or the function cannot be named."""


@dataclass
class DivergeConfig:
    workload: str
    out: str
    # The sweep. None: the default (the workload's learning rates, all four conditions,
    # baseline and patched, 5 runs), or on --resume the file's. See plan.resolve_sweep.
    lrs: Optional[List[float]] = None
    conditions: Optional[List[str]] = None
    modes: Optional[List[str]] = None
    runs: Optional[int] = None
    momentum: float = 0.0
    epochs: int = 5
    batch_size: Optional[int] = None  # default: the workload's
    jobs: int = 1
    executor: str = "local"
    scheduler: Optional[str] = None
    resume: bool = False
    overwrite: bool = False
    timeout: Optional[float] = None
    argv: List[str] = dataclass_field(default_factory=list)
    # The user's own training instead of a built-in workload (then `workload` names it):
    script: Optional[str] = None  # a script under the tfdet.diverge.context() contract
    script_args: List[str] = dataclass_field(default_factory=list)
    function: Optional[str] = None  # "path/to/module.py:name": name(init_seed, batch_seed) -> (predictions, weights)
    labels: Optional[List[int]] = None  # the true classes of a function's predictions

    def __post_init__(self):
        from .workloads import WORKLOADS

        builtin = WORKLOADS.get(self.workload)
        if self.batch_size is None:
            self.batch_size = builtin.batch_size if builtin else 0


def mode_specs(modes):
    """{mode: {env, unset, api_calls, patch}} from the runtime's mode definitions
    (the catalogue's switches for the installed TF). DivergeError for a mode this TF lacks."""
    from ..catalog import default_catalogue
    from ..runtime.apply import mode_spec
    from ..runtime.modes import mode_setups
    from ..tfinfo import installed_tf_version

    tf_version = installed_tf_version()
    if tf_version is None:
        raise DivergeError("no TensorFlow is installed for %s" % sys.executable)
    setups = mode_setups(default_catalogue(), tf_version, True)
    specs = {}
    for mode in modes:
        setup = setups[mode]
        if not setup.available:
            raise DivergeError("mode %s: %s" % (mode, setup.reason))
        specs[mode] = mode_spec(setup)
    return tf_version, specs


def training_spec(config, training, mode_spec):
    spec = {"workload": training.workload, "lr": training.lr, "momentum": config.momentum, "epochs": config.epochs,
            "batch_size": config.batch_size, "init_seed": training.init_seed, "batch_seed": training.batch_seed}
    if config.script:
        spec.update(script=os.path.abspath(config.script), script_args=list(config.script_args))
    if config.function:
        spec.update(function=config.function, labels=config.labels)
    spec.update(mode_spec)
    return spec


def weights_dir(out):
    return out + ".weights"


def weights_name(training):
    workload = "".join(c if c.isalnum() or c in "-." else "-" for c in training.workload)
    return "%s_lr%s_%s_%s_%d.npz" % (workload, training.lr, training.condition, training.mode, training.run)


def weights_digest(weights):
    digest = hashlib.sha256()
    for w in weights:
        digest.update(str(w.dtype).encode() + str(w.shape).encode() + w.tobytes())
    return digest.hexdigest()


def save_weights(out, training, weights):
    """The final weights as RESULTS.weights/NAME.npz (written whole, then renamed); the name relative to out."""
    import numpy as np

    directory = weights_dir(out)
    os.makedirs(directory, exist_ok=True)
    name = weights_name(training)
    temp = os.path.join(directory, name + ".tmp.npz")
    np.savez(temp, **{"w%03d" % i: w for i, w in enumerate(weights)})
    os.replace(temp, os.path.join(directory, name))
    return os.path.join(os.path.basename(directory), name)


def load_weights(out, record):
    import numpy as np

    path = os.path.join(os.path.dirname(os.path.abspath(out)), record.weights_file or "")
    try:
        with np.load(path) as arrays:
            weights = [arrays[n] for n in sorted(arrays.files)]
    except (OSError, ValueError) as exc:
        raise ResultsError("%s: cannot read the final weights %s records: %s" % (
            path, out, getattr(exc, "strerror", None) or exc)) from None
    if weights_digest(weights) != record.weights_sha256:
        raise ResultsError("%s: the weights do not match the sha256 %s records for them" % (path, out))
    return weights


def training_record(training, result):
    """The TrainingRecord of a job's result (a dict from job.run_training, or a JobError)."""
    base = dict(record="training", workload=training.workload, lr=float(training.lr), condition=training.condition,
                mode=training.mode, run=training.run, init_seed=training.init_seed, batch_seed=training.batch_seed)
    if not isinstance(result, dict):  # the executor's JobError: the job itself raised or its worker died
        return TrainingRecord(outcome="failed", error=str(result), **base)
    if not result.get("ok"):
        return TrainingRecord(outcome=result["outcome"], error=result.get("error"), host=result.get("host"),
                              wall_seconds=result.get("wall_seconds"), **base)
    meta = result["meta"]
    return TrainingRecord(
        outcome="ok", predictions=result["predictions"], labels=result["labels"], accuracy=meta["accuracy"],
        top5_accuracy=meta.get("top5_accuracy"), final_loss=meta.get("final_loss"),
        weights_sha256=weights_digest(result["weights"]), steps=meta["steps"],
        seconds_total=meta["seconds_total"], seconds_per_step=meta["seconds_per_step"],
        wall_seconds=result.get("wall_seconds"), op_determinism=meta.get("op_determinism"),
        host=result.get("host"), pid=meta.get("pid"), **base)


def _header(config, sweep, tf_version, specs, executor_name):
    return DivergeHeader(
        record="header", schema_version=SCHEMA_VERSION, kind=KIND, tfdet_version=__version__,
        created=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        argv=list(config.argv), workload=config.workload, lrs=[float(x) for x in sweep.lrs],
        momentum=float(config.momentum), epochs=config.epochs, batch_size=config.batch_size,
        conditions=list(sweep.conditions), modes=list(sweep.modes), runs=sweep.runs, tf_version=tf_version,
        python="%d.%d.%d" % sys.version_info[:3], executor=executor_name,
        mode_env={mode: spec["env"] for mode, spec in specs.items()})


# What every training of one file shares; the sweep (lrs, conditions, modes, runs) may grow on --resume.
SAME_ON_RESUME = ("workload", "momentum", "epochs", "batch_size")


def check_resumable(old, new, path):
    for name in SAME_ON_RESUME:
        if getattr(old, name) != getattr(new, name):
            raise ResultsMismatch("%s was written with %s %s, not %s: --resume continues the same trainings only "
                                  "(it can add learning rates, conditions, modes and runs)" % (
                                      path, name, _show(getattr(old, name)), _show(getattr(new, name))))


def _show(value):
    return ",".join(map(str, value)) if isinstance(value, list) else str(value)


class Run(object):
    """One diverge run; `progress` gets its events (tfdet.progress): a training is a unit."""

    def __init__(self, config, progress):
        self.config = config
        self.progress = progress

    def sweep(self, recorded=None):
        """The sweep to run (planning.resolve_sweep), and what grew beyond the file's."""
        from .workloads import WORKLOADS

        c = self.config
        builtin = WORKLOADS.get(c.workload)
        default = planning.Sweep(list(builtin.lrs) if builtin else [0.0], list(planning.CONDITIONS),
                                 list(planning.DEFAULT_MODES), 5)
        return planning.resolve_sweep(planning.Sweep(c.lrs, c.conditions, c.modes, c.runs), recorded, default)

    def execute(self):
        """Run; the records of the file (old and new) and the summary written at the end."""
        from ..executor import open_executor
        from ..results.diverge_file import read_diverge
        from ..results.jsonl import JsonLinesWriter
        from .job import run_training

        config = self.config
        writer = JsonLinesWriter(config.out, resume=config.resume, overwrite=config.overwrite)
        try:
            existing = read_diverge(config.out) if writer.has_content() else None
            sweep, grew = self.sweep(existing.header if existing else None)
            tf_version, specs = mode_specs(sweep.modes)
            executor = open_executor(config.executor, config.jobs, config.scheduler)
            header = _header(config, sweep, tf_version, specs, executor.describe())
            trainings = planning.trainings(config.workload, sweep.lrs, sweep.conditions, sweep.modes, sweep.runs)
            records = []
            if existing is not None:
                check_resumable(existing.header, header, config.out)
                records = list(existing.trainings)
                writer.continue_after_last_line()
                if grew:  # the header says what the file plans: the grown sweep, from now on
                    writer.rewrite_first_line(header)
                    self.progress(Message("resuming %s and growing it: %s" % (config.out, "; ".join(grew))))
            else:
                writer.write_header(header)
            done = {r.key for r in records if r.outcome == "ok"}
            todo = [t for t in trainings if planning.training_key(t) not in done]
            self.progress(_started(len(todo), len(trainings) - len(todo), executor.describe()))
            by_key = {planning.training_key(t): t for t in todo}
            jobs = {key: (run_training, (training_spec(config, t, specs[t.mode]),), {"timeout": config.timeout})
                    for key, t in by_key.items()}
            try:
                if jobs:
                    with executor:
                        for key, result in executor.run(jobs):
                            training = by_key[key]
                            record = training_record(training, result)
                            if record.outcome == "ok":
                                record = _with_weights_file(record, save_weights(config.out, training,
                                                                                 result["weights"]))
                            writer.append([record])
                            records.append(record)
                            self.progress(_finished(training, record))
            finally:
                latest = {r.key: r for r in records}
                complete = all(planning.training_key(t) in latest and latest[planning.training_key(t)].outcome == "ok"
                               for t in trainings)
                try:
                    cells = summarizing.cells(records, lambda r: load_weights(config.out, r))
                except ValueError as exc:  # e.g. a script whose runs predicted different numbers of examples
                    raise DivergeInputError("%s: cannot summarise: %s" % (config.out, exc)) from None
                summary = SummaryRecord(record="summary", complete=complete, trainings=len(latest), cells=cells)
                writer.append([summary])
            return header, records, summary
        finally:
            writer.close()


def _with_weights_file(record, name):
    import dataclasses

    return dataclasses.replace(record, weights_file=name)


def _started(total, already_done, where):
    note = " (%d already in the results file)" % already_done if already_done else ""
    return Started(total, "%d training%s to run on %s%s" % (total, "" if total == 1 else "s", where, note),
                   label="training", time_left=True)


def _finished(training, record):
    what = "%s lr=%g %s %s #%d: %s" % (training.workload, training.lr, training.condition, training.mode,
                                       training.run, record.outcome)
    if record.outcome != "ok":
        what += " (%s)" % record.error
    return Finished(what, notable=record.outcome != "ok")


def run_diverge(config, progress=SILENT):
    """Run the trainings of `config`, telling `progress` (tfdet.progress events) how it goes."""
    return Run(config, progress).execute()


def function_reference(train):
    """"path/to/module.py:qualname" of a module-level function: how a fresh process finds it."""
    import inspect

    qualname = getattr(train, "__qualname__", "")
    try:
        path = inspect.getsourcefile(train)
    except TypeError:
        path = None
    if not path or not qualname or "<" in qualname:
        raise DivergeInputError("%r: give a function defined at the top level of a .py file (each training "
                                "imports it in a new process)" % (train,))
    return "%s:%s" % (os.path.abspath(path), qualname)


def diverge(train, out, labels=None, runs=None, conditions=None, modes=None, jobs=1, executor="local",
            scheduler=None, timeout=600.0, resume=False, overwrite=False, progress=None):
    """Train `train(init_seed, batch_seed) -> (predictions, weights)` K=`runs` times
    (default 5; on resume the file's, or more) per condition and mode, each in its own process; the [Cell] figures (also written to `out`).

    predictions: class ids [examples] or scores [examples, classes]; weights: a list of
    arrays (or []); labels: the true classes, for accuracy and per-class figures.
    `train` must be a top-level function of a .py file whose import does not train.
    """
    reference = function_reference(train)
    config = DivergeConfig(
        workload="function:%s" % reference.rpartition(":")[2], out=out, lrs=[0.0],
        conditions=list(conditions) if conditions else None, modes=list(modes) if modes else None, runs=runs,
        jobs=jobs, executor=executor, scheduler=scheduler, timeout=timeout, resume=resume, overwrite=overwrite,
        function=reference, labels=None if labels is None else [int(x) for x in labels], epochs=0, batch_size=0)
    _, _, summary = run_diverge(config, progress or SILENT)
    return summary.cells
