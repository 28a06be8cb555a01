"""The probe's settings, declared once: each field of ProbeSettings is one
`tfdet probe` flag, and everything else is derived from the fields:

- the command line (cli/probe_cmd.py: flag, help, type, default, EPILOG's list);
- what --resume compares with the results file, and what it takes from the file
  for a flag left out (probe_file.resume_parameters);
- the results header: a setting with a header field of its own is recorded
  there (`header`: the names probe_file.RESUME_PARAMETERS reads it by); any
  other goes into the header's `settings` object under its name;
- the argv of a probe started in another process (a fleet machine's, a matrix
  version's: child_argv).

Adding a setting is adding a field here (tests/probe/test_probe_settings.py
shows one reaching every place). Standard library only.
"""

import dataclasses
from typing import List, Optional

# --resume and a setting: "compare" (a different value refuses to resume; left
# out, the file's value is taken), "take" (left out, the file's value is taken),
# None (each run says it afresh), "own" (compared by the file's own bookkeeping:
# modes, ops).
COMPARE, TAKE, OWN = "compare", "take", "own"


def setting(default, flag, help, parse=None, metavar=None, choices=None, resume=None, header=(), passed_on=True):
    """A ProbeSettings field. `default` is the built-in value (applied after
    --resume had its say); `parse` names an argparse type in cli/arguments.py
    ("csv" for a comma-separated list, "switch" for a flag without a value);
    `help` may say {default}; `passed_on`: a probe started elsewhere gets it."""
    return dataclasses.field(default=default, metadata={
        "flag": flag, "help": help, "parse": parse, "metavar": metavar, "choices": choices, "resume": resume,
        "header": tuple(header), "passed_on": passed_on})


@dataclasses.dataclass(frozen=True)
class ProbeSettings:
    """What a probe is asked to do, flag by flag, in the order --help lists them."""

    modes: Optional[List[str]] = setting(
        None, "--modes", "modes to run, from {modes} (default: every one this TF has; a mode asked for here that "
        "cannot run makes the exit code 4)", parse="csv", metavar="MODE,...", resume=OWN)
    ops: Optional[List[str]] = setting(
        None, "--ops", "ops to probe: catalogue ids, API aliases or raw op names (default: all)", parse="csv",
        metavar="NAME,...", resume=OWN)
    repeats: int = setting(5, "--repeats", "runs per process (default {default})", parse="runs", metavar="N",
                           resume=COMPARE, header=("repeats",))
    processes: int = setting(2, "--processes", "processes per mode (default {default}; variance across processes "
                             "needs 2)", parse="processes", metavar="N", resume=COMPARE, header=("processes",))
    max_repeats: int = setting(
        100, "--max-repeats", "runs per case and mode, at most, before an op the catalogue says varies here (or that "
        "varied in another mode) is called deterministic (default {default})", parse="max_repeats", metavar="N",
        resume=COMPARE, header=("max_repeats",))
    settle: bool = setting(
        False, "--settle", "also run up to --max-repeats where the catalogue has no claim for this TF and device "
        "(unknown), so that an op that does not vary is measured well enough to become one: tfdet catalog update "
        "takes a quiet result as a claim from 29 runs in 2 processes", parse="switch", resume=TAKE)
    size: float = setting(1.0, "--size", "scale every case's input size (default {default}: about 1e5-1e6 elements)",
                          parse="size", metavar="X", resume=COMPARE, header=("size",))
    rounds: int = setting(2, "--rounds", "interleaved timing rounds per process (default {default}: four samples "
                          "per mode with two processes)", parse="rounds", metavar="N", header=("rounds",))
    python: Optional[str] = setting(
        None, "--python", "run the workers with this interpreter (another venv, another TF; needs numpy and TF)",
        metavar="PATH", resume=OWN)
    timeout: float = setting(
        120.0, "--timeout", "per-case limit before a worker is killed and the case recorded as failed "
        "(default {default:g})", parse="timeout", metavar="SECONDS", header=("timeout_s",))
    execution: str = setting(
        "function", "--execution", "run cases inside tf.function (default) or eagerly; results can differ bitwise",
        choices=("function", "eager"), resume=COMPARE, header=("execution",))
    threads: Optional[int] = setting(
        None, "--threads", "intra- and inter-op threads (default: the number of cores)", parse="threads",
        metavar="N", resume=COMPARE, header=("intra_op_threads", "inter_op_threads"))
    onednn: str = setting("default", "--onednn", "pin TF_ENABLE_ONEDNN_OPTS (default: leave TF's default, and "
                          "record it)", choices=("on", "off", "default"), resume=COMPARE, header=("onednn",))
    vary: Optional[List[str]] = setting(
        None, "--vary", "instead of the modes: which settings change an op's bits, from onednn, threads, execution, "
        "xla, batch, replicas (see 'settings' below; its own results file, tfdet-vary-*.jsonl)", parse="csv",
        metavar="SETTING,...", resume=OWN, passed_on=False)
    seed: int = setting(0, "--seed", "seed of the case inputs (default {default})", parse="seed", resume=COMPARE,
                        header=("seed",))
    startup: str = setting(
        "auto", "--startup", "how the TensorFlow processes start: auto (default: forked from one process that "
        "imported TensorFlow once, where that is safe and checked; else plain) or plain (a fresh interpreter "
        "each); the header's settings say which was used", choices=("auto", "plain"))
    concurrent: Optional[int] = setting(
        None, "--concurrent", "TensorFlow processes that run cases at once, one mode each (default: 2 on a machine "
        "with 2 cores or more, else 1); timing rounds always run one process at a time; the header's settings say "
        "how many", parse="jobs", metavar="N")


def fields():
    """The settings' fields, in order (read at each call: a test may put another ProbeSettings here)."""
    return dataclasses.fields(ProbeSettings)


def defaults():
    """{name: built-in value} of every setting."""
    return {f.name: f.default for f in fields()}


def resumed():
    """Names of the settings --resume takes from the file when left out (compared or not)."""
    return [f.name for f in fields() if f.metadata["resume"] in (COMPARE, TAKE)]


def compared_flags():
    """The flags --resume refuses to change, as the EPILOG lists them."""
    return [f.metadata["flag"] for f in fields() if f.metadata["resume"] in (COMPARE, OWN) and f.name != "python"]


def header_settings(values):
    """The header's `settings` object: the recorded settings without a header field of their own."""
    return {f.name: values.get(f.name, f.default) for f in fields()
            if f.metadata["resume"] in (COMPARE, TAKE) and not f.metadata["header"]}


def settings_parameters():
    """[(name, setting)] of the compared settings the header records in `settings` (probe_file.RESUME_PARAMETERS
    reads the others from their own fields)."""
    return [(f.name, f) for f in fields() if f.metadata["resume"] == COMPARE and not f.metadata["header"]]


def recorded_value(name, parameters, header_settings_object):
    """A setting's value as a header records it (None: not recorded): from the
    resume parameters read from its own field, or from the header's settings."""
    field = {f.name: f for f in fields()}[name]
    if field.metadata["header"]:
        return parameters.get(field.metadata["header"][0])
    return (header_settings_object or {}).get(name)


def child_argv(values):
    """The flags that pass `values` ({name: value}) on to a probe in another
    process, in field order; None, False and empty values are left out. Pure."""
    argv = []
    for f in fields():
        value = values.get(f.name)
        if not f.metadata["passed_on"] or value is None or value is False or value == [] or value == ():
            continue
        if value is True:
            argv.append(f.metadata["flag"])
        else:
            argv += [f.metadata["flag"], ",".join(map(str, value)) if isinstance(value, (list, tuple)) else str(value)]
    return argv
