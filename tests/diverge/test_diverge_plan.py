"""Conditions, seeds, cell names and the order of trainings."""

import pytest

from tfdet.diverge import plan


def test_fixed_seeds_are_shared_and_random_ones_differ_per_run():
    assert plan.seeds("fixed-fixed", 0) == plan.seeds("fixed-fixed", 4)
    init = {plan.seeds("random-fixed", run)[0] for run in range(5)}
    batches = {plan.seeds("random-fixed", run)[1] for run in range(5)}
    assert len(init) == 5 and len(batches) == 1
    assert len({plan.seeds("fixed-random", run) for run in range(5)}) == 5
    assert {plan.seeds("fixed-random", run)[0] for run in range(5)} == {plan.seeds("fixed-fixed", 0)[0]}
    with pytest.raises(ValueError, match="unknown condition"):
        plan.seeds("fixed", 0)


def test_cell_names_follow_mlsys_2022():
    assert plan.cell_name("fixed-fixed", "baseline") == "IMPL"
    assert plan.cell_name("random-random", "baseline") == "ALGO+IMPL"
    assert plan.cell_name("random-random", "patched") == "ALGO"
    assert {plan.cell_name("fixed-fixed", m) for m in ("env", "api", "patched")} == {"control"}
    assert plan.cell_name("fixed-random", "baseline") == ""


def test_modes_are_interleaved_and_every_training_is_planned_once():
    trainings = plan.trainings("embedding", [0.01, 0.1], list(plan.CONDITIONS), ["baseline", "patched"], 3)
    assert len(trainings) == 2 * 4 * 2 * 3
    assert len({plan.training_key(t) for t in trainings}) == len(trainings)
    assert [t.mode for t in trainings[:4]] == ["baseline", "patched", "baseline", "patched"]
    # a mode's runs of one cell share seeds with the other mode's: the modes differ only in the mode
    first = [t for t in trainings if t.condition == "random-random" and t.run == 2 and t.lr == 0.1]
    assert len({(t.init_seed, t.batch_seed) for t in first}) == 1


# --------------------------------------------------------------------------- growing a run on --resume

from types import SimpleNamespace  # noqa: E402

from tfdet.diverge.plan import Sweep, resolve_sweep  # noqa: E402

DEFAULT = Sweep([0.1, 1.0], ["fixed-fixed", "fixed-random", "random-fixed", "random-random"],
                ["baseline", "patched"], 5)
RECORDED = SimpleNamespace(lrs=[0.1], conditions=["fixed-fixed", "random-random"], modes=["baseline", "env"], runs=3)
NOTHING = Sweep(None, None, None, None)


def test_a_new_run_takes_what_is_given_else_the_default():
    assert resolve_sweep(NOTHING, None, DEFAULT) == (DEFAULT, [])
    given = Sweep([0.5], None, ["patched"], 2)
    assert resolve_sweep(given, None, DEFAULT)[0] == Sweep([0.5], DEFAULT.conditions, ["patched"], 2)


def test_resume_keeps_the_files_sweep_when_nothing_is_given():
    sweep, grew = resolve_sweep(NOTHING, RECORDED, DEFAULT)
    assert sweep == Sweep([0.1], ["fixed-fixed", "random-random"], ["baseline", "env"], 3) and grew == []


def test_resume_grows_by_what_is_given_and_never_drops_what_the_file_has():
    given = Sweep([1.0, 0.1], ["random-fixed"], ["patched"], 5)
    sweep, grew = resolve_sweep(given, RECORDED, DEFAULT)
    assert sweep.lrs == [0.1, 1.0]
    assert sweep.conditions == ["fixed-fixed", "random-fixed", "random-random"]  # in the canonical order
    assert sweep.modes == ["baseline", "env", "patched"] and sweep.runs == 5
    assert grew == ["lr 0.1 -> 0.1,1", "conditions fixed-fixed,random-random -> fixed-fixed,random-fixed,random-random",
                    "modes baseline,env -> baseline,env,patched", "runs 3 -> 5"]
    fewer = resolve_sweep(Sweep(None, None, ["baseline"], 2), RECORDED, DEFAULT)
    assert fewer == (Sweep([0.1], RECORDED.conditions, RECORDED.modes, 3), [])
