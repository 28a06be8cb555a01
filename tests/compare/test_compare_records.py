"""The compare records, file, summary and page: built from training records
(scores in, verdict and page out), the schema, and --resume's checks."""

import dataclasses
import json
import os

import numpy as np
import pytest

from tfdet.compare import plan, summary as summarizing
from tfdet.compare.run import CompareConfig, check_resumable, header_of
from tfdet.report import report_from_files
from tfdet.results import ResultsError, ResultsMismatch, load
from tfdet.results.compare_records import CompareTraining, Setup
from tfdet.results.jsonl import JsonLinesWriter
from tfdet.results.schema import committed_schema


def _config(tmp_path, **options):
    options.setdefault("min_runs", 6)
    options.setdefault("max_runs", 10)
    options.setdefault("step", 2)
    return CompareConfig(a=Setup(name="A", workload="digits-cnn", lr=0.1, epochs=3, batch_size=32),
                         b=Setup(name="B", workload="digits-cnn", lr=0.02, epochs=3, batch_size=32),
                         out=str(tmp_path / "c.jsonl"), resamples=500, **options)


def _trainings(scores_a, scores_b, sources=("init", "order")):
    records = []
    for pair, (a, b) in enumerate(zip(scores_a, scores_b)):
        for planned, score in zip(plan.pair_trainings(pair, list(sources)), (a, b)):
            records.append(CompareTraining(record="training", arm=planned.arm, pair=pair, mode=planned.mode,
                                           init_seed=planned.init_seed, batch_seed=planned.batch_seed,
                                           data_seed=planned.data_seed, outcome="ok" if score is not None
                                           else "timeout", score=score,
                                           error=None if score is not None else "no result after 600 s (killed)"))
    return records


def test_pairs_share_their_seeds_and_aa_does_not():
    a, b = plan.pair_trainings(3, ["data", "init", "order"])
    assert (a.init_seed, a.batch_seed, a.data_seed) == (b.init_seed, b.batch_seed, b.data_seed)
    a2, b2 = plan.pair_trainings(3, ["init", "order"], aa=True)
    assert a2.init_seed != b2.init_seed and a2.batch_seed != b2.batch_seed
    assert a2.data_seed is None and a2.mode == "patched"  # data and numerics held fixed
    assert plan.pair_trainings(3, ["numerics"])[0].mode == "baseline"
    shares = plan.share_trainings("order", 3)
    assert len({t.batch_seed for t in shares}) == 3 and {t.init_seed for t in shares} == {plan.FIXED_SEED}


def test_summary_excludes_failed_pairs_and_says_so(tmp_path):
    header = header_of(_config(tmp_path), "2.21.0", "local")
    records = _trainings([0.9, 0.91, 0.92, 0.9, 0.93, 0.91, 0.92, 0.9], [0.5, 0.52, None, 0.51, 0.5, 0.49, 0.5, 0.5])
    result = summarizing.summary(header, records, True, "test", 1)
    assert result.pairs == 7 and result.excluded == 1
    assert result.notes == ["B #2: timeout (no result after 600 s (killed))"]
    assert result.p.value == 1.0 and result.verdict == "A better" and result.decided
    assert result.scores["A"] == [0.9, 0.91, 0.9, 0.93, 0.91, 0.92, 0.9]


def test_few_pairs_stay_undecided_and_say_how_many_would_do(tmp_path):
    header = header_of(_config(tmp_path), "2.21.0", "local")
    result = summarizing.summary(header, _trainings([0.9, 0.91, 0.92], [0.5, 0.52, 0.5]), True, "test", 1)
    assert result.verdict == "undecided" and not result.decided
    assert result.runs_to_decide == 7  # the sign test at 1 - 0.05/3 (3 looks): 2 * 0.5**7 = 0.016 < 0.0167


def _write(tmp_path, header, records, looks, final):
    path = str(tmp_path / "c.jsonl")
    writer = JsonLinesWriter(path, overwrite=True)
    writer.write_header(header)
    writer.append(records + looks + [final])
    writer.close()
    return path


