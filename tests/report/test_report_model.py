"""The view model: runs, environments and their differences, rows and cells,
the cross-check on whole files, the plain-language summary, interrupted runs."""

from report_paths import PARTIAL, RUN_A, RUN_B, make_fixtures

from tfdet.report import build_report

fx = make_fixtures()  # builders of typed records


def cells_of(report, case, pass_name="forward"):
    (row,) = [r for r in report.rows if r.case == case and r.pass_name == pass_name]
    return row, {(c.column.run.key, c.column.mode): c for c in row.cells}


def test_one_run_has_a_column_per_mode_and_a_row_per_case_pass(build):
    report = build(RUN_A)
    (run,) = report.runs
    assert run.label == "TF 2.21.0 \u00b7 cpu" and run.device == "cpu" and run.modes == ["baseline", "env", "api"]
    assert [c.key for c in report.columns] == ["r1-baseline", "r1-env", "r1-api"]
    assert [(r.case, r.pass_name) for r in report.rows][:3] == [
        ("segment-sum", "forward"), ("argmax-ties", "forward"), ("bincount", "forward")]
    assert ("cudnn-conv-autotuning", None) in [(r.case, r.pass_name) for r in report.rows]
    _, cells = cells_of(report, "data-stateful-parallel-map")
    assert cells["r1", "baseline"].outcome == "varies" and cells["r1", "baseline"].label == "10/10"
    assert cells["r1", "env"].css == "o-deterministic" and cells["r1", "env"].cost == "\u00d71.27"
    figures = dict(cells["r1", "env"].figures)
    assert figures["distinct results / runs"] == "1 / 10"
    assert figures["cost vs baseline (95% interval)"].startswith("\u00d71.27 [1.14\u20131.42]")
    assert "max ULP difference" in dict(cells["r1", "baseline"].figures)


def test_raised_failed_and_skipped_cells(build):
    report = build(RUN_A)
    _, cells = cells_of(report, "unseeded-random-ops")
    assert cells["r1", "env"].outcome == "raised"
    assert dict(cells["r1", "env"].figures)["error"].startswith("RuntimeError: Random ops require a seed")
    row, cells = cells_of(report, "fixture-crash")
    assert not row.in_catalogue and row.title == "not a catalogue entry" and row.group == "attention"
    assert cells["r1", "api"].outcome == "failed" and "Fatal Python error" in cells["r1", "api"].detail
    row, cells = cells_of(report, "cudnn-conv-autotuning", None)
    assert {c.outcome for c in cells.values()} == {"skipped"} and row.group == "not-measured"
    (merged,) = row.display  # one cell spanning the run's three modes, with the reason
    assert merged.span == 3 and merged.label == "skipped: needs a GPU; needs cuDNN (a GPU); this machine has cpu only"


def test_rows_are_grouped_by_what_needs_attention(build):
    groups = {key: [r.case for r in rows] for key, _, rows in build(RUN_A).groups}
    assert groups["attention"] == ["argmax-ties", "bincount", "unseeded-random-ops", "timestamp",
                                   "ref-variable-scatter", "data-stateful-parallel-map", "fixture-crash"]
    assert groups["reproducible"] == ["segment-sum", "while-loop-parallel-iterations"]


def test_crosscheck_on_a_whole_file(build):
    report = build(RUN_A)
    assert [(f.case, f.status, f.modes) for f in report.disagreements] == [
        ("argmax-ties", "deterministic", ("baseline",)),
        ("timestamp", "raises_under_determinism", ("api",)),
        ("ref-variable-scatter", "deterministic_with_switch", ("env",)),
    ]
    timestamp = report.disagreements[1]
    assert timestamp.versions == ">=2.8" and timestamp.device == "cpu" and timestamp.title == "tf.timestamp"
    assert timestamp.sources == [("TF 2.8 release notes", "https://github.com/tensorflow/tensorflow/releases/tag/v2.8.0")]
    assert [f.case for f in report.not_reproduced] == ["while-loop-parallel-iterations"]
    assert [(f.case, f.notable) for f in report.newly_measured] == [("bincount", True)]
    # the cells the disagreements are about are flagged, and only those
    flagged = {(r.case, c.column.mode) for r in report.rows for c in r.cells if c.disagreement}
    assert flagged == {("argmax-ties", "baseline"), ("timestamp", "api"), ("ref-variable-scatter", "env")}
    _, cells = cells_of(report, "timestamp")
    assert "disagrees" in cells["r1", "api"].css and "DISAGREES WITH THE CATALOGUE" in cells["r1", "api"].title
    # segment-sum's GPU claim (nondeterministic) is not checked on a CPU run
    assert "segment-sum" not in {f.case for f in report.disagreements + report.not_reproduced}
    assert report.claims_checked == 7


