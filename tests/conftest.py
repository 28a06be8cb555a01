import os
import sys

import pytest

# This project's machines set PYTHONDONTWRITEBYTECODE, so every Python the suite starts (the
# xdist workers, each tfdet command, each fork server and worker) compiled tfdet and the test
# modules from source again. The suite's processes cache bytecode, as an installed tfdet's do
# (pip compiles it on install): benchmarks/bench_startup.py does the same for its children.
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    sys.dont_write_bytecode = False

# How many pytest-xdist workers `python -m pytest` uses when no -n is given (see
# docs/development.md, "Tests"): one per usable core, at most this many; none on a saturated machine.
MAX_DEFAULT_WORKERS = 4


def _usable_cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _free_cores():
    """The usable cores, or 1 when the machine is already saturated: workers only pay on idle
    cores, and on a machine others keep busy they stretch each test's subprocesses past their
    timeouts (the fault tests' 180 s probe runs did, at load 20 on 2 cores).

    Saturated means the cores were at least 90% busy over a quarter of a second. Not the
    1-minute load average, which a suite run that just ended keeps at about the cores for a
    minute: a second `python -m pytest` right after the first then ran in one process
    (431 s against 256 s)."""
    cores = _usable_cores()
    return 1 if _busy_fraction(0.25) >= 0.9 else cores


def _busy_fraction(seconds):
    """The share of all cores' time spent busy over the next `seconds` (psutil, in the test
    extra); without psutil, the 1-minute load average over the cores."""
    try:
        import psutil
    except ImportError:
        try:
            return os.getloadavg()[0] / _usable_cores()
        except (AttributeError, OSError):
            return 0.0
    return psutil.cpu_percent(interval=seconds) / 100.0


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    """The README's `python -m pytest` spreads the suite over the cores (pytest-xdist),
    without a flag: a -n given (-n 0 to debug), -p no:xdist, --pdb, -s or --collect-only
    keep it in one process. Set here rather than in addopts, which -p no:xdist would
    reject. Tests go to whichever worker is free (--dist loadgroup, unless the command
    line chose another --dist), except those that share a result: see _keep_together."""
    option = config.option
    if hasattr(config, "workerinput"):
        # a worker parses the command line again, which had no --dist: it learns the mode here
        if config.workerinput.get("tfdet_dist") == "loadgroup":
            option.loadgroup = True
        _no_benchmarks(option)
        # and sees the terminal size the command was run with: a worker starts with
        # COLUMNS=80 and LINES=24 set, which the command line's width follows (tables.output_width)
        for name, value in config.workerinput.get("tfdet_terminal", {}).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        return
    if (getattr(option, "numprocesses", "absent") is not None
            or option.usepdb or option.capture == "no" or option.collectonly):
        return
    workers = min(_free_cores(), MAX_DEFAULT_WORKERS)
    if workers < 2:
        return
    _no_benchmarks(option)
    option.numprocesses = workers
    option.tx = ["popen"] * workers
    if option.dist == "no":
        option.dist = "loadgroup"


def _no_benchmarks(option):
    """pytest-benchmark (in the test extra) turns itself off under xdist anyway, with a warning
    per process; no test here uses its fixture (benchmarks/ has the timings)."""
    if hasattr(option, "benchmark_disable"):
        option.benchmark_disable = True


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node):
    """Tell each xdist worker the distribution mode chosen above and this process's terminal
    variables (see pytest_cmdline_main)."""
    node.workerinput["tfdet_dist"] = node.config.option.dist
    node.workerinput["tfdet_terminal"] = {name: os.environ.get(name) for name in ("COLUMNS", "LINES")}


def pytest_configure(config):
    """Ctrl-C is Python's in every test process and the children it starts, even when the suite was
    started in the background of a script (`python -m pytest &`): such a shell starts it with SIGINT
    ignored, which every child inherits, so the interrupt tests' commands would never see the
    signal (a probe ran to its end instead of stopping; test_interrupt_at_startup failed)."""
    import signal

    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")
    parser.addoption("--multiversion", action="store_true", default=False,
                     help="also run tests that need other TF versions (see tests/multiversion/make_venvs.py)")
    parser.addoption("--runupstream", action="store_true", default=False,
                     help="also run TensorFlow's wheel-shipped kernel tests stock vs patched (tox -e upstream)")
    parser.addoption("--runfaults", action="store_true", default=False,
                     help="also run tests/faults: faults injected into real runs (tox -e faults; CI runs them)")
    parser.addoption("--runcorpus", action="store_true", default=False,
                     help="also hold every corpus program to every promise (tox -e corpus; long)")
    parser.addoption("--runreadme", action="store_true", default=False,
                     help="also run the README's main command verbatim in a fresh venv (installs TensorFlow)")


