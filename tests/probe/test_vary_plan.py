"""--vary's plan and its judging of two arms: pure, no TensorFlow."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from tfdet.probe.cases_dense import DENSE_CASES
from tfdet.probe.vary_plan import applies, compare_arrays, judge, merge_worker_answers, parse_settings, plan
from tfdet.probe.vary_run import arm_work, pending


def test_settings_are_checked_and_put_in_grid_order():
    assert parse_settings("xla,onednn,threads,xla") == (["onednn", "threads", "xla"], [])
    _, problems = parse_settings("onednn,thread")
    assert problems == ["unknown setting 'thread' (choose from onednn, threads, execution, xla, batch, replicas)"]
    _, problems = parse_settings("precision")
    assert "not measured" in problems[0]
    assert parse_settings(",")[1]


def test_one_reference_arm_and_one_arm_per_changed_setting():
    arms, comparisons = plan(["onednn", "threads", "execution", "xla", "batch", "replicas"], cpu_count=2)
    by_name = {a.name: a for a in arms}
    assert set(by_name) == {"reference", "onednn", "threads", "execution", "xla", "replicas-2", "replicas-3",
                            "replicas-4", "workers-3", "workers-4"}
    reference = by_name["reference"]
    assert (reference.env, reference.threads, reference.execution) == ({"TF_ENABLE_ONEDNN_OPTS": "1"}, 2, "eager")
    # each changed arm differs from the reference in exactly its own setting
    assert by_name["onednn"].env == {"TF_ENABLE_ONEDNN_OPTS": "0"} and by_name["onednn"].threads == 2
    assert by_name["threads"].threads == 1 and by_name["threads"].env == reference.env
    assert by_name["execution"].execution == "function" and by_name["xla"].execution == "xla"
    assert by_name["replicas-3"].logical_devices == 3 and by_name["replicas-3"].replicas == (1, 3)
    batch = [c for c in comparisons if c.setting == "batch"]
    assert batch[0].reference == ("reference", "main") and batch[0].changed == ("reference", "alone")
    assert batch[0].slice_rows and "alone" in reference.variants
    assert [c.variant for c in comparisons if c.setting == "replicas"] == [
        "2 replicas", "2 replicas, all-reduce alone", "3 replicas", "3 replicas, all-reduce alone",
        "4 replicas", "4 replicas, all-reduce alone",
        "3 workers", "3 workers, all-reduce alone", "3 workers vs 3 replicas",
        "4 workers", "4 workers, all-reduce alone", "4 workers vs 4 replicas"]
    # a workers arm is K processes of one replica each, compared with one replica and with K in one process
    workers = by_name["workers-4"]
    assert (workers.workers, workers.replicas, workers.logical_devices, workers.variants) == (4, (4,), 0, ())
    against = {c.variant: (c.reference, c.changed) for c in comparisons}
    assert against["4 workers"] == (("replicas-4", "replicas=1"), ("workers-4", "replicas=4"))
    assert against["4 workers, all-reduce alone"] == (("replicas-4", "replicas=1"), ("workers-4", "mirrored=4"))
    assert against["4 workers vs 4 replicas"] == (("replicas-4", "replicas=4"), ("workers-4", "replicas=4"))
    assert all(a.workers == 0 for a in arms if not a.name.startswith("workers-"))


def test_batch_and_replicas_apply_only_where_they_mean_something():
    _, comparisons = plan(["batch", "replicas", "xla"], cpu_count=2)
    batch, replicas, xla = (next(c for c in comparisons if c.setting == s) for s in ("batch", "replicas", "xla"))
    assert applies(batch, DENSE_CASES["matmul"]) and not applies(batch, DENSE_CASES["reduce-sum"])
    assert not applies(batch, DENSE_CASES["mlp-grad"])  # a gradient sums over its batch
    assert applies(replicas, DENSE_CASES["mlp-grad"]) and not applies(replicas, DENSE_CASES["conv2d"])
    assert all(applies(xla, case) for case in DENSE_CASES.values())


def test_a_resumed_run_asks_each_arm_only_for_what_is_left():
    arms, comparisons = plan(["threads", "batch"], cpu_count=2)
    done = {("matmul", "threads", comparisons[0].variant), ("reduce-sum", "threads", comparisons[0].variant)}
    left = pending(comparisons, ["matmul", "reduce-sum", "conv2d"], done)
    assert [c.setting for c in left["matmul"]] == ["batch"]
    assert "reduce-sum" not in left
    work = arm_work(arms, left)
    assert work == {"reference": ["matmul", "conv2d"], "threads": ["conv2d"]}


def test_there_are_at_least_thirty_ops():
    assert len(DENSE_CASES) >= 30


def _answer(arrays, tmp_path, name):
    from tfdet.results import stats

    digests, saved = [], {}
    for i, array in enumerate(arrays):
        key = stats.digest(array)
        digests.append(key)
        path = tmp_path / ("%s-%d.npy" % (name, i))
        np.save(path, array)
        saved.setdefault(key, str(path))
    return {"digests": digests, "saved": saved, "raised": None}


def test_differs_only_when_each_arm_is_stable(tmp_path):
    a = np.array([1.0, 2.0, 3.0], np.float32)
    b = a.copy()
    b[1] = np.nextafter(b[1], np.float32(3))
    fields = judge(_answer([a, a], tmp_path, "r"), _answer([b, b], tmp_path, "c"), np.load)
    assert fields["verdict"] == "differs" and fields["max_ulp"] == 1
    assert fields["frac_differ"] == pytest.approx(1 / 3)
    same = judge(_answer([a, a], tmp_path, "r2"), _answer([a, a], tmp_path, "c2"), np.load)
    assert same["verdict"] == "same" and same["max_ulp"] == 0
    unstable = judge(_answer([a, b], tmp_path, "r3"), _answer([b, b], tmp_path, "c3"), np.load)
    assert unstable["verdict"] == "varies" and unstable["varies_in"] == "reference"
    assert "max_ulp" not in unstable  # a setting difference is never claimed over run-to-run variance


def test_batch_compares_row_zero_of_the_reference(tmp_path):
    batch = np.arange(12, dtype=np.float32).reshape(4, 3)
    alone = batch[:1].copy()
    assert judge(_answer([batch, batch], tmp_path, "r"), _answer([alone, alone], tmp_path, "c"), np.load,
                 slice_rows=True)["verdict"] == "same"


def test_raised_and_failed_are_their_own_verdicts(tmp_path):
    ok = _answer([np.zeros(2, np.float32)] * 2, tmp_path, "r")
    raised = {"digests": [], "saved": {}, "raised": {"type": "InvalidArgumentError", "message": "no XLA kernel"}}
    fields = judge(ok, raised, np.load)
    assert fields["verdict"] == "raised" and "changed arm: InvalidArgumentError: no XLA kernel" == fields["error"]
    assert judge({"failed": "killed"}, ok, np.load)["verdict"] == "failed"


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 10 ** 7), min_size=1, max_size=50), st.integers(0, 49), st.integers(1, 5))
def test_compare_arrays_counts_ulps(values, index, steps):
    a = np.array(values, np.float32) / np.float32(1000)  # positive normal floats: each step up is one ulp
    assert compare_arrays(a, a.copy())["differ"] is False
    b = a.copy()
    i = index % a.size
    for _ in range(steps):
        b[i] = np.nextafter(b[i], np.float32(np.inf))
    result = compare_arrays(a, b)
    assert result["differ"] is True and result["max_ulp"] == steps
    assert result["frac_differ"] == pytest.approx(1 / a.size)
    assert result["max_rel"] == pytest.approx(abs(float(b[i]) - float(a[i])) / float(a[i]))


def test_each_name_stands_for_one_case():
    """The catalogue files a case's facts under its names; one name may mean one op only."""
    owner = {}
    for case in DENSE_CASES.values():
        for name in (case.id,) + case.names:
            assert owner.setdefault(name, case.id) == case.id, name


