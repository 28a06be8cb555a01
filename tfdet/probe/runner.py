"""Run a probe: worker processes per mode, cases in turn, interleaved timing,
records written as each case finishes."""

import datetime
import os
import shutil
import subprocess
import sys
import tempfile

from .. import __version__
from . import cases as case_registry
from . import measure, stats
from .modes import mode_setups, process_environment
from .plan import machine_capabilities, plan_cases
from .process import WorkerFailed, WorkerProcess, module_command
from .results import ResultsWriter


class ProbeError(Exception):
    """The probe cannot run at all (no TensorFlow in that interpreter, ...)."""


class ProbeConfig(object):
    def __init__(self, catalogue, out, python=None, modes=("baseline", "env", "api"), processes=2, repeats=5,
                 size=1.0, rounds=5, seed=0, execution="function", intra_threads=None, inter_threads=None,
                 onednn=None, timeout=120.0, startup_timeout=180.0, ops=None, fixtures=(), resume=False,
                 argv=None):
        self.catalogue = catalogue
        self.out = out
        self.python = python or sys.executable
        self.modes = tuple(modes)
        self.processes = processes
        self.repeats = repeats
        self.size = size
        self.rounds = rounds
        self.seed = seed
        self.execution = execution
        self.intra_threads = intra_threads or os.cpu_count()
        self.inter_threads = inter_threads or os.cpu_count()
        self.onednn = onednn
        self.timeout = timeout
        self.startup_timeout = startup_timeout
        self.ops = ops
        self.fixtures = tuple(fixtures)
        self.resume = resume
        self.argv = argv or []


