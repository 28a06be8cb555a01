"""A checkout in the working directory never shadows the installed tfdet in a
child process (README: "a checkout can never shadow the installed tfdet"), while
the user's own code there is still found: locate's runs and a fleet machine's
probe both start from a directory that holds a fake `tfdet/` package."""

import os

import pytest

FAKE = ("import os\n"
        "open(os.path.join(%r, 'fake-tfdet-was-imported'), 'w').close()\n"
        "raise ImportError('the fake tfdet in the working directory shadowed the installed one')\n")


@pytest.fixture
def shadowed_cwd(tmp_path, monkeypatch):
    """A working directory with a fake tfdet/ (it leaves a mark and fails when
    imported) and the user's module beside it."""
    work = tmp_path / "checkout"
    (work / "tfdet").mkdir(parents=True)
    (work / "tfdet" / "__init__.py").write_text(FAKE % str(tmp_path))
    (work / "tfdet" / "__main__.py").write_text("")
    (work / "user_step.py").write_text(
        "def step():\n    import tensorflow as tf\n    return float(tf.reduce_sum(tf.constant([1.0, 2.0])))\n")
    monkeypatch.chdir(work)
    return tmp_path


def test_a_locate_run_uses_the_installed_tfdet_and_finds_the_users_module_in_the_cwd(shadowed_cwd):
    pytest.importorskip("tensorflow")
    from tfdet.locating import runs

    target = runs.Target(function="user_step:step", call=((), {}))
    os.makedirs(str(shadowed_cwd / "work"))
    [(run, outcome)] = runs.run_once(target, str(shadowed_cwd / "work"), 0, timeout=300)
    assert outcome.status == "finished", outcome.detail
    assert run is not None and run.executions  # the user's step ran, with capture on
    assert not (shadowed_cwd / "fake-tfdet-was-imported").exists()


def test_a_fleet_machines_probe_uses_the_installed_tfdet(shadowed_cwd, monkeypatch):
    from tfdet.probe.fleet_job import probe_on_this_machine

    monkeypatch.setenv("TFDET_FLEET_DIR", str(shadowed_cwd / "fleet"))
    # an unknown op: the real `tfdet probe` refuses it (exit 3) before any TensorFlow starts
    result = probe_on_this_machine(["--ops", "no-such-op-anywhere"], "k", resume=False)
    assert result["returncode"] == 3, result["stderr_tail"]
    assert "no catalogue entry, API or raw op named no-such-op-anywhere" in result["stderr_tail"]
    assert not (shadowed_cwd / "fake-tfdet-was-imported").exists()
