"""Probe a fleet: the same probe on every worker of a Dask cluster (each
machine with its own GPU, driver and TF), one results file per machine in one
directory, each file's header describing its machine. `tfdet report DIR/*.jsonl`
puts them side by side. The same for `tfdet probe --vary` (KINDS["vary"]):
each machine's op x setting grid in its own file.

The coordinator only places jobs and writes files: the probing itself is
`tfdet probe` on each machine (fleet_job.py), so a fleet measures exactly
what a probe run by hand on that machine would.
"""

import dataclasses
import hashlib
import json
import os
import re
import time
from typing import Optional

from collections import namedtuple

from ..results import ResultsError, read_probe
from ..results.probe_settings import child_argv
from ..results.vary_file import read_vary
from .fleet_job import probe_on_this_machine

# What differs between a fleet of probes and a fleet of --vary runs: the files' prefix,
# their reader (anything with .end), and the flags every machine's run adds.
FleetKind = namedtuple("FleetKind", "prefix read machine_flags")
KINDS = {"probe": FleetKind("probe", read_probe, ("--allow-missing-modes",)),
         "vary": FleetKind("vary", read_vary, ())}


class FleetError(Exception):
    """The fleet run cannot start (results in the way, no workers)."""


@dataclasses.dataclass
class MachineOutcome:
    """What one machine's probe came to."""

    machine: str
    path: str
    state: str  # "probed", "kept" (complete from an earlier run), "failed"
    host: Optional[str] = None
    error: Optional[str] = None
    seconds: Optional[float] = None


def probe_flags(values):
    """The `tfdet probe` flags a machine's probe takes over from the fleet command,
    from {setting: value} (results/probe_settings.py); None and empty values are left out. Pure."""
    return child_argv(values)


def machine_slug(machine):
    """The machine's name with anything but letters, digits, '.', '_' and '-' made '_'. Pure."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", machine)


def file_name(machine, kind=KINDS["probe"]):
    """probe-<machine>.jsonl (vary-<machine>.jsonl for a vary fleet). Pure."""
    return "%s-%s.jsonl" % (kind.prefix, machine_slug(machine))


def job_key(flags, machine):
    """Names the machine's own results file: the same command on the same machine finds it again. Pure."""
    return hashlib.sha256(json.dumps([list(flags), machine]).encode("utf-8")).hexdigest()[:16]


def complete(path, kind=KINDS["probe"]):
    """True if `path` is a readable results file of the kind whose run finished."""
    try:
        return kind.read(path).end is not None
    except (ResultsError, OSError):
        return False


def plan_machines(machines, directory, resume, overwrite, kind=KINDS["probe"]):
    """Which machines to probe: {address: (name, path)}, and the outcomes of those
    kept from an earlier run. Refuses results in the way before anything starts."""
    todo, kept, in_the_way = {}, [], []
    for address, name in machines.items():
        path = os.path.join(directory, file_name(name, kind))
        if os.path.exists(path):
            if resume and complete(path, kind):
                kept.append(MachineOutcome(name, path, "kept"))
                continue
            if not (resume or overwrite):
                in_the_way.append(path)
        todo[address] = (name, path)
    if in_the_way:
        raise FleetError("%s already exist%s: --resume keeps finished machines and continues the others, "
                         "--overwrite probes them all again" % (", ".join(in_the_way),
                                                                "s" if len(in_the_way) == 1 else ""))
    return todo, kept


def write_machine_file(path, text):
    """Write a machine's results where the report will read them, whole or not at all."""
    partial = path + ".part"
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(partial, path)


def run_fleet(executor, flags, directory, resume=False, overwrite=False, message=None, kind=KINDS["probe"]):
    """Probe every machine of `executor` (an open Dask executor); the outcomes,
    machine by machine, as each finishes. Files land in `directory` as they arrive.
    flags: the `tfdet probe` flags of each machine's run (with --vary for a vary fleet)."""
    message = message or (lambda text: None)
    os.makedirs(directory, exist_ok=True)
    machines = executor.machines()
    if not machines:
        raise FleetError("the cluster has no workers")
    todo, outcomes = plan_machines(machines, directory, resume, overwrite, kind)
    for kept in outcomes:
        message("%s: kept (finished in an earlier run): %s" % (kept.machine, kept.path))
    jobs = {name: (probe_on_this_machine, (list(flags) + list(kind.machine_flags), job_key(flags, name), resume), {})
            for name, _ in todo.values()}
    placement = {name: address for address, (name, _) in todo.items()}
    paths = {name: path for name, path in todo.values()}
    message("probing %d machine%s: %s" % (len(jobs), "" if len(jobs) == 1 else "s", ", ".join(sorted(jobs))))
    started = time.monotonic()
    for name, result in executor.run(jobs, placement):
        outcome = machine_outcome(name, paths[name], result, time.monotonic() - started, kind)
        outcomes.append(outcome)
        message("%s: %s%s" % (name, outcome.state, (": " + outcome.error) if outcome.error else
                              " -> %s (%.0f s)" % (outcome.path, outcome.seconds)))
    return sorted(outcomes, key=lambda o: o.machine)


def machine_outcome(name, path, result, seconds, kind=KINDS["probe"]):
    """Write what a machine's job returned; a failed job or an unreadable file is a failed machine."""
    if not isinstance(result, dict):  # JobError: the job raised, or its worker died
        return MachineOutcome(name, path, "failed", error=str(result), seconds=seconds)
    if not result.get("text"):
        tail = (result.get("stderr_tail") or "").strip().splitlines()
        return MachineOutcome(name, path, "failed", host=result.get("host"), seconds=seconds,
                              error="tfdet probe exited %s%s" % (result.get("returncode"),
                                                                 ": " + tail[-1] if tail else ""))
    write_machine_file(path, result["text"])
    try:
        results = kind.read(path)
    except ResultsError as exc:
        return MachineOutcome(name, path, "failed", host=result.get("host"), error=str(exc), seconds=seconds)
    state = "probed" if results.end is not None else "failed"
    error = None if results.end is not None else "the probe stopped early (exit %s); --resume continues it" % (
        result.get("returncode"))
    return MachineOutcome(name, path, state, host=result.get("host"), error=error, seconds=seconds)