def query_tf_version(python):
    """The TF version installed for another interpreter, without importing TF."""
    try:
        done = subprocess.run(module_command(python, "tfdet.tfinfo"), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ProbeError("cannot run %s: %s" % (python, exc)) from None
    version = done.stdout.strip()
    if done.returncode != 0 or not version or version == "None":
        raise ProbeError("no TensorFlow is installed for %s%s" % (
            python, (": " + done.stderr.strip().splitlines()[-1]) if done.stderr.strip() else ""))
    return version


def patch_available():
    import tfdet

    return callable(getattr(tfdet, "patch", None))


class Probe(object):
    def __init__(self, config, progress):
        self.config = config
        self.progress = progress
        self.workers = {}  # mode -> [WorkerProcess]
        self.scratch = None

    # -- workers -----------------------------------------------------------

    def _setup_command(self, setup):
        return {"cmd": "setup", "threads": {"intra": self.config.intra_threads, "inter": self.config.inter_threads},
                "api_calls": setup.api_calls, "patch": setup.patch, "patch_kwargs": {"seed": self.config.seed},
                "execution": self.config.execution}

    def _environ(self, setup):
        extra = {}
        if self.config.onednn is not None:
            extra["TF_ENABLE_ONEDNN_OPTS"] = "1" if self.config.onednn else "0"
        return process_environment(os.environ, setup, extra)

    def _start(self, setups):
        """Start every worker at once (imports overlap), then set each up."""
        pending = []
        for mode in self.active_modes:
            for index in range(self.config.processes):
                worker = WorkerProcess(self.config.python, self._environ(setups[mode]), "%s#%d" % (mode, index))
                worker.start()
                pending.append((mode, worker))
        environments, failed = {}, {}
        for mode, worker in pending:
            try:
                self._handshake(worker, setups[mode], environments)
            except (ProbeError, WorkerFailed) as exc:  # e.g. patched mode where tfdet's deps are missing
                worker.kill()
                failed.setdefault(mode, str(exc))
                continue
            self.workers.setdefault(mode, []).append(worker)
        for mode, reason in failed.items():
            self.progress.message("mode %s dropped: %s" % (mode, reason))
            for worker in self.workers.pop(mode, []):
                worker.kill()
            self.active_modes.remove(mode)
            self.unavailable[mode] = reason
        if not self.active_modes:
            raise ProbeError("no mode could start: %s" % "; ".join("%s: %s" % kv for kv in failed.items()))
        return environments

    def _handshake(self, worker, setup, environments=None):
        hello = worker.receive(self.config.startup_timeout)
        if not hello.get("ok"):
            raise ProbeError("%s could not start TensorFlow: %s: %s" % (
                worker.name, hello["error"]["type"], hello["error"]["message"]))
        answer = worker.request(self._setup_command(setup), self.config.startup_timeout)
        if not answer.get("ok"):
            raise ProbeError("%s could not set up mode %s: %s: %s" % (
                worker.name, setup.name, answer["error"]["type"], answer["error"]["message"]))
        if environments is not None:
            environments.setdefault(setup.name, answer["environment"])

    def _restart(self, mode, index):
        """Replace a dead worker. The new one imports TF while other work goes
        on; its handshake happens when it is next asked for something."""
        old = self.workers[mode][index]
        old.kill()
        worker = WorkerProcess(self.config.python, old.environ, old.name)
        worker.start()
        worker.needs_handshake = True
        self.workers[mode][index] = worker

    def _ready(self, mode, index):
        worker = self.workers[mode][index]
        if not worker.alive() and not getattr(worker, "needs_handshake", False):
            self._restart(mode, index)
            worker = self.workers[mode][index]
        if getattr(worker, "needs_handshake", False):
            worker.needs_handshake = False
            self._handshake(worker, self.setups[mode])
        return worker

    def stop(self):
        for workers in self.workers.values():
            for worker in workers:
                worker.stop()
        if self.scratch:
            shutil.rmtree(self.scratch, ignore_errors=True)

    # -- one case ----------------------------------------------------------

    def _command(self, planned, cmd, **extra):
        command = {"cmd": cmd, "case": planned.case_id, "pass": planned.pass_name, "size": self.config.size,
                   "seed": self.config.seed}
        command.update(extra)
        return command

    def _variance(self, planned):
        results = {}
        for mode in self.active_modes:
            results[mode] = []
            for index in range(len(self.workers[mode])):
                self.progress.step(planned, mode)
                tag = "%s-%d" % (mode, index)
                command = self._command(planned, "variance", repeats=self.config.repeats, scratch=self.scratch,
                                        tag=tag)
                answer = self._ask(mode, index, command)
                results[mode].append(answer)
                if "failed" in answer:
                    break  # a case that crashed or hung once is not run again in this mode
        return results

    def _ask(self, mode, index, command):
        try:
            worker = self._ready(mode, index)
            answer = worker.request(command, self.config.timeout)
        except (WorkerFailed, ProbeError) as exc:
            self._restart(mode, index)
            return {"failed": {"message": str(exc), "stderr_tail": exc.stderr_tail}}
        if not answer.get("ok"):
            error = answer.get("error", {})
            return {"failed": {"message": "worker error %s: %s" % (error.get("type"), error.get("message")),
                               "stderr_tail": answer.get("traceback", "")[-2000:]}}
        return answer

    def _timing(self, planned, variance):
        """Latency samples per mode, in interleaved turns so drift cancels."""
        turns = [(mode, index) for mode in self.active_modes for index in range(self.config.processes)
                 if all("failed" not in r and not r.get("raised") for r in variance[mode])]
        samples = {mode: [] for mode in self.active_modes}
        for mode, index in stats.interleaved_order(turns, self.config.rounds):
            answer = self._ask(mode, index, self._command(planned, "time", samples=1))
            if "failed" not in answer and not answer.get("raised"):
                samples[mode].extend(answer["samples"])
        return samples

    def run_case(self, planned):
        variance = self._variance(planned)
        samples = self._timing(planned, variance)
        import numpy as np

        records = measure.case_records(planned.case_id, planned.pass_name, variance, samples, np.load)
        for name in os.listdir(self.scratch):
            os.remove(os.path.join(self.scratch, name))
        return records

    # -- the whole run -----------------------------------------------------

    def run(self):
        config = self.config
        tf_version = query_tf_version(config.python)
        self.setups = mode_setups(config.catalogue, tf_version, patch_available())
        unknown = [m for m in config.modes if m not in self.setups]
        if unknown:
            raise ProbeError("unknown mode %s" % ", ".join(unknown))
        self.active_modes = [m for m in config.modes if self.setups[m].available]
        unavailable = self.unavailable = {m: self.setups[m].reason for m in config.modes if not self.setups[m].available}
        if not self.active_modes:
            raise ProbeError("none of the modes can run: %s" % "; ".join("%s: %s" % kv for kv in unavailable.items()))
        for mode, reason in unavailable.items():
            self.progress.message("mode %s skipped: %s" % (mode, reason))
        self.progress.message("starting %d TensorFlow %s processes (%s x %d)" % (
            len(self.active_modes) * config.processes, tf_version, ", ".join(self.active_modes), config.processes))
        self.scratch = tempfile.mkdtemp(prefix="tfdet-probe-")
        environments = self._start(self.setups)
        first = environments[self.active_modes[0]]
        planned, skipped = plan_cases(
            config.catalogue, case_registry.describe_cases(), first["tf_version"], first["device"],
            machine_capabilities(first["device"], len(first["gpus"])), only=config.ops, fixtures=config.fixtures)
        header = {
            "record": "header", "schema_version": 1, "tfdet_version": __version__,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "argv": list(config.argv), "modes": self.active_modes, "unavailable_modes": unavailable,
            "processes": config.processes, "repeats": config.repeats, "size": config.size, "rounds": config.rounds,
            "seed": config.seed, "execution": config.execution, "timeout_s": config.timeout,
            "threads": {"intra_op": config.intra_threads, "inter_op": config.inter_threads},
            "environment": environments,
            "planned": [list(p) for p in planned], "skipped": [list(s) for s in skipped],
        }
        writer = ResultsWriter(config.out, header, resume=config.resume)
        try:
            writer.write_case([measure.skipped_record(s.case_id, s.reason) for s in skipped])
            todo = [p for p in planned if any((p.case_id, p.pass_name, m) not in writer.done for m in self.active_modes)]
            self.progress.start(len(todo), len(planned) - len(todo))
            for planned_case in todo:
                records = self.run_case(planned_case)
                writer.write_case(records)
                self.progress.finished(planned_case, records)
        finally:
            writer.close()
        return header


def run_probe(config, progress):
    """Run a probe; returns its header. Workers are stopped however it ends."""
    probe = Probe(config, progress)
    try:
        return probe.run()
    finally:
        probe.stop()