def _keep_together(item):
    """The xdist group of a test that uses a module- or class-scoped fixture, or one of
    SHARED_RUNS: its module (or the shared run), so the fixture runs once, on one worker,
    and not once per worker that gets one of its tests."""
    for name in item.fixturenames:
        if name in SHARED_RUNS:
            return "shared:" + name
    definitions = getattr(item, "_fixtureinfo", None)
    for defs in (definitions.name2fixturedefs.values() if definitions else ()):
        if defs and defs[-1].scope in ("module", "class") and not defs[-1].argname.startswith("_"):
            return item.nodeid.split("::")[0]
    return None


def pytest_collection_finish(session):
    """Say so when --dist loadgroup could not group (pytest 9.2 with pytest-xdist 3.8:
    pytest-dev/pytest-xdist#1386): the suite still passes, but every shared fixture runs once
    per worker. The test extra keeps pytest below 9.2; tests/test_suite_grouping.py fails."""
    if not getattr(session.config.option, "loadgroup", False):
        return
    lost = [item.nodeid for item in session.items
            if item.get_closest_marker("xdist_group") and "@" not in item.nodeid]
    if lost:
        import warnings

        warnings.warn(pytest.PytestWarning(
            f"pytest {pytest.__version__}: --dist loadgroup did not group {len(lost)} tests "
            f"(pytest-xdist#1386), so module-scoped fixtures run once per worker; "
            f"install the test extra's pytest (<9.2)"), stacklevel=1)


# Session-scoped fixtures (below) that run a long job every user shares: their users
# go to one worker, so the job runs once per suite run.
SHARED_RUNS = set()


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups (its hook has no order)
def pytest_collection_modifyitems(config, items):
    if getattr(config.option, "loadgroup", False):  # an xdist worker under --dist loadgroup
        for item in items:
            group = None if item.get_closest_marker("xdist_group") else _keep_together(item)
            if group:
                item.add_marker(pytest.mark.xdist_group(group))
    skips = {
        "slow": (config.getoption("--runslow"), "slow: run with --runslow (tox -e slow)"),
        "multiversion": (config.getoption("--multiversion"), "needs other TF versions: run with --multiversion (tox -e multiversion)"),
        "upstream": (config.getoption("--runupstream"),
                     "TF's kernel tests stock vs patched: run with --runupstream (tox -e upstream)"),
        "readme": (config.getoption("--runreadme"), "the README's main command verbatim: run with --runreadme (tox -e readme)"),
    }
    for item in items:
        for marker, (enabled, reason) in skips.items():
            if marker in item.keywords and not enabled:
                item.add_marker(pytest.mark.skip(reason=reason))
        if not config.getoption("--runfaults") and _in_faults(item):
            item.add_marker(pytest.mark.skip(reason="faults injected into real runs: run with --runfaults (tox -e faults)"))
        # "corpus" is also the name of tests/corpus, so every test there has that keyword: the marker itself counts
        if item.get_closest_marker("corpus") and not config.getoption("--runcorpus"):
            item.add_marker(pytest.mark.skip(reason="every corpus promise: run with --runcorpus (tox -e corpus)"))


FAULTS_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "faults")


def _in_faults(item):
    """tests/faults: each test there injects faults (signals, full disks, a second writer, damaged
    files) into real tfdet runs, most of them two `tfdet probe` commands and a TensorFlow start-up
    each. They are their own suite (--runfaults, tox -e faults, a step of CI's), so the README's
    test command stays within 5 minutes on 2 cores (docs/development.md, "Tests")."""
    return os.path.dirname(str(item.path)) == FAULTS_DIR


@pytest.fixture
def no_global_seed_left():
    """A test that sets TensorFlow's global seed (keras.utils.set_random_seed) unsets it after:
    a later test in the process would otherwise trace seeded random ops (the scan's tests
    count unseeded ones)."""
    yield
    import sys

    if "tensorflow" in sys.modules:
        sys.modules["tensorflow"].random.set_seed(None)
