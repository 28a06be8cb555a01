"""Corrupted and truncated results files, made from a real one: `tfdet report`
and `tfdet probe --resume` refuse each with one line naming the file, the line
and (for a record that parses) the field, exit 3 and no traceback; a file cut
off inside its last line is read without that line, as a killed run leaves it."""

import json
import os
import random
import subprocess
import sys

import pytest

from tfdet.cli.exitcodes import INVALID_INPUT, OK

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
REAL = os.path.join(ROOT, "reports", "measured", "bincount-segment-scatter-cpu-tf2.21.jsonl")


def tfdet(*argv, cwd):
    done = subprocess.run([sys.executable, "-m", "tfdet"] + list(argv), capture_output=True, text=True, timeout=120,
                          cwd=cwd)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stderr


def _lines():
    with open(REAL) as handle:
        return handle.read().splitlines()


def _replace_field(rng, lines):
    """A case record with one field's value replaced by a value of the wrong type."""
    number = rng.randrange(1, len(lines) - 1)
    record = json.loads(lines[number])
    name = rng.choice(sorted(k for k in record if k not in ("record",)))
    record[name] = {"outcome": "flaky", "runs": "ten", "median_s": "abc", "pass": 5, "case": None,
                    "shape": "4x4", "matches_baseline": "yes"}.get(name, [["nested"]])
    lines[number] = json.dumps(record)
    return number + 1, name


def _break_json(rng, lines):
    number = rng.randrange(1, len(lines) - 1)
    lines[number] = lines[number][: rng.randrange(1, len(lines[number]) - 1)]
    return number + 1, None


CORRUPTIONS = [_replace_field] * 6 + [_break_json] * 2


@pytest.mark.parametrize("seed", range(len(CORRUPTIONS)))
def test_a_corrupted_record_is_exit_3_naming_the_file_the_line_and_the_field(tmp_path, seed):
    rng = random.Random(seed)
    lines = _lines()
    line, field = CORRUPTIONS[seed](rng, lines)
    path = tmp_path / "r.jsonl"
    path.write_text("\n".join(lines) + "\n")
    for argv in (["report", str(path), "-o", str(tmp_path / "r.html")],
                 ["probe", "--resume", "--out", str(path), "--quiet"]):
        code, err = tfdet(*argv, cwd=str(tmp_path))
        assert code == INVALID_INPUT, err
        assert err.count("\n") == 1 and ("%s:%d:" % (path, line)) in err
        if field is not None:
            assert "field %s" % field in err or "missing field" in err
    assert not (tmp_path / "r.html").exists()


def test_garbage_and_an_empty_file_are_not_results_files(tmp_path):
    for name, data in (("garbage.jsonl", os.urandom(256)), ("empty.jsonl", b""), ("text.jsonl", b"hello\n")):
        path = tmp_path / name
        path.write_bytes(data)
        code, err = tfdet("report", str(path), "-o", str(tmp_path / "r.html"), cwd=str(tmp_path))
        assert code == INVALID_INPUT and err.count("\n") == 1 and str(path) in err, err


@pytest.mark.parametrize("seed", range(3))
def test_a_file_cut_off_inside_its_last_line_reads_without_that_line(tmp_path, seed):
    data = open(REAL, "rb").read()
    ends = [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    cut = random.Random(seed).randrange(ends[0] + 1, len(data) - 1)
    if cut in ends:
        cut += 1
    path = tmp_path / "r.jsonl"
    path.write_bytes(data[:cut])
    code, err = tfdet("report", str(path), "-o", str(tmp_path / "r.html"), cwd=str(tmp_path))
    assert code == OK, err
    from tfdet.results import load

    kept = sum(1 for end in ends if end <= cut) - 1  # complete lines after the header
    assert len(load(str(path)).cases) == kept
