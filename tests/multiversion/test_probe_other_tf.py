"""The probe worker in other interpreters and TF versions (tox -e multiversion).

Needs the virtual environments that tests/multiversion/make_venvs.py builds, in
$TFDET_VENVS (default ~/.cache/tfdet/venvs)."""

import json
import os
import subprocess
import sys

import pytest

from tfdet.matrix.venvs import venvs_dir
from tfdet.probe.process import PRELOAD
from tfdet.runtime.forking import ForkServer, fork_verdict
from tfdet.runtime.launch import ChildSpec, start
from tfdet.results import load
from tfdet.matrix.versions import REPRESENTATIVE, by_tf, env_name

VENVS = venvs_dir()
# One per Python minor from 3.7 to 3.13 (tfdet.matrix.versions.REPRESENTATIVE).
NAMES = [env_name(by_tf(tf)) for tf in REPRESENTATIVE]


@pytest.mark.multiversion
@pytest.mark.parametrize("name", NAMES)
def test_probe_runs_in_another_tf(name, tmp_path):
    python = os.path.join(VENVS, name, "bin", "python")
    if not os.path.exists(python):
        pytest.fail("missing %s: run python tests/multiversion/make_venvs.py --dir %s" % (python, VENVS))
    out = str(tmp_path / "r.jsonl")
    done = subprocess.run(
        [sys.executable, "-m", "tfdet", "probe", "--python", python, "--ops",
         "segment-sum,fixture-random-order-sum,fixture-fixed-order-sum", "--processes", "2", "--repeats", "3",
         "--rounds", "1", "--out", out, "--quiet"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    results = load(out)
    header = results.header
    expected_tf = name.split("-")[0][2:]
    assert header.tf_version.startswith(expected_tf + ".")
    outcomes = {(r.case, r.mode): r.outcome for r in results.measured}
    assert outcomes[("fixture-random-order-sum", "baseline")] == "varies"
    assert outcomes[("fixture-fixed-order-sum", "baseline")] == "deterministic"
    # a bare TF environment cannot run tfdet.patch(): the patched mode is not applicable there
    assert "patched" not in header.modes
    if expected_tf in ("1.15",):
        assert "api" in header.not_applicable_modes and "env" in header.modes
    # how the workers started: forked where TF can confirm each mode took effect (2.8 on), else plain, and why
    if expected_tf in ("1.15", "2.6"):
        assert header.settings["startup"].startswith("plain: TF %s" % header.tf_version), header.settings
    assert header.settings["startup"] == ("fork" if fork_verdict(header.tf_version) is None
                                          else "plain: " + fork_verdict(header.tf_version))


@pytest.mark.multiversion
@pytest.mark.parametrize("name", NAMES)
def test_the_fork_server_in_another_tf(name):
    """In every version the server imports TF without a runtime and on one
    thread, and a forked worker answers; where TF can say (2.8 on), a child
    that sets TF_DETERMINISTIC_OPS after the fork has op determinism on and one
    that does not has it off."""
    python = os.path.join(VENVS, name, "bin", "python")
    if not os.path.exists(python):
        pytest.fail("missing %s: run python tests/multiversion/make_venvs.py --dir %s" % (python, VENVS))
    lazy = ("TF_DETERMINISTIC_OPS",)
    environ = dict({k: v for k, v in os.environ.items() if k not in lazy}, TF_CPP_MIN_LOG_LEVEL="2")
    server = ForkServer(python, environ, PRELOAD, lazy, timeout=300).start()
    try:
        found = {}
        for value in ("1", None):
            child = start(ChildSpec(module="tfdet.probe.worker", env=dict(environ, **(
                {"TF_DETERMINISTIC_OPS": value} if value else {}))), interactive=True, server=server)
            assert json.loads(child.stdout.readline())["ok"]
            child.stdin.write(json.dumps({"cmd": "setup", "threads": {}, "api_calls": []}) + "\n")
            answer = json.loads(child.stdout.readline())
            assert answer["ok"], answer
            found[value] = answer["environment"]["op_determinism_enabled"]
            child.stop()
    finally:
        server.close()
    if fork_verdict(server.hello["tf_version"]) is None:
        assert found == {"1": True, None: False}


@pytest.mark.multiversion
def test_matrix_probes_two_versions_and_keeps_them(tmp_path):
    """`tfdet matrix` over the oldest and newest TF: ordinary probe results files
    per version, a manifest, and a second run (--resume) that probes nothing."""
    out = str(tmp_path / "m")
    command = [sys.executable, "-m", "tfdet", "matrix", "--versions", "1.15,2.21", "--ops",
               "fixture-random-order-sum,fixture-fixed-order-sum", "--out", out, "--venvs", VENVS, "--json",
               "--quiet"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=1200)
    assert done.returncode == 0, done.stderr
    shown = {row["tf"]: row for row in json.loads(done.stdout)["versions"]}
    for tf in ("1.15", "2.21"):
        assert shown[tf]["status"] == "probed"
        assert shown[tf]["varied"]["baseline"] == ["fixture-random-order-sum"]
        results = load(os.path.join(out, "probe-tf%s-cpu.jsonl" % tf))
        assert results.header.tf_version.startswith(tf + ".")
    assert shown["1.15"]["modes_not_run"].keys() == {"api"} and "api" not in shown["1.15"]["varied"]
    with open(os.path.join(out, "matrix.json")) as handle:
        manifest = handle.read()
    again = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    with open(os.path.join(out, "matrix.json")) as handle:
        assert handle.read() == manifest  # nothing left to do: nothing rewritten
