"""SIGINT, SIGTERM and SIGKILL at seeded random points of a real probe: every
case finished before the signal is kept, exactly once and unchanged; the file
parses; --resume completes it (a run stopped before its header leaves no file,
and --resume refuses in one line); nothing prints a traceback; scratch space is
removed on exit, and what a killed run leaves by the next run."""

import random
import time

import pytest

from faultkit import (STAGGERED_ARGS, STAGGERED_KEYS, STAGGERED_OPS, assert_intact, assert_no_traceback,
                      header_written, interrupt, probe_argv, records_by_key, run, scratch_dirs, start, wait_for)
from tfdet.cli.exitcodes import INTERRUPTED, OK, USAGE

pytest.importorskip("tensorflow")


def staggered(out, *extra):
    return probe_argv(out, *(STAGGERED_ARGS + extra), ops=STAGGERED_OPS)


@pytest.fixture(scope="module")
def timeline(tmp_path_factory):
    """(seconds to the header, seconds from the header to the end) of an
    undisturbed run here: the windows the signals are drawn from."""
    tmp_path = tmp_path_factory.mktemp("clean")
    out = tmp_path / "clean.jsonl"
    began = time.monotonic()
    proc = start(staggered(out), tmp_path)
    assert wait_for(lambda: header_written(out) or proc.poll() is not None, poll=0.01)
    header_at = time.monotonic()
    _, err = proc.communicate(timeout=180)
    assert proc.returncode == OK, err
    assert set(records_by_key(out)) == STAGGERED_KEYS
    return header_at - began, time.monotonic() - header_at


def stop_and_resume(tmp_path, how, delay, after_header):
    """One injected fault, `delay` s after the start (or after the header is on
    disk), then the invariants. Returns (cases finished before it, cases lost)."""
    out = tmp_path / ("%s-%s-%.3f.jsonl" % (how, after_header, delay))
    proc = start(staggered(out), tmp_path)
    if after_header:
        assert wait_for(lambda: header_written(out) or proc.poll() is not None, poll=0.01)
    elif how != "kill":
        # Ctrl-C is tfdet's to handle once its main() runs (before that it is
        # Python's own start-up); by the time the file is claimed it does.
        assert wait_for(lambda: out.exists() or proc.poll() is not None, poll=0.01)
    time.sleep(delay)
    code, _, err = interrupt(proc, how)
    assert_no_traceback(err)
    # -2 / -15: the signal came after the run ended, while Python was shutting down
    # (it restores the default handlers then); the file is complete, checked below.
    assert code in {"int": (OK, INTERRUPTED, -2), "term": (OK, INTERRUPTED, -15), "kill": (OK, -9)}[how], err
    if code in (-2, -15):
        assert '"record": "end"' in out.read_text()
    left = scratch_dirs(tmp_path)
    if how != "kill":
        assert left == []  # removed on exit
    elif code == -9 and after_header:
        assert left  # SIGKILL: no chance to clean up; the next run must
    assert all(name.startswith("tfdet-probe-%d-" % proc.pid) for name in left)  # the owner's pid in the name
    assert_intact(out)
    kept = records_by_key(out)
    if not out.exists():
        # stopped before the header reached the file (the probe writes it once its workers
        # run): nothing was kept, the claimed file is removed, and --resume says so in one line
        assert how != "kill" and not kept
        code, _, err = run(staggered(out, "--resume"), tmp_path)
        assert code == USAGE and "does not exist; run without --resume to start it" in err, err
        code, _, err = run(staggered(out), tmp_path)
    else:
        code, _, err = run(staggered(out, "--resume"), tmp_path)
    assert code == OK, err
    assert_no_traceback(err)
    assert set(assert_intact(out)) == STAGGERED_KEYS  # every case, exactly once
    records = records_by_key(out)
    lost = [key for key, record in kept.items() if records.get(key) != record]
    assert lost == []  # what the stopped run measured is kept, not redone
    assert scratch_dirs(tmp_path) == []  # its own, and what a killed run left (its owner is dead)
    return len(kept), len(lost)


def schedule(tmp_path, how, seed, points, timeline, after_header_share):
    rng = random.Random(seed)
    startup, cases = timeline
    results = []
    for _ in range(points):
        after_header = rng.random() < after_header_share
        delay = rng.uniform(0, cases if after_header else startup + cases)
        results.append(stop_and_resume(tmp_path, how, delay, after_header))
    return results


# SIGINT's stop is slow only (--runslow, tox -e faults): tfdet probe ends on SIGTERM by raising the
# KeyboardInterrupt that Ctrl-C raises (cli/probe_cmd.py), so "term" here runs the same unwinding
# (cases kept, scratch removed, no traceback, resume), and Ctrl-C itself is held to exit 130 with its
# finished cases kept and resumed by test_ctrl_c_mid_run.py (beside this file).
@pytest.mark.parametrize("how", [pytest.param("int", marks=pytest.mark.slow), "term", "kill"])
def test_a_stopped_run_keeps_what_it_finished_and_resumes(tmp_path, timeline, how):
    schedule(tmp_path, how, seed=13, points=1, timeline=timeline, after_header_share=1.0)


@pytest.mark.slow
@pytest.mark.parametrize("how", ["int", "term", "kill"])
def test_many_seeded_stops(tmp_path, timeline, how, capsys):
    results = schedule(tmp_path, how, seed=2026, points=15, timeline=timeline, after_header_share=0.75)
    with capsys.disabled():
        print("\n%s: %d faults injected, %d finished cases before them, %d lost" % (
            how, len(results), sum(r[0] for r in results), sum(r[1] for r in results)))
