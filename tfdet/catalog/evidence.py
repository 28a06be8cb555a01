"""What one probe measurement says in the catalogue's words, and how strong it is. Pure.

A measurement is the probe's records for one (case, pass) of one results file,
one record per mode, with the catalogue switches each mode turned on for the
device (crosscheck.header_switch_sets). `infer` maps the probe's outcomes
(tfdet.results.vocabulary) to a catalogue status (model.STATUSES):

    baseline   a determinism mode       status                      strength
    --------   ----------------------   -------------------------   --------------------------
    varies     deterministic (all)      deterministic_with_switch   weak below strong_runs()
    varies     varies (any)             nondeterministic            strong: variance was seen
    any        raised (all)             raises_under_determinism    strong: TF's own answer
    determ.    deterministic or none    deterministic               weak below strong_runs()
    determ.    varies (any)             nondeterministic            strong
    varies     none run                 none (a switch untested), or
                                        nondeterministic where the TF has no switch
    raised, failed, skipped or missing  none (not a measurement of variance)
    raised in one determinism mode, not in another: none (inconclusive)

The patched mode is left out: tfdet.patch() is not TensorFlow.

Strength. One differing result proves variance, whatever the number of runs;
"did not vary" only rules out rates of variance above some figure.
Identical results in n runs rule out a per-run rate of differing results above
1 - 0.05 ** (1 / n) at 95% (results.stats.max_rate_ruled_out): 10 runs (the
probe's default 5 repeats in 2 processes) rule out only rates above 26%, 29
runs rates above 10%. A claim that rests on "did not vary" is strong from
strong_runs() runs in at least MIN_PROCESSES processes in every mode it rests on
(variance from autotuning or unseeded state shows only across processes);
weaker evidence is reported and never written into the catalogue.
"""

import functools
from dataclasses import dataclass
from typing import Optional, Tuple

from ..results.vocabulary import DETERMINISTIC, MEASURED, RAISED, VARIES
from .model import Evidence

BASELINE, PATCHED = "baseline", "patched"

# The highest per-run rate of variance that "did not vary" may leave open.
MAX_RATE_LEFT_OPEN = 0.10
MIN_PROCESSES = 2


@functools.lru_cache(maxsize=None)
def strong_runs():
    """The fewest identical runs that rule out a per-run rate above MAX_RATE_LEFT_OPEN (29)."""
    from ..results.stats import max_rate_ruled_out  # numpy: imported only when measurements are judged

    runs = 1
    while max_rate_ruled_out(runs) > MAX_RATE_LEFT_OPEN:
        runs += 1
    return runs


# How much a status says an op varies: where measurements of one entry disagree
# (two passes, two files), the one that saw more variance wins.
SEVERITY = {"deterministic": 1, "deterministic_with_switch": 2, "raises_under_determinism": 3,
            "nondeterministic": 4}


@dataclass(frozen=True)
class Inference:
    """A measurement in the catalogue's words. status None: it says no status (reason says why)."""

    status: Optional[str]
    reason: str
    weak: bool = False  # rests on "did not vary" in too few runs or processes
    modes: Tuple[str, ...] = ()  # the determinism modes the status rests on (that fixed it or raised)
    error_type: Optional[str] = None
    error_message: Optional[str] = None
    runs: int = 0  # the fewest runs of the modes it rests on (for an error: the baseline's)


def _few(record):
    return (record.runs or 0) < strong_runs() or (record.processes or 0) < MIN_PROCESSES


def _figures(mode, record):
    if record.outcome == RAISED:
        return "%s raised %s" % (mode, record.error_type or "an error")
    return "%s %s/%s" % (mode, record.distinct if record.distinct is not None else "?",
                         record.runs if record.runs is not None else "?")


