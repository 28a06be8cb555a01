"""The results file: one JSON line per (program, promise), appended as each finishes,
so an interrupted run keeps what it finished and the next run skips it (resume)."""

import json
import os

STATUSES = ("pass", "expected", "fail", "error", "n/a")


def record(program, promise, status, detail, seconds=0.0, **data):
    assert status in STATUSES, status
    return dict(program=program, promise=promise, status=status, detail=detail, seconds=round(seconds, 1), data=data)


def read(path):
    """The latest record of each (program, promise); a line cut off by a kill is skipped."""
    latest = {}
    if not os.path.exists(path):
        return latest
    with open(path) as handle:
        for line in handle:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            latest[(rec["program"], rec["promise"])] = rec
    return latest


def append(path, rec):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "a") as handle:
        handle.write(json.dumps(rec, sort_keys=True) + "\n")
        handle.flush()
        os.fsync(handle.fileno())
