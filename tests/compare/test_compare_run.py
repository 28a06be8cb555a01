"""tfdet compare end to end: real trainings (a real varying op), each in its own
process through the executor; the verdict, the file, --resume. Slow."""

import pytest

from tfdet.compare import compare
from tfdet.results import load

from . import trainers


@pytest.mark.slow
def test_resume_adds_runs_until_a_real_difference_is_decided(tmp_path):
    out = str(tmp_path / "c.jsonl")
    options = dict(sources=["init", "order", "numerics"], min_runs=3, step=4, resamples=1000, jobs=2, timeout=3600.0)
    first = compare(trainers.train_fast, trainers.train_slow, trainers.labels(), out, max_runs=3, **options)
    assert first.pairs == 3 and first.verdict == "undecided"  # 3 pairs cannot decide (the sign test needs 6)
    assert first.runs_to_decide >= 6 and first.mean_a > first.mean_b
    kept = load(out).trainings
    # --resume with a larger budget: trains pairs 3..6 only, keeps the first six trainings
    result = compare(trainers.train_fast, trainers.train_slow, trainers.labels(), out, max_runs=7, resume=True,
                     **options)
    results = load(out)
    assert results.trainings[:6] == kept and len(results.trainings) == 14
    assert result.pairs == 7 and result.verdict == "A better" and result.decided
    assert results.header.fixed == ["data"] and results.summary == result
    assert [look.pairs for look in results.looks] == [3, 7]


@pytest.mark.slow
def test_the_hparams_source_draws_a_learning_rate_per_pair_that_reaches_the_training(tmp_path):
    out = str(tmp_path / "h.jsonl")
    compare(trainers.train_drawn, trainers.train_slow, trainers.labels(), out, sources=["hparams"],
            space={"lr": "0.05:0.5:log"}, min_runs=3, max_runs=3, resamples=200, jobs=2, timeout=3600.0)
    results = load(out)
    a = sorted((t for t in results.trainings if t.arm == "A"), key=lambda t: t.pair)
    b = [t for t in results.trainings if t.arm == "B"]
    drawn = [t.hparams["lr"] for t in a]
    assert len(set(drawn)) == 3 and all(0.05 <= lr <= 0.5 for lr in drawn)
    assert [t.hparams for t in sorted(b, key=lambda t: t.pair)] == [t.hparams for t in a]  # the pair's draw, shared
    # every other source held fixed (seeds, kernels under patch): only the drawn rate can move A's score
    assert len({t.score for t in a}) > 1 and len({t.score for t in b}) == 1
    assert results.header.space == {"lr": "0.05:0.5:log"} and "init" in results.header.fixed


@pytest.mark.slow
def test_a_third_setup_is_trained_on_the_same_seeds_and_compared_with_a(tmp_path):
    out = str(tmp_path / "abc.jsonl")
    result = compare(trainers.train_fast, trainers.train_slow, trainers.labels(), out, more=[trainers.train_fast],
                     sources=["init", "order"], min_runs=3, max_runs=3, resamples=200, jobs=2, timeout=3600.0)
    results = load(out)
    by_arm = {arm: sorted((t for t in results.trainings if t.arm == arm), key=lambda t: t.pair) for arm in "ABC"}
    assert [len(v) for v in by_arm.values()] == [3, 3, 3]
    assert [(t.init_seed, t.batch_seed) for t in by_arm["C"]] == [(t.init_seed, t.batch_seed) for t in by_arm["A"]]
    # C is A's function on A's seeds under tfdet.patch(): every pair a tie, P(A>C) = 0.5 exactly
    assert [t.score for t in by_arm["C"]] == [t.score for t in by_arm["A"]]
    (other,) = result.others
    assert other.arm == "C" and other.p.value == 0.5 and other.verdict == "undecided"
    assert {look.arm for look in results.looks} == {"B", "C"}
