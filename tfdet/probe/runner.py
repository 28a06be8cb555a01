"""Run a probe: worker processes per mode, cases in turn, interleaved timing,
records written as each case finishes."""

import collections
import dataclasses
import datetime
import functools
import hashlib
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from .. import __version__
from ..catalog import expected_to_vary
from ..progress import SILENT, Finished, Message, Started, Working
from ..results import interpret, stats
from ..results.arrays import load_array
from ..results.probe_file import ProbeResultsWriter, read_probe
from ..results.probe_settings import header_settings
from ..results.probe_records import SCHEMA_VERSION, EndRecord, Environment, ProbeHeader, Threads
from . import cases
from . import measure, scratch
from ..runtime.forking import ForkServer, ForkServerError, fork_verdict
from ..runtime.launch import ChildSpec, launch
from ..runtime.modes import classify_modes, mode_setups, mode_switch_ids, process_environment
from .plan import machine_capabilities, plan_cases
from .process import PRELOAD, WorkerFailed, WorkerProcess, stop_all, worker_environ


# Forked processes share what their server had when it forked: Python's hash seed, the
# address layout, numpy's global generator. The processes of a mode come from different
# servers (process i from server i % 2), so the cross-process evidence ("distinct across
# processes") still compares two hash seeds and two layouts, as two fresh interpreters would.
FORK_SERVERS = 2


class ProbeError(Exception):
    """The probe cannot run at all (no TensorFlow in that interpreter, ...)."""


class ScratchError(OSError):
    """The scratch space (where workers save output arrays) could not be written."""


class ProbeConfig(object):
    def __init__(self, catalogue, out, python=None, modes=("baseline", "env", "api"), processes=2, repeats=5,
                 size=1.0, rounds=2, seed=0, execution="function", intra_threads=None, inter_threads=None,
                 onednn=None, timeout=120.0, startup_timeout=180.0, ops=None, fixtures=(), resume=False,
                 argv=None, max_repeats=100, modes_requested=True, max_extra_seconds=15.0, overwrite=False,
                 results=None, settle=False, settings=None, startup="auto", concurrent=None):
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
        self.overwrite = overwrite
        # A ProbeResultsWriter that has already claimed `out` (the CLI claims it before
        # anything slow starts, so a second writer fails at once); None: run_probe claims it.
        self.results = results
        self.argv = argv or []
        # Runs per (case, pass, mode) at most before a case the catalogue (or
        # another mode) says varies is called deterministic; the first
        # processes x repeats runs count. See Probe._escalate.
        self.max_repeats = max(max_repeats, processes * repeats)
        # True: where the catalogue has no claim for this TF and device (unknown, or
        # none), a case that has not varied also gets up to max_repeats runs, so that
        # its silence is strong enough to become one (tfdet catalog update).
        self.settle = settle
        # ... and at most this long in extra runs per (case, pass, mode), so one slow
        # case cannot take over the run; the record says how many runs it got.
        self.max_extra_seconds = max_extra_seconds
        # True: every mode in `modes` was asked for, and one that cannot run is a
        # failure; False (the default modes): one this TF lacks is only noted.
        self.modes_requested = modes_requested
        # {name: value} of any other setting (results/probe_settings.py): recorded in the header
        self.settings = dict(settings or {})
        # "auto": fork the workers from one process that imported TF once, where
        # that is safe and checked (runtime/forking.py); "plain": a fresh interpreter each.
        self.startup = startup
        # TensorFlow processes that run a case at once in the variance runs and the
        # extra runs (one mode each; a mode's own processes take their turns in
        # order). Timing rounds always run one process at a time. None: default_concurrency().
        self.concurrent = concurrent or self.settings.get("concurrent") or default_concurrency()


def default_concurrency(cpu_count=None):
    """Processes running cases at once by default: 2 where there are 2 cores or more.
    Much of a case's cost in a worker is Python on one core (building the case,
    tracing it), so a second process fills the second core; more than two would
    only queue for the cores while each TF op already uses every core."""
    cores = os.cpu_count() if cpu_count is None else cpu_count
    return 2 if (cores or 1) >= 2 else 1


