"""The cross-check of measurements against catalogue claims (pure)."""

from collections import namedtuple

import pytest

from tfdet.catalog.crosscheck import (
    DISAGREEMENT, NEWLY_MEASURED, NOT_REPRODUCED, Claim, check, check_run, describe, expand_switches,
    summarise_modes, switch_sets,
)
from tfdet.results import CaseRecord

ON = frozenset({"TF_DETERMINISTIC_OPS", "enable_op_determinism"})
SWITCHES = {"baseline": frozenset(), "env": ON, "api": ON}


def record(outcome, **fields):
    """A CaseRecord of case "op" (the cross-check reads typed records only)."""
    return CaseRecord(record="case", case="op", pass_name="forward", outcome=outcome, **fields)


def det(distinct=1):
    return record("deterministic", distinct=distinct, runs=10)


def var(distinct=4):
    return record("varies", distinct=distinct, runs=10)


def raised(kind="UnimplementedError"):
    return record("raised", error_type=kind, error_message="no deterministic kernel")


def run(claim, switches=SWITCHES, **records):
    return check("op", "forward", claim, records, switches)


def kinds(findings):
    return [(f.kind, f.modes) for f in findings]


# -- deterministic ---------------------------------------------------------------

def test_deterministic_claim_that_varied_is_a_disagreement_naming_claim_and_modes():
    (finding,) = run(Claim("deterministic", ">=1.14"), baseline=var(3), env=det(), api=det())
    assert finding.kind == DISAGREEMENT and finding.modes == ("baseline",)
    assert "deterministic for TF >=1.14" in finding.message and "varied under baseline (3/10" in finding.message


def test_deterministic_claim_that_held_gives_nothing():
    assert run(Claim("deterministic"), baseline=det(), env=det(), api=det()) == []


def test_deterministic_claim_that_raised_only_under_determinism_is_a_disagreement():
    assert kinds(run(Claim("deterministic"), baseline=det(), env=raised(), api=det())) == [(DISAGREEMENT, ("env",))]
    # raising everywhere is the probe case's problem, not a determinism fact
    assert run(Claim("deterministic"), baseline=raised(), env=raised()) == []


# -- deterministic_with_switch ------------------------------------------------------

def test_switch_claim_still_varying_with_the_switch_on_is_a_disagreement():
    claim = Claim("deterministic_with_switch", ">=2.8", ("enable_op_determinism",))
    (finding,) = run(claim, baseline=var(10), env=var(2), api=det())
    assert finding.kind == DISAGREEMENT and finding.modes == ("env",)
    assert "enable_op_determinism" in finding.message and "varied under env (2/10" in finding.message


def test_switch_claim_raising_with_the_switch_on_is_a_disagreement():
    claim = Claim("deterministic_with_switch", ">=2.8", ("enable_op_determinism",))
    assert kinds(run(claim, baseline=var(), env=raised(), api=det())) == [(DISAGREEMENT, ("env",))]


def test_switch_claim_fixed_by_the_switch_agrees():
    claim = Claim("deterministic_with_switch", ">=2.8", ("enable_op_determinism",))
    assert run(claim, baseline=var(10), env=det(), api=det()) == []


def test_switch_claim_is_not_tested_by_modes_that_do_not_turn_its_switches_on():
    claim = Claim("deterministic_with_switch", ">=2.6,<2.8", ("tf_data_debug_mode",))
    assert run(claim, baseline=var(), env=var()) == []
    # all of the named switches are needed
    claim = Claim("deterministic_with_switch", ">=2.8", ("enable_op_determinism", "TF_CUDNN_USE_AUTOTUNE"))
    assert run(claim, baseline=var(), env=var()) == []


def test_switch_claim_not_seen_to_vary_is_only_not_reproduced():
    claim = Claim("deterministic_with_switch", ">=2.8", ("enable_op_determinism",), condition="duplicate indices")
    (finding,) = run(claim, baseline=det(), env=det(), api=det())
    assert finding.kind == NOT_REPRODUCED and finding.modes == ("baseline",)
    assert "did not vary in 10 runs" in finding.message and "duplicate indices" in finding.message


# -- raises_under_determinism ----------------------------------------------------------

def test_raise_claim_that_did_not_raise_is_a_disagreement():
    claim = Claim("raises_under_determinism", ">=2.8", ("enable_op_determinism",), error_type="FailedPreconditionError")
    (finding,) = run(claim, baseline=var(10), env=raised(), api=det())
    assert finding.kind == DISAGREEMENT and finding.modes == ("api",)
    assert "FailedPreconditionError" in finding.message and "did not raise" in finding.message


