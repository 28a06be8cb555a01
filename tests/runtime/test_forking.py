"""The fork server: TensorFlow imported once, a child forked per TF process, each
child's mode taking effect as in a fresh interpreter, nothing outliving it.

One server (one TensorFlow import) is shared by this module's tests; every
child is a real probe worker answering real commands."""

import json
import os
import signal
import sys

import pytest

from tests.orphans import pid_gone
from tfdet.runtime import forkserver
from tfdet.runtime.forking import ForkServer, ForkServerError, fork_verdict
from tfdet.runtime.launch import ChildSpec, start

pytest.importorskip("tensorflow")
pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the fork server runs on Linux only")

LAZY = ("TF_DETERMINISTIC_OPS", "TF_CUDNN_DETERMINISTIC")
PRELOAD = ("tfdet.probe.worker", "tfdet.probe.environment", "tfdet.runtime.apply")


# Taken once: pytest changes PYTEST_CURRENT_TEST as it goes, and a child's
# environment may differ from the server's only in what TF reads after the fork.
BASE = dict({k: v for k, v in os.environ.items() if k not in LAZY}, TF_CPP_MIN_LOG_LEVEL="2")


def _base_environ():
    return dict(BASE)


@pytest.fixture(scope="module")
def server():
    server = ForkServer(None, _base_environ(), PRELOAD, LAZY, timeout=300).start()
    yield server
    server.close()


def _worker(server, **env):
    return _worker_and_hello(server, **env)[0]


def _worker_and_hello(server, **env):
    child = start(ChildSpec(module="tfdet.probe.worker", env=dict(_base_environ(), **env)), interactive=True,
                  server=server)
    hello = json.loads(child.stdout.readline())
    assert hello["ok"] and hello["pid"] == child.pid, hello
    return child, hello


def _ask(child, command):
    child.stdin.write(json.dumps(command) + "\n")
    return json.loads(child.stdout.readline())


def _determinism(child):
    answer = _ask(child, {"cmd": "setup", "threads": {}, "api_calls": [], "patch": False})
    assert answer["ok"], answer
    return answer["environment"]["op_determinism_enabled"]


def test_a_forked_child_reads_tf_deterministic_ops_as_a_fresh_interpreter_does(server):
    """TF reads TF_DETERMINISTIC_OPS when its first op needs it: the server has
    not, so a child that sets it after the fork has op determinism on, and one
    that does not has it off (asked of TF itself, 2.8 and later)."""
    import tensorflow as tf

    if fork_verdict(tf.__version__) is not None:
        pytest.skip(fork_verdict(tf.__version__))
    on, off = _worker(server, TF_DETERMINISTIC_OPS="1"), _worker(server)
    try:
        assert _determinism(on) is True
        assert _determinism(off) is False
        assert server.hello["import_seconds"] > 0 and server.hello["refused"] is None
    finally:
        for child in (on, off):
            child.kill()


def test_a_child_whose_environment_differs_in_what_tf_reads_on_import_is_refused(server):
    with pytest.raises(ForkServerError, match="TF_ENABLE_ONEDNN_OPTS"):
        server.spawn(ChildSpec(module="tfdet.probe.worker",
                               env=dict(_base_environ(), TF_ENABLE_ONEDNN_OPTS="0")))


def test_forks_of_one_server_share_its_hash_seed_but_draw_their_own_numpy_numbers(server):
    """numpy's global generator is reseeded in each child, as a fresh interpreter
    seeds its own; Python's hash seed cannot be, so the probe takes the processes
    of a mode from different servers (the slow test below shows two servers differ)."""
    children, hellos = zip(*[_worker_and_hello(server) for _ in range(2)])
    try:
        first, second = (hello["identity"] for hello in hellos)
        assert first["numpy_state"] != second["numpy_state"]
        assert first["str_hash"] == second["str_hash"]
    finally:
        for child in children:
            child.kill()


def test_a_killed_child_is_reaped_and_says_how_it_ended(server):
    child = _worker(server)
    child.stop()  # the spec's KILL
    assert child.returncode == -signal.SIGKILL and pid_gone(child.pid)


@pytest.mark.slow  # a second server: a second TensorFlow import
def test_no_forked_child_outlives_its_server(server):
    """...and a second server's children have a hash seed of their own (when
    PYTHONHASHSEED leaves it random), as a second fresh interpreter has."""
    first = server
    server = ForkServer(None, _base_environ(), PRELOAD, LAZY, timeout=300).start()
    (child, hello), (_, first_hello) = _worker_and_hello(server), _worker_and_hello(first)
    children = [child, _worker(server, TF_DETERMINISTIC_OPS="1")]
    if os.environ.get("PYTHONHASHSEED", "random") == "random":
        assert hello["identity"]["str_hash"] != first_hello["identity"]["str_hash"]
    os.kill(server.child.pid, signal.SIGKILL)  # no chance to clean up: the children's lifeline does it
    try:
        assert all(pid_gone(child.pid) for child in children)
    finally:
        server.close()
    assert server.child.poll() is not None and not server.alive()
    with pytest.raises(ForkServerError):
        server.spawn(ChildSpec(module="tfdet.probe.worker", env=_base_environ()))