def test_file_reads_back_holds_to_the_schema_and_renders(tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    header = header_of(_config(tmp_path, share_runs=2, sources=["init", "order"]), "2.21.0", "local")
    records = _trainings([0.9, 0.91, 0.92, 0.9, 0.93, 0.91, 0.9], [0.5, 0.52, 0.51, 0.51, 0.5, 0.49, 0.5])
    for source, scores in (("init", [0.9, 0.92]), ("order", [0.91, 0.91])):
        records += [CompareTraining(record="training", arm="share:" + source, pair=k, mode="patched", init_seed=1,
                                    batch_seed=1, outcome="ok", score=s) for k, s in enumerate(scores)]
    look = summarizing.look(header, records, 1)
    final = summarizing.summary(header, records, True, "decided at look 1 of 3 (7 pairs)", 1, 12.5)
    path = _write(tmp_path, header, records, [look], final)
    validator = jsonschema.Draft7Validator(committed_schema("compare"))
    with open(path) as handle:
        for line in handle:
            assert not list(validator.iter_errors(json.loads(line)))
    results = load(path)
    assert results.kind == "compare" and results.summary == final and results.looks == [look]
    assert [(s.source, s.share) for s in final.shares] == [("init", 1.0), ("order", 0.0)]
    _, page = report_from_files([path], generated="now")
    assert "A better" in page and "<script" not in page and "look 1 (7 pairs)" in page
    assert "variance" in page and "init 100%" in page


def test_a_compare_file_is_reported_with_aa_files_only(tmp_path):
    header = header_of(_config(tmp_path), "2.21.0", "local")
    records = _trainings([0.9] * 8, [0.5] * 8)
    path = _write(tmp_path, header, records, [], summarizing.summary(header, records, True, "", 0))
    with pytest.raises(ResultsError, match="on its own"):
        report_from_files([path, path])
    (tmp_path / "aa").mkdir()
    floor_header = header_of(_config(tmp_path, aa=True, sources=["init", "order", "numerics"]), "2.21.0", "local")
    floor_records = _trainings([0.9, 0.91, 0.9, 0.92], [0.91, 0.9, 0.9, 0.91])
    floor = _write(tmp_path / "aa", floor_header, floor_records, [],
                   summarizing.summary(floor_header, floor_records, True, "", 0))
    _, page = report_from_files([floor, path], generated="now")  # any order: the A/A file is the floor
    assert "The noise floor" in page and "TF as it comes" in page and "A vs B" in page
    assert "0.500" in page  # P(A>A): 1 win, 1 loss, 2 ties of 4 pairs


def test_resume_may_add_runs_only(tmp_path):
    old = header_of(_config(tmp_path), "2.21.0", "local")
    check_resumable(old, dataclasses.replace(old, max_runs=20, looks=8, created="later"), "c.jsonl")
    with pytest.raises(ResultsMismatch, match="gamma"):
        check_resumable(old, dataclasses.replace(old, gamma=0.8), "c.jsonl")
    with pytest.raises(ResultsMismatch, match="add runs"):
        check_resumable(old, dataclasses.replace(old, max_runs=8), "c.jsonl")


COMMITTED = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                         "reports", "compare")


@pytest.mark.parametrize("name", sorted(f for f in os.listdir(COMMITTED) if f.endswith(".jsonl")))
def test_every_committed_compare_file_reads_with_its_summary(name):
    results = load(os.path.join(COMMITTED, name))
    assert results.kind == "compare" and results.header.tf_version and results.summary is not None
    assert len(results.trainings) >= 12 and results.looks


def test_augment_and_hparams_are_shared_by_a_pair_and_held_fixed_otherwise():
    space = {"lr": "0.01:0.1:log", "batch_size": "16|32|64"}
    a, b = plan.pair_trainings(4, ["augment", "hparams"], space=space)
    assert a.augment_seed == b.augment_seed == plan.BASE["augment"] + 4
    assert a.hparams == b.hparams and set(a.hparams) == {"lr", "batch_size"}
    a2, b2 = plan.pair_trainings(4, ["augment", "hparams"], aa=True, space=space)
    assert a2.augment_seed != b2.augment_seed and a2.hparams != b2.hparams
    fixed = plan.pair_trainings(4, ["init"], space=space)[0]
    assert fixed.augment_seed == plan.FIXED_SEED and fixed.hparams == {}
    draws = [plan.pair_trainings(p, ["hparams"], space=space)[0].hparams["lr"] for p in range(6)]
    assert len(set(draws)) == 6  # every pair its own draw


