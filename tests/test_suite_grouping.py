"""The suite's own distribution: under `python -m pytest` (pytest-xdist, --dist loadgroup, set
by tests/conftest.py) every test of a module with a module-scoped fixture goes to one worker,
so the fixture (a trained model, a probe run) runs once per suite and not once per worker.

pytest 9.2 with pytest-xdist 3.8 defeats this silently (pytest-dev/pytest-xdist#1386: xdist
writes the group into a nodeid field pytest no longer reads); these tests fail there."""
import subprocess
import sys
import time

import pytest

from tests import conftest


@pytest.fixture(scope="module")
def shared_once():
    return object()


def _under_loadgroup(request):
    if not getattr(request.config.option, "loadgroup", False):
        pytest.skip("the suite is not spread over xdist workers with --dist loadgroup (-n 0, -p no:xdist)")


@pytest.mark.parametrize("copy", range(4))
def test_a_module_fixture_keeps_its_users_on_one_worker(request, shared_once, copy):
    _under_loadgroup(request)
    module = request.node.nodeid.split("::")[0]
    assert request.node.get_closest_marker("xdist_group").args == (module,)
    # xdist's scheduler reads the group from this suffix of the nodeid alone
    assert request.node.nodeid.endswith("@" + module), request.node.nodeid


def test_a_test_without_shared_fixtures_is_spread_freely(request):
    _under_loadgroup(request)
    assert request.node.get_closest_marker("xdist_group") is None
    assert "@" not in request.node.nodeid


def test_a_saturated_machine_gets_one_process():
    """With every usable core kept busy by another process, `python -m pytest` runs without
    workers (tests/conftest.py, _free_cores): they would only slow each other's subprocesses."""
    spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
                for _ in range(conftest._usable_cores())]
    try:
        time.sleep(0.3)  # the spinners are past their start-up
        assert conftest._busy_fraction(0.25) >= 0.9
        assert conftest._free_cores() == 1
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()
