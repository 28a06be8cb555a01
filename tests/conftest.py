import pytest


def pytest_addoption(parser):
    parser.addoption("--runslow", action="store_true", default=False, help="also run tests marked slow")
    parser.addoption("--multiversion", action="store_true", default=False,
                     help="also run tests that need other TF versions (see tests/multiversion/make_venvs.py)")
    parser.addoption("--runupstream", action="store_true", default=False,
                     help="also run TensorFlow's wheel-shipped kernel tests stock vs patched (tox -e upstream)")
    parser.addoption("--runcorpus", action="store_true", default=False,
                     help="also hold every corpus program to every promise (tox -e corpus; long)")
    parser.addoption("--runreadme", action="store_true", default=False,
                     help="also run the README's main command verbatim in a fresh venv (installs TensorFlow)")


def pytest_collection_modifyitems(config, items):
    skips = {
        "slow": (config.getoption("--runslow"), "slow: run with --runslow (tox -e slow)"),
        "multiversion": (config.getoption("--multiversion"), "needs other TF versions: run with --multiversion (tox -e multiversion)"),
        "upstream": (config.getoption("--runupstream"),
                     "TF's kernel tests stock vs patched: run with --runupstream (tox -e upstream)"),
        "readme": (config.getoption("--runreadme"), "the README's main command verbatim: run with --runreadme (tox -e readme)"),
    }
    for item in items:
        for marker, (enabled, reason) in skips.items():
            if marker in item.keywords and not enabled:
                item.add_marker(pytest.mark.skip(reason=reason))
        # "corpus" is also the name of tests/corpus, so every test there has that keyword: the marker itself counts
        if item.get_closest_marker("corpus") and not config.getoption("--runcorpus"):
            item.add_marker(pytest.mark.skip(reason="every corpus promise: run with --runcorpus (tox -e corpus)"))


@pytest.fixture
def no_global_seed_left():
    """A test that sets TensorFlow's global seed (keras.utils.set_random_seed) unsets it after:
    a later test in the process would otherwise trace seeded random ops (the scan's tests
    count unseeded ones)."""
    yield
    import sys

    if "tensorflow" in sys.modules:
        sys.modules["tensorflow"].random.set_seed(None)
