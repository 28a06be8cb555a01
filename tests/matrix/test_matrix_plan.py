"""Which versions and modes a matrix runs, and what an output directory already holds."""

import os
import shutil

import pytest

from tfdet import catalog
from tfdet.matrix import plan
from tfdet.matrix.versions import VERSIONS, by_tf
from tfdet.runtime.modes import mode_setups
from tfdet.results import read_probe
from tfdet.results.interpret import not_measured

REPORTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "reports")
COMPLETE_FILE = os.path.join(REPORTS, "probe-tf2.21-cpu-2core-default.jsonl")  # ends with an end record


def test_versions_all_list_and_unknown():
    assert plan.parse_versions("all") == list(VERSIONS)
    assert [v.tf for v in plan.parse_versions("2.21, 1.15,2.6,2.6")] == ["1.15", "2.6", "2.21"]
    with pytest.raises(plan.PlanError, match="no TF 2.99, 1.0 in the matrix"):
        plan.parse_versions("2.99,1.0")
    with pytest.raises(plan.PlanError, match="empty"):
        plan.parse_versions(",")


def test_modes():
    assert plan.parse_modes(None) == ["baseline", "env", "api"]
    assert plan.parse_modes("env,baseline,env") == ["env", "baseline"]
    with pytest.raises(plan.PlanError, match="unknown mode patched"):
        plan.parse_modes("baseline,patched")


def test_each_version_runs_the_modes_its_tf_has():
    cat = catalog.default_catalogue()
    old, why = plan.version_modes(["baseline", "env", "api"], mode_setups(cat, "1.15", False))
    assert old == ["baseline", "env"] and "api" in why and "no determinism API" in why["api"]
    new, why = plan.version_modes(["baseline", "env", "api"], mode_setups(cat, "2.21", False))
    assert new == ["baseline", "env", "api"] and why == {}


def _state(path):
    return plan.results_state(path, read_probe, not_measured)


def test_results_state_missing_partial_complete(tmp_path):
    path = str(tmp_path / (plan.RESULTS_NAME % "2.21"))
    assert _state(path) == plan.MISSING
    shutil.copy(COMPLETE_FILE, path)
    assert _state(path) == plan.COMPLETE
    with open(COMPLETE_FILE) as handle:
        lines = handle.readlines()
    with open(path, "w") as handle:  # interrupted: no end record, the last cases missing
        handle.writelines(lines[:len(lines) // 2])
    assert _state(path) == plan.PARTIAL


def test_pending_skips_only_complete_versions(tmp_path):
    plans = [plan.VersionPlan(by_tf(tf), ["baseline"], {}, str(tmp_path / tf), state)
             for tf, state in (("2.0", plan.MISSING), ("2.1", plan.COMPLETE), ("2.2", plan.PARTIAL))]
    assert [p.version.tf for p in plan.pending(plans)] == ["2.0", "2.2"]
