"""TensorFlow's wheel-shipped kernel tests of replaced ops, stock vs patched (tox -e upstream).

Each module runs in its own process per configuration (see run_upstream.py). The
test fails naming every upstream test that passes in a patched configuration's
baseline (TF with op determinism on when the plan turns it on, else stock TF) and
fails patched: those failures are caused by a replacement."""

import importlib.util
import os

import pytest

import run_upstream as U  # noqa: E402  (this directory is on sys.path under pytest)

pytestmark = pytest.mark.upstream


def _shipped(module):
    try:
        return importlib.util.find_spec(module) is not None
    except ImportError:
        return False


@pytest.mark.parametrize("module", [m for m in U.MODULES if _shipped(m)], ids=lambda m: m.rsplit(".", 1)[-1])
def test_upstream_kernel_tests_pass_patched_where_they_pass_in_the_baseline(module):
    runs = U.run_all([module], U.CONFIGS)
    crashed = {c: r["crashed"] for c, r in runs[module].items() if r["crashed"]}
    assert not crashed, crashed
    assert runs[module]["stock"]["results"], "no upstream test ran"
    caused = [(config, test, detail.strip().splitlines()[-1:] if detail else "")
              for _, config, test, cause, detail in U.compare(runs) if cause == "replacement"]
    print(U.table(runs))
    assert not caused, "\n".join("%s %s: %s" % c for c in caused)


def test_the_runner_finds_the_shipped_modules():
    assert [m for m in U.MODULES if _shipped(m)], "the TF wheel ships none of " + ", ".join(U.MODULES)
    assert os.path.exists(U.__file__)
