"""The corpus's promises on real programs, each in fresh processes.

Default suite: promises a and b (patch never breaks, patch reproduces) at 2
training steps for one program that varies stock (the cheapest: a skip-gram
whose scatter_sub adds repeated rows in a varying order); the other programs
that vary get the same check with --runcorpus (each costs some five fresh
TensorFlow processes), and every promise on every program at its own STEPS."""

import pytest

from corpus.harness import programs, promises

VARYING = [n for n in programs.names() if programs.expect(n)["varies_stock"]]
IN_DEFAULT_SUITE = "sparse_embedding_scatter"


@pytest.mark.parametrize("name", [name if name == IN_DEFAULT_SUITE else pytest.param(name, marks=pytest.mark.corpus)
                                  for name in VARYING])
def test_patch_runs_and_reproduces_the_programs_that_vary(name, tmp_path):
    ws = promises.Workspace(str(tmp_path / "results.jsonl"), timeout=600, steps=2, jobs=2)
    latest = {}
    for promise in ("a", "b"):
        rec = latest[(name, promise)] = promises.check(promise, name, ws, latest)
        assert rec["status"] in ("pass", "expected"), rec


@pytest.mark.corpus
@pytest.mark.parametrize("name", programs.names())
def test_every_promise(name, tmp_path):
    ws = promises.Workspace(str(tmp_path / "results.jsonl"))
    latest, bad = {}, []
    for promise in promises.PROMISES:
        rec = latest[(name, promise)] = promises.check(promise, name, ws, latest)
        if rec["status"] in ("fail", "error"):
            bad.append(rec)
    assert not bad, bad
