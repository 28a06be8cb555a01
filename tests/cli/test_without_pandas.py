"""pandas is an extra (pip install 'tfdet[pandas]'): only ProbeResults.to_frame()
and Catalogue.to_dataframe() use it, and no command does. These run the command
line's path in a fresh interpreter where importing pandas fails (a meta-path
finder blocks it, as if it were not installed): the parser, the probe's modules,
`tfdet report` (what `tfdet probe --report` runs) and `catalog list` work and
never import pandas; to_frame() says in one line what to install."""

import os
import subprocess
import sys

import pytest

import records as make

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BLOCK = """
import sys

class NoPandas(object):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "pandas":
            raise ModuleNotFoundError("No module named %r" % name, name=name)
        return None

sys.meta_path.insert(0, NoPandas())
"""

CHECK = BLOCK + """
import io, importlib
from tfdet.cli import main
from tfdet.cli.app import build_parser

build_parser()
for module in ("tfdet.cli.app", "tfdet.probe.runner", "tfdet.probe.worker", "tfdet.probe.plan", "tfdet.results",
               "tfdet.cli.probe_summary", "tfdet.report", "tfdet.catalog"):
    importlib.import_module(module)
assert main(["catalog", "list"], io.StringIO(), sys.stderr) == 0
assert main(["report", sys.argv[1], "-o", sys.argv[2]], io.StringIO(), sys.stderr) == 0
assert "pandas" not in sys.modules, "pandas was imported"
from tfdet.catalog import default_catalogue
from tfdet.results import load
for frame in (load(sys.argv[1]).to_frame, default_catalogue().to_dataframe):
    try:
        frame()
    except ImportError as exc:
        print(exc)
"""


def _run(script, *argv, timeout=120):
    return subprocess.run([sys.executable, "-c", script] + list(argv), capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def test_the_command_line_and_the_probes_path_never_import_pandas(tmp_path):
    results = make.write(tmp_path / "r.jsonl", make.header(), [make.case("bincount", "baseline", "varies")])
    done = _run(CHECK, str(results), str(tmp_path / "report.html"))
    assert done.returncode == 0, done.stderr
    assert os.path.isfile(tmp_path / "report.html")
    assert done.stdout.splitlines() == [
        "%s needs pandas, which is not installed: pip install 'tfdet[pandas]'" % what
        for what in ("ProbeResults.to_frame()", "Catalogue.to_dataframe()")]


def test_the_blocker_blocks():
    done = _run(BLOCK + "import pandas\n")
    assert done.returncode != 0 and "No module named 'pandas'" in done.stderr


PROBE = BLOCK + """
from tfdet.cli import main
code = main(sys.argv[1:])
assert "pandas" not in sys.modules, "pandas was imported"
sys.exit(code)
"""


@pytest.mark.slow
def test_a_real_probe_with_its_report_runs_without_pandas(tmp_path):
    pytest.importorskip("tensorflow")
    done = _run(PROBE, "probe", "--ops", "bincount", "--modes", "baseline", "--processes", "1", "--repeats", "2",
                "--max-repeats", "2", "--rounds", "1", "--quiet", "--out", str(tmp_path / "p.jsonl"),
                "--report", str(tmp_path / "p.html"), timeout=600)
    assert done.returncode in (0, 1), done.stderr
    assert os.path.isfile(tmp_path / "p.jsonl") and os.path.isfile(tmp_path / "p.html")
