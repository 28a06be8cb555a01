"""The matrix page (`tfdet report --matrix`), on the real per-version results
committed under reports/measured/ (TF 1.15, 2.4, 2.6, 2.10 and 2.21 on this
project's CPU). What each cell should say is read from those files with
tfdet.results; the flags are compared with the multi-file report's grid and
cross-check on the same files, so the two pages cannot drift apart."""

import dataclasses
import glob
import json
import os
import random
import re
from html.parser import HTMLParser

import pytest
from report_paths import REPORTS
from test_report_browser import chromium, console_lines, external  # noqa: F401 (chromium: the fixture)

import tfdet.results
from cli_runner import run_cli as run
from tfdet.catalog import Catalogue, default_catalogue
from tfdet.cli.exitcodes import INVALID_INPUT, OK, USAGE
from tfdet.report import build_report, matrix_from_files
from tfdet.report.matrix_page import build_matrix, parse_manifest, render_matrix
from tfdet.results import ResultsError, stats
from tfdet.results.vocabulary import MEASURED

MEASURED_FILES = sorted(glob.glob(os.path.join(REPORTS, "measured", "bincount-segment-scatter-cpu-tf*.jsonl")))
ORDER = ["1.15", "2.4", "2.6", "2.10", "2.21"]  # the files' TF versions, oldest first


class Matrix(HTMLParser):
    """The matrix tables of a page: {mode: {"versions": [...], "cells": {(case, pass, version): cell}}},
    each cell {state, label, title, class}; and every start tag, for the escaping checks."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.tables, self.tags, self.text = {}, [], []
        self._table = self._row = self._cell = self._head = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append((tag, attrs))
        classes = (attrs.get("class") or "").split()
        if tag == "table" and "matrix" in classes:
            self._table = self.tables.setdefault(attrs["data-mode"], {"versions": [], "cells": {}})
        elif self._table is not None and tag == "th" and "ver" in classes:
            self._head = []
        elif self._table is not None and tag == "tr" and "data-case" in attrs:
            self._row = (attrs["data-case"], attrs["data-pass"] or None)
        elif self._row is not None and tag == "td" and "data-state" in attrs:
            self._cell = {"state": attrs["data-state"], "title": attrs.get("title", ""), "class": classes, "text": []}
            self._table["cells"][self._row + (attrs["data-version"],)] = self._cell

    def handle_endtag(self, tag):
        if tag == "table":
            self._table = None
        elif tag == "th" and self._head is not None:
            self._table["versions"].append(self._head[0].strip())
            self._head = None
        elif tag == "td" and self._cell is not None:
            self._cell["label"] = "".join(self._cell.pop("text")).split()[0]
            self._cell = None
        elif tag == "tr":
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._head is not None:
            self._head.append(data)
        if self._cell is not None:
            self._cell["text"].append(data)


def minor(version):
    return ".".join(str(version).split(".")[:2])


@pytest.fixture(scope="module")
def shipped():
    return default_catalogue()


@pytest.fixture(scope="module")
def loaded():
    return [tfdet.results.load(path) for path in MEASURED_FILES]


@pytest.fixture(scope="module")
def page_html(shipped):
    shuffled = list(MEASURED_FILES)
    random.Random(7).shuffle(shuffled)  # the order given does not matter: versions sort as versions
    return matrix_from_files(shuffled, catalogue=shipped, generated="2026-01-01 00:00 UTC")


def test_the_committed_files_are_the_versions_this_test_expects(loaded):
    assert len(MEASURED_FILES) == len(ORDER)
    assert sorted(minor(r.header.tf_version) for r in loaded) == sorted(ORDER)


def test_versions_sort_as_versions_not_as_text(page_html):
    page, html = page_html
    assert [c.version for c in page.columns] == ORDER  # 2.4 < 2.6 < 2.10 < 2.21; as text 2.10 < 2.21 < 2.4
    tables = Matrix(html).tables
    assert set(tables) == {"baseline", "env", "api"}
    for table in tables.values():
        assert table["versions"] == ORDER


def expected_cells(results):
    """{(mode, case, pass, minor version): (state, label)} of what the files measured or skipped, read with
    tfdet.results; a mode a version does not have is 'unsupported' in every row."""
    expected = {}
    rows = set()
    modes = set()
    for result in results:
        modes.update(result.header.modes)
        for record in result.cases:
            if not record.skipped:
                rows.add((record.case, record.pass_name))
    for result in results:
        version = minor(result.header.tf_version)
        skipped = {r.case for r in result.cases if r.skipped}
        by_key = {(r.case, r.pass_name, r.mode): r for r in result.cases if not r.skipped}
        for mode in modes:
            for case, pass_name in rows:
                record = by_key.get((case, pass_name, mode))
                if case in skipped:
                    want = ("unsupported", "n/a")
                elif mode not in result.header.modes:
                    assert mode in result.header.unavailable_modes  # api before TF 2.8
                    want = ("unsupported", "n/a")
                elif record.outcome in ("deterministic", "varies"):
                    want = (record.outcome, str(record.distinct))
                else:
                    want = (record.outcome, record.outcome)
                expected[(mode, case, pass_name, version)] = want
    return expected


def test_every_cell_says_what_its_file_measured(page_html, loaded):
    _, html = page_html
    tables = Matrix(html).tables
    expected = expected_cells(loaded)
    shown = {(mode, case, pass_name, version): (cell["state"], cell["label"])
             for mode, table in tables.items() for (case, pass_name, version), cell in table["cells"].items()}
    assert shown == expected
    # the facts this page exists to show are among them (and they are in the files, or the test above fails)
    assert any(state == "varies" for state, _ in expected.values())
    assert any(state == "unsupported" for state, _ in expected.values())


def test_cell_titles_carry_the_figures(page_html, loaded):
    _, html = page_html
    cells = Matrix(html).tables
    for result in loaded:
        version = minor(result.header.tf_version)
        for record in result.cases:
            if record.skipped or record.outcome not in MEASURED:
                continue
            title = cells[record.mode]["cells"][(record.case, record.pass_name, version)]["title"]
            assert "TF %s" % result.header.tf_version in title and record.mode in title
            assert "distinct results / runs: %s / %s" % (record.distinct, record.runs) in title


def _flags(report):
    """{(minor version, mode, case, pass): (disagreement, unconfirmed)} of the multi-file report's grid."""
    flags = {}
    for row in report.rows:
        for cell in row.cells:
            flags[(minor(cell.column.run.tf_version), cell.column.mode, row.case, row.pass_name)] = (
                cell.disagreement, cell.unconfirmed)
    return flags


