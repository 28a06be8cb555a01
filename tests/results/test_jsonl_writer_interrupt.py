"""An append that is stopped part way (Ctrl-C, a full disk) leaves the file
ending at its last complete line, and keeps every line that reached it in full:
a Ctrl-C landing in fsync once took back a case record a reader had already
seen (the probe's resume test caught it in CI)."""

import errno
import json
import os

import pytest

from tfdet.results.errors import ResultsWriteError
from tfdet.results.jsonl import JsonLinesWriter


def _lines(path):
    with open(path) as handle:
        return [json.loads(line) for line in handle]


def test_a_ctrl_c_in_fsync_keeps_the_lines_already_written(tmp_path, monkeypatch):
    path = str(tmp_path / "r.jsonl")
    writer = JsonLinesWriter(path)
    writer.write_header({"record": "header"})

    def interrupted(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", interrupted)
    with pytest.raises(KeyboardInterrupt):
        writer.append([{"record": "case", "n": 1}, {"record": "case", "n": 2}])
    monkeypatch.undo()
    writer.append([{"record": "end"}])  # the next append goes after them, not over them
    writer.close()
    assert _lines(path) == [{"record": "header"}, {"record": "case", "n": 1}, {"record": "case", "n": 2},
                            {"record": "end"}]


def test_a_torn_write_is_cut_back_to_its_last_complete_line(tmp_path, monkeypatch):
    path = str(tmp_path / "r.jsonl")
    writer = JsonLinesWriter(path)
    writer.write_header({"record": "header"})
    real_write = os.write
    first = len(json.dumps({"record": "case", "n": 1}, sort_keys=True)) + 1  # one whole line and a bit

    def disk_fills(fd, data):
        if len(data) > first + 5:
            return real_write(fd, bytes(data[:first + 5]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", disk_fills)
    with pytest.raises(ResultsWriteError, match="No space left"):
        writer.append([{"record": "case", "n": 1}, {"record": "case", "n": 2}])
    monkeypatch.undo()
    writer.append([{"record": "case", "n": 2}])
    writer.close()
    assert _lines(path) == [{"record": "header"}, {"record": "case", "n": 1}, {"record": "case", "n": 2}]