def test_a_process_with_threads_running_refuses_to_fork():
    # This test process has TensorFlow's and numpy's thread pools (and pytest's) running.
    import threading

    threading.Thread(target=lambda: None).start()
    event = threading.Event()
    waiting = threading.Thread(target=event.wait, daemon=True)
    waiting.start()
    try:
        assert "threads" in forkserver.why_not_fork()
    finally:
        event.set()


@pytest.mark.parametrize("version, platform, expected", [
    ("2.21.0", "linux", None),
    ("2.8.0", "linux", None),
    ("2.7.4", "linux", "TF 2.7.4 cannot say whether op determinism is on"),
    ("1.15.5", "linux", "TF 1.15.5 cannot say"),
    ("2.21.0", "darwin", "Linux only"),
])
def test_where_a_probe_forks(version, platform, expected, monkeypatch):
    monkeypatch.setattr("tfdet.runtime.forking.NVIDIA_DRIVER", "/nonexistent/nvidia")
    verdict = fork_verdict(version, platform)
    assert verdict is None if expected is None else expected in verdict


def test_a_gpu_driver_means_plain_start_up(tmp_path, monkeypatch):
    driver = tmp_path / "version"
    driver.write_text("NVRM version: 550\n")
    monkeypatch.setattr("tfdet.runtime.forking.NVIDIA_DRIVER", str(driver))
    assert "GPU" in fork_verdict("2.21.0", "linux")


def test_an_answer_an_interrupted_request_left_unread_is_skipped(server):
    """Ctrl-C while the client waits for an answer leaves that answer in the
    socket: the next request must get its own, not that one."""
    child = _worker(server)
    try:
        with server.lock:  # a request whose answer is never read, as when Ctrl-C lands while waiting for it
            server.asked = getattr(server, "asked", 0) + 1
            forkserver.send(server.socket, {"cmd": "signal", "pid": -1, "signal": 0, "id": server.asked})
        assert server.status(child.pid) is None  # still running: its own answer, not the stale {"sent": false}
    finally:
        child.kill()
    assert child.returncode == -signal.SIGKILL


AUTOGRAPH_CHILD = '''
import json, os, tempfile
import tensorflow as tf

def autographs():
    return {n for n in os.listdir(tempfile.gettempdir()) if n.startswith("__autograph_generated_file")}

before = autographs()

@tf.function  # a Python `if` on a tensor: autograph converts it and writes its source to a temp file
def absolute(x):
    if x > 0:
        return x
    return -x

absolute(tf.constant(-1.0))
print(json.dumps({"dir": tempfile.gettempdir(), "written": sorted(autographs() - before)}))
'''


def test_a_forked_child_cleans_up_at_exit_as_a_fresh_interpreter_does(server, tmp_path):
    """A fresh interpreter runs its atexit functions at the end, and TF's autograph removes
    the source files it wrote to the temp directory in one. A forked child ends with
    os._exit, so it runs them itself (before it did, the probe's forked workers left
    autograph's files in /tmp)."""
    (tmp_path / "agchild.py").write_text(AUTOGRAPH_CHILD)
    child = start(ChildSpec(module="agchild", env=_base_environ(), user_paths=(str(tmp_path),)),
                  interactive=True, server=server)
    out, err = child.stdout.read(), child.stderr.read()
    child.wait(timeout=120)
    assert child.returncode == 0, err[-2000:]
    said = json.loads(out.strip().splitlines()[-1])
    assert said["written"], "autograph wrote no file: the test no longer tests anything"
    left = [name for name in said["written"] if os.path.exists(os.path.join(said["dir"], name))]
    assert left == [], left


def test_a_stopped_probe_worker_ends_by_itself_before_it_would_be_killed(server):
    """The probe stops its workers by asking each to exit and giving them time to end as a
    Python program ends (the atexit functions of the test above), and kills only what is left.
    Killed right after their goodbye, workers had often not run them: a default probe left
    about 30 of autograph's files in the temp directory."""
    from tfdet.probe.process import WorkerProcess, stop_all

    workers = [WorkerProcess(sys.executable, _base_environ(), "w%d" % i, server=server) for i in range(2)]
    for worker in workers:
        worker.start()
        assert worker.forked and worker.receive(60)["ok"]
    stop_all(workers)
    assert [worker.proc.returncode for worker in workers] == [0, 0]  # not -SIGKILL