def _matrix_flags(page):
    flags = {}
    for table in page.tables:
        for row in table.rows:
            for column, cell in zip(page.columns, row.cells):
                if cell.state in MEASURED:
                    flags[(column.version, table.mode, row.case, row.pass_name)] = (cell.disagreement,
                                                                                  cell.unconfirmed)
    return flags


def _claiming_deterministic(catalogue, entry_id, status="deterministic"):
    """The catalogue with one entry claiming `status` on CPU in every version."""
    entries = []
    for entry in catalogue.entries:
        if entry.id == entry_id:
            cpu = tuple(dataclasses.replace(r, status=status, switches=()) for r in entry.devices["cpu"])
            entry = dataclasses.replace(entry, devices=dict(entry.devices, cpu=cpu))
        entries.append(entry)
    return Catalogue(entries, catalogue.switches)


def test_disagreement_flags_are_the_cross_checks(loaded, shipped):
    """A claim the files contradict is flagged in exactly the cells that contradict it, and every flag
    (disagreement, and the striped 'not seen to vary') is the one the multi-file report's grid gives."""
    catalogue = _claiming_deterministic(shipped, "bincount")
    page = build_matrix(loaded, catalogue=catalogue)
    report = build_report(loaded, catalogue=catalogue)
    flags = _matrix_flags(page)
    assert flags == {k: v for k, v in _flags(report).items() if k in flags}
    varied = {(minor(r.header.tf_version), c.mode) for r in loaded for c in r.cases
              if c.case == "bincount" and c.outcome == "varies"}
    assert varied  # TF 2.21 on this CPU: weighted bincount varies with the switches on
    flagged = {(version, mode) for (version, mode, case, _), (bad, _) in flags.items() if bad}
    assert flagged == varied
    assert len(page.disagreements) == len(report.disagreements) == len({v for v, _ in varied})
    html = render_matrix(page)
    cells = Matrix(html).tables
    for version, mode in varied:
        cell = cells[mode]["cells"][("bincount", "forward", version)]
        assert "disagrees" in cell["class"] and "DISAGREES WITH THE CATALOGUE" in cell["title"]
    assert "disagree with the catalogue" in html or "disagrees with the catalogue" in html

    # with a catalogue unsure of bincount on CPU the flags are still the report's, and the
    # cells measured where it is unsure are dotted
    unsure_catalogue = _claiming_deterministic(shipped, "bincount", status="unknown")
    page = build_matrix(loaded, catalogue=unsure_catalogue)
    report = build_report(loaded, catalogue=unsure_catalogue)
    flags = _matrix_flags(page)
    assert flags == {k: v for k, v in _flags(report).items() if k in flags}
    # and the dotted cells are the report's "measured where the catalogue is unsure"
    unsure = {(minor(f.run.tf_version), mode, f.case, f.pass_name) for f in report.newly_measured for mode in f.modes}
    dotted = {(column.version, table.mode, row.case, row.pass_name) for table in page.tables for row in table.rows
              for column, cell in zip(page.columns, row.cells) if cell.unclaimed}
    assert dotted and dotted == unsure


