"""Run `tfdet probe --vary`: each arm in a fresh process through the runtime,
a record per (case, setting, variant) the moment both of its arms finished the case.

Interrupt-safe and resumable like the probe: records are appended (and
fsynced) one by one; a resumed run asks the arms only for the cases whose
(case, setting, variant) has no record yet.
"""

import datetime
import json
import os
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from ..progress import Finished, Message, Started, Working
from ..results.arrays import load_array
from ..results.vary_records import KIND, SCHEMA_VERSION, ArmInfo, VaryEnd, VaryHeader, VaryRecord
from ..runtime.launch import ChildSpec, StderrTail, child_environ, start
from . import scratch as scratch_space
from .vary_plan import applies, judge, merge_worker_answers, plan

# What the replicas rows are: said in every file's end record.
REPLICAS_NOTE = (
    "replicas: 'K replicas' is MirroredStrategy on K logical CPU devices in one process; 'K workers' is a loopback "
    "MultiWorkerMirroredStrategy cluster of K processes on localhost, one replica each, its all-reduce over gRPC")
COLLECTIVE_TIMEOUT = 120.0  # seconds a workers arm's collective may wait for a lost worker before it raises


class VaryConfig(object):
    def __init__(self, writer, settings, cases, repeats=2, seed=0, python=None, jobs=2, timeout=900.0, argv=(),
                 cpu_count=None, tf_version="", device="cpu"):
        self.writer = writer
        self.settings = list(settings)
        self.cases = list(cases)
        self.repeats = repeats
        self.seed = seed
        self.python = python
        self.jobs = jobs
        self.timeout = timeout
        self.argv = list(argv)
        self.cpu_count = cpu_count or os.cpu_count() or 1
        self.tf_version = tf_version
        self.device = device


class VaryMismatch(ValueError):
    """--resume of a file made with other settings, cases, repeats or seed."""


def pending(comparisons, cases, done):
    """{case: [comparisons still to record]} (pure): what a (resumed) run has left."""
    from .cases_dense import DENSE_CASES

    left = {}
    for case_id in cases:
        todo = [c for c in comparisons if applies(c, DENSE_CASES[case_id]) and (case_id, c.setting, c.variant) not in done]
        if todo:
            left[case_id] = todo
    return left


def arm_work(arms, left):
    """{arm name: cases it must run} for the comparisons left (pure)."""
    work = {arm.name: [] for arm in arms}
    for case_id, comparisons in left.items():
        for comparison in comparisons:
            for arm_name, _ in (comparison.reference, comparison.changed):
                if case_id not in work[arm_name]:
                    work[arm_name].append(case_id)
    return work


def header_for(config, arms, started_argv):
    from .. import __version__
    from .cases_dense import DENSE_CASES

    return VaryHeader(
        kind=KIND, schema_version=SCHEMA_VERSION, tfdet_version=__version__, record="header",
        created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"), argv=list(started_argv),
        settings=list(config.settings), cases=list(config.cases), repeats=config.repeats, seed=config.seed,
        tf_version=config.tf_version, device=config.device, cpu_count=config.cpu_count,
        arms={arm.name: ArmInfo(env=dict(arm.env), threads=arm.threads, execution=arm.execution,
                                logical_devices=arm.logical_devices, workers=arm.workers) for arm in arms},
        titles={c: DENSE_CASES[c].title for c in config.cases},
        names={c: list(DENSE_CASES[c].names) for c in config.cases})


def check_resumable(existing, config):
    """Refuse to continue a file made with other settings, cases, repeats or seed."""
    header = existing.header
    wrong = [(name, getattr(header, name), value) for name, value in
             (("settings", config.settings), ("cases", config.cases), ("repeats", config.repeats),
              ("seed", config.seed)) if getattr(header, name) != value]
    if wrong:
        raise VaryMismatch("%s was made with other %s; run without --resume, or with the file's values" % (
            existing.path, ", ".join("%s (file: %s, now: %s)" % w for w in wrong)))


