"""docs/_scripts/sessions.py runs the guides' sessions two at a time: the outputs and the
failures it reports are those of one at a time (here on sessions of plain `python -c`)."""

import importlib.util
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def sessions(tmp_path, monkeypatch):
    spec = importlib.util.spec_from_file_location("docs_sessions", os.path.join(ROOT, "docs", "_scripts", "sessions.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    S = module.Session
    # the first fails last (it sleeps), the second fails first: failures still come in this order
    monkeypatch.setattr(module, "SESSIONS", (
        S("slow-fails", ('python -c "import time, sys; time.sleep(1); print(1); sys.exit(3)"',), seconds=9),
        S("fast-fails", ('python -c "import sys; sys.exit(4)"',), seconds=1),
        # each in a scratch directory of its own: the file the first writes is not there for the second
        S("writes", ('python -c "open(\'mine.txt\', \'w\').write(\'x\')"',
                     'python -c "import os; print(sorted(os.listdir(\'.\')))"'), seconds=5),
        S("reads", ('python -c "import os; print(sorted(os.listdir(\'.\')))"',), seconds=5),
        S("timed", ('python -c "print(2)"',), alone=True),
    ))
    monkeypatch.setattr(module, "OUT", str(tmp_path / "out"))
    return module


def _outputs(directory):
    return {name: open(os.path.join(directory, name), encoding="utf-8").read() for name in os.listdir(directory)}


def test_two_at_a_time_gives_the_outputs_and_failures_of_one_at_a_time(sessions, tmp_path, capsys):
    expected_failures = ["sessions: slow-fails exited 3, the guide expects 0",
                         "sessions: fast-fails exited 4, the guide expects 0"]
    assert sessions.main(["--jobs", "1"]) == 1
    serial = _outputs(sessions.OUT)
    assert capsys.readouterr().err.splitlines() == expected_failures
    os.rename(sessions.OUT, str(tmp_path / "serial"))
    assert sessions.main([]) == 1  # --jobs 2
    assert capsys.readouterr().err.splitlines() == expected_failures
    assert _outputs(sessions.OUT) == serial
    assert serial["writes.txt"].splitlines()[-1] == "['examples', 'mine.txt', 'reports']"
    assert serial["reads.txt"].splitlines()[-1] == "['examples', 'reports']"
    assert serial["slow-fails.txt"].splitlines()[-2:] == ["1", "[exit 3]"]


def test_the_longest_start_first_and_the_timed_run_alone_after_the_others(sessions):
    beside, alone = sessions._schedule(sessions.SESSIONS)
    assert [s.id for s in beside] == ["slow-fails", "writes", "reads", "fast-fails"]
    assert [s.id for s in alone] == ["timed"]


def test_an_unknown_session_or_no_jobs_is_a_usage_error(sessions, capsys):
    assert sessions.main(["nope"]) == 2
    assert sessions.main(["--jobs", "0"]) == 2
    assert capsys.readouterr().err.splitlines() == ["sessions: no session called nope", "sessions: --jobs takes 1 or more"]