def repeat_waves(modes, concurrent):
    """How the extra runs of `modes` modes go: waves of at most `concurrent` modes, in
    turn, each a list of (mode's position, processes it runs batches in at once).
    A wave of fewer modes than `concurrent` (the last of three on two cores, or
    bincount under patched alone) gives each more processes, so no core waits."""
    waves, concurrent = [], max(1, concurrent)
    for first in range(0, modes, concurrent):
        wave = list(range(first, min(modes, first + concurrent)))
        waves.append([(i, max(1, concurrent // len(wave))) for i in wave])
    return waves


def query_tf_version(python):
    """The TF version installed for another interpreter, without importing TF."""
    try:
        done = launch(ChildSpec(module="tfdet.tfinfo", python=python, timeout=60, stdout="capture"))
    except OSError as exc:
        raise ProbeError("cannot run %s: %s" % (python, exc)) from None
    if done.timed_out:
        raise ProbeError("cannot run %s: no answer within 60 s" % python)
    version = done.stdout.strip()
    if done.returncode != 0 or not version or version == "None":
        raise ProbeError("no TensorFlow is installed for %s%s" % (
            python, (": " + done.stderr.strip().splitlines()[-1]) if done.stderr.strip() else ""))
    return version


def catalogue_digest():
    """sha256 of the shipped catalogue's files: records mean what that catalogue said."""
    from ..catalog.load import shipped_catalogue_dir

    digest = hashlib.sha256()
    directory = shipped_catalogue_dir()
    for name in sorted(os.listdir(directory)):
        if name.endswith((".yaml", ".yml", ".json")):
            with open(os.path.join(directory, name), "rb") as handle:
                digest.update(name.encode("utf-8") + b"\0" + handle.read() + b"\0")
    return "sha256:" + digest.hexdigest()[:16]


def patch_available(python=None):
    """Whether the patched mode can run: this tfdet has patch(), and the workers'
    interpreter (`python`, when it is another one) can import it and its
    catalogue (a bare TF environment lacks PyYAML and the rest)."""
    import tfdet

    if not callable(getattr(tfdet, "patch", None)):
        return False
    if python is None:  # the workers run this interpreter, which runs this tfdet
        return True
    # Asked even of a path that resolves to this interpreter's binary: a virtual
    # environment links to it and still has site-packages of its own.
    try:
        return launch(ChildSpec(module="tfdet.probe.patch_check", python=python, timeout=300)).ok
    except OSError:
        return False


class Probe(object):
    def __init__(self, config, progress):
        self.config = config
        self.progress = progress
        self.workers = {}  # mode -> [WorkerProcess]: `processes` of them, then one for adaptive repeats
        self.scratch = None
        self.mode_failures = {}  # mode -> why a mode that should have run did not
        self.expectations = {}  # (case id, mode) -> why the catalogue expects variance there
        self.unsettled = {}  # (case id, mode) -> why more runs could settle the catalogue's claim (--settle)
        self.forks = []  # the fork servers the workers come from (process i from server i % len); []: plain start-up
        self.startup = "plain"  # how the workers started, for the header: "fork", or "plain: why"
        # Where the run's time went, in seconds: wall time of each phase here, and the
        # workers' own import and case-building time (summed over workers). Not recorded;
        # benchmarks/bench_probe.py prints it.
        self.spent = collections.Counter()
        # The same per (case, pass): {(case id, pass): Counter of phase -> seconds}, with the
        # workers' CPU seconds per phase (load-independent, unlike wall time).
        self.spent_by_case = collections.defaultdict(collections.Counter)
        self._phase = "variance runs"
        self._case = None
        self._lock = threading.Lock()  # self.spent, progress and the workers' list, shared by the concurrent modes
        self.stopping = False  # set by stop(): a worker lost now is not replaced

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

    def _start_forks(self, tf_version):
        """Start the fork servers the workers will come from; how they will start ("fork", or "plain: why")."""
        if self.config.startup == "plain":
            return "plain: asked for (--startup plain)"
        why = fork_verdict(tf_version)
        if why:
            return "plain: " + why
        base = worker_environ(self._environ(self.setups["baseline"]))
        lazy = {s.name for s in self.config.catalogue.switches if s.kind == "env"}  # what the modes change
        servers = [ForkServer(self.config.python, base, PRELOAD, lazy, self.config.startup_timeout)
                   for _ in range(min(FORK_SERVERS, self.config.processes))]
        with ThreadPoolExecutor(len(servers), thread_name_prefix="tfdet-forkserver") as pool:
            started = [pool.submit(server.start) for server in servers]
        failed = [future.exception() for future in started if future.exception() is not None]
        if failed:
            for server in servers:
                server.close()
            unexpected = [exc for exc in failed if not isinstance(exc, ForkServerError)]
            if unexpected:
                raise unexpected[0]
            return "plain: " + str(failed[0])
        self.forks = servers
        for server in servers:
            self._count("fork server import", server.hello.get("import_seconds", 0.0))
        return "fork"

    def _server(self, index):
        """The fork server process `index` of a mode comes from, or None (plain start-up)."""
        return self.forks[index % len(self.forks)] if self.forks else None

    def _close_forks(self):
        servers, self.forks = self.forks, []
        for server in servers:
            server.close()

    def _worker(self, mode, index, environ=None):
        return WorkerProcess(self.config.python, environ or self._environ(self.setups[mode]), "%s#%d" % (mode, index),
                             server=self._server(index))

    def _start(self, setups):
        """Start every worker at once (imports overlap, or forks of one that imported TF), then set each up."""
        pending = []
        for mode in self.active_modes:
            for index in range(self.config.processes):
                worker = self._worker(mode, index)
                worker.start()
                pending.append((mode, worker))
        environments, failed, unchecked = {}, {}, None
        for mode, worker in pending:
            try:
                self._handshake(worker, setups[mode], environments)
            except ForkedModeUnchecked as exc:
                unchecked = unchecked or str(exc)
            except (ProbeError, WorkerFailed) as exc:  # e.g. patched mode where tfdet's deps are missing
                worker.kill()
                failed.setdefault(mode, str(exc))
                continue
            self.workers.setdefault(mode, []).append(worker)
        if unchecked:  # the mode's environment did not take effect in a forked worker: start afresh, plainly
            self.progress(Message("fork server not used: %s" % unchecked))
            for worker in [w for _, w in pending]:
                worker.kill()
            self.workers = {}
            self._close_forks()
            self.startup = "plain: " + unchecked
            return self._start(setups)
        for mode, reason in failed.items():
            self.progress(Message("mode %s dropped: %s" % (mode, reason)))
            for worker in self.workers.pop(mode, []):
                worker.kill()
            self.active_modes.remove(mode)
            self.unavailable[mode] = reason
            self.mode_failures[mode] = reason
        if not self.active_modes:
            raise ProbeError("no mode could start: %s" % "; ".join("%s: %s" % kv for kv in failed.items()))
        return environments

    def _handshake(self, worker, setup, environments=None):
        started = time.monotonic()
        hello = worker.receive(self.config.startup_timeout)
        self._count("worker import", hello.get("import_seconds", 0.0))
        self._count("workers started", 1)
        if not hello.get("ok"):
            raise ProbeError("%s could not start TensorFlow: %s: %s" % (
                worker.name, hello["error"]["type"], hello["error"]["message"]))
        answer = worker.request(self._setup_command(setup), self.config.startup_timeout)
        if not answer.get("ok"):
            raise ProbeError("%s could not set up mode %s: %s: %s" % (
                worker.name, setup.name, answer["error"]["type"], answer["error"]["message"]))
        self._count("handshakes (wall)", time.monotonic() - started)
        if worker.forked:
            _check_forked_mode(worker, setup, answer["environment"])
        if environments is not None:
            environments.setdefault(setup.name, answer["environment"])

    def _restart(self, mode, index):
        """Replace a dead worker. The new one imports TF while other work goes
        on; its handshake happens when it is next asked for something."""
        old = self.workers[mode][index]
        old.kill()
        if self.stopping:
            return
        worker = WorkerProcess(self.config.python, old.environ, old.name, server=self._server(index))
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
        self.stopping = True
        try:
            stop_all([worker for workers in self.workers.values() for worker in workers])
        finally:  # even when Ctrl-C lands while the workers are being stopped
            try:
                self._close_forks()
            finally:
                scratch.remove(self.scratch)

    # -- one case ----------------------------------------------------------

    def _command(self, planned, cmd, **extra):
        command = {"cmd": cmd, "case": planned.case_id, "pass": planned.pass_name, "size": self.config.size,
                   "seed": self.config.seed}
        command.update(extra)
        return command

    def _variance(self, planned):
        """{mode: [answer per process]}: the modes run `concurrent` at a time, each
        mode's processes in turn."""
        self._tell(Working(_doing(planned, ", ".join(self.active_modes))))
        answers = self._concurrently([functools.partial(self._variance_in, planned, mode)
                                      for mode in self.active_modes])
        return dict(zip(self.active_modes, answers))

    def _variance_in(self, planned, mode):
        results = []
        for index in range(self.config.processes):
            tag = "%s-%d" % (mode, index)
            command = self._command(planned, "variance", repeats=self.config.repeats, scratch=self.scratch, tag=tag)
            answer = self._ask(mode, index, command)
            answer["process"] = index
            results.append(answer)
            if "failed" in answer:
                break  # a case that crashed or hung once is not run again in this mode
        return results

    def _concurrently(self, calls):
        """The calls' results, in order, `concurrent` of them running at once. Each
        call talks to its own workers (one mode's), so they share only what _count
        and _tell guard. On an error or Ctrl-C the workers are killed first, so
        that no call is left waiting for an answer."""
        if self.config.concurrent <= 1 or len(calls) <= 1:
            return [call() for call in calls]
        pool = ThreadPoolExecutor(min(self.config.concurrent, len(calls)), thread_name_prefix="tfdet-probe")
        try:
            futures = [pool.submit(call) for call in calls]
            return [future.result() for future in futures]
        except BaseException:
            self.stopping = True
            for workers in self.workers.values():
                for worker in workers:
                    worker.kill()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _escalate(self, planned, variance):
        """Adaptive repeats: silence the user can trust.

        A mode that has not (yet) varied, where the catalogue says the op varies
        or another mode saw it vary (or, with settle, where the catalogue has no
        claim), runs the case again, in batches of
        `repeats`, in turn in its processes and one more fresh process, until
        it varies or has `max_repeats` runs (or `max_extra_seconds` have gone).
        The modes that need it run in waves of `concurrent` (repeat_waves); in a
        wave of fewer modes, each sends its batches to several of its processes at once.
        Returns {mode: (reason, extra runs)}.
        """
        notes = {}
        varied = [m for m in self.active_modes if measure.distinct_results(variance[m]) > 1]
        changed = True
        while changed:  # a mode that varies in its extra runs is a reason for the others
            changed = False
            todo = []
            for mode in self.active_modes:
                results = variance[mode]
                if mode in notes or mode in varied or any("failed" in r or r.get("raised") for r in results):
                    continue
                reason = self.expectations.get((planned.case_id, mode)) or self.unsettled.get((planned.case_id, mode))
                if reason is None and varied:
                    reason = "it varied under " + ", ".join(varied)
                if reason is not None:
                    todo.append((mode, reason))
            extras = []
            for wave in repeat_waves(len(todo), self.config.concurrent):
                extras += self._concurrently([functools.partial(self._more_runs, planned, todo[i][0],
                                                                variance[todo[i][0]], at_once)
                                              for i, at_once in wave])
            for (mode, reason), extra in zip(todo, extras):
                notes[mode] = (reason, extra)
                if measure.distinct_results(variance[mode]) > 1:
                    varied.append(mode)
                    changed = True
        return notes

    def _more_runs(self, planned, mode, results, at_once=1):
        config = self.config
        pool = list(range(config.processes)) + [config.processes]  # the last: a fresh process, started once
        if len(self.workers[mode]) <= config.processes:
            worker = self._worker(mode, config.processes, self.workers[mode][0].environ)
            worker.start()
            worker.needs_handshake = True  # imports TF while the first batches run
            with self._lock:
                self.workers[mode].append(worker)
        runs = start = measure.run_count(results)
        batch = 0
        deadline = time.monotonic() + config.max_extra_seconds
        while runs < config.max_repeats and measure.distinct_results(results) <= 1 and time.monotonic() < deadline:
            self._tell(Working(_doing(planned, mode) + " (more runs: %d of up to %d)" % (runs, config.max_repeats)))
            asks, planned_runs = [], runs
            for _ in range(min(at_once, len(pool))):  # distinct processes of this mode, each its own batch
                if planned_runs >= config.max_repeats:
                    break
                index = pool[batch % len(pool)]
                batch += 1
                repeats = min(config.repeats, config.max_repeats - planned_runs)
                planned_runs += repeats
                command = self._command(planned, "variance", repeats=repeats, scratch=self.scratch,
                                        tag="%s-%d-more%d" % (mode, index, batch))
                asks.append((index, functools.partial(self._ask, mode, index, command)))
            answers = self._concurrently([ask for _, ask in asks])
            lost = False
            for (index, _), answer in zip(asks, answers):
                if "failed" in answer or answer.get("raised") or not answer.get("digests"):
                    lost = True  # a process lost while asking for more is no evidence either way
                    continue
                answer["process"] = index
                results.append(answer)
                runs += len(answer["digests"])
            if lost:
                break
        return runs - start

    def _ask(self, mode, index, command):
        started = None
        try:
            worker = self._ready(mode, index)
            started = time.monotonic()
            answer = worker.request(command, self.config.timeout)
            self._count("worker case building", answer.get("prepare_seconds", 0.0), by_case=True)
            self._count(self._phase + " (worker cpu)", answer.get("cpu_seconds", 0.0), by_case=True)
        except (WorkerFailed, ProbeError) as exc:
            if self.stopping:  # the probe is ending (Ctrl-C, an error in another mode): no new worker
                raise
            self._restart(mode, index)
            return {"failed": {"message": str(exc), "stderr_tail": getattr(exc, "stderr_tail", "")}}
        finally:
            if started is not None:  # a request that timed out counts too
                self._count("%s requests (wall)" % command["cmd"], time.monotonic() - started)
        if answer.get("scratch_error"):  # a full or unwritable scratch disk ends the run, as a full results disk does
            cause = answer["scratch_error"]
            raise ScratchError(cause["errno"], cause["strerror"], cause["path"])
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
        self._case = tuple(planned)
        clock = time.monotonic()
        self._phase = "variance runs"
        variance = self._variance(planned)
        clock = self._spent("variance runs (wall)", clock)
        self._phase = "more runs"
        notes = self._escalate(planned, variance)
        clock = self._spent("more runs (wall)", clock)
        self._phase = "timing rounds"
        samples = self._timing(planned, variance)
        clock = self._spent("timing rounds (wall)", clock)
        records = measure.case_records(planned.case_id, planned.pass_name, variance, samples, load_array)
        self._spent("records (wall)", clock)
        self._case = None
        for index, record in enumerate(records):
            extra = {}
            expected = self.expectations.get((planned.case_id, record.mode))
            if expected:
                extra["catalogue_expects_variance"] = expected
            if record.mode in notes:
                extra["repeated_because"], extra["extra_runs"] = notes[record.mode]
            if extra:
                records[index] = measure.annotated(record, **extra)
        for name in os.listdir(self.scratch):
            os.remove(os.path.join(self.scratch, name))
        return records

    def _spent(self, phase, since):
        now = time.monotonic()
        self._count(phase, now - since, by_case=True)
        return now

    def _count(self, what, seconds, by_case=False):
        with self._lock:
            self.spent[what] += seconds
            if by_case and self._case is not None:
                self.spent_by_case[self._case][what] += seconds

    def _tell(self, event):
        with self._lock:
            self.progress(event)

    # -- the whole run -----------------------------------------------------

    def run(self):
        config = self.config
        tf_version = query_tf_version(config.python)
        self.setups = mode_setups(config.catalogue, tf_version, patch_available(config.python))
        unknown = [m for m in config.modes if m not in self.setups]
        if unknown:
            raise ProbeError("unknown mode %s" % ", ".join(unknown))
        self.active_modes, failures, not_applicable = classify_modes(config.modes, self.setups, config.modes_requested)
        unavailable = self.unavailable = dict(failures, **not_applicable)
        if not self.active_modes:
            raise ProbeError("none of the modes can run: %s" % "; ".join("%s: %s" % kv for kv in unavailable.items()))
        self.mode_failures.update(failures)
        for mode, reason in failures.items():
            self.progress(Message("mode %s cannot run: %s" % (mode, reason)))
        for mode, reason in not_applicable.items():
            self.progress(Message("mode %s not applicable: %s" % (mode, reason)))
        scratch.remove_stale()  # left by runs that were killed (SIGKILL gives no chance to clean up)
        self.scratch = scratch.create()
        clock = time.monotonic()
        self.startup = self._start_forks(tf_version)
        clock = self._spent("fork server start (wall)", clock)
        self.progress(Message("starting %d TensorFlow %s processes (%s x %d), %s" % (
            len(self.active_modes) * config.processes, tf_version, ", ".join(self.active_modes), config.processes,
            "forked from %d that imported TensorFlow once each" % len(self.forks) if self.forks else "start-up " + self.startup)))
        environments = self._start(self.setups)
        self._spent("workers start (wall)", clock)
        first = environments[self.active_modes[0]]
        switches = mode_switch_ids(config.catalogue, self.setups, first["tf_version"], first["device"])
        for entry in config.catalogue:
            version_range = entry.range_for(first["tf_version"], first["device"])
            for mode in self.active_modes:
                reason = expected_to_vary(version_range, switches[mode], self.setups[mode].patch)
                if reason:
                    self.expectations[(entry.id, mode)] = reason
                elif config.settle and (version_range is None or version_range.status == "unknown"):
                    self.unsettled[(entry.id, mode)] = "the catalogue has no claim for TF %s on %s (--settle)" % (
                        first["tf_version"], first["device"])
        planned, skipped = plan_cases(
            config.catalogue, cases.describe_cases(), first["tf_version"], first["device"],
            machine_capabilities(first["device"], len(first["gpus"])), only=config.ops, fixtures=config.fixtures)
        header = ProbeHeader(
            record="header", schema_version=SCHEMA_VERSION, kind="probe", tfdet_version=__version__,
            created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            argv=list(config.argv), modes=list(self.active_modes), modes_asked=list(config.modes),
            modes_requested=config.modes_requested, unavailable_modes=unavailable,
            mode_failures=dict(self.mode_failures), not_applicable_modes=not_applicable,
            processes=config.processes, repeats=config.repeats, max_repeats=config.max_repeats,
            size=float(config.size), rounds=config.rounds, seed=config.seed, execution=config.execution,
            timeout_s=float(config.timeout),
            threads=Threads(intra_op=config.intra_threads, inter_op=config.inter_threads),
            onednn={None: "default", True: "on", False: "off"}[config.onednn],
            catalogue_digest=catalogue_digest(),
            environment={mode: Environment.from_json(env, "the %s worker's environment" % mode)
                         for mode, env in environments.items()},
            planned=[list(p) for p in planned], skipped=[list(s) for s in skipped],
            settings=dict(header_settings(dict(vars(config), **config.settings)), startup=self.startup,
                          concurrent=config.concurrent),
        )
        writer = config.results or ProbeResultsWriter(config.out, resume=config.resume, overwrite=config.overwrite)
        try:
            writer.start(header)
            writer.write_cases([measure.skipped_record(s.case_id, s.reason) for s in skipped])
            todo = [p for p in planned if any((p.case_id, p.pass_name, m) not in writer.done for m in self.active_modes)]
            self.progress(_started(len(todo), len(planned) - len(todo)))
            for planned_case in todo:
                records = self.run_case(planned_case)
                writer.write_cases(records)
                self.progress(Finished(_doing(planned_case, ", ".join("%s %s" % (r.mode, r.outcome) for r in records)),
                                       notable=any(r.outcome != "deterministic" for r in records)))
            writer.write_end(self._end_record(writer))
        finally:
            writer.close()
        return header

    def _end_record(self, writer):
        """What the whole run came to, for the file: modes that should have run and did not."""
        results = read_probe(writer.path)
        results.header = dataclasses.replace(
            results.header, mode_failures=dict(results.header.mode_failures, **self.mode_failures))
        failures = {p.mode: p.reason for p in interpret.mode_problems(results) if p.failure}
        return EndRecord(record="end", mode_failures=failures,
                         finished=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"))


class ForkedModeUnchecked(ProbeError):
    """A forked worker's mode did not take effect as a fresh interpreter's would."""


def _check_forked_mode(worker, setup, environment):
    """Where TF can say (2.8 on), a forked worker of a mode that only sets
    variables has op determinism on exactly when the mode sets TF_DETERMINISTIC_OPS:
    TF read the variable after the fork, as in a fresh interpreter."""
    enabled = environment.get("op_determinism_enabled")
    if setup.api_calls or setup.patch or enabled is None:
        return
    expected = str(setup.env.get("TF_DETERMINISTIC_OPS", "")).strip().lower() in ("1", "true")
    if bool(enabled) != expected:
        raise ForkedModeUnchecked("in a forked %s worker TF had op determinism %s, where the mode %s it" % (
            setup.name, "on" if enabled else "off", "asks for" if expected else "does not ask for"))


def _doing(planned, what):
    return "%s %s: %s" % (planned.case_id, planned.pass_name, what)


def _started(total, already_done):
    note = " (%d already in the results file)" % already_done if already_done else ""
    return Started(total, "%d case%s to run%s" % (total, "" if total == 1 else "s", note), label="starting")


def run_probe(config, progress=SILENT):
    """Run a probe, telling `progress` (tfdet.progress events) how it goes; returns
    its header. Workers are stopped however it ends."""
    probe = Probe(config, progress)
    try:
        return probe.run()
    finally:
        probe.stop()
