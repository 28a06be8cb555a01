"""The corpus's promises on real programs, each in fresh processes.

Default suite: promises a and b (patch never breaks, patch reproduces) at 2 training
steps for every program that varies stock. Each program costs 3 fresh TensorFlow
processes (the harness's quick runs: a stock first step, then tfdet.patch(), then the
patched first step and training), all programs' runs 2 at a time in one pool.
--runcorpus: every promise on every program at its own STEPS, stock and patched runs in
processes of their own."""

import os
import subprocess
import time

import pytest

import fresh_python  # tests/ is on sys.path under pytest
from corpus.harness import launch, programs, promises, results

VARYING = [n for n in programs.names() if programs.expect(n)["varies_stock"]]


def forked(argv, timeout):
    """launch.run(argv, timeout) for `python -m corpus.harness.child ...`, forked from a process
    that imported TensorFlow and made no runtime (tests/fresh_python.py: 0.7 CPU-s a start, not 5);
    each run is still a process of its own that starts with no op run, as a fresh interpreter."""
    assert argv[0] == "python", argv
    started = time.monotonic()
    try:
        done = fresh_python.run(argv[1:], launch.environ(), launch.ROOT, timeout)
    except subprocess.TimeoutExpired:
        return launch.Outcome(None, "", "", time.monotonic() - started, True)
    return launch.Outcome(done.returncode, done.stdout, done.stderr, time.monotonic() - started, False)


def plain_then_forked(mode, i):
    """A program's first run in a plain interpreter, its others forked: promise b then also holds
    a forked run to a fresh interpreter's bits (what a fork shares with its server, e.g. the
    address layout, cannot make every run agree where fresh processes would not)."""
    return forked if i else launch.run


@pytest.fixture(scope="module")
def quick_runs(tmp_path_factory):
    """The quick runs of every program that varies, made once, 2 processes at a time (see plain_then_forked)."""
    ws = promises.Workspace(str(tmp_path_factory.mktemp("corpus") / "results.jsonl"), timeout=600, steps=2, jobs=2,
                            quick=True, runner_for=plain_then_forked)
    try:
        ws.prepare(*VARYING)
    finally:
        fresh_python.close(launch.environ())  # one of at most fresh_python.SERVERS a test process, ~0.5 GB
    return ws


@pytest.mark.parametrize("name", VARYING)
def test_patch_runs_and_reproduces_the_programs_that_vary(name, quick_runs):
    latest = {}
    for promise in ("a", "b"):
        rec = latest[(name, promise)] = promises.check(promise, name, quick_runs, latest)
        assert rec["status"] in ("pass", "expected"), rec


@pytest.mark.corpus
@pytest.mark.parametrize("name", VARYING)
def test_a_quick_run_trains_as_a_process_patched_from_its_start(name, quick_runs):
    # the quick runs patch after a stock step has run: they must train to the same bits as a
    # process that patched before any op (the README's order), or the subset would show less
    arrays, err = quick_runs.patched(name, 0)
    fresh, fresh_err = quick_runs.run(name, "patched", 0)
    assert arrays is not None and fresh is not None, (err, fresh_err)
    assert promises._same(arrays, fresh, "train/") and promises._same(arrays, fresh, "first/")


@pytest.mark.corpus
@pytest.mark.parametrize("name", programs.names())
def test_every_promise(name, tmp_path):
    ws = promises.Workspace(str(tmp_path / "results.jsonl"))
    keep = os.environ.get("TFDET_CORPUS_RESULTS")  # tox -e corpus: the table is rewritten from this run
    latest, bad = {}, []
    for promise in promises.PROMISES:
        rec = latest[(name, promise)] = promises.check(promise, name, ws, latest)
        if keep:
            results.append(keep, rec)
        if rec["status"] in ("fail", "error"):
            bad.append(rec)
    assert not bad, bad
