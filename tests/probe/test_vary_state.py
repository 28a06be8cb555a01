"""The runner's bookkeeping, without TensorFlow: a cell is written the moment both of its
arms answered, once; an arm that dies leaves its cells failed (never missing, never same)."""

import numpy as np

from tfdet.probe.vary_plan import plan
from tfdet.probe.vary_run import _State, pending
from tfdet.results import stats


class Writer(object):
    def __init__(self):
        self.records = []

    def append(self, records):
        self.records.extend(records)


def answer(tmp_path, case, variant, array, arm):
    path = tmp_path / ("%s-%s-%s.npy" % (arm, case, variant))
    np.save(path, array)
    key = stats.digest(array)
    return {"case": case, "variant": variant, "digests": [key, key], "saved": {key: str(path)}, "raised": None}


def test_a_cell_is_written_once_when_both_arms_answered(tmp_path):
    arms, comparisons = plan(["threads", "batch"], cpu_count=2)
    writer, events = Writer(), []
    state = _State(writer, pending(comparisons, ["matmul"], set()), events.append)
    full = np.arange(6, dtype=np.float32).reshape(2, 3)
    state.answer("threads", answer(tmp_path, "matmul", "main", full + 1, "threads"))
    assert writer.records == []  # the reference has not answered yet
    state.answer("reference", answer(tmp_path, "matmul", "main", full, "reference"))
    assert [(r.setting, r.verdict) for r in writer.records] == [("threads", "differs")]
    state.answer("reference", answer(tmp_path, "matmul", "alone", full[:1], "reference"))
    assert [(r.setting, r.verdict) for r in writer.records] == [("threads", "differs"), ("batch", "same")]
    state.flush_failures()
    assert len(writer.records) == 2 and state.left == {}
    assert len(events) == 2


def test_a_dead_arm_leaves_failed_cells(tmp_path):
    _, comparisons = plan(["threads", "xla"], cpu_count=2)
    writer = Writer()
    state = _State(writer, pending(comparisons, ["reduce-sum"], set()), lambda event: None)
    state.answer("reference", answer(tmp_path, "reduce-sum", "main", np.ones(1, np.float32), "reference"))
    state.arm_failed("xla", "process ended with code -9")
    assert [(r.setting, r.verdict, r.error) for r in writer.records] == [
        ("xla", "failed", "changed arm: process ended with code -9")]
    state.flush_failures()  # the threads arm never answered: failed too, not left out
    assert [(r.setting, r.verdict) for r in writer.records][-1] == ("threads", "failed")


def test_resume_refuses_a_file_of_other_settings(tmp_path):
    import pytest

    from tfdet.probe.vary_run import VaryConfig, VaryMismatch, check_resumable
    from tfdet.results import load
    from vary_fixture import write

    existing = load(write(tmp_path / "v.jsonl"))
    same = VaryConfig(None, ["onednn", "threads", "replicas"], ["matmul", "reduce-sum", "conv2d", "mlp-grad"])
    check_resumable(existing, same)
    with pytest.raises(VaryMismatch, match=r"settings \(file: \['onednn', 'threads', 'replicas'\], now: \['xla'\]\)"):
        check_resumable(existing, VaryConfig(None, ["xla"], same.cases))
