"""A broken shipped catalogue: `tfdet probe` says which file and line and why,
exit 3, no traceback, and no results file is left behind. The catalogue is
broken for real: a copy with a YAML error stands in for the shipped package
data in a fresh process."""

import subprocess
import sys

import pytest

from tfdet.catalog.load import shipped_catalogue_dir
from tfdet.cli.exitcodes import INVALID_INPUT

# Runs `tfdet ARGV` with tfdet.catalog_data pointing at another directory.
LAUNCH = """\
import sys, types
data = types.ModuleType("tfdet.catalog_data")
data.__file__ = sys.argv[1] + "/__init__.py"
sys.modules["tfdet.catalog_data"] = data
from tfdet.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture()
def broken_catalogue(tmp_path):
    import shutil

    directory = tmp_path / "catalog"
    shutil.copytree(shipped_catalogue_dir(), directory)
    with open(directory / "image.yaml", "a") as handle:
        handle.write("entries: [ {id: broken\n")
    return directory


def tfdet(catalogue, *argv, cwd):
    done = subprocess.run([sys.executable, "-c", LAUNCH, str(catalogue)] + list(argv), capture_output=True,
                          text=True, timeout=120, cwd=cwd)
    return done.returncode, done.stderr


def test_probe_reports_a_broken_shipped_catalogue(broken_catalogue, tmp_path):
    code, err = tfdet(broken_catalogue, "probe", "--modes", "baseline", "--out", "r.jsonl", cwd=tmp_path)
    assert code == INVALID_INPUT, err
    assert "Traceback" not in err
    assert err.startswith("tfdet: error: invalid catalogue (1 problem):")
    assert "image.yaml:" in err and "not valid YAML" in err
    assert not (tmp_path / "r.jsonl").exists()


def test_catalog_list_says_the_same(broken_catalogue, tmp_path):
    probe = tfdet(broken_catalogue, "probe", "--modes", "baseline", "--out", "r.jsonl", cwd=tmp_path)
    assert tfdet(broken_catalogue, "catalog", "list", cwd=tmp_path) == probe
