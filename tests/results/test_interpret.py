"""What results mean: modes that did not run, the patch's cost, costs in words."""

import records as make
from tfdet.results import interpret


def test_mode_problems_rule():
    header = make.header(modes=("baseline", "patched"), mode_failures={"api": "no determinism API in TF 1.15"},
                         unavailable_modes={"api": "no determinism API in TF 1.15"})
    cases = [make.case("a", "baseline", "deterministic", runs=10, distinct=1),
             make.case("a", "patched", "failed", error_message="ImportError: no module named yaml"),
             make.case("b", "baseline", "raised"), make.case("b", "patched", "failed")]
    problems = {p.mode: p for p in interpret.mode_problems(make.results(header, cases))}
    assert set(problems) == {"api", "patched"} and problems["api"].failure and problems["patched"].failure
    assert "no case gave a measurement: all 2 failed" in problems["patched"].reason
    assert "ImportError" in problems["patched"].reason
    # one measurement (a raised error counts: it is what the op does) is enough
    cases[3] = make.case("b", "patched", "raised")
    assert {p.mode for p in interpret.mode_problems(make.results(header, cases))} == {"api"}
    # a default mode this TF lacks is a note
    noted = make.header(unavailable_modes={"api": "too old"}, not_applicable_modes={"api": "too old"})
    assert [(p.mode, p.failure) for p in interpret.mode_problems(make.results(noted, cases[:1]))] == [("api", False)]
    # what the end record says did not run is a failure even with no record of it
    ended = make.results(make.header(), cases[:1], make.end(env="env#0 could not start"))
    assert [(p.mode, p.failure) for p in interpret.mode_problems(ended)] == [("env", True)]


def test_cost_words_and_the_patch_cost():
    assert interpret.cost_words(0.96, 0.90, 1.03) == "no measurable cost [0.90\u20131.03]"
    assert interpret.cost_words(1.34, 1.2, 1.5, ascii_only=True) == "x1.34 [1.20-1.50]"
    assert interpret.cost_words(0.80, 0.7, 0.9).startswith("\u00d70.80")  # a real speed-up stays a number
    assert interpret.record_cost_words(make.case("a", "env", "varies")) == "-"
    cases = [make.case("a", "baseline", "varies"),
             make.case("a", "patched", "deterministic", ratio=9.0, ratio_low=8.0, ratio_high=10.0),
             make.case("b", "baseline", "deterministic"),
             make.case("b", "patched", "deterministic", ratio=50.0, ratio_low=40.0, ratio_high=60.0)]
    cost = interpret.patch_cost(cases)  # only where baseline varies: b's cost is not the patch's business
    assert cost.median == 9.0 and (cost.low, cost.high) == (8.0, 10.0)
    assert "one op that varies without it (a, forward)" in interpret.describe_patch_cost(cost)
    cases += [make.case("c", "baseline", "varies"),
              make.case("c", "patched", "deterministic", ratio=1.0, ratio_low=0.9, ratio_high=1.1)]
    cost = interpret.patch_cost(cases)
    assert cost.median == 5.0 and (cost.low, cost.high) == (1.0, 9.0)
    assert "median \u00d75.00 over the 2 ops" in interpret.describe_patch_cost(cost)
    assert interpret.patch_cost(cases[2:4]) is None


def test_not_measured_and_varied_under():
    header = make.header(modes=("baseline", "env"), planned=[["a", "forward"], ["b", "forward"]])
    results = make.results(header, [make.case("a", "baseline", "varies"), make.case("a", "env", "deterministic")])
    assert interpret.not_measured(results) == [("b", "forward")]
    assert interpret.varied_under(results, "baseline") == [("a", "forward")]
    assert interpret.varied_under(results, "env") == []