def test_the_verdict_names_what_varies_where(page_html, loaded):
    page, html = page_html
    points = dict(page.verdict.points)
    varied_base = {}
    still = {}
    for result in loaded:
        version = minor(result.header.tf_version)
        for record in result.cases:
            if record.outcome != "varies":
                continue
            label = "%s (%s)" % (record.case, record.pass_name)
            (varied_base if record.mode == "baseline" else still).setdefault(label, set()).add(version)
    assert varied_base and still
    assert sorted(item.split(":")[0] for item in points["Vary without switches (baseline)"]) == sorted(varied_base)
    assert sorted(item.split(":")[0] for item in points["Still vary with the switches on"]) == sorted(still)
    for label, versions in varied_base.items():
        item = next(i for i in points["Vary without switches (baseline)"] if i.startswith(label))
        assert all(v in item for v in versions)
    assert "%d TF versions measured on CPU (%s)" % (len(ORDER), ", ".join(ORDER)) in page.verdict.lead[0]
    changed = points["Behaviour changed between versions"]
    assert changed and all(" in " in item for item in changed)
    assert page.verdict.lead[0] in html


FULL_PROBES = [os.path.join(REPORTS, name) for name in (
    "probe-tf1.15-cpu-2core.jsonl", "probe-tf2.6-cpu-2core.jsonl", "probe-tf2.21-cpu-2core-default.jsonl")]


def test_the_verdict_lists_follow_the_files(shipped):
    """On the three full probes (every catalogue entry, TF 1.15, 2.6, 2.21): which rows the verdict puts
    under fixed, still varying and raising, computed here from the records themselves."""
    results = [tfdet.results.load(path) for path in FULL_PROBES]
    page = build_matrix(results, catalogue=shipped)
    fixed, still, raised = set(), set(), set()
    for result in results:
        by_row = {}
        for record in result.cases:
            if not record.skipped:
                by_row.setdefault("%s (%s)" % (record.case, record.pass_name), {})[record.mode] = record.outcome
        for label, outcomes in by_row.items():
            switched = [outcomes[m] for m in ("env", "api") if outcomes.get(m) in MEASURED]
            if outcomes.get("baseline") == "varies" and switched and set(switched) == {"deterministic"}:
                fixed.add(label)
            if "varies" in switched:
                still.add(label)
            if "raised" in switched and outcomes.get("baseline") != "raised":
                raised.add(label)
    points = dict(page.verdict.points)
    for heading, wanted in (("Made reproducible by TF's switches, where they varied without", fixed),
                            ("Still vary with the switches on", still),
                            ("Raise with the switches on (and not without them)", raised)):
        assert wanted, heading  # the files hold such rows, or this test shows nothing
        assert {item.split(": ")[0] for item in points[heading]} == wanted, heading


def test_version_lists_become_ranges_over_the_measured_versions():
    from tfdet.report.matrix_verdict import segments, version_list

    assert version_list(["2.4", "2.6", "2.10"], ORDER) == "2.4\u20132.10"
    assert version_list(["1.15", "2.6", "2.10", "2.21"], ORDER) == "1.15, 2.6\u20132.21"
    assert version_list(["2.4", "2.6"], ORDER) == "2.4, 2.6"
    assert segments([("1.15", "a"), ("2.4", "a"), ("2.6", "b"), ("2.10", "a")]) == [
        ("a", ["1.15", "2.4"]), ("b", ["2.6"]), ("a", ["2.10"])]