def test_raise_claim_that_raised_agrees():
    claim = Claim("raises_under_determinism", ">=2.8", ("enable_op_determinism",))
    assert run(claim, baseline=var(10), env=raised(), api=raised()) == []


def test_raise_claim_needs_any_one_of_its_switches():
    claim = Claim("raises_under_determinism", ">=2.7", ("TF_DETERMINISTIC_OPS", "something_else"))
    assert kinds(run(claim, baseline=var(), env=det())) == [(DISAGREEMENT, ("env",))]


def test_gpu_only_switch_on_a_cpu_run_tests_nothing():
    # TF 1.15 on CPU: env sets only TF_CUDNN_DETERMINISTIC, which the caller drops for cpu
    claim = Claim("raises_under_determinism", ">=1.14", ("TF_CUDNN_DETERMINISTIC",))
    assert run(claim, {"baseline": frozenset(), "env": frozenset()}, baseline=var(), env=var()) == []


# -- nondeterministic ---------------------------------------------------------------

def test_nondeterministic_claim_fixed_by_a_switch_is_a_disagreement():
    (finding,) = run(Claim("nondeterministic", "<2.8"), baseline=var(10), env=det())
    assert finding.kind == DISAGREEMENT and finding.modes == ("env",)
    assert "no TensorFlow switch fixes it" in finding.message


def test_rare_variance_not_seen_under_a_switch_is_only_weak_evidence():
    (finding,) = run(Claim("nondeterministic", "<2.8"), baseline=var(2), env=det())
    assert finding.kind == NOT_REPRODUCED and "varied rarely" in finding.message


def test_nondeterministic_claim_that_raised_is_a_disagreement():
    assert kinds(run(Claim("nondeterministic"), baseline=var(), env=raised())) == [(DISAGREEMENT, ("env",))]


def test_nondeterministic_claim_that_varied_everywhere_agrees():
    assert run(Claim("nondeterministic"), baseline=var(), env=var(), api=var()) == []
    # varying only once determinism is on still agrees with "varies, no switch fixes it"
    assert run(Claim("nondeterministic"), baseline=det(), env=var(2), api=var(2)) == []


def test_nondeterministic_claim_never_seen_to_vary_is_not_reproduced():
    assert kinds(run(Claim("nondeterministic"), baseline=det(), env=det())) == [(NOT_REPRODUCED, ("baseline",))]


# -- not_applicable, unknown, nothing measured ----------------------------------------

def test_not_applicable_claim_that_ran_is_a_disagreement():
    (finding,) = run(Claim("not_applicable", "<2.4"), baseline=det(), env=det())
    assert finding.kind == DISAGREEMENT and "no such op" in finding.message


@pytest.mark.parametrize("claim", [None, Claim("unknown", "<2.4")])
def test_unknown_or_missing_claims_are_newly_measured(claim):
    (finding,) = run(claim, baseline=det(), env=var(2), api=raised("ValueError"))
    assert finding.kind == NEWLY_MEASURED and finding.status == "unknown"
    assert finding.message == ("Varied under env (2/10); raised under api (ValueError); reproducible under "
                               "baseline (1/10) (distinct results/runs).")


def test_failed_skipped_and_missing_cells_are_never_evidence():
    failed = record("failed", error_message="killed")
    assert run(Claim("deterministic"), baseline=failed, env=failed) == []
    assert run(None, baseline=failed) == []
    assert run(Claim("deterministic")) == []


def test_check_run_skips_cases_without_a_claim_entry_and_keeps_order():
    rows = {("a", "forward"): {"baseline": var()}, ("fixture-x", "forward"): {"baseline": var()},
            ("b", "gradient"): {"baseline": det(), "env": det()}}
    claims = {"a": Claim("deterministic"), "b": None}
    found = check_run(rows, claims, SWITCHES)
    assert [(f.case, f.pass_name, f.kind) for f in found] == [("a", "forward", DISAGREEMENT),
                                                              ("b", "gradient", NEWLY_MEASURED)]


def test_describe_and_summaries():
    assert describe("env", var(3)) == "varied under env (3/10 distinct results)"
    assert describe("api", raised("X")) == "raised X under api"
    assert summarise_modes({}) == ""


# -- which switches a mode turned on ----------------------------------------------------