def test_a_drawn_hyperparameter_reaches_the_training_spec():
    from tfdet.results.compare_records import Setup

    setup = Setup(name="A", workload="digits-cnn", lr=0.0, epochs=3, batch_size=32)
    planned = plan.pair_trainings(0, ["hparams", "augment"], space={"lr": "0.01:0.1", "batch_size": "16|64"})[0]
    spec = plan.spec(setup, planned, {"patch": True})
    assert spec["lr"] == planned.hparams["lr"] and 0.01 <= spec["lr"] <= 0.1
    assert spec["batch_size"] in (16, 64) and spec["hparams"] == planned.hparams
    assert spec["augment_seed"] == planned.augment_seed and spec["epochs"] == 3


def test_the_summary_sets_the_shares_against_all_sources_at_once(tmp_path):
    header = header_of(_config(tmp_path, sources=["init", "order"], share_runs=3), "2.21.0", "local")
    records = _trainings([0.90, 0.94, 0.86, 0.90], [0.5, 0.5, 0.5, 0.5])
    for source, scores in (("init", [0.90, 0.92, 0.88]), ("order", [0.90, 0.91, 0.89])):
        for planned, score in zip(plan.share_trainings(source, 3), scores):
            records.append(CompareTraining(record="training", arm=planned.arm, pair=planned.pair, mode=planned.mode,
                                           init_seed=planned.init_seed, batch_seed=planned.batch_seed,
                                           outcome="ok", score=score))
    result = summarizing.summary(header, records, True, "test", 1)
    assert [s.variance for s in result.shares] == [pytest.approx(4e-4), pytest.approx(1e-4)]
    assert result.joint_variance == pytest.approx(np.var([0.90, 0.94, 0.86, 0.90], ddof=1))
    assert result.additive_ratio == pytest.approx(5e-4 / result.joint_variance)


def test_more_setups_share_the_seeds_and_widen_every_interval(tmp_path):
    c = Setup(name="C", workload="digits-cnn", lr=0.5, epochs=3, batch_size=32)
    header = header_of(_config(tmp_path, others=[c]), "2.21.0", "local")
    trainings = plan.pair_trainings(2, ["init", "order"], candidates=["B", "C"])
    assert [t.arm for t in trainings] == ["A", "B", "C"]
    assert len({(t.init_seed, t.batch_seed) for t in trainings}) == 1
    scores = {"A": [0.90, 0.91, 0.92, 0.90, 0.93, 0.91, 0.92, 0.90], "B": [0.5, 0.52, 0.51, 0.5, 0.5, 0.49, 0.5, 0.5],
              "C": [0.91, 0.90, 0.92, 0.91, 0.92, 0.90, 0.93, 0.91]}
    records = []
    for pair in range(8):
        for t in plan.pair_trainings(pair, ["init", "order"], candidates=["B", "C"]):
            records.append(CompareTraining(record="training", arm=t.arm, pair=pair, mode=t.mode, init_seed=t.init_seed,
                                           batch_seed=t.batch_seed, outcome="ok", score=scores[t.arm][pair]))
    result = summarizing.summary(header, records, True, "test", 1)
    assert result.verdict == "A better" and result.p.level == pytest.approx(1 - 0.05 / (header.looks * 2))
    (other,) = result.others
    assert other.arm == "C" and other.pairs == 8 and other.verdict != "A better" and not other.decided
    assert other.p.level == result.p.level and other.mean == pytest.approx(np.mean(scores["C"]))
    assert not summarizing.every_comparison_decided(result)
    assert result.scores["C"] == scores["C"]
    look = summarizing.look(header, records, 1, "C")
    assert look.arm == "C" and look.p == other.p
    path = _write(tmp_path, header, records, [look], result)
    assert load(path).summary.others == [other] and load(path).header.others == [c]
    _, page = report_from_files([path], generated="now")
    assert "A against C: %s" % other.verdict in page and "(A vs C)" in page
