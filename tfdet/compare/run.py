"""A comparison run: paired trainings of A and B in rounds, through the
executor and diverge's one-training job (tfdet.diverge.job.run_training: a
fresh process each), each record written as it finishes; the rule looks after
every round and stops when the interval of P(A>B) decides or the budget is
spent; then the variance shares' trainings, and a summary (also when interrupted)."""

import dataclasses
import datetime
import sys
import time
from dataclasses import dataclass, field as dataclass_field
from typing import Dict, List, Optional

from .. import __version__
from ..progress import SILENT, Finished, Message, Started
from ..results.compare_records import KIND, SCHEMA_VERSION, CompareHeader, CompareTraining, Setup
from ..results.errors import ResultsMismatch
from . import plan as planning
from . import stats
from . import summary as summarizing


class CompareError(Exception):
    """The run cannot start (a mode this TF lacks, a setup that cannot train)."""


@dataclass
class CompareConfig:
    a: Setup
    b: Setup
    out: str
    others: List[Setup] = dataclass_field(default_factory=list)  # C, D, ...: each compared with A as B is
    aa: bool = False
    sources: List[str] = dataclass_field(default_factory=lambda: ["data", "init", "order", "numerics"])
    gamma: float = stats.DEFAULT_GAMMA
    level: float = stats.DEFAULT_LEVEL
    interval: str = "percentile"
    resamples: int = stats.DEFAULT_RESAMPLES
    seed: int = 0
    min_runs: int = 10
    max_runs: int = 30
    step: int = 5
    share_runs: int = 0
    jobs: int = 1
    executor: str = "local"
    scheduler: Optional[str] = None
    resume: bool = False
    overwrite: bool = False
    timeout: Optional[float] = 600.0
    space: Dict[str, str] = dataclass_field(default_factory=dict)  # the hparams source's distributions
    labels: Optional[List[int]] = None  # a function setup's true classes (the metric needs them)
    argv: List[str] = dataclass_field(default_factory=list)


def header_of(config, tf_version, executor_name):
    return CompareHeader(
        record="header", schema_version=SCHEMA_VERSION, kind=KIND, tfdet_version=__version__,
        created=datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), argv=list(config.argv),
        a=config.a, b=config.b, others=list(config.others), aa=config.aa, sources=list(config.sources),
        fixed=planning.fixed_sources(config.sources), metric="accuracy", gamma=float(config.gamma),
        level=float(config.level), interval=config.interval, resamples=config.resamples, seed=config.seed,
        min_runs=config.min_runs, max_runs=config.max_runs, step=config.step,
        looks=stats.planned_looks(config.min_runs, config.max_runs, config.step), share_runs=config.share_runs,
        space=dict(config.space),
        tf_version=tf_version, python="%d.%d.%d" % sys.version_info[:3], executor=executor_name)


# What --resume may change: the budget (more runs) and where it runs; everything else is the file's.
MAY_CHANGE = ("created", "argv", "max_runs", "looks", "share_runs", "executor", "tfdet_version", "python")


def check_resumable(old, new, path):
    for f in dataclasses.fields(CompareHeader):
        if f.name not in MAY_CHANGE and getattr(old, f.name) != getattr(new, f.name):
            raise ResultsMismatch("%s was written with another %s: --resume continues the same comparison only "
                                  "(it can raise --max-runs and --shares)" % (path, f.name))
    if new.max_runs < old.max_runs:
        raise ResultsMismatch("%s planned %d runs: --resume can add runs, not remove them" % (path, old.max_runs))


def training_record(planned, result):
    base = dict(record="training", arm=planned.arm, pair=planned.pair, mode=planned.mode,
                init_seed=planned.init_seed, batch_seed=planned.batch_seed, data_seed=planned.data_seed,
                augment_seed=planned.augment_seed, hparams=dict(planned.hparams))
    if not isinstance(result, dict):  # the executor's JobError
        return CompareTraining(outcome="failed", error=str(result), **base)
    if not result.get("ok"):
        return CompareTraining(outcome=result["outcome"], error=result.get("error"), host=result.get("host"),
                               wall_seconds=result.get("wall_seconds"), **base)
    score = result["meta"].get("accuracy")
    if score is None:
        return CompareTraining(outcome="failed", error="no accuracy: the training saved no labels",
                               host=result.get("host"), wall_seconds=result.get("wall_seconds"), **base)
    return CompareTraining(outcome="ok", score=float(score), host=result.get("host"),
                           wall_seconds=result.get("wall_seconds"), **base)


def _finished(record):
    """Every training's line stays (its score is part of the story of the comparison)."""
    return Finished("%s #%d: %s" % (record.arm, record.pair, "%.4f" % record.score if record.outcome == "ok"
                                    else "%s (%s)" % (record.outcome, record.error)), notable=True)


