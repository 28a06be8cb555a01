"""The corpus harness's own parts, without TensorFlow: the program contract, the
launcher's timeout, the tolerance and bitwise checks, the results file and the table."""

import ast
import json
import os
import sys
import time

import numpy as np
import pytest

from corpus.harness import launch, programs, promises, results, table
from tests.orphans import pid_gone

NAMES = programs.names()


def test_the_corpus_has_programs():
    assert len(NAMES) >= 10, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_each_program_keeps_the_contract(name):
    with open(os.path.join(programs.PROGRAMS_DIR, name + ".py")) as handle:
        source = handle.read()
    tree = ast.parse(source)
    doc = ast.get_docstring(tree) or ""
    heads = [line.split(":")[0] for line in doc.splitlines() if line.startswith(("Follows: ", "Keeps: ", "Changes: "))]
    assert heads == ["Follows", "Keeps", "Changes"], "the docstring needs Follows:, Keeps:, Changes: lines, in order"
    functions = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
    assert {"train", "first_step", "scan_target", "main"} <= functions
    last = tree.body[-1]
    assert isinstance(last, ast.If) and "__main__" in ast.unparse(last.test) and ast.unparse(last.body[0]) == "main()"
    module = programs.load(name)  # importing trains nothing: only numpy and _data are imported
    assert isinstance(module.STEPS, int) and module.STEPS > 0
    expect = programs.expect(name)
    assert isinstance(expect["varies_stock"], bool) and isinstance(expect["patch_reproduces"], bool)
    assert bool(expect["varying_ops"]) == expect["varies_stock"]
    if not expect["patch_reproduces"] or expect["outcomes"]:
        assert expect["reason"], "a promise that cannot hold needs its documented reason"
    assert set(expect["outcomes"]) <= set(promises.PROMISES) and all(expect["outcomes"].values())


def test_importing_the_programs_imports_no_tensorflow():
    code = "import sys; from corpus.harness import programs\n" \
           "[programs.load(n) for n in programs.names()]\nprint('tensorflow' in sys.modules)"
    outcome = launch.run(["python", "-c", code], timeout=120)
    assert outcome.returncode == 0, outcome.stderr
    assert outcome.stdout.strip() == "False"


@pytest.mark.parametrize("own_session", [False, True])
def test_a_hung_run_is_killed_with_its_children_and_recorded(tmp_path, own_session):
    marker = tmp_path / "grandchild.pid"
    code = ("import subprocess, sys, time\n"
            "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], start_new_session=%s)\n"
            "open(%r, 'w').write(str(p.pid)); time.sleep(60)" % (own_session, str(marker)))
    started = time.perf_counter()
    outcome = launch.run(["python", "-c", code], timeout=3)
    assert outcome.timed_out and time.perf_counter() - started < 30
    assert pid_gone(int(marker.read_text()), timeout=5.0), "the run's child process outlived the timeout"


def test_first_step_tolerance_and_bitwise_comparison():
    stock = {"first/loss": np.float32(0.5), "first/g000": np.array([1.0, -2.0], np.float32)}
    near = {"first/loss": np.float32(0.5), "first/g000": np.array([1.0 + 1e-5, -2.0], np.float32)}
    far = {"first/loss": np.float32(0.5), "first/g000": np.array([1.01, -2.0], np.float32)}
    reshaped = {"first/loss": np.float32(0.5), "first/g000": np.array([[1.0, -2.0]], np.float32)}
    assert promises._close(stock, near) == []
    assert [b[0] for b in promises._close(stock, far)] == ["first/g000"]
    assert [b[0] for b in promises._close(stock, reshaped)] == ["first/g000"]
    a = {"train/w000": np.array([1.0], np.float32)}
    assert promises._same(a, {"train/w000": np.array([1.0], np.float32)}, "train/")
    assert not promises._same(a, {"train/w000": np.array([np.nextafter(np.float32(1.0), np.float32(2.0))], np.float32)}, "train/")
    assert not promises._same(a, {"train/w000": np.array([1.0], np.float64)}, "train/")


def test_a_documented_outcome_is_found_only_where_the_program_says():
    expect = {"reason": "no sessions", "outcomes": {"d": "nothing to compare:"}}
    out = "noise\ntfdet: error: nothing to compare: no op\n"
    assert promises._documented(expect, "d", out) == "documented (no sessions): tfdet: error: nothing to compare: no op"
    assert promises._documented(expect, "e", out) is None
    assert promises._documented(expect, "d", "tfdet: error: the script is missing") is None


