"""The one launcher: a child gets this tfdet whatever the working directory,
the user's paths after it, a timeout that stops it, its process group stopped
with it, and a record of how it ended."""

import os
import signal
import sys
import time

import pytest

import tfdet
from tests.orphans import pid_gone
from tfdet.runtime.launch import INTERRUPT, ChildSpec, child_environ, describe_exit, launch, start

SLEEPER = "import time\nprint('started', flush=True)\ntime.sleep(60)\n"


def test_a_tfdet_module_runs_against_this_tfdet_from_a_directory_that_has_another(tmp_path, monkeypatch):
    (tmp_path / "tfdet").mkdir()
    (tmp_path / "tfdet" / "__init__.py").write_text("raise ImportError('shadowed')\n")
    monkeypatch.chdir(tmp_path)
    done = launch(ChildSpec(module="tfdet", args=("--version",), stdout="capture", timeout=120))
    assert done.ok, done.stderr_tail()
    assert tfdet.__version__ in done.stdout
    # the user's paths come first on sys.path, but only after tfdet is loaded: the fake cannot shadow it
    done = launch(ChildSpec(module="tfdet", args=("--version",), stdout="capture", timeout=120,
                            user_paths=(str(tmp_path),)))
    assert done.ok and tfdet.__version__ in done.stdout, done.stderr_tail()


def test_a_child_past_its_timeout_is_stopped_and_says_so():
    done = launch(ChildSpec(code=SLEEPER, stdout="capture", timeout=1.0))
    assert done.timed_out and not done.ok
    assert done.returncode == -signal.SIGKILL and done.describe_exit() == "killed by SIGKILL"


def test_a_group_leader_is_interrupted_first_and_takes_its_group_with_it(tmp_path):
    pid_file = tmp_path / "grandchild.pid"
    code = ("import subprocess, sys, time\n"
            "p = subprocess.Popen(['sleep', '300'])\n"
            "open(sys.argv[1], 'w').write(str(p.pid))\n"
            "try:\n    time.sleep(60)\nexcept KeyboardInterrupt:\n    sys.exit(7)\n")
    child = start(ChildSpec(code=code, args=(str(pid_file),), timeout=3.0, stop=INTERRUPT, own_group=True))
    for _ in range(600):  # a loaded machine may take a while to start Python; the timeout counts from finish()
        if pid_file.exists() and pid_file.read_text():
            break
        time.sleep(0.1)
    done = child.finish()
    assert done.timed_out and done.returncode == 7  # SIGINT first: the program's own KeyboardInterrupt
    grandchild = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # killed with the group, then reaped
        for _ in range(50):
            os.kill(grandchild, 0)
            time.sleep(0.1)


def test_the_environment_and_the_exit_description():
    environ = child_environ(unset=("A",), env={"B": "2"}, defaults={"B": "9", "C": "3"}, base={"A": "1", "D": "4"})
    assert environ == {"B": "2", "C": "3", "D": "4"}
    assert describe_exit(0) == "exit code 0" and describe_exit(None) == "still running"
    assert describe_exit(-15) == "killed by SIGTERM" and describe_exit(-999) == "killed by signal 999"
    with pytest.raises(OSError):
        launch(ChildSpec(tool=("/no/such/program",)))
    done = launch(ChildSpec(code="import sys; sys.stderr.write('a\\nlast words\\n'); sys.exit(3)"))
    assert done.returncode == 3 and done.last_line() == "last words" and sys.executable


def test_a_stopped_group_leader_takes_a_descendant_in_a_session_of_its_own(tmp_path):
    """A group signal cannot reach a process that started its own session (tfdet locate's
    runs did; a user's program may): the descendants found before the stop go too."""
    marker = tmp_path / "grandchild.pid"
    code = ("import subprocess, sys, time\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=True,\n"
            "                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"  # holds no pipe of ours
            "open(%r, 'w').write(str(p.pid)); time.sleep(60)" % str(marker))
    result = launch(ChildSpec(code=code, own_group=True, timeout=5))
    assert result.timed_out
    assert pid_gone(int(marker.read_text()), timeout=5.0), "the leader's descendant in its own session outlived the stop"
