"""Ctrl-C in the middle of a real `tfdet probe` run: exit 130, every case finished
before it kept once and unchanged, and --resume completes the file without redoing
them. Two real bugs were found here on loaded machines: a Ctrl-C landing in fsync took
back a case record already on disk (results/jsonl.py), and one landing in numpy.load
came out as a TypeError with a traceback (results/arrays.py)."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tfdet.results import load

pytest.importorskip("tensorflow")


def _records(path):
    with open(path) as handle:
        return [json.loads(line) for line in handle if line.strip()]


def test_ctrl_c_keeps_the_finished_cases_and_resume_completes_without_duplicates(tmp_path):
    out = str(tmp_path / "resume.jsonl")
    # The hang fixture comes last, so the interrupted run cannot have finished
    # everything however fast the machine is; the resumed run times it out.
    ops = "fixture-fixed-order-sum,fixture-random-order-sum,fixture-raises,fixture-hang"
    command = [sys.executable, "-m", "tfdet", "probe", "--ops", ops, "--modes", "baseline", "--processes", "1",
               "--repeats", "3", "--rounds", "1", "--out", out]
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:  # stop it as soon as one case is on disk
        if os.path.exists(out) and any(r.get("record") == "case" for r in _records(out)):
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr.decode()
    partial = _records(out)
    assert 1 <= len(partial) - 1 < 4
    done = subprocess.run(command + ["--resume", "--timeout", "5"], capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    records = load(out).cases
    keys = [r.key for r in records]
    assert len(keys) == len(set(keys)) == 4
    assert partial[1] in [r.to_json() for r in records]  # what the interrupted run measured was kept, not redone
