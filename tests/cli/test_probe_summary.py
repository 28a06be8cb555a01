"""The probe's end-of-run summary, from typed records."""

import records as make
from tfdet.cli.probe_summary import summarise


def test_summary_names_what_varied_raised_and_failed():
    header = make.header(modes=("baseline", "env"), planned=[["a", "forward"], ["b", "forward"], ["c", "forward"]],
                         environment={"baseline": make.environment(cpu_model="X")},
                         unavailable_modes={"api": "too old"}, not_applicable_modes={"api": "too old"})
    cases = [
        make.case("a", "baseline", "varies", distinct=3, runs=10),
        make.case("a", "env", "deterministic", distinct=1, runs=10, ratio=1.5, ratio_low=1.4, ratio_high=1.6),
        make.case("b", "env", "raised", error_type="E", error_message="<m>"),
        make.skipped("x", "needs a GPU; cpu only"),
    ]
    text = summarise(make.results(header, cases, path="r.jsonl"))
    assert "a" in text and "3/10 VARIES" in text and "1/10" in text
    assert "E: <m>" in text and "x1.50 [1.40-1.60]" in text
    assert "mode api not run (not applicable here): too old" in text
    assert "Skipped 1 catalogue entries: needs a GPU (1)" in text
    assert "Not measured yet (interrupted run): 1" in text and "Results: r.jsonl" in text
    assert "TF 2.21.0 on cpu (X, 2 cores)" in text


def test_summary_says_first_which_mode_did_not_run():
    header = make.header(modes=("baseline", "patched"), max_repeats=40)
    cases = [make.case("a", "baseline", "deterministic", runs=40, distinct=1),
             make.case("a", "patched", "failed", error_message="patched#0 died")]
    lines = summarise(make.results(header, cases)).splitlines()
    assert lines[0] == "MODE patched DID NOT RUN: no case gave a measurement: all 1 failed (patched#0 died)"
    assert "up to 40 runs where variance is expected" in lines[1]


def test_summary_flags_what_the_catalogue_says_varies_and_what_silence_rules_out():
    header = make.header(modes=("baseline", "env"), max_repeats=40)
    cases = [make.case("a", "baseline", "varies", runs=10, distinct=3),
             make.case("a", "env", "deterministic", runs=40, distinct=1, extra_runs=30),
             make.case("b", "baseline", "deterministic", runs=40, distinct=1,
                       catalogue_expects_variance="the catalogue says nondeterministic (TF >=2.21)")]
    text = summarise(make.results(header, cases))
    assert "1/40 (<7.2%)" in text
    assert "The catalogue says these vary here; they did not vary in this run" in text
    assert "0 of 40 runs differed: a per-run rate above 7.2% is ruled out at 95%" in text


def test_long_errors_are_cut_to_the_width_and_the_cases_are_not():
    header = make.header(modes=("baseline",))
    cases = [make.case("crop-and-resize-backprop-image", "baseline", "failed", error_message="boom " * 40)]
    text = summarise(make.results(header, cases), width=80)
    table = [line for line in text.splitlines() if "crop-and-resize" in line]
    assert table and all(len(line) <= 80 for line in table)
    assert "\u2026" in table[0]