def test_a_version_without_a_file_is_a_column_of_not_measured(loaded, shipped, tmp_path):
    """Versions the manifest (as `tfdet matrix` writes matrix.json) names without a results file are columns
    of their own, in version order, every cell not measured, the header and environment row saying why."""
    manifest = {"schema": "tfdet-matrix-1", "versions": {
        "2.5": {"status": "failed", "environment": {"status": "failed", "failed_step": "pip install",
                                                    "error": "Collecting tensorflow\nERROR: no wheel for <b>3.7</b>"}},
        "2.7": {"status": "probe-failed", "probe": {"status": "failed", "exit_code": 4, "error": "no TensorFlow"}},
        "2.8.0": {"status": "installed"}, "2.21": {"status": "probed"}}}
    path = tmp_path / "matrix.json"
    path.write_text(json.dumps(manifest), encoding="utf-8")
    page, html = matrix_from_files(MEASURED_FILES, catalogue=shipped, manifest=str(path))
    versions = ["1.15", "2.4", "2.5", "2.6", "2.7", "2.8", "2.10", "2.21"]
    assert [c.version for c in page.columns] == versions
    tables = Matrix(html).tables
    for table in tables.values():
        assert table["versions"] == versions
        for missing in ("2.5", "2.7", "2.8"):
            column = [cell for (case, _, version), cell in table["cells"].items() if version == missing]
            assert column and all(c["state"] == "not-measured" and c["label"] == "\u2014" for c in column)
    by_version = {c.version: c for c in page.columns}
    assert by_version["2.5"].short_status == "not installed"
    assert by_version["2.7"].short_status == "probe failed" and by_version["2.8"].short_status == "no file"
    assert "failed to install or import: at pip install: ERROR: no wheel for &lt;b&gt;3.7&lt;/b&gt;" in html
    assert "installed; the probe failed: probe exit 4: no TensorFlow" in html
    assert "No results for 2.5 (failed to install or import: at pip install: ERROR: no wheel" in page.verdict.lead[0]


@pytest.mark.parametrize("data, words", [
    ([], "expected a JSON object"),
    ({"versions": 3}, "must be an object or a list"),
    ({"versions": {"2.x": "failed"}}, "not a TensorFlow version"),
    ({"versions": {"2.3": {"reason": "?"}}}, "status"),
    ({"versions": [{"status": "failed"}]}, "needs a \"version\""),
])
def test_a_bad_manifest_is_one_clear_error(data, words):
    with pytest.raises(ResultsError, match=re.escape(words)):
        parse_manifest(data, "m.json")


def test_manifest_forms():
    assert parse_manifest({"versions": [{"version": "2.0", "status": "failed", "error": "pip: no wheel"}]}) == {
        "2.0": ("failed", "pip: no wheel")}
    assert parse_manifest({"2.1.4": "installed"}) == {"2.1": ("installed", "")}


def test_hostile_text_renders_as_text(loaded, tmp_path, shipped):
    """Markup in a file name, a skip reason, a manifest reason and the title is escaped."""
    hostile = "<script>alert(1)</script>"
    source = next(p for p in MEASURED_FILES if "tf1.15" in p)
    lines = open(source, encoding="utf-8").read().splitlines()
    lines = [line.replace("no such op on cpu", "no such op " + hostile) for line in lines]
    name = tmp_path / "<img src=x onerror=alert(2)>.jsonl"
    name.write_text("\n".join(lines) + "\n", encoding="utf-8")
    manifest = tmp_path / "m.json"
    manifest.write_text(json.dumps({"2.0": {"status": "failed", "reason": "<iframe src=javascript:alert(3)>"}}))
    others = [p for p in MEASURED_FILES if p != source]
    _, html = matrix_from_files([str(name)] + others, catalogue=shipped, manifest=str(manifest),
                                title="<b>matrix</b>")
    for raw in (hostile, "<img src=x onerror=alert(2)>", "<iframe src=javascript:alert(3)>", "<b>matrix</b>"):
        assert raw not in html
    page = Matrix(html)
    assert not {t for t, _ in page.tags} & {"script", "img", "iframe", "b"}
    text = "".join(page.text)
    assert "<b>matrix</b>" in text and "<img src=x onerror=alert(2)>.jsonl" in text
    assert "<iframe src=javascript:alert(3)>" in text
    assert any(hostile in cell["title"] for cell in page.tables["baseline"]["cells"].values())


