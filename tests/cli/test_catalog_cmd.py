"""`tfdet catalog ...`: output and exit codes, through main() and as a real process."""

import json
import os
import re
import subprocess
import sys

import pytest

from cli_runner import run_cli as run
from tfdet.catalog import default_catalogue, load_user_catalogue, shipped_catalogue_dir
from tfdet.cli.exitcodes import INVALID_INPUT, OK, USAGE

from catalog_fixtures import GOOD_ENTRY, document




@pytest.fixture()
def demo_file(tmp_path):
    path = tmp_path / "demo.yaml"
    path.write_text(document())
    return str(path)


def test_list_table(demo_file):
    code, out, _ = run("catalog", "list", "--catalog", demo_file, "--tf-version", "2.6", "--device", "gpu")
    assert code == OK
    assert "TF 2.6: 1 entry" in out
    assert "demo-op" in out and "raises_under_determinism" in out
    code, out, _ = run("catalog", "list", "--catalog", demo_file, "--tf-version", "2.4", "--device", "gpu")
    assert "nondeterministic" in out and "tfdet.patch() (demo)" in out


def test_list_json_and_status_filter(demo_file):
    code, out, _ = run("catalog", "list", "--catalog", demo_file, "--tf-version", "2.9", "--status", "all", "--json")
    assert code == OK
    rows = json.loads(out)
    assert {(r["device"], r["status"]) for r in rows} == {("gpu", "deterministic_with_switch"), ("cpu", "deterministic")}
    code, out, _ = run("catalog", "list", "--catalog", demo_file, "--tf-version", "2.9", "--status", "deterministic", "--json")
    assert [r["device"] for r in json.loads(out)] == ["cpu"]


def test_status_abbreviation_and_unknown_status(demo_file):
    code, out, _ = run("catalog", "list", "--catalog", demo_file, "--tf-version", "2.6", "--status", "raises", "--json")
    assert code == OK and len(json.loads(out)) == 1
    code, _, err = run("catalog", "list", "--catalog", demo_file, "--tf-version", "2.6", "--status", "flaky")
    assert code == INVALID_INPUT and "unknown status 'flaky'" in err


def test_a_non_version_is_a_usage_error_with_the_subcommand_usage(demo_file):
    code, _, err = run("catalog", "list", "--catalog", demo_file, "--tf-version", "two")
    assert code == USAGE and "not a TensorFlow version: 'two'" in err
    assert err.startswith("usage: tfdet catalog list")
    code, _, err = run("catalog", "diff", "2.6", "latest")
    assert code == USAGE and err.startswith("usage: tfdet catalog diff") and "'latest'" in err


@pytest.mark.parametrize("argv, old", [(["list", "--tf-version", "1.10"], "1.10"), (["diff", "1.13", "2.6"], "1.13")])
def test_a_version_older_than_the_catalogue_is_invalid_input(argv, old):
    code, out, err = run("catalog", *argv)
    assert code == INVALID_INPUT and out == ""
    assert err == "tfdet: error: TF %s is older than any version the catalogue covers (1.14 to 2.21)\n" % old


def test_a_version_newer_than_the_catalogue_warns_and_answers_for_the_newest():
    code, out, err = run("catalog", "list", "--tf-version", "2.99", "--json")
    assert code == OK
    assert err == ("tfdet: warning: TF 2.99 is newer than the catalogue (1.14 to 2.21); these are the facts "
                   "for 2.21 and may be stale\n")
    assert out == run("catalog", "list", "--tf-version", "2.21", "--json")[1]  # the facts, and their version, are 2.21's
    code, out, err = run("catalog", "list", "--tf-version", "2.99", "--device", "gpu")
    assert code == OK and out.startswith("TF 2.99 (answered for 2.21): ") and "may be stale" in err


def test_show_by_raw_op(demo_file):
    code, out, _ = run("catalog", "show", "DemoOp", "--catalog", demo_file)
    assert code == OK
    assert "Demo op  (demo-op)" in out and "raises UnimplementedError: no." in out
    assert "https://github.com/tensorflow/tensorflow/issues/1" in out


def test_show_unknown_suggests(demo_file):
    code, _, err = run("catalog", "show", "demo-opp", "--catalog", demo_file)
    assert code == INVALID_INPUT and "did you mean: demo-op" in err


