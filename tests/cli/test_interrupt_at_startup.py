"""Ctrl-C while `tfdet` is still importing its modules is a quiet exit 130, not a
traceback. The interrupt is delivered at a chosen import by an import hook, so
the test does not depend on timing."""

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = """
import os, signal, sys

class InterruptAt(object):
    def find_spec(self, name, path=None, target=None):
        if name == %r:
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, InterruptAt())
from tfdet.cli import main
sys.exit(main(["catalog", "list"]))
"""


@pytest.mark.parametrize("module", ["tfdet.cli.app", "tfdet.cli.probe_cmd", "rich.table"])
def test_ctrl_c_while_importing_is_exit_130_without_a_traceback(module):
    done = subprocess.run([sys.executable, "-c", SCRIPT % module], capture_output=True, text=True, timeout=120,
                          cwd=ROOT)
    assert done.returncode == 130, done.stderr
    assert done.stderr == "tfdet: interrupted\n" and done.stdout == ""


def test_once_started_ctrl_c_is_the_commands_own_business():
    # the start-up handler is gone once the command runs: Python's default (KeyboardInterrupt) is back
    code = ("import signal; from tfdet.cli import main; main(['catalog', 'show', 'bincount'], open('/dev/null', 'w')); "
            "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.stdout.strip() == "True", done.stderr