def test_results_resume_from_the_last_complete_line(tmp_path):
    out = str(tmp_path / "r.jsonl")
    results.append(out, results.record("p", "a", "fail", "first"))
    results.append(out, results.record("p", "a", "pass", "again"))
    with open(out, "a") as handle:
        handle.write('{"program": "p", "promise": "b", "sta')  # a line cut off by a kill
    latest = results.read(out)
    assert list(latest) == [("p", "a")] and latest[("p", "a")]["status"] == "pass"


def test_the_tables_have_a_cell_per_promise_and_keep_the_pages_around_them(tmp_path):
    latest = {("x", "a"): results.record("x", "a", "pass", "ok", runs_stock=True, runs_patched=True),
              ("x", "b"): results.record("x", "b", "expected", "patched runs differ, as documented: tf.data"),
              ("x", "c"): results.record("x", "c", "fail", "the scan missed ScatterSub")}
    page, readme = tmp_path / "corpus.md", tmp_path / "README.md"
    for path in (page, readme):
        path.write_text("before\n%s\nold\n%s\nafter\n" % (table.START, table.END))
    rendered = table.write(latest, ["x", "y"], page=str(page), readme=str(readme))
    for path in (page, readme):
        text = path.read_text()
        assert text.startswith("before\n") and text.endswith("after\n") and "old" not in text
    row = [line for line in rendered.splitlines() if line.startswith("| `x`")][0]
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1:5] == ["✅", "✅", "✅ (documented) patched runs differ, as documented: tf.data",
                          "❌ the scan missed ScatterSub"]
    assert "not run" in rendered.splitlines()[-1]
    assert rendered in page.read_text()
    # the README's table: the same rows and marks, without what each cell found
    short = [line for line in readme.read_text().splitlines() if line.startswith("| `x`")][0]
    assert [c.strip() for c in short.strip("|").split("|")][1:6] == ["✅", "✅", "✅ (documented)", "❌", "not run"]


def test_the_command_refuses_an_unknown_program_with_one_line(tmp_path):
    outcome = launch.run(["python", "-m", "corpus.harness", "--programs", "nope", "--out", str(tmp_path / "r.jsonl")],
                         timeout=120)
    assert outcome.returncode == 2
    assert outcome.stderr.strip().splitlines() == ["corpus harness: unknown program or promise: nope"]


def test_a_program_runs_from_the_command_line_contract_header():
    # the JSON line main() prints: parsed from a tiny stand-in train, not a real one (no TF here)
    from corpus.programs import _data

    arrays = {"w000": np.arange(3, dtype=np.float32), "pred": np.ones(2, np.float32)}
    old = sys.argv
    sys.argv = ["x", "--steps", "2", "--seed", "1"]
    try:
        import contextlib
        import io

        buffer = io.StringIO()
        seen = {}
        with contextlib.redirect_stdout(buffer):
            _data.main("x", lambda steps, seed: seen.update(steps=steps, seed=seed) or arrays, 5)
    finally:
        sys.argv = old
    assert seen == {"steps": 2, "seed": 1}
    assert json.loads(buffer.getvalue()) == {"program": "x", "sha256": _data.digest(arrays)}


def test_a_terminated_harness_takes_its_running_program_with_it(tmp_path):
    # a harness stopped by SIGTERM (a CI timeout, kill) left its program's TensorFlow processes running
    import signal
    import subprocess

    marker = tmp_path / "program.pid"
    program = "import os, time; open(%r, 'w').write(str(os.getpid())); time.sleep(60)" % str(marker)
    script = tmp_path / "harness.py"
    script.write_text("import sys\nfrom corpus.harness import __main__ as m, launch\n"
                      "m.promises.check = lambda *a: launch.run(['python', '-c', %r], 120)\n"
                      "sys.exit(m.main(['--programs', 'recommender', '--promises', 'c', '--out', %r]))\n"
                      % (program, str(tmp_path / "r.jsonl")))
    env = dict(os.environ, PYTHONPATH=launch.ROOT)
    harness = subprocess.Popen([sys.executable, str(script)], cwd=launch.ROOT, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(600):
            if marker.exists() and marker.read_text():
                break
            time.sleep(0.1)
        pid = int(marker.read_text())
        harness.send_signal(signal.SIGTERM)
        _, err = harness.communicate(timeout=60)
    finally:
        if harness.poll() is None:
            harness.kill()
    assert harness.returncode == 130 and "interrupted" in err
    if not pid_gone(pid, timeout=10.0):
        os.kill(pid, 9)
        pytest.fail("the program's process outlived the harness")