def _worker_answer(*digests, raised=None):
    return {"case": "mlp-grad", "variant": "replicas=3", "digests": list(digests),
            "saved": {d: "/scratch/%s.npy" % d for d in digests}, "raised": raised}


def test_workers_that_agree_answer_as_worker_zero_and_say_so():
    merged = merge_worker_answers([_worker_answer("a", "a"), _worker_answer("a", "a"), _worker_answer("a", "a")])
    assert merged["digests"] == ["a", "a"] and merged["saved"] == {"a": "/scratch/a.npy"}
    assert merged["note"] == "all 3 workers gave these bits (2 runs each)"


def test_workers_that_disagree_make_the_arm_vary(tmp_path):
    merged = merge_worker_answers([_worker_answer("a", "a"), _worker_answer("b", "b"), _worker_answer("a", "a")])
    assert merged["digests"] == ["a", "a", "b", "b", "a", "a"]
    assert set(merged["saved"]) == {"a", "b"}
    assert "disagree: 2 distinct results among their 6 runs" in merged["note"]
    np.save(str(tmp_path / "x.npy"), np.zeros(2, np.float32))
    stable = {"digests": ["r", "r"], "saved": {"r": str(tmp_path / "x.npy")}}
    fields = judge(stable, merged, np.load)
    assert fields["verdict"] == "varies" and fields["varies_in"] == "changed"


def test_a_worker_that_raised_makes_the_answer_raised():
    error = {"type": "DeadlineExceededError", "message": "collective timed out"}
    merged = merge_worker_answers([_worker_answer("a"), _worker_answer(raised=error), _worker_answer("a")])
    assert merged["raised"] == error
