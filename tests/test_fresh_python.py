"""tests/fresh_python.py: a script forked from the tests' TF server runs as `python SCRIPT`
does in a fresh interpreter (the same output, traceback, exit status and at-exit work),
and it is forked, not started, on this machine where the fork server may be used."""

import os

import fresh_python
import pytest

tf = pytest.importorskip("tensorflow")

SCRIPT = '''\
import tensorflow as tf
import tfdet
import atexit, os, sys
from tensorflow.python.framework import config  # is_op_determinism_enabled: TF 2.8 and later
atexit.register(lambda: print("ATEXIT", flush=True))
print("ARGS", sys.argv[1:], os.path.basename(sys.argv[0]), __name__)
print("PATH0", sys.path[0] == os.path.dirname(os.path.abspath(__file__)), os.path.basename(os.getcwd()))
print("ENV", os.environ.get("TF_CPP_MIN_LOG_LEVEL"), os.environ.get("TF_DETERMINISTIC_OPS"))
print("TF", tf.executing_eagerly())
os.environ["TF_DETERMINISTIC_OPS"] = "1"  # read on the first op, after the fork: takes effect
print("DET", float(tf.reduce_sum(tf.ones([3]))), config.is_op_determinism_enabled())
print("PARENT", os.getppid())
if sys.argv[1] == "raise":
    raise ValueError("boom")
sys.exit(int(sys.argv[1]) if sys.argv[1].isdigit() else sys.argv[1])
'''


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "user_script.py"
    path.write_text(SCRIPT)
    return path


def _environ():  # as tests/patching's scenarios have it (they share a server in a test process)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    for name in list(env):
        if name.startswith(("TF_DETERMINISTIC", "TF_CUDNN", "PYTHONWARNINGS")):
            del env[name]
    return env


def _traceback(stderr):
    lines = stderr.splitlines()
    return lines[lines.index("Traceback (most recent call last):"):]


def test_a_forked_script_runs_as_a_fresh_interpreter_runs_it(script, tmp_path, monkeypatch):
    if tuple(int(n) for n in tf.__version__.split(".")[:2]) < (2, 8):  # the fork server's own condition too
        pytest.skip("TF %s" % tf.__version__)
    if os.environ.get("TFDET_TESTS_FORK") == "0":
        pytest.skip("TFDET_TESTS_FORK=0: every run is plain")
    forked = fresh_python.run([script, "raise"], _environ(), tmp_path, 300)
    monkeypatch.setenv("TFDET_TESTS_FORK", "0")
    plain = fresh_python.run([script, "raise"], _environ(), tmp_path, 300)
    assert plain.returncode == forked.returncode == 1
    without_parent = [line for line in forked.stdout.splitlines() if not line.startswith("PARENT")]
    assert without_parent == [line for line in plain.stdout.splitlines() if not line.startswith("PARENT")]
    assert without_parent == ["ARGS ['raise'] user_script.py __main__", "PATH0 True %s" % tmp_path.name,
                              "ENV 3 None", "TF True", "DET 3.0 True", "ATEXIT"]
    assert _traceback(forked.stderr) == _traceback(plain.stderr)
    assert _traceback(forked.stderr)[-1] == "ValueError: boom" and len(_traceback(forked.stderr)) == 4
    # forked: its parent is the server, not this process (a plain one's is this process)
    assert "PARENT %d" % os.getpid() in plain.stdout and "PARENT %d" % os.getpid() not in forked.stdout


@pytest.mark.parametrize("argument, code, last", [("0", 0, None), ("3", 3, None), ("no such luck", 1, "no such luck")])
def test_a_forked_scripts_exit_status_is_pythons(script, tmp_path, argument, code, last):
    done = fresh_python.run([script, argument], _environ(), tmp_path, 300)
    assert done.returncode == code, done.stderr[-2000:]
    assert done.stdout.splitlines()[-1] == "ATEXIT"
    if last:
        assert done.stderr.splitlines()[-1] == last


def test_forked_scripts_draw_unseeded_numpy_numbers_of_their_own(tmp_path):
    # a fresh interpreter seeds numpy's global generator from the OS; forks of one server would all
    # share the server's state, so an unseeded draw that varies across processes would not vary
    code = "import tensorflow as tf\nimport numpy as np\nprint(repr(np.random.random()))"
    runs = [fresh_python.run(["-c", code], _environ(), tmp_path, 300) for _ in range(3)]
    assert all(r.returncode == 0 for r in runs), [r.stderr[-500:] for r in runs]
    assert len({r.stdout for r in runs}) == 3
