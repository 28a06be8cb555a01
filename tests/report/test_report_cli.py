"""`tfdet report` and `tfdet probe --report`: exit codes, messages, files written."""

import json
import os
import subprocess
import sys

import pytest
from report_paths import CATALOG, FIXTURES, NOT_RESULTS, PARTIAL, RUN_A, RUN_B, SCHEMA_V99

from cli_runner import run_cli as run
from tfdet.cli.exitcodes import FINDING, INVALID_INPUT, OK, USAGE, WRITE_FAILED


@pytest.mark.parametrize("path, message", [
    (os.path.join(FIXTURES, "no-such-file.jsonl"), "no-such-file.jsonl: cannot read: No such file or directory"),
    (NOT_RESULTS, "not_results.jsonl: not a tfdet results file (no header record on line 1)"),
    (SCHEMA_V99, "schema_v99.jsonl: results schema version 99 is newer than this tfdet reads (2): upgrade tfdet"),
    (FIXTURES, "is a directory, not a results file"),
    (os.path.join(CATALOG, "fixture.yaml"), "not a tfdet results file (line is not JSON)"),
])
def test_bad_input_is_a_clear_message_and_exit_3(tmp_path, path, message):
    output = tmp_path / "r.html"
    code, out, err = run("report", RUN_A, path, "-o", str(output))
    assert code == INVALID_INPUT, err
    assert err.startswith("tfdet: error: ") and message in err
    assert not output.exists() and out == ""


def _with_line(tmp_path, number, change):
    """RUN_A with line `number` (1-based) changed by change(dict) -> dict; the copy's path."""
    lines = open(RUN_A, encoding="utf-8").read().splitlines()
    lines[number - 1] = json.dumps(change(json.loads(lines[number - 1])), sort_keys=True)
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("number, change, words", [
    (1, lambda h: dict(h, execution="<b>function</b>"), ("field execution", "'<b>function</b>'")),
    (1, lambda h: dict(h, repeats="5"), ("field repeats", "integer", "'5'")),
    (1, lambda h: dict(h, environment=dict(h["environment"], api=dict(h["environment"]["api"], device="tpu"))),
     ("field environment.api.device", "'tpu'")),
    (3, lambda r: dict(r, outcome="weird"), ("field outcome", "'weird'")),
    (3, lambda r: dict(r, distinct="many"), ("field distinct", "integer", "'many'")),
    (3, lambda r: dict(r, ratio="fast"), ("field ratio", "number", "'fast'")),
    (3, lambda r: dict(r, mode="turbo"), ("field mode", "'turbo'")),
    (3, lambda r: dict(r, speed=1), ("unknown field speed",)),
    (3, lambda r: {k: v for k, v in r.items() if k != "case"}, ("missing field case",)),
    (3, lambda r: dict(r, record="summary"), ("'summary'",)),
])
def test_an_invalid_record_is_exit_3_naming_file_line_and_field(tmp_path, number, change, words):
    """What a valid file cannot hold (a value outside a field's choices, a wrong type, an unknown
    or missing field) is refused by the typed reader: exit 3, one line naming file:line and the field."""
    path = _with_line(tmp_path, number, change)
    output = tmp_path / "r.html"
    code, out, err = run("report", RUN_A, path, "-o", str(output))
    assert code == INVALID_INPUT, err
    assert err.startswith("tfdet: error: %s:%d: " % (path, number)) and err.count("\n") == 1, err
    assert all(word in err for word in words), err
    assert "Traceback" not in err and not output.exists() and out == ""


def test_writes_the_page(tmp_path):
    output = tmp_path / "sub" / "report.html"
    code, out, err = run("report", RUN_A, RUN_B, PARTIAL, "-o", str(output), "--catalog", CATALOG)
    assert code == OK, err
    assert out == "wrote %s: 3 runs, 10 rows, 4 disagreements with the catalogue; 1 interrupted run\n" % output
    html = output.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "Disagreements with the catalogue" in html
    assert os.listdir(str(output.parent)) == ["report.html"]  # no temporary file left


def test_title_quiet_and_stdout(tmp_path, capsys):
    code, page, _ = run("report", RUN_A, "-o", "-", "--title", "Nightly <CI>", "--catalog", CATALOG)
    assert code == OK and capsys.readouterr().out == ""  # the page goes to the command's own stream, not sys.stdout
    assert page.startswith("<!DOCTYPE html>") and "<title>Nightly &lt;CI&gt;</title>" in page
    code, out, _ = run("report", RUN_A, "-o", str(tmp_path / "q.html"), "--quiet")
    assert code == OK and out == "" and (tmp_path / "q.html").exists()


def test_fail_on_disagreement_gate(tmp_path):
    output = str(tmp_path / "r.html")
    assert run("report", RUN_A, "-o", output, "--catalog", CATALOG, "--fail-on-disagreement")[0] == FINDING
    assert run("report", PARTIAL, "-o", output, "--catalog", CATALOG, "--fail-on-disagreement")[0] == OK


def test_bad_catalogue_and_unwritable_output(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("schema_version: 1\nentries: [{id: x}]\n")
    code, _, err = run("report", RUN_A, "-o", str(tmp_path / "r.html"), "--catalog", str(bad))
    assert code == INVALID_INPUT and "invalid catalogue" in err
    (tmp_path / "taken").mkdir()
    code, _, err = run("report", RUN_A, "-o", str(tmp_path / "taken"))
    assert code == WRITE_FAILED and "cannot write" in err
    assert sorted(os.listdir(str(tmp_path))) == ["bad.yaml", "taken"]


def test_usage_and_help():
    code, _, _ = run("report")
    assert code == USAGE
    done = subprocess.run([sys.executable, "-m", "tfdet", "--help"], capture_output=True, text=True)
    assert "tfdet report" in done.stdout
    done = subprocess.run([sys.executable, "-m", "tfdet", "report", "--help"], capture_output=True, text=True)
    assert done.returncode == OK and "exit codes" in done.stdout and "--fail-on-disagreement" in done.stdout


def test_probe_report_renders_right_after_probing(tmp_path):
    pytest.importorskip("tensorflow")
    results, page = tmp_path / "r.jsonl", tmp_path / "report.html"
    done = subprocess.run(
        [sys.executable, "-m", "tfdet", "probe", "--ops", "fixture-random-order-sum,fixture-fixed-order-sum",
         "--modes", "baseline", "--processes", "1", "--repeats", "3", "--rounds", "1", "--out", str(results),
         "--report", str(page)], capture_output=True, text=True, timeout=300)
    assert done.returncode == OK, done.stderr
    assert "wrote %s: 1 run, 2 rows" % page in done.stdout
    html = page.read_text(encoding="utf-8")
    assert 'data-case="fixture-random-order-sum"' in html and 'data-case="fixture-fixed-order-sum"' in html
    assert 'data-outcome="varies"' in html and 'data-outcome="deterministic"' in html
    assert "not a catalogue entry" in html
