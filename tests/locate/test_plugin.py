"""The pytest plugin: the `reproducible` fixture and marker in a project's own
test suite (loaded by tfdet's pytest11 entry point, or with -p tfdet.testing)."""

import os
import shutil

import pytest

pytest_plugins = ["pytester"]


def plugin_options():
    """Load the plugin the way this install does: through tfdet's pytest11 entry point
    when tfdet is installed (pip install -e . does it), else explicitly with -p."""
    from importlib import metadata

    try:
        points = metadata.entry_points(group="pytest11")
    except TypeError:  # Python < 3.10
        points = metadata.entry_points().get("pytest11", [])
    return [] if any(point.value == "tfdet.testing" for point in points) else ["-p", "tfdet.testing"]

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "examples",
                        "locate")


def test_the_marker_is_registered_and_the_fixture_takes_its_options(pytester):
    pytester.makepyfile(test_marked="""
        import pytest

        @pytest.mark.reproducible(runs=5, processes=1, patch=True)
        def test_options(reproducible, monkeypatch):
            import tfdet.testing as testing
            seen = {}
            monkeypatch.setattr(testing, "assert_reproducible", lambda fn, *a, **k: seen.update(k) or "ok")
            assert reproducible(len, [1]) == "ok"
            assert seen == {"runs": 5, "processes": 1, "patch": True}
    """)
    result = pytester.runpytest("--strict-markers", *plugin_options())
    result.assert_outcomes(passed=1)


@pytest.mark.slow
def test_the_fixture_fails_a_test_whose_step_does_not_reproduce_and_passes_it_patched(pytester):
    shutil.copy(os.path.join(EXAMPLES, "steps.py"), str(pytester.path / "steps.py"))
    pytester.makepyfile(test_training="""
        import pytest
        import steps

        def test_stock(reproducible):
            reproducible(steps.scatter_add_step, 2)

        @pytest.mark.reproducible(patch=True)
        def test_patched(reproducible):
            reproducible(steps.scatter_add_step, 2)
    """)
    result = pytester.runpytest("-p", "no:cacheprovider", *plugin_options())
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*did not reproduce*ResourceScatterAdd*"])


@pytest.mark.slow
def test_with_v_a_pass_says_what_it_ruled_out_and_records_it_for_junit(pytester):
    shutil.copy(os.path.join(EXAMPLES, "steps.py"), str(pytester.path / "steps.py"))
    pytester.makepyfile(test_passing="""
        import pytest
        import steps

        @pytest.mark.reproducible(repeats=3)
        def test_dense(reproducible):
            reproducible(steps.deterministic_step, 1)
    """)
    result = pytester.runpytest("-v", "-p", "no:cacheprovider", "--junitxml=out.xml", *plugin_options())
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*tfdet: what the reproducible checks ruled out*",
                                 "test_passing.py::test_dense: steps:deterministic_step: No difference:*"
                                 "0 of 3 runs differed: a per-run rate above 63% is ruled out at 95%*"])
    assert 'name="tfdet_reproducible"' in (pytester.path / "out.xml").read_text()
    quiet = pytester.runpytest("-p", "no:cacheprovider", *plugin_options())
    assert "ruled out" not in quiet.stdout.str()