def test_diff(demo_file):
    code, out, _ = run("catalog", "diff", "2.7", "2.8", "--catalog", demo_file, "--json")
    (change,) = json.loads(out)
    assert change["old"]["status"] == "raises_under_determinism"
    assert change["new"]["status"] == "deterministic_with_switch"


def test_check_good_and_bad(demo_file, tmp_path):
    code, out, _ = run("catalog", "check", demo_file)
    assert code == OK and "valid catalogue (1 entries" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text(document().replace("status: deterministic\n", "status: fine\n"))
    code, _, err = run("catalog", "check", str(bad))
    assert code == INVALID_INPUT
    assert "bad.yaml:" in err and "'fine' is not one of" in err
    code, out, _ = run("catalog", "check", str(bad), "--json")
    assert code == INVALID_INPUT and json.loads(out)["valid"] is False


def test_check_missing_path(tmp_path):
    code, _, err = run("catalog", "check", str(tmp_path / "nope.yaml"))
    assert code == INVALID_INPUT and "no such file" in err


def test_shipped_catalogue_checks_clean():
    code, out, _ = run("catalog", "check")
    assert code == OK and "valid catalogue" in out


def test_usage_errors_exit_2():
    assert run("catalog", "lis")[0] == USAGE
    assert run("catalog")[0] == USAGE
    assert run()[0] == USAGE
    assert run("catalog", "list", "--device", "tpu")[0] == USAGE