def test_mode_switches_come_from_the_recorded_environment(build):
    report = build(RUN_A, RUN_B)
    a, b = report.runs
    assert a.mode_switches["env"] == a.mode_switches["api"] == {"TF_DETERMINISTIC_OPS", "enable_op_determinism"}
    assert a.mode_switches["baseline"] == frozenset()
    assert a.determinism_label == "TF_DETERMINISTIC_OPS / enable_op_determinism()"
    assert b.determinism_label == "TF_DETERMINISTIC_OPS" and "api" not in b.mode_switches


def test_plain_language_summary(build):
    (run,) = build(RUN_A).runs
    assert run.summary[0] == (
        "On this machine (TF 2.21.0, cpu: AMD EPYC, 2 cores), 5 ops of 8 measured vary from run to run without "
        "determinism; 2 of them become reproducible with TF_DETERMINISTIC_OPS / enable_op_determinism() at no "
        "measurable cost in 2 of 4 measurements, \u00d71.23 to \u00d71.27 in the others; 1 still varies; 2 raise "
        "errors under determinism.")
    assert "1 more op varies only with determinism on: bincount." in run.summary
    assert any(s.startswith("Across all measured ops (latency relative to baseline, 95% intervals): under env, at "
                            "no measurable cost in") for s in run.summary)
    assert "1 op failed (crashed or hung): fixture-crash." in run.summary
    assert dict(run.summary_lists)["raise under determinism"] == ["unseeded-random-ops", "timestamp"]


def test_what_to_do_comes_from_the_catalogue_with_the_measured_cost(build):
    report = build(RUN_A)
    row, _ = cells_of(report, "data-stateful-parallel-map")
    ((who, text),) = row.advice
    assert who == "" and text.startswith("switch: enable_op_determinism.")
    assert "reproducible under env, cost \u00d71.27" in text
    row, _ = cells_of(report, "unseeded-random-ops")
    assert "Under determinism it raises RuntimeError" in row.advice[0][1]
    row, _ = cells_of(report, "segment-sum")
    assert row.advice == []  # nothing to do for a reproducible row


def test_two_runs_say_what_differs(build):
    report = build(RUN_A, RUN_B)
    assert [r.label for r in report.runs] == ["TF 2.21.0 \u00b7 cpu", "TF 2.6.4 \u00b7 cpu"]
    for key in ("TensorFlow", "Python", "numpy", "Threads (intra / inter)", "oneDNN", "Execution", "Modes run",
                "Modes not run", "Interpreter"):
        assert key in report.differing_keys
    for key in ("Device", "CPU", "CPU cores", "Recorded", "Results file"):
        assert key not in report.differing_keys
    assert report.differences.startswith("The runs differ in 10 settings: TensorFlow, TF build, Python")
    assert dict(report.difference_values)["Execution"] == ["function", "eager"]
    assert len(report.columns) == 5
    # run B (TF 2.6): the catalogue says no switch fixes the stateful map, and env did
    assert [(f.run.key, f.case) for f in report.disagreements][-1] == ("r2", "data-stateful-parallel-map")
    assert report.summary_intro.startswith("All 2 runs are from the same hardware")
    row, _ = cells_of(report, "data-stateful-parallel-map")
    assert [who for who, _ in row.advice] == ["TF 2.21.0 \u00b7 cpu", "TF 2.6.4 \u00b7 cpu"]
    assert "workaround: num_parallel_calls=1" in row.advice[1][1]


def test_heatmaps_only_for_several_tf_versions(build):
    assert build(RUN_A).heatmaps == []
    heatmaps = build(RUN_A, RUN_B).heatmaps
    assert [h.title for h in heatmaps] == ["Outcome by TF version, baseline mode", "Outcome by TF version, env mode"]
    assert "2.6.4" in heatmaps[0].svg and heatmaps[0].svg.index("2.6.4") < heatmaps[0].svg.index("2.21.0")
    assert "segment-sum" not in heatmaps[0].svg  # reproducible everywhere: left out


