"""The README's commands work as a new user types them: from a real wheel in a
fresh virtual environment, run from inside a copy of the checkout (where the
source tree sits first on sys.path) and from an unrelated directory.

The default run installs the wheel into a venv that sees this interpreter's
TensorFlow (`--system-site-packages`) and imports and patches from it. Marked
`readme` (`--runreadme`, `tox -e readme`, and CI): the README's main command
verbatim, TensorFlow install and full probe included, and the wheel's probe of
one real, catalogued op in every mode from an unrelated directory.
"""

import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ALL_MODES = {"baseline", "env", "api", "patched"}


def _readme_main_command():
    """The README's main command, read from the README itself so the test cannot drift from it."""
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as handle:
        for line in handle:
            if line.strip().startswith('pip install ".[tf]" && tfdet probe'):
                return line.strip()
    raise AssertionError("README.md no longer shows the main command `pip install \".[tf]\" && tfdet probe ...`")


def _copy_checkout(target):
    """A copy of the source tree as a user would have it (no build artefacts, no VCS data)."""
    ignore = shutil.ignore_patterns(".git", ".tox", "build", "dist", "*.egg-info", "__pycache__", "test-artifacts",
                                    ".pytest_cache", "report.html", "tfdet-probe*.jsonl")
    shutil.copytree(ROOT, target, symlinks=True, ignore=ignore)
    return target


def _run(command, cwd, env=None, timeout=900):
    done = subprocess.run(command, cwd=str(cwd), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout, shell=isinstance(command, str))
    return done


def _user_environ(venv):
    """The environment of a shell with the venv activated and nothing of ours on the path."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "TF_", "TFDET_", "PYTEST"))}
    environ["PATH"] = os.path.join(str(venv), "bin") + os.pathsep + environ.get("PATH", "")
    environ["VIRTUAL_ENV"] = str(venv)
    environ["TF_CPP_MIN_LOG_LEVEL"] = "2"
    return environ


def _modes_measured(results_path):
    """{mode: number of cases measured (not failed, not skipped)} from a results file."""
    measured, failed = {}, {}
    with open(results_path, encoding="utf-8") as handle:
        for line in handle:
            record = json.loads(line)
            if record.get("record") != "case" or not record.get("mode"):
                continue
            bucket = failed if record.get("outcome") == "failed" else measured
            bucket[record["mode"]] = bucket.get(record["mode"], 0) + 1
    return measured, failed


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out),
                    ROOT], check=True, timeout=300)
    (path,) = glob.glob(str(out / "tfdet-*.whl"))
    return path


def _see_these_site_packages(target):
    """Put this interpreter's site-packages on the path of the venv `target`, after
    its own. `--system-site-packages` alone is not enough: a venv made from one
    that runs inside a venv sees the base interpreter's packages, not the outer
    venv's (where TensorFlow is). Plain paths in a .pth file: the outer
    directories' own .pth files (an editable tfdet's finder) are not run."""
    import site
    import sysconfig

    python = str(target / "bin" / "python")
    own = subprocess.run([python, "-c", "import sys, sysconfig; print(sysconfig.get_paths()['purelib']); "
                          "print('\\n'.join(sys.path))"], stdout=subprocess.PIPE, universal_newlines=True,
                         check=True, timeout=120).stdout.splitlines()
    ours = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]] + site.getsitepackages()
    extra = [p for p in dict.fromkeys(ours) if os.path.isdir(p) and p not in own[1:]]
    with open(os.path.join(own[0], "_tfdet_tests_outer_site.pth"), "w", encoding="utf-8") as handle:
        handle.write("".join(p + "\n" for p in extra))


@pytest.fixture(scope="module")
def venv(wheel, tmp_path_factory):
    """A fresh venv holding the wheel (not editable), with this interpreter's TensorFlow visible."""
    target = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(target)], check=True, timeout=300)
    _see_these_site_packages(target)
    # --ignore-installed: a tfdet in the system site-packages (an editable one, say) must not satisfy it
    subprocess.run([str(target / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                    "--ignore-installed", "--disable-pip-version-check", wheel], check=True, timeout=300)
    return target


def test_installed_tfdet_is_the_one_imported_outside_the_checkout(venv, tmp_path):
    done = _run([str(venv / "bin" / "python"), "-c", "import tfdet; print(tfdet.__file__)"], tmp_path,
                _user_environ(venv))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().startswith(str(venv)), done.stdout


@pytest.mark.parametrize("where", ["checkout", "elsewhere"])
def test_patch_works_from_a_script_in_the_checkout_and_elsewhere(venv, tmp_path, where):
    cwd = _copy_checkout(tmp_path / "checkout") if where == "checkout" else tmp_path
    done = _run([str(venv / "bin" / "python"), "-c",
                 "import tensorflow, tfdet; tfdet.patch(seed=0, quiet=True); print(tfdet.status().patched)"],
                cwd, _user_environ(venv), timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "True"


# From a copy of the checkout, the README's main command runs in CI (readme marker); the case a
# checkout cannot shadow runs there too (readme: 13 s of probe, out of the default suite since
# issue 30), and the slow run has both.
@pytest.mark.parametrize("where", [pytest.param("checkout", marks=pytest.mark.slow),
                                   pytest.param("elsewhere", marks=pytest.mark.readme)])
def test_probe_runs_every_mode_from_the_checkout_and_elsewhere(venv, tmp_path, where):
    cwd = _copy_checkout(tmp_path / "checkout") if where == "checkout" else tmp_path
    done = _run(["tfdet", "probe", "--ops", "bincount", "--processes", "1", "--repeats", "3", "--rounds", "1",
                 "--out", "run.jsonl", "--report", "report.html"], cwd, _user_environ(venv))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    measured, failed = _modes_measured(os.path.join(str(cwd), "run.jsonl"))
    assert set(measured) == ALL_MODES and not failed, (measured, failed, done.stderr[-3000:])
    assert os.path.getsize(os.path.join(str(cwd), "report.html")) > 1000


@pytest.mark.readme
def test_readme_main_command_verbatim_in_a_fresh_venv(tmp_path):
    """No TensorFlow given: the command installs it, probes everything, and every mode runs."""
    checkout = _copy_checkout(tmp_path / "checkout")
    target = tmp_path / "env"
    subprocess.run([sys.executable, "-m", "venv", str(target)], check=True, timeout=300)
    command = _readme_main_command()
    done = _run(command, checkout, _user_environ(target), timeout=1800)
    assert done.returncode == 0, (command, done.stdout[-3000:], done.stderr[-3000:])
    assert "Traceback" not in done.stderr
    (results,) = [p for p in glob.glob(os.path.join(str(checkout), "*.jsonl"))]
    measured, failed = _modes_measured(results)
    assert set(measured) == ALL_MODES, (measured, done.stdout[-3000:])
    assert os.path.getsize(os.path.join(str(checkout), "report.html")) > 1000
    # The README's main command can be run a second time as written.
    again = _run(command, checkout, _user_environ(target), timeout=1800)
    assert again.returncode == 0, (again.stdout[-3000:], again.stderr[-3000:])
