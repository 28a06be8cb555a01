"""Jobs for the pool tests: importable by name in a spawned pool process."""

import os
import time


def mark_and_wait(directory, key, seconds):
    """Say that job `key` started (its file holds the pool process's pid), then take a while."""
    with open(os.path.join(directory, key), "w") as handle:
        handle.write(str(os.getpid()))
    time.sleep(seconds)
    return key