def test_charts(build):
    report = build(RUN_A)
    (cost,) = report.cost_charts
    (variance,) = report.variance_charts
    assert cost.svg.startswith("<svg") and "data-stateful-parallel-map (forward)" in cost.svg
    assert "fixture-crash" not in cost.svg  # no ratio
    assert "unseeded-random-ops (forward)" in variance.svg and "segment-sum" not in variance.svg


def test_interrupted_run_marks_what_was_not_measured(build):
    report = build(PARTIAL)
    (run,) = report.runs
    assert run.partial and run.missing == [("argmax-ties", "forward"), ("timestamp", "forward")]
    for case in ("argmax-ties", "timestamp"):
        row, cells = cells_of(report, case)
        assert {c.outcome for c in cells.values()} == {"missing"} and row.group == "not-measured"
        assert all(c.label == "not measured" for c in cells.values())
    assert run.summary[-1].startswith("This run is incomplete: 2 of 4 planned case passes were not measured")


def test_hostile_case_names_make_safe_anchors(build):
    from report_paths import HOSTILE

    report = build(HOSTILE)
    anchors = [r.anchor for r in report.rows]
    assert all(set(a) <= set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") for a in anchors)
    assert "row-_script_alert_1___script_-forward" in anchors


def test_several_runs_share_the_variance_scale(build):
    charts = build(RUN_A, RUN_B).variance_charts
    assert len(charts) == 2 and all("1e9" in c.svg and "same scale" in c.caption for c in charts)


def test_same_label_runs_are_told_apart(build):
    report = build(RUN_A, PARTIAL, RUN_A)
    labels = [r.label for r in report.runs]
    assert len(set(labels)) == 3
    assert labels[1] == "TF 2.21.0 \u00b7 cpu \u00b7 partial_tf2.21.jsonl"


def test_without_a_catalogue_nothing_is_cross_checked(build):
    report = build(RUN_A, catalogue=None)
    assert not report.catalogue_used and report.disagreements == [] and report.newly_measured == []
    assert all(r.title == "" for r in report.rows)


def test_odd_but_valid_content_does_not_crash():
    """What the typed reader lets through and a hand-edited file may still hold: no
    environment, a mode in the records the header does not list, a skipped case with
    an empty reason. (A planned item that is not a [case, pass] pair is refused by the
    reader: tests/results/test_probe_file.py.)"""
    head = fx.header(modes=["baseline"], environment={}, planned=[["b", "forward"]], skipped=[["c", ""]])
    records = [fx.rec("b", "forward", "baseline", "deterministic"), fx.rec("d", "forward", "env", "varies", 2, 3)]
    report = build_report([fx.results(head, records, "odd.jsonl")])
    (run,) = report.runs
    assert run.tf_version == "unknown" and run.device is None and run.modes == ["baseline", "env"]
    assert run.label == "TF unknown \u00b7 unknown device" and run.environment["TensorFlow"] == "unknown"
    assert [(r.case, r.pass_name) for r in report.rows] == [("b", "forward"), ("d", "forward"), ("c", None)]
    _, cells = cells_of(report, "c", None)
    assert cells["r1", "baseline"].label == "skipped" and cells["r1", "baseline"].figures == [
        ("reason", "no reason recorded")]


def test_green_cells_the_catalogue_says_vary_are_flagged_in_the_cell_and_the_summary(build):
    report = build(RUN_A)
    _, cells = cells_of(report, "while-loop-parallel-iterations")
    for mode in ("baseline", "env", "api"):
        cell = cells["r1", mode]
        assert cell.outcome == "deterministic" and cell.unconfirmed and "unconfirmed" in cell.css
        assert "THE CATALOGUE SAYS THIS VARIES HERE" in cell.title
        assert dict(cell.figures)["what this rules out"] == (
            "0 of 10 runs differed: a per-run rate above 26% is ruled out at 95%")
    _, plain = cells_of(report, "segment-sum")  # catalogued deterministic: green means green
    assert not any(c.unconfirmed for c in plain.values())
    (run,) = report.runs
    assert any(s.startswith("The catalogue says 1 op varies here that did not vary in this run") and
               "while-loop-parallel-iterations (forward) under baseline, env, api: 0 of 10 runs differed" in s
               for s in run.summary)


def _in_memory(records, **header):
    """[ProbeResults] of one TF 2.21 CPU run held in memory, from typed records (pass forward)."""
    header.setdefault("modes", ["baseline", "patched"])
    header.setdefault("environment", {"baseline": fx.env()})
    head = fx.header(**header)
    return [fx.results(head, [fx.CaseRecord(**dict({"record": "case", "pass_name": "forward"}, **r))
                              for r in records])]


def test_a_mode_that_did_not_run_is_the_first_sentence_of_the_summary(catalogue):
    results = _in_memory([
        {"case": "segment-sum", "mode": "baseline", "outcome": "deterministic", "distinct": 1, "runs": 10},
        {"case": "segment-sum", "mode": "patched", "outcome": "failed", "error_message": "ImportError: yaml"}])
    (run,) = build_report(results, catalogue=catalogue).runs
    assert run.summary[0] == ("Mode patched did not run: no case gave a measurement: all 1 failed (ImportError: "
                              "yaml). Its column is empty or failed; nothing here says what it fixes or costs.")
    results = _in_memory([{"case": "segment-sum", "mode": "baseline", "outcome": "deterministic", "distinct": 1,
                           "runs": 10}], modes=["baseline"], not_applicable_modes={"api": "no API in TF 1.15"})
    (run,) = build_report(results, catalogue=catalogue).runs
    assert not run.summary[0].startswith("Mode") and "Mode api was not run (not applicable here): no API in TF " \
        "1.15." in run.summary


def test_cost_in_words_and_the_patch_cost_in_the_summary(catalogue):
    results = _in_memory([
        {"case": "segment-sum", "mode": "baseline", "outcome": "varies", "distinct": 3, "runs": 10},
        {"case": "segment-sum", "mode": "patched", "outcome": "deterministic", "distinct": 1, "runs": 40,
         "ratio": 0.96, "ratio_low": 0.9, "ratio_high": 1.03, "extra_runs": 30, "repeated_because": "it varied "
         "under baseline"}])
    report = build_report(results, catalogue=catalogue)
    _, cells = cells_of(report, "segment-sum")
    cell = cells["r1", "patched"]
    assert cell.cost == "no measurable cost"  # not "x0.96", which reads as a speed-up
    figures = dict(cell.figures)
    assert figures["cost vs baseline (95% interval)"].startswith("no measurable cost [0.90\u20131.03] (median \u00d70.96)")
    assert figures["repeated"] == "30 more runs, because it varied under baseline"
    assert "0 of 40 runs differed: a per-run rate above 7.2% is ruled out at 95%" == figures["what this rules out"]
    (run,) = report.runs
    assert ("tfdet.patch() has no measurable cost [0.90\u20131.03] on the one op that varies without it "
            "(segment-sum, forward), latency relative to baseline.") in run.summary


def test_an_op_only_the_patch_fixes_is_not_counted_as_still_varying(catalogue):
    results = _in_memory([
        {"case": "bincount", "mode": "baseline", "outcome": "varies", "distinct": 5, "runs": 10},
        {"case": "bincount", "mode": "env", "outcome": "varies", "distinct": 4, "runs": 10},
        {"case": "bincount", "mode": "patched", "outcome": "deterministic", "distinct": 1, "runs": 60},
        {"case": "segment-sum", "mode": "baseline", "outcome": "varies", "distinct": 3, "runs": 10},
        {"case": "segment-sum", "mode": "env", "outcome": "varies", "distinct": 2, "runs": 10},
        {"case": "segment-sum", "mode": "patched", "outcome": "varies", "distinct": 2, "runs": 10}],
        modes=["baseline", "env", "patched"],
        environment={"baseline": fx.env(), "env": fx.env(mode_env={"TF_DETERMINISTIC_OPS": "1"}),
                     "patched": fx.env()})
    (run,) = build_report(results, catalogue=catalogue).runs
    assert "; 1 more only with tfdet.patch() (bincount); 1 still varies;" in run.summary[0], run.summary[0]
    lists = dict(run.summary_lists)
    assert lists["reproducible only with tfdet.patch()"] == ["bincount"]
    assert lists["still vary with determinism"] == ["segment-sum"]
