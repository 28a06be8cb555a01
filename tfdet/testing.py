"""Assertions that a computation reproduces, for a project's own test suite.

    from tfdet.testing import assert_reproducible

    def test_training_step_reproduces():
        assert_reproducible(train_one_step, 0)      # a top-level function of an importable module

It runs the function in fresh processes (tfdet.locate), calling it several
times in each, and fails naming the first op whose output differed, with the
line of your code that made it and the catalogue's fix. On a pass it says what
was ruled out ("0 of 10 runs differed: a per-run rate above 26% is ruled out at
95%"): on the result's .rate_ruled_out and .verdict, and with pytest in the
`-v` terminal summary and the test's `record_property` (JUnit XML).

What a run is: one call of the function. Each of `runs` processes calls it
`repeats` times, as a training loop calls its step, without resetting what
outlives a call (a module's model or variables, TF's global random state):
so a call is compared only with the same call in the first process, which has
the same history behind it. runs=2, repeats=10 compare 10 runs, each against
its counterpart. If a run differs with probability p, ten comparisons all
match with probability at most (1 - p)**10: a step that differs in 30% of its
runs is caught with probability >= 1 - 0.7**10 = 97% (95% needs 9), and a pass
rules out per-run rates above 1 - 0.05**(1/10) = 26% at 95%. The calls after
the first in a process cost no TensorFlow start-up (a few milliseconds for a
small step). benchmarks/detection_rate.py measures the detection rate.

With pytest, the `reproducible` fixture does the same, and
`@pytest.mark.reproducible(runs=4, patch=True)` sets its options for one test.
The plugin is registered through the `pytest11` entry point (or `-p tfdet.testing`).

assert_batch_invariant(model, x) asks another question, in this process: does
the example x[0] give the same bits alone as inside batches of other sizes?
(tfdet/locating/batch.py explains why it may not.)

Importing this module imports neither TensorFlow nor pytest.
"""

DEFAULT_RUNS = 2      # processes (each a fresh TensorFlow)
DEFAULT_REPEATS = 10  # calls of the function in each; see the module's docstring for why
DEFAULT_PROCESSES = 2  # processes at a time


def _message(result):
    first = result.first_difference
    lines = ["%s did not reproduce: %s" % (result.target, result.verdict)]
    if first.gradient_of:
        lines.append("  the gradient of %s (taken at %s)" % (first.gradient_of, first.created_at))
    if first.values_differing is not None:
        lines.append("  %d of %d values differed (max |a-b| %s)" % (first.values_differing, first.values,
                                                                   first.max_abs_diff))
    if first.catalog_entries:
        lines.append("  catalogue: %s (%s); fix: %s" % (", ".join(first.catalog_entries), first.status,
                                                        first.fix or "none known"))
    return "\n".join(lines)


def assert_reproducible(fn, *args, runs=DEFAULT_RUNS, repeats=DEFAULT_REPEATS, processes=DEFAULT_PROCESSES,
                        steps=None, timeout=600, patch=False, **kwargs):
    """Call fn(*args, **kwargs) `repeats` times in each of `runs` fresh processes
    (`processes` at a time), and raise AssertionError naming the first op whose
    output differed from the same call in the first process. Defaults: 2 x 10,
    10 runs compared, which catch a step that differs in >= 30% of its runs with
    probability >= 97% (see the module's docstring). patch: apply tfdet.patch()
    in each process first. Returns the LocateResult: .rate_ruled_out and
    .verdict say what a pass ruled out. AssertionError too when no two runs
    finished (the function raised or timed out): nothing was compared."""
    from .locating import api

    result = api.locate_target(api.function_target(fn, args, kwargs), runs=runs, repeats=repeats, steps=steps,
                               timeout=timeout, detail=False, patch=patch, jobs=processes)
    if result.first_difference is not None:
        raise AssertionError(_message(result))
    if not result.runs_compared:
        raise AssertionError("%s: %s\n  %s" % (result.target, result.verdict, "\n  ".join(result.notes)))
    return result


def assert_batch_invariant(model_or_fn, x, sizes=(1, 2, 3, 8, 32), name_op=True):
    """Assert that the example x[0] gives the same bits alone as at the first and
    the last position of batches of each of `sizes` (the other rows: x[1:],
    cycled; copies of x[0] when x holds one example). model_or_fn: a Keras model
    (called with training=False) or a function batch -> outputs, each output with
    the batch as its first dimension. Runs in this process.

    On a difference, raises AssertionError with the sizes that differ and how far,
    and (name_op) the first op whose row of the example differed, found by running
    the two calls again op by op with an op callback. Returns the result on a
    pass: .verdict says which sizes and positions were compared (and so what was
    not)."""
    from .locating import batch

    __tracebackhide__ = True  # pytest shows the caller's line, not this one
    result = batch.check(model_or_fn, x, sizes=sizes, name_op=name_op)
    if not result.invariant:
        raise AssertionError(batch.message(result))
    return result


# -- pytest plugin (the entry point pytest11: tfdet = tfdet.testing) -----------------------------


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "reproducible(runs=2, repeats=10, processes=2, patch=False, steps=None): options of the "
                   "`reproducible` fixture (tfdet.testing.assert_reproducible) for this test")


_PASSED = "tfdet_reproducible"  # the user_properties name a pass is recorded under


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """With -v: what each passing `reproducible` check ruled out, one line per check."""
    if config.getoption("verbose", 0) < 1:
        return
    lines = []
    for report in terminalreporter.stats.get("passed", []):
        for name, value in getattr(report, "user_properties", ()):
            if name == _PASSED:
                lines.append("%s: %s" % (report.nodeid, value))
    if lines:
        terminalreporter.write_sep("-", "tfdet: what the reproducible checks ruled out")
        for line in lines:
            terminalreporter.write_line(line)


def _fixture():
    import pytest

    @pytest.fixture
    def reproducible(request, record_property):
        """assert_reproducible with this test's @pytest.mark.reproducible(...) options as defaults;
        a pass is recorded (record_property, and the -v terminal summary) with what it ruled out."""
        marker = request.node.get_closest_marker("reproducible")
        defaults = dict(marker.kwargs) if marker else {}

        def check(fn, *args, **kwargs):
            result = assert_reproducible(fn, *args, **{**defaults, **kwargs})
            if getattr(result, "verdict", None):
                record_property(_PASSED, "%s: %s" % (result.target, result.verdict))
            return result
        return check
    return reproducible


try:  # the fixture exists only where pytest does; the assertion works without it
    reproducible = _fixture()
except ImportError:
    pass