class Run(object):
    def __init__(self, config, progress=None):
        self.config = config
        self.progress = progress or SILENT  # tfdet.progress events: a training is a unit
        self.records = []

    def _train(self, executor, writer, planned_list, mode_specs):
        from ..diverge.job import run_training

        done = {r.key for r in self.records if r.outcome == "ok"}
        todo = {(p.arm, p.pair): p for p in planned_list if (p.arm, p.pair) not in done}
        if not todo:
            return
        setups = {"A": self.config.a, "B": self.config.a if self.config.aa else self.config.b}
        setups.update((setup.name, setup) for setup in self.config.others)
        jobs = {}
        for key, p in todo.items():
            spec = planning.spec(setups.get(p.arm, self.config.a), p, mode_specs[p.mode])
            if spec.get("function") is not None:
                spec["labels"] = self.config.labels
            jobs[key] = (run_training, (spec,), {"timeout": self.config.timeout})
        self.progress(Started(len(jobs), label="training"))
        for key, result in executor.run(jobs):
            record = training_record(todo[key], result)
            writer.append([record])
            self.records.append(record)
            self.progress(_finished(record))

    def execute(self):
        """Run; (header, records, looks, summary)."""
        from ..diverge.run import DivergeError, mode_specs
        from ..executor import open_executor
        from ..results.compare_file import read_compare
        from ..results.jsonl import JsonLinesWriter

        config, started = self.config, time.monotonic()
        writer = JsonLinesWriter(config.out, resume=config.resume, overwrite=config.overwrite)
        try:
            existing = read_compare(config.out) if writer.has_content() else None
            modes = ["baseline" if "numerics" in config.sources else "patched"]
            if config.share_runs and "numerics" in config.sources:
                modes = ["baseline", "patched"]
            try:
                tf_version, specs = mode_specs(modes)
            except DivergeError as exc:
                raise CompareError(str(exc)) from None
            executor = open_executor(config.executor, config.jobs, config.scheduler)
            header = header_of(config, tf_version, executor.describe())
            looks = []
            if existing is not None:
                check_resumable(existing.header, header, config.out)
                self.records, looks = list(existing.trainings), list(existing.looks)
                writer.continue_after_last_line()
                if header.max_runs != existing.header.max_runs or header.share_runs != existing.header.share_runs:
                    writer.rewrite_first_line(header)
                    self.progress(Message("resuming %s: budget %d -> %d runs" % (
                        config.out, existing.header.max_runs, header.max_runs)))
            else:
                writer.write_header(header)
            sizes = stats.look_sizes(config.min_runs, config.max_runs, config.step)
            result = {"complete": False, "stopped": "interrupted"}
            try:
                with executor:
                    self._sequential(executor, writer, header, sizes, looks, specs, result)
                    if config.share_runs:
                        self.progress(Message("variance shares: %d trainings per source" % config.share_runs))
                        shares = [t for s in config.sources
                                  for t in planning.share_trainings(s, config.share_runs, config.space)]
                        self._train(executor, writer, shares, specs)
                result["complete"] = True
            finally:
                final = summarizing.summary(header, self.records, result["complete"], result["stopped"],
                                            len(looks), time.monotonic() - started)
                writer.append([final])
            return header, self.records, looks, final
        finally:
            writer.close()

    def _sequential(self, executor, writer, header, sizes, looks, specs, result):
        """Look after each round; stop at the first look where every comparison is decided, or
        when the budget is spent."""
        arms = summarizing.candidates(header)
        for number, size in enumerate(sizes, 1):
            current = {x.arm: x for x in looks if x.number == number and x.pairs >= size}
            if len(current) < len(arms):
                self._train(executor, writer, [t for pair in range(size)
                                               for t in planning.pair_trainings(pair, header.sources, header.aa,
                                                                                 header.space, arms)], specs)
                for arm in arms:
                    made = summarizing.look(header, self.records, number, arm)
                    if made is None:
                        continue
                    writer.append([made])
                    looks.append(made)
                    current[arm] = made
                    self.progress(Message("look %d at %d pairs: P(A>%s) = %.3f [%.3f, %.3f] -> %s" % (
                        number, made.pairs, arm, made.p.value, made.p.lower, made.p.upper, made.verdict)))
            if len(current) == len(arms) and all(x.verdict in stats.DECIDED for x in current.values()):
                pairs = min(x.pairs for x in current.values())
                result["stopped"] = "decided at look %d of %d (%d pairs)" % (number, len(sizes), pairs)
                return
        result["stopped"] = "budget spent: %d pairs, %d looks, undecided" % (sizes[-1], len(sizes))


def run_compare(config, progress=SILENT):
    """Run the comparison of `config`, telling `progress` (tfdet.progress events) how it goes."""
    return Run(config, progress).execute()
