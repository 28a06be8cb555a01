"""The words results are written in: modes, outcomes, kinds. One list each."""

# The probe's modes, in the order they are run and shown. What each turns on
# comes from the catalogue's switches (tfdet/runtime/modes.py).
MODES = ("baseline", "env", "api", "patched")
DEFAULT_MODES = ("baseline", "env", "api")

# What one (case, pass, mode) came to.
DETERMINISTIC, VARIES, RAISED, FAILED, SKIPPED = "deterministic", "varies", "raised", "failed", "skipped"
OUTCOMES = (DETERMINISTIC, VARIES, RAISED, FAILED, SKIPPED)
# Outcomes that are a measurement of the op (a raised error is TF's answer;
# failed means the case crashed, hung or could not run; skipped was never run).
MEASURED = (DETERMINISTIC, VARIES, RAISED)

# How tfdet's ONEDNN setting is recorded.
ONEDNN_SETTINGS = ("default", "on", "off")

# Kinds of results file (each has its own schema; scan, locate and diverge add theirs).
KINDS = ("probe", "scan", "diverge")

# How the probe runs a case: inside tf.function, or op by op.
EXECUTIONS = ("function", "eager")
