"""The post-import hook patch() uses to reach Keras only when the program imports it."""

import importlib
import sys

from tfdet.patching.import_hook import PostImportHook


def test_runs_after_the_first_import_only_and_is_removable(tmp_path, monkeypatch):
    (tmp_path / "late_pkg").mkdir()
    (tmp_path / "late_pkg" / "__init__.py").write_text("VALUE = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    hook = PostImportHook(["late_pkg"], lambda module: seen.append((module.__name__, module.VALUE)))
    hook.install()
    try:
        module = importlib.import_module("late_pkg")
        importlib.import_module("late_pkg")  # already imported: no second call
        assert seen == [("late_pkg", 1)] and module.VALUE == 1
        assert module.__spec__.loader.get_source("late_pkg") == "VALUE = 1\n"  # the real loader answers
    finally:
        hook.remove()
        sys.modules.pop("late_pkg", None)
    assert hook not in sys.meta_path
    importlib.import_module("late_pkg")
    sys.modules.pop("late_pkg", None)
    assert seen == [("late_pkg", 1)]


def test_ignores_other_modules_and_missing_ones():
    hook = PostImportHook(["no_such_module_anywhere"], lambda module: None)
    assert hook.find_spec("json") is None
    assert hook.find_spec("no_such_module_anywhere") is None