def test_console_script_and_module_agree():
    for command in (["tfdet"], [sys.executable, "-m", "tfdet"]):
        done = subprocess.run(command + ["catalog", "list", "--tf-version", "2.6", "--device", "gpu"],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == OK, done.stderr
        assert "TF 2.6:" in done.stdout


def _rows(table_text):
    """{(id, device): {header: cell text}} from a rendered table: columns are where the
    dashed rule says; a row starts at a line with a DEVICE, continuation lines add to it."""
    lines = table_text.splitlines()
    rule = next(i for i, line in enumerate(lines) if line.startswith("---"))
    spans = [(m.start(), m.end()) for m in re.finditer(r"-+", lines[rule])]
    headers = [lines[rule - 1][a:b + 1].strip() for a, b in spans]
    rows = []
    for line in lines[rule + 1:]:
        cells = [line[a:b + 1].strip() for a, b in spans]
        if cells[headers.index("DEVICE")]:
            rows.append({h: [] for h in headers})
        for header, cell in zip(headers, cells):
            if cell:
                rows[-1][header].append(cell)
    return {("".join(r["ID"]), r["DEVICE"][0]): {h: " ".join(c) for h, c in r.items()} for r in rows}


def _squeeze(text):
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize("columns", ["80", "200", "60"])
def test_list_fits_the_terminal_and_never_cuts_the_fix(monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", columns)
    code, out, _ = run("catalog", "list", "--tf-version", "2.6", "--status", "all")
    assert code == OK
    assert max(len(line) for line in out.splitlines()) <= int(columns)
    verdicts = {(v["id"], v["device"]): v for v in
                json.loads(run("catalog", "list", "--tf-version", "2.6", "--status", "all", "--json")[1])}
    rows = _rows(out)
    assert set(rows) == set(verdicts)  # every row there, ids whole once the wrapped lines are joined
    for key, row in rows.items():
        assert _squeeze(row["FIX"]) == _squeeze(verdicts[key]["fix"] or "-"), key
        assert row["STATUS"].replace(" ", "") == verdicts[key]["status"]
        if "TITLE" in row:  # the title is the column that gives way: cut with '…', never wrapped
            assert row["TITLE"] == verdicts[key]["title"] or row["TITLE"].endswith("…")
    assert ("TITLE" in out) is (int(columns) >= 200)


def test_diff_fits_the_terminal_and_shows_the_whole_new_fix(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = run("catalog", "diff", "2.6", "2.7")
    assert code == OK and max(len(line) for line in out.splitlines()) <= 80
    changes = {(c["id"], c["device"]): c for c in json.loads(run("catalog", "diff", "2.6", "2.7", "--json")[1])}
    rows = _rows(out)
    assert set(rows) == set(changes) and len(rows) > 10
    for key, row in rows.items():
        assert _squeeze(row["FIX IN 2.7"]) == _squeeze(changes[key]["new"]["fix"] or "-"), key


def test_piped_output_without_columns_keeps_each_row_on_one_line(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    code, out, _ = run("catalog", "list", "--tf-version", "2.6", "--status", "all")
    verdicts = json.loads(run("catalog", "list", "--tf-version", "2.6", "--status", "all", "--json")[1])
    lines = out.splitlines()
    assert code == OK and len(lines) == 4 + len(verdicts) and "…" not in out
    for verdict, line in zip(verdicts, lines[4:]):
        assert line.startswith(verdict["id"] + " ") and line.endswith(verdict["title"])
        assert verdict["fix"] in line


def test_json_is_the_same_at_any_width(monkeypatch):
    outputs = []
    for columns in ("40", "300"):
        monkeypatch.setenv("COLUMNS", columns)
        outputs.append(run("catalog", "list", "--tf-version", "2.4", "--json")[1])
    assert outputs[0] == outputs[1]
    first = json.loads(outputs[0])[0]
    assert {"id", "title", "tf_version", "device", "status", "fix", "versions", "sources"} <= set(first)
    assert first["tf_version"] == "2.4"


def test_a_fix_that_looks_like_markup_is_printed_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "70")
    entry = dict(GOOD_ENTRY)
    entry["devices"] = dict(GOOD_ENTRY["devices"], cpu=[{
        "versions": ">=1.14", "status": "nondeterministic", "sources": ["tf-issue:1"],
        "workaround": "Index with x[0] and [bold]keep[/bold] the order: " + "word " * 30}])
    path = tmp_path / "markup.yaml"
    path.write_text(document(entry))
    code, out, _ = run("catalog", "list", "--catalog", str(path), "--tf-version", "2.6", "--device", "cpu")
    assert code == OK and max(map(len, out.splitlines())) <= 70
    (row,) = _rows(out).values()
    assert _squeeze(row["FIX"]) == _squeeze(entry["devices"]["cpu"][0]["workaround"].join(["workaround: ", ""]))


def test_show_resolves_any_spelling_and_suggests_for_misses():
    code, out, _ = run("catalog", "show", "densebincount")
    assert code == OK and "(dense-bincount)" in out
    code, out, err = run("catalog", "show", "tf.math.bincout")
    assert code == INVALID_INPUT and out == ""
    assert err == ("tfdet: error: nothing in the catalogue is called 'tf.math.bincout'; did you mean: "
                   "tf.math.bincount, tf.compat.v1.bincount, tf.sparse.bincount?\n")  # tf.sparse.bincount: entry count-sparse-output


@pytest.mark.parametrize("columns", ["50", "80"])
def test_show_wraps_to_the_terminal_and_loses_nothing(monkeypatch, columns):
    monkeypatch.delenv("COLUMNS", raising=False)
    assert max(map(len, run("catalog", "show", "bincount")[1].splitlines())) > 120  # piped: lines stay whole
    for entry in default_catalogue():
        monkeypatch.delenv("COLUMNS", raising=False)
        whole = run("catalog", "show", entry.id)[1]
        monkeypatch.setenv("COLUMNS", columns)
        code, out, _ = run("catalog", "show", entry.id)
        assert code == OK and max(map(len, out.splitlines())) <= int(columns), entry.id
        assert _squeeze(out) == _squeeze(whole), entry.id


def test_check_counts_each_switch_once_and_only_the_checked_files_own(tmp_path):
    # A directory holding a copy of the shipped switches.yaml: its switches replace
    # the shipped ones they redefine instead of being counted beside them.
    shipped = default_catalogue()
    for name in ("switches.yaml", "xla.yaml"):
        (tmp_path / name).write_text(open(os.path.join(shipped_catalogue_dir(), name)).read())
    code, out, _ = run("catalog", "check", str(tmp_path), "--json")
    assert code == OK and json.loads(out)["switches"] == len(shipped.switches)
    user = load_user_catalogue(str(tmp_path))
    assert len(user.switches) == len({s.id for s in user.switches}) == len(shipped.switches)
    entries_only = tmp_path / "entries"
    entries_only.mkdir()
    (entries_only / "mine.yaml").write_text(document())
    code, out, _ = run("catalog", "check", str(entries_only))
    assert code == OK and "(1 entries, 4 version ranges, 0 switches)" in out