def run_vary(config, progress):
    """Run the arms, write the records; returns (records written now, seconds)."""
    from ..results.vary_file import read_vary

    started = time.monotonic()
    arms, comparisons = plan(config.settings, config.cpu_count)
    writer = config.writer
    done = set()
    if writer.has_content():
        existing = read_vary(writer.path)
        check_resumable(existing, config)
        done = existing.done()
        header = existing.header
        writer.continue_after_last_line()
    else:
        header = header_for(config, arms, config.argv)
        writer.write_header(header)
    left = pending(comparisons, config.cases, done)
    work = arm_work(arms, left)
    total = sum(len(c) for c in left.values())
    progress(Started(total=total, text="%d comparisons in %d arms (fresh processes), %d cases%s" % (
        total, sum(1 for a in arms if work[a.name]), len(config.cases),
        " (%d already done)" % len(done) if done else ""), label="starting TensorFlow"))
    state = _State(writer, left, progress)
    scratch = scratch_space.create()
    try:
        runnable = [a for a in arms if work[a.name]]
        with ThreadPoolExecutor(max_workers=max(1, config.jobs)) as pool:
            futures = [pool.submit(_run_arm, config, arm, work[arm.name], scratch, state) for arm in runnable]
            try:
                for future in futures:
                    while True:  # short waits: Ctrl-C reaches the main thread
                        try:
                            future.result(timeout=0.5)
                            break
                        except FutureTimeout:
                            continue
            except BaseException:
                state.stop_all()
                raise
        state.flush_failures()
        infos = dict(header.arms)
        for name, info in state.arm_info.items():
            if name in infos:
                infos[name] = ArmInfo(env=infos[name].env, threads=infos[name].threads,
                                      execution=infos[name].execution, logical_devices=infos[name].logical_devices,
                                      workers=infos[name].workers,
                                      environment=info.get("environment"), import_seconds=info.get("import_seconds"))
        if state.arm_info:
            import dataclasses

            writer.rewrite_first_line(dataclasses.replace(header, arms=infos))
        seconds = time.monotonic() - started
        writer.append([VaryEnd(record="end", finished=datetime.datetime.now(datetime.timezone.utc).isoformat(
            timespec="seconds"), seconds=round(seconds, 1),
            notes=[REPLICAS_NOTE] if "replicas" in config.settings else [])])
        return state.written, seconds
    finally:
        scratch_space.remove(scratch)


class _State(object):
    """What the arms answered so far, and the records written; one lock for all arm threads."""

    def __init__(self, writer, left, progress):
        self.writer = writer
        self.left = {case: list(c) for case, c in left.items()}
        self.progress = progress
        self.answers = {}  # (arm, case, variant) -> answer
        self.failed_arms = {}  # arm -> message
        self.arm_info = {}
        self.children = []
        self.written = 0
        self.lock = threading.Lock()
        self.stopping = False

    def answer(self, arm_name, message):
        with self.lock:
            self.answers[(arm_name, message["case"], message["variant"])] = message
            self._settle(message["case"])

    def arm_failed(self, arm_name, message):
        with self.lock:
            self.failed_arms[arm_name] = message
            for case in list(self.left):
                self._settle(case)

    def flush_failures(self):
        with self.lock:
            for case in list(self.left):
                self._settle(case, final=True)

    def _side(self, arm_variant, case, final):
        arm_name, variant = arm_variant
        found = self.answers.get((arm_name, case, variant))
        if found is not None:
            return found
        if arm_name in self.failed_arms or final:
            return {"failed": self.failed_arms.get(arm_name, "the %s arm gave no answer for this case" % arm_name)}
        return None

    def _settle(self, case, final=False):
        from .vary_plan import SAME

        still = []
        for comparison in self.left.get(case, ()):
            reference = self._side(comparison.reference, case, final)
            changed = self._side(comparison.changed, case, final)
            if reference is None or changed is None:
                still.append(comparison)
                continue
            fields = judge(reference, changed, load_array, comparison.slice_rows)
            notes = [n for n in (fields.get("note"), changed.get("note")) if n]  # a workers arm's agreement
            if notes:
                fields["note"] = "; ".join(notes)
            record = VaryRecord(record="vary", case=case, setting=comparison.setting, variant=comparison.variant,
                                reference_arm=comparison.reference[0], changed_arm=comparison.changed[0], **fields)
            self.writer.append([record])
            self.written += 1
            self.progress(Finished("%s %s %s: %s%s" % (
                case, comparison.setting, comparison.variant, record.verdict,
                " (max %d ulp)" % record.max_ulp if record.max_ulp else ""),
                notable=record.verdict != SAME))
        if still:
            self.left[case] = still
        else:
            self.left.pop(case, None)

    def stop_all(self):
        self.stopping = True
        for child in list(self.children):
            child.stop()


def _run_arm(config, arm, cases, scratch, state):
    """One arm's process: start it, hand it the arm, take its answers as they come."""
    if arm.workers:
        _run_workers(config, arm, cases, scratch, state)
        return
    child = _start_child(config, arm, state, arm.name)
    if child is None:
        return
    timer = threading.Timer(config.timeout, child.kill)
    timer.daemon = True
    timer.start()
    try:
        code = _converse(child, _request(config, arm, cases, scratch), arm.name, state,
                         lambda message: state.answer(arm.name, message))
    finally:
        timer.cancel()
    if code != 0 and not state.stopping:
        state.arm_failed(arm.name, _ended(child, code))


