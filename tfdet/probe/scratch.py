"""The probe's scratch space: a temp directory of the workers' saved arrays,
removed however the run ends, and, when a run was killed (SIGKILL gives no
chance to clean up), removed by the next run.

The owning process id is part of the name (tfdet-probe-<pid>-<random>), so a
later run can tell a live run's directory from a dead one's: only
directories whose process no longer exists are removed."""

import os
import re
import shutil
import tempfile

PREFIX = "tfdet-probe-"
_NAME = re.compile(r"^tfdet-probe-(\d+)-[A-Za-z0-9_]+$")


def create(parent=None):
    """A fresh scratch directory owned by this process."""
    return tempfile.mkdtemp(prefix="%s%d-" % (PREFIX, os.getpid()), dir=parent)


def remove(path):
    if path:
        shutil.rmtree(path, ignore_errors=True)


def owner_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process, alive
        return True
    except OSError:
        return True  # unsure: keep it
    return True


def remove_stale(parent=None):
    """Remove scratch directories left by probe runs that no longer exist;
    returns their paths. Directories of live runs, of other users we cannot
    remove, and names that are not ours are left alone."""
    parent = parent or tempfile.gettempdir()
    try:
        names = os.listdir(parent)
    except OSError:
        return []
    removed = []
    for name in names:
        match = _NAME.match(name)
        path = os.path.join(parent, name)
        if not match or int(match.group(1)) == os.getpid() or not os.path.isdir(path):
            continue
        if not owner_alive(int(match.group(1))):
            shutil.rmtree(path, ignore_errors=True)
            if not os.path.exists(path):
                removed.append(path)
    return removed