def infer(records_by_mode, mode_switches, switch_exists=True):
    """The Inference of one (case, pass) of one run: {mode: CaseRecord}, {mode: switch ids on}.
    switch_exists: whether the run's TF has any determinism switch for its device (TF 1.15 has
    none for CPUs: there, varying as shipped is varying, full stop)."""
    measured = {m: r for m, r in records_by_mode.items() if r is not None and r.outcome in MEASURED}
    base = measured.get(BASELINE)
    if base is None:
        return Inference(None, "no baseline measurement: what TensorFlow does as shipped is not known")
    if base.outcome == RAISED:
        return Inference(None, "raised %s without determinism: no measurement of variance"
                         % (base.error_type or "an error"))
    switched = {m: r for m, r in measured.items() if m not in (BASELINE, PATCHED) and mode_switches.get(m)}
    raised = [m for m, r in switched.items() if r.outcome == RAISED]
    varied = [m for m, r in switched.items() if r.outcome == VARIES]
    fixed = [m for m, r in switched.items() if r.outcome == DETERMINISTIC]
    figures = ", ".join(_figures(m, r) for m, r in measured.items() if m != PATCHED)
    if raised:
        if varied or fixed:
            return Inference(None, "inconclusive: raised under %s but ran under %s (%s)" % (
                ", ".join(raised), ", ".join(varied + fixed), figures))
        first = switched[raised[0]]
        return Inference("raises_under_determinism", "raised once determinism was on (%s)" % figures,
                         modes=tuple(raised), error_type=first.error_type, error_message=first.error_message,
                         runs=base.runs or 0)
    if base.outcome == VARIES or varied:
        if varied or fixed:
            if varied:
                runs = min(switched[m].runs or 0 for m in varied)
                return Inference("nondeterministic", "varied with determinism on (%s)" % figures,
                                 modes=tuple(varied), runs=runs)
            weak = any(_few(switched[m]) for m in fixed)
            return Inference("deterministic_with_switch", "varied as shipped, reproducible with determinism on (%s)"
                             % figures, weak=weak, modes=tuple(fixed), runs=min(switched[m].runs or 0 for m in fixed))
        if not switch_exists:
            return Inference("nondeterministic", "varied as shipped (%s), and this TF has no determinism switch "
                             "for the device" % figures, runs=base.runs or 0)
        return Inference(None, "varied as shipped (%s); no determinism mode ran, so whether a switch fixes it "
                         "is not known" % figures)
    resting = [base] + [switched[m] for m in fixed]
    return Inference("deterministic", "reproducible in every mode (%s)" % figures,
                     weak=any(_few(r) for r in resting), modes=tuple(fixed), runs=min(r.runs or 0 for r in resting))


def combine(inferences):
    """One Inference for several measurements of one entry, version and device (passes,
    files): strong ones over weak ones, then the one that saw the most variance."""
    said = [i for i in inferences if i.status is not None]
    if not said:
        return inferences[0] if inferences else Inference(None, "nothing measured")
    strong = [i for i in said if not i.weak] or said
    return max(strong, key=lambda i: SEVERITY.get(i.status, 0))


def provenance(header, cited, runs):
    """The Evidence of a results file (a ProbeHeader), cited as `cited`, for a claim resting on `runs` runs."""
    env = header.first_environment
    gpus = [g for g in (env.gpus if env else []) or [] if isinstance(g, dict)]
    names = []
    for gpu in gpus:
        name = gpu.get("name") or gpu.get("device")
        if name and gpu.get("compute_capability"):
            name = "%s (compute capability %s)" % (name, gpu["compute_capability"])
        if name and str(name) not in names:
            names.append(str(name))
    build = env.build if env else None
    host = None
    if env is not None and (env.cpu_model or env.cpu_count or env.platform):
        host = ", ".join(p for p in (
            env.cpu_model, "%d cores" % env.cpu_count if env.cpu_count else None, env.platform) if p)
    return Evidence(
        results=cited, tf_version=str(header.tf_version), device=str(header.device), runs=int(runs),
        processes=int(header.processes or 0), date=str(header.created),
        gpu=", ".join(names) or None, driver=_text(env.nvidia_driver if env else None),
        cuda=_text(build.cuda_version if build else None), cudnn=_text(build.cudnn_version if build else None),
        host=host)


def _text(value):
    return None if value in (None, "") else str(value)