def _run_workers(config, arm, cases, scratch, state):
    """A workers arm: K processes of one loopback MultiWorkerMirroredStrategy cluster, started
    together and asked for the same cases; a (case, variant) is answered once all K have."""
    ports = free_ports(arm.workers)
    cluster = {"worker": ["localhost:%d" % port for port in ports]}
    children = []
    for index in range(arm.workers):
        tf_config = json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}})
        child = _start_child(config, arm, state, "%s (worker %d)" % (arm.name, index), {"TF_CONFIG": tf_config})
        if child is None:
            for started in children:
                started.kill()
            return
        children.append(child)
    group = _WorkerGroup(arm, state, children)
    timer = threading.Timer(config.timeout, group.kill_all)
    timer.daemon = True
    timer.start()
    request = _request(config, arm, cases, scratch)
    request["collective_timeout"] = min(COLLECTIVE_TIMEOUT, config.timeout)
    threads = [threading.Thread(target=group.converse, args=(index, request), daemon=True)
               for index in range(arm.workers)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        timer.cancel()
        group.kill_all()


class _WorkerGroup(object):
    """The K workers of one arm: their answers merged per (case, variant); one dead worker stops them all
    (the others would wait in a collective for it)."""

    def __init__(self, arm, state, children):
        self.arm, self.state, self.children = arm, state, children
        self.answers = {}  # (case, variant) -> {worker index: answer}
        self.lock = threading.Lock()
        self.failed = False

    def converse(self, index, request):
        child = self.children[index]
        label = "%s (worker %d)" % (self.arm.name, index)
        code = _converse(child, dict(request, worker=index), label, self.state,
                         lambda message: self.answer(index, message), describe=index == 0)
        if code != 0 and not self.state.stopping:
            with self.lock:
                first, self.failed = not self.failed, True
            if first:
                self.state.arm_failed(self.arm.name, "worker %d: %s" % (index, _ended(child, code)))
            self.kill_all()

    def answer(self, index, message):
        key = (message["case"], message["variant"])
        with self.lock:
            answers = self.answers.setdefault(key, {})
            answers[index] = message
            if len(answers) < self.arm.workers:
                return
            merged = merge_worker_answers([answers[i] for i in range(self.arm.workers)])
        self.state.answer(self.arm.name, merged)

    def kill_all(self):
        for child in self.children:
            child.kill()


def free_ports(count):
    """`count` TCP ports free on localhost now (the OS picks them; each is closed again for a worker to bind)."""
    import socket

    sockets = [socket.socket(socket.AF_INET, socket.SOCK_STREAM) for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("localhost", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def _request(config, arm, cases, scratch):
    return {"name": arm.name, "execution": arm.execution, "threads": arm.threads, "seed": config.seed,
            "repeats": config.repeats, "scratch": scratch, "cases": cases, "variants": list(arm.variants),
            "replicas": list(arm.replicas), "logical_devices": arm.logical_devices, "workers": arm.workers}


def _start_child(config, arm, state, label, extra_env=None):
    """A started worker process for the arm (None, with the arm failed, when it cannot start)."""
    if state.stopping:
        return None
    env = dict(arm.env, **(extra_env or {}))
    environ = child_environ(unset=("TF_ENABLE_ONEDNN_OPTS", "TF_DETERMINISTIC_OPS", "TF_CONFIG"), env=env,
                            defaults={"TF_CPP_MIN_LOG_LEVEL": "2"})
    spec = ChildSpec(module="tfdet.probe.vary_worker", python=config.python, env=environ)
    state.progress(Working("starting the %s arm" % label))
    try:
        child = start(spec, interactive=True)
    except OSError as exc:
        state.arm_failed(arm.name, "cannot start: %s" % (exc.strerror or exc))
        return None
    child.tail = StderrTail(child.stderr)
    state.children.append(child)
    return child


def _converse(child, request, label, state, on_answer, describe=True):
    """Send the request, pass each answer on as it comes; the process's exit code."""
    try:
        child.stdin.write(json.dumps(request) + "\n")
        child.stdin.flush()
        for line in child.stdout:
            try:
                message = json.loads(line)
            except ValueError:
                continue
            if message.get("hello"):
                if describe:
                    state.arm_info[request["name"]] = message
                state.progress(Message("%s arm: TensorFlow started in %.0f s" % (label, message["import_seconds"])))
            elif message.get("fatal"):
                state.arm_failed(request["name"], "%s: %s" % (message["error"]["type"], message["error"]["message"]))
            elif "case" in message:
                on_answer(message)
        return child.wait()
    except (OSError, ValueError):
        return child.wait()


def _ended(child, code):
    time.sleep(0.05)  # let the stderr pump catch the last words
    last = child.tail.text(3).strip().splitlines()
    return "process ended with code %s%s" % (code, (": " + last[-1]) if last else "")
