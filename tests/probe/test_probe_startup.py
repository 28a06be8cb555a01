"""How the probe's workers start: forked from one process that imported
TensorFlow once (where that is safe and checked), or each a fresh interpreter.
Either way the same records, bit for bit, and the header says which."""

import pytest

from tfdet.catalog import default_catalogue
from tfdet.probe import ProbeConfig, run_probe
from tfdet.probe.runner import ForkedModeUnchecked, _check_forked_mode
from tfdet.results import load
from tfdet.runtime.forking import fork_verdict
from tfdet.runtime.modes import mode_setups

pytest.importorskip("tensorflow")

# Deterministic here in every mode (so their bits can be compared across runs):
# a fixture, two real ops, and oneDNN's numerics, which threads could change.
SAME_BITS_OPS = ["fixture-fixed-order-sum", "conv2d-backprop", "softmax-xent", "onednn-cpu-numerics"]


def _setups():
    return mode_setups(default_catalogue(), "2.21.0", True)


@pytest.mark.slow
def test_forked_and_plain_workers_give_the_same_records_bit_for_bit(tmp_path):
    import tensorflow as tf

    if fork_verdict(tf.__version__):
        pytest.skip("no fork here: " + fork_verdict(tf.__version__))
    records, startups = {}, {}
    for startup in ("plain", "auto"):
        out = str(tmp_path / ("%s.jsonl" % startup))
        config = ProbeConfig(default_catalogue(), out, modes=("baseline", "env", "patched"), processes=1, repeats=3,
                             rounds=1, ops=SAME_BITS_OPS, max_repeats=3, startup=startup)
        run_probe(config)
        results = load(out)
        startups[startup] = results.header.settings["startup"]
        records[startup] = {(r.case, r.pass_name, r.mode): (r.outcome, r.runs, r.distinct, r.first_digest,
                                                            r.matches_baseline)
                            for r in results.measured}
        environments = {m: e.op_determinism_enabled for m, e in results.header.environment.items()}
        assert environments == {"baseline": False, "env": True, "patched": True}, (startup, environments)
    assert startups == {"plain": "plain: asked for (--startup plain)", "auto": "fork"}
    assert len(records["plain"]) == 3 * len(results.header.planned)  # every (case, pass) in every mode
    assert records["auto"] == records["plain"]
    assert all(outcome == "deterministic" and digest for outcome, _, _, digest, _ in records["auto"].values())


def test_a_forked_worker_whose_mode_did_not_take_effect_is_caught():
    setups = _setups()
    _check_forked_mode(None, setups["baseline"], {"op_determinism_enabled": False})
    _check_forked_mode(None, setups["env"], {"op_determinism_enabled": True})
    with pytest.raises(ForkedModeUnchecked, match="env worker TF had op determinism off"):
        _check_forked_mode(None, setups["env"], {"op_determinism_enabled": False})
    with pytest.raises(ForkedModeUnchecked, match="baseline worker TF had op determinism on"):
        _check_forked_mode(None, setups["baseline"], {"op_determinism_enabled": True})
    # modes that call an API or patch() turn determinism on themselves: nothing to check there
    _check_forked_mode(None, setups["api"], {"op_determinism_enabled": True})
    _check_forked_mode(None, setups["patched"], {"op_determinism_enabled": True})


def test_the_processes_of_a_mode_come_from_different_fork_servers():
    """Forks of one server share its hash seed and address layout, so process i of
    every mode comes from server i % 2 (tests/runtime/test_forking.py shows that two
    servers' children differ, one server's do not)."""
    from tfdet.probe.runner import FORK_SERVERS, Probe

    probe = Probe.__new__(Probe)
    probe.forks = ["server A", "server B"]
    assert FORK_SERVERS == 2
    assert [probe._server(i) for i in range(3)] == ["server A", "server B", "server A"]
    probe.forks = []
    assert probe._server(0) is None