def test_the_hostile_fixture_in_a_matrix(shipped):
    """The report's hostile fixture (TF 2.21, CPU: markup in every free-text field, a failed patched mode) as
    the 2.21 column next to the real older files: everything is text, and the failed mode is a column of
    failed cells in its own table."""
    from report_paths import HOSTILE
    from test_report_render import HOSTILE_STRINGS

    files = [p for p in MEASURED_FILES if "tf2.21" not in p] + [HOSTILE]
    _, html = matrix_from_files(files, catalogue=shipped)
    for raw in HOSTILE_STRINGS:
        assert raw not in html, raw
    page = Matrix(html)
    assert not {t for t, _ in page.tags} & {"script", "iframe", "img", "b", "object", "embed", "form", "marquee"}
    assert all(not k.startswith("on") for _, attrs in page.tags for k in attrs)
    patched = page.tables["patched"]["cells"]
    for path in files:
        result = tfdet.results.load(path)
        version = minor(result.header.tf_version)
        skipped = {r.case for r in result.cases if r.skipped}
        states = {case: c["state"] for (case, _, v), c in patched.items() if v == version}
        assert states
        for case, state in states.items():  # a case the version cannot run is n/a whatever the mode
            assert state == ("unsupported" if case in skipped else "failed" if version == "2.21" else "not-measured")


def test_an_interrupted_run_is_marked_partial(shipped):
    """The report's interrupted fixture (TF 2.21) next to the real older files: its column says partial, the
    verdict says how many op passes it did not reach, and those cells are not measured."""
    from report_paths import PARTIAL

    result = tfdet.results.load(PARTIAL)
    done = {(r.case, r.pass_name, r.mode) for r in result.cases if not r.skipped}
    missing = {(case, pass_name) for case, pass_name in result.header.planned
               if any((case, pass_name, m) not in done for m in result.header.modes)}
    assert missing
    files = [p for p in MEASURED_FILES if "tf2.21" not in p] + [PARTIAL]
    page, html = matrix_from_files(files, catalogue=shipped)
    assert "2.21 (%d op" % len(missing) in page.verdict.lead[0] and "Incomplete" in page.verdict.lead[0]
    assert "2.21.0 &middot; partial" in html or "2.21.0 \u00b7 partial" in html
    tables = Matrix(html).tables
    for case, pass_name in missing:
        modes = [m for m in result.header.modes if (case, pass_name, m) not in done]
        for mode in modes:
            cell = tables[mode]["cells"][(case, pass_name, "2.21")]
            assert cell["state"] == "not-measured" and "interrupted" in cell["title"]


def test_no_scripts_and_nothing_from_the_network(page_html):
    _, html = page_html
    for tag, attrs in Matrix(html).tags:
        for key in ("src", "href", "srcset", "data", "poster", "action", "xlink:href"):
            value = (attrs.get(key) or "").strip().lower()
            if tag == "a" and key == "href":
                continue  # links to the catalogue's sources are followed only when clicked
            assert not value.startswith(("http:", "https:", "//", "ftp:")), (tag, key, value)
    assert not re.search(r"@import|url\(\s*['\"]?(https?:)?//", html)
    assert "<script" not in html and "<link" not in html


def test_the_cost_table_has_each_modes_ratio(page_html, loaded):
    """A row per (op, mode) with a measurable cost somewhere (its interval excludes 1), with each version's
    ratio and interval; the pairs with none anywhere are counted, not shown."""
    page, html = page_html
    by_key = {(r.case, r.pass_name, r.mode): r for r in page.cost_rows}
    timed = {}
    for result in loaded:
        for record in result.cases:
            if not record.skipped and record.ratio is not None:
                timed.setdefault((record.case, record.pass_name, record.mode), []).append((result, record))
    # A row where some version's cost is measurable, or too imprecise to call "none" (stats.imprecise_cost).
    dear = {key for key, pairs in timed.items() if any(not r.ratio_low <= 1 <= r.ratio_high or
                                                       stats.imprecise_cost(r.ratio_low, r.ratio_high)
                                                       for _, r in pairs)}
    assert dear and set(by_key) == dear  # env in TF 1.15 and api in TF 2.10 here
    assert page.cost_left_out == len(timed) - len(dear) > 0
    assert "%d op and mode pairs had no measurable cost" % page.cost_left_out in html
    versions = [c.version for c in page.columns]
    for key in dear:
        for result, record in timed[key]:
            cell = by_key[key].cells[versions.index(minor(result.header.tf_version))]
            assert "%.2f" % record.ratio in cell.title and "%.2f" % record.ratio_low in cell.title
            if stats.imprecise_cost(record.ratio_low, record.ratio_high):
                assert cell.label == "?"
            elif record.ratio_low <= 1 <= record.ratio_high:
                assert cell.label == "~1"
            else:
                assert cell.label == "\u00d7%.2f" % record.ratio


