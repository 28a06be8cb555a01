"""Rewriting a results file's header (a resumed diverge run that grew) keeps
every other line, keeps the file locked, and replaces the file atomically."""

import json

import pytest

from tfdet.results.errors import ResultsInUse
from tfdet.results.jsonl import JsonLinesWriter


def test_the_header_is_replaced_and_the_other_lines_kept_and_the_lock_held(tmp_path):
    path = str(tmp_path / "r.jsonl")
    writer = JsonLinesWriter(path)
    writer.write_header({"record": "header", "runs": 3})
    writer.append([{"record": "training", "run": 0}, {"record": "training", "run": 1}])
    writer.close()
    writer = JsonLinesWriter(path, resume=True)
    writer.continue_after_last_line()
    writer.rewrite_first_line({"record": "header", "runs": 5})
    with pytest.raises(ResultsInUse):  # the new file is the locked one
        JsonLinesWriter(path, resume=True)
    writer.append([{"record": "training", "run": 2}])
    writer.close()
    lines = [json.loads(line) for line in open(path)]
    assert lines == [{"record": "header", "runs": 5}, {"record": "training", "run": 0},
                     {"record": "training", "run": 1}, {"record": "training", "run": 2}]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.jsonl"]  # no temporary file left