Switch = namedtuple("Switch", "id kind name value role devices same_as")
CATALOGUE_SWITCHES = [
    Switch("TF_DETERMINISTIC_OPS", "env", "TF_DETERMINISTIC_OPS", "1", "enables_determinism", ("cpu", "gpu"),
           ("enable_op_determinism",)),
    Switch("TF_CUDNN_DETERMINISTIC", "env", "TF_CUDNN_DETERMINISTIC", "1", "enables_determinism", ("gpu",), ()),
    Switch("enable_op_determinism", "api", "tf.config.experimental.enable_op_determinism", None,
           "enables_determinism", ("cpu", "gpu"), ("TF_DETERMINISTIC_OPS",)),
    Switch("TF_CUDNN_USE_AUTOTUNE", "env", "TF_CUDNN_USE_AUTOTUNE", "0", "disables_autotune", ("gpu",), ()),
]
SAME_AS = {s.id: s.same_as for s in CATALOGUE_SWITCHES}


def test_expand_switches_follows_aliases():
    assert expand_switches({"a"}, {"a": ("b",), "b": ("c",)}) == {"a", "b", "c"}


def test_switch_sets_from_recorded_environment():
    recorded = {"baseline": {}, "env": {"TF_DETERMINISTIC_OPS": "1", "TF_CUDNN_DETERMINISTIC": "1"}, "api": {}}
    everything = switch_sets(["baseline", "env", "api"], recorded, CATALOGUE_SWITCHES, lambda s: True, "cpu", SAME_AS)
    assert everything == {"baseline": frozenset(), "env": ON, "api": ON}
    on_gpu = switch_sets(["env"], recorded, CATALOGUE_SWITCHES, lambda s: True, "gpu", SAME_AS)
    assert on_gpu["env"] == ON | {"TF_CUDNN_DETERMINISTIC"}


def test_patched_mode_turns_on_every_enabling_switch():
    sets = switch_sets(["patched"], {"patched": {}}, CATALOGUE_SWITCHES, lambda s: True, "cpu", SAME_AS)
    assert sets == {"patched": ON}


def test_switch_sets_drop_switches_this_tf_or_device_ignores():
    # TF 1.15 on CPU: TF_DETERMINISTIC_OPS does not exist yet, TF_CUDNN_DETERMINISTIC is GPU-only
    recorded = {"env": {"TF_CUDNN_DETERMINISTIC": "1"}}
    old = switch_sets(["env"], recorded, CATALOGUE_SWITCHES, lambda s: s.id == "TF_CUDNN_DETERMINISTIC", "cpu", SAME_AS)
    assert old == {"env": frozenset()}
    # a variable set to another value does not count
    assert switch_sets(["env"], {"env": {"TF_DETERMINISTIC_OPS": "0"}}, CATALOGUE_SWITCHES, lambda s: True, "cpu",
                       SAME_AS) == {"env": frozenset()}


# -- the patched mode: tested against what the catalogue says tfdet.patch() does ----------

PATCHED = dict(SWITCHES, patched=ON)


def seeded(across):
    return record("varies", distinct=5, runs=10, distinct_across_processes=across)


def test_patched_mode_is_not_a_test_of_a_raise_claim():
    # tfdet.patch() seeds and replaces ops, so an op claimed to raise may legitimately not raise
    claim = Claim("raises_under_determinism", ">=2.8", ("enable_op_determinism",))
    assert run(claim, PATCHED, baseline=var(), env=raised(), patched=det()) == []


def test_patch_named_by_the_catalogue_must_make_it_reproducible():
    claim = Claim("nondeterministic", ">=2.4", patch="bincount")
    (finding,) = run(claim, PATCHED, baseline=var(), env=var(), patched=var(2))
    assert finding.kind == DISAGREEMENT and finding.modes == ("patched",)
    assert "tfdet.patch() (bincount) makes it reproducible" in finding.message
    assert run(claim, PATCHED, baseline=var(), env=var(), patched=det()) == []


def test_seeding_counts_as_reproducible_when_every_process_gets_the_same_sequence():
    claim = Claim("raises_under_determinism", ">=2.8", ("enable_op_determinism",), fixed_by_seeding=True)
    assert run(claim, PATCHED, baseline=var(10), env=raised(), patched=seeded(1)) == []
    (finding,) = run(claim, PATCHED, baseline=var(10), env=raised(), patched=seeded(2))
    assert finding.modes == ("patched",) and "global seeds" in finding.message


def test_patched_mode_with_a_switch_claim():
    claim = Claim("deterministic_with_switch", ">=2.8", ("enable_op_determinism",))
    assert kinds(run(claim, PATCHED, baseline=var(), env=det(), patched=var())) == [(DISAGREEMENT, ("patched",))]
    assert run(claim, PATCHED, baseline=var(), env=det(), patched=det()) == []