def test_the_environment_table_has_one_row_per_version(page_html, loaded):
    page, html = page_html
    rows = re.findall(r'<tr data-version="([^"]+)">', html.split('id="environments"')[1])
    assert rows == ORDER
    for result in loaded:
        env = result.header.first_environment
        assert env.python in html and env.numpy in html and env.tf_version in html


def test_the_cli_writes_the_matrix_page(tmp_path):
    output = tmp_path / "matrix.html"
    code, out, err = run("report", "--matrix", *MEASURED_FILES, "-o", str(output))
    assert code == OK, err
    assert out.startswith("wrote %s: 5 TF versions (%s)" % (output, ", ".join(ORDER)))
    assert 'class="data matrix"' in output.read_text(encoding="utf-8")


def test_a_directory_is_its_results_files_and_its_manifest(tmp_path):
    """What `tfdet matrix --out DIR` leaves: DIR/*.jsonl and DIR/matrix.json; `report --matrix DIR` reads both."""
    import shutil

    out = tmp_path / "matrix"
    out.mkdir()
    for path in MEASURED_FILES:
        shutil.copy(path, str(out))
    (out / "matrix.json").write_text(json.dumps({"versions": {"2.0": {"status": "failed", "reason": "no wheel"}}}))
    output = tmp_path / "m.html"
    code, out_text, err = run("report", "--matrix", str(out), "-o", str(output))
    assert code == OK, err
    assert "5 TF versions (%s)" % ", ".join(ORDER) in out_text
    assert Matrix(output.read_text(encoding="utf-8")).tables["env"]["versions"] == ["1.15", "2.0"] + ORDER[1:]
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run("report", "--matrix", str(empty), "-o", str(output))
    assert code == INVALID_INPUT and "a directory with no results files" in err


def test_the_grid_says_when_the_matrix_would_read_better(tmp_path):
    code, out, _ = run("report", *MEASURED_FILES, "-o", str(tmp_path / "grid.html"))
    assert code == OK and "--matrix gives one table per mode" in out
    code, out, _ = run("report", *MEASURED_FILES[:3], "-o", str(tmp_path / "grid3.html"))
    assert code == OK and "--matrix" not in out


def _as_gpu(path, tmp_path):
    lines = open(path, encoding="utf-8").read().splitlines()
    header = json.loads(lines[0])
    for env in header["environment"].values():
        env["device"] = "gpu"
    copy = tmp_path / "gpu.jsonl"
    copy.write_text("\n".join([json.dumps(header)] + lines[1:]) + "\n", encoding="utf-8")
    return str(copy)


def test_bad_matrix_input_is_one_line_and_its_exit_code(tmp_path):
    output = str(tmp_path / "m.html")
    cases = [
        (("--manifest", "m.json") + tuple(MEASURED_FILES), USAGE, "--manifest needs --matrix"),
        (("--matrix", MEASURED_FILES[0], MEASURED_FILES[0]), INVALID_INPUT, "the matrix takes one results file per TF"),
        (("--matrix", MEASURED_FILES[1], _as_gpu(MEASURED_FILES[0], tmp_path)), INVALID_INPUT,
         "compares TF versions on one device"),
        (("--matrix", "--manifest", str(tmp_path / "none.json"), MEASURED_FILES[0]), INVALID_INPUT,
         "none.json: cannot read"),
        (("--matrix", os.path.join(REPORTS, "diverge", "embedding.jsonl")), INVALID_INPUT, "probe results files only"),
    ]
    for args, code_wanted, words in cases:
        code, out, err = run("report", *args, "-o", output)
        assert code == code_wanted, (args, err)
        assert err.startswith("tfdet: error: ") and words in err and err.count("\n") == 1, err
        assert not os.path.exists(output)


@pytest.mark.browser
def test_the_page_loads_offline_in_a_browser(chromium, page_html, tmp_path):  # noqa: F811 (the fixture)
    """Headless Chromium (the report's browser helper): no console errors, no request leaves the page,
    and the rendered DOM has a table per mode with the versions in order."""
    path = tmp_path / "matrix.html"
    path.write_text(page_html[1], encoding="utf-8")
    dom, lines, urls = chromium(str(path), "--dump-dom")
    assert console_lines(lines) == [] and external(urls) == []
    tables = Matrix(dom).tables
    assert sorted(tables) == ["api", "baseline", "env"] and all(t["versions"] == ORDER for t in tables.values())
