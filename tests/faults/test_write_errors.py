"""Write failures, real ones: a file-size limit (RLIMIT_FSIZE) that the
results file hits at different points, a directory where the file should be.
Each gives one line naming the path and the cause and exit 5; the file ends
at a complete line; --resume completes it once the cause is gone."""

import resource

import pytest

from faultkit import FAST_KEYS, assert_intact, assert_no_traceback, probe_argv, records_by_key, run, scratch_dirs
from tfdet.cli.exitcodes import OK, WRITE_FAILED

pytest.importorskip("tensorflow")


def file_size_limit(limit):
    def preexec():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return preexec


def line_ends(tmp_path):
    """Byte offsets where the lines of an undisturbed run's file end."""
    code, _, err = run(probe_argv(tmp_path / "clean.jsonl"), tmp_path)
    assert code == OK, err
    data = (tmp_path / "clean.jsonl").read_bytes()
    return [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]


def fill_then_resume(tmp_path, limit):
    out = tmp_path / ("limit-%d.jsonl" % limit)
    code, _, err = run(probe_argv(out), tmp_path, preexec_fn=file_size_limit(limit))
    assert_no_traceback(err)
    assert code == WRITE_FAILED, err
    assert err.count("\n") == 1 and err.startswith("tfdet: error: %s: cannot write: File too large" % out)
    data = out.read_bytes() if out.exists() else b""
    assert len(data) <= limit and (data == b"" or data.endswith(b"\n"))  # ends at a complete line
    assert_intact(out)
    kept = records_by_key(out)
    code, _, err = run(probe_argv(out, "--resume"), tmp_path)
    assert code == OK, err
    assert set(assert_intact(out)) == FAST_KEYS
    records = records_by_key(out)
    assert [key for key, record in kept.items() if records.get(key) != record] == []  # nothing lost or redone
    assert scratch_dirs(tmp_path) == []
    return list(kept)


def test_a_full_file_system_is_exit_5_and_resume_completes(tmp_path):
    ends = line_ends(tmp_path)
    # the header and the first case fit, the second case does not
    assert len(fill_then_resume(tmp_path, (ends[1] + ends[2]) // 2)) == 1


@pytest.mark.slow
def test_the_limit_in_every_line_of_a_run(tmp_path, capsys):
    ends = line_ends(tmp_path)
    starts = [0] + ends[:-1]
    faults = 0
    for line in range(len(ends) - 1):  # the last line is the end record
        kept = fill_then_resume(tmp_path, (starts[line] + ends[line]) // 2)  # the limit falls inside that line
        assert len(kept) == max(0, line - 1)  # every case before that line is kept (line 0 is the header)
        faults += 1
    with capsys.disabled():
        print("\nRLIMIT_FSIZE: %d faults injected, 0 finished cases lost" % faults)


def test_a_directory_where_a_file_should_be(tmp_path):
    (tmp_path / "r.jsonl").mkdir()
    (tmp_path / "plain").write_text("")
    for out, cause in ((tmp_path / "r.jsonl", "Is a directory"), (tmp_path / "plain" / "r.jsonl", "Not a directory")):
        code, _, err = run(probe_argv(out), tmp_path)
        assert code == WRITE_FAILED, err
        assert err.count("\n") == 1 and "cannot create: %s" % cause in err
        assert_no_traceback(err)


def test_a_report_that_cannot_be_written_fails_as_tfdet_report_does(tmp_path):
    import sys

    (tmp_path / "report.html").mkdir()
    code, _, err = run(probe_argv(tmp_path / "r.jsonl", "--report", str(tmp_path / "report.html")), tmp_path)
    assert_no_traceback(err)
    assert err.count("\n") == 1 and "report.html: Is a directory" in err
    assert set(assert_intact(tmp_path / "r.jsonl")) == FAST_KEYS  # the results are not affected
    alone = run([sys.executable, "-m", "tfdet", "report", str(tmp_path / "r.jsonl"), "-o",
                 str(tmp_path / "report.html")], tmp_path)
    assert (alone[0], alone[2]) == (code, err) and code == 5  # WRITE_FAILED, as for the results file


def test_a_full_scratch_disk_is_exit_5_not_a_failed_case(tmp_path):
    # scatter-nd's output (32000 float32, 128 KB as .npy) does not fit under a 64 KB
    # file-size limit; the results file (a few KB) does. The workers' arrays are the
    # machine's problem, not the op's: no case may be recorded as failed for it.
    out = tmp_path / "scratch.jsonl"
    code, _, err = run(probe_argv(out, ops="scatter-nd"), tmp_path, preexec_fn=file_size_limit(64 * 1024))
    assert_no_traceback(err)
    assert code == WRITE_FAILED, err
    assert err.count("\n") == 1 and "cannot write: File too large (scratch space" in err and "--resume" in err
    assert [r.outcome for r in records_by_key(out).values()] == []  # nothing recorded as failed (or at all)
    assert scratch_dirs(tmp_path) == []
    code, _, err = run(probe_argv(out, "--resume", ops="scatter-nd"), tmp_path)
    assert code == OK, err
    assert {r.outcome for r in records_by_key(out).values()} <= {"deterministic", "varies"}
