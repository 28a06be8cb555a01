"""A local pool whose parent is killed by SIGKILL leaves no process behind and
starts no job that was still queued (issue 25)."""

import os
import subprocess
import sys
import time

from orphans import describe, kill_leaving_nothing

HERE = os.path.dirname(os.path.abspath(__file__))

# The parent: a pool of 2 processes, 4 jobs of a minute each (so 2 run, and
# ProcessPoolExecutor has already sent the pool processes the next ones).
PARENT = """
import sys
sys.path.insert(0, %(here)r)
import pool_jobs
from tfdet.executor import open_executor
with open_executor("local", jobs=2) as ex:
    jobs = {"job%%d" %% i: (pool_jobs.mark_and_wait, (%(marks)r, "job%%d" %% i, 60), {}) for i in range(4)}
    for key, result in ex.run(jobs):
        print(key, result, flush=True)
"""


def started(marks):
    return sorted(os.listdir(marks))


def test_a_killed_parent_leaves_no_pool_process_and_no_new_job(tmp_path):
    marks = tmp_path / "marks"
    marks.mkdir()
    log = tmp_path / "parent.log"
    with open(log, "w") as handle:  # a file, not a pipe: an orphan would hold a pipe open
        parent = subprocess.Popen([sys.executable, "-c", PARENT % {"here": HERE, "marks": str(marks)}],
                                  stdout=handle, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 120
    while len(started(marks)) < 2 and parent.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(started(marks)) == 2, log.read_text()
    below, left = kill_leaving_nothing(parent)
    assert len(below) >= 2  # the pool processes (and multiprocessing's resource tracker)
    assert left == [], "outlived their parent:\n" + describe(left)
    time.sleep(1.0)
    assert started(marks) == ["job0", "job1"]  # the queued jobs never started
