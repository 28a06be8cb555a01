"""The flags several commands take are declared once, in tfdet.cli.arguments:
--executor/--jobs/--scheduler (add_executor, checked by check_executor), --out
(add_output_file), --quiet (add_quiet); and a catalogue is loaded (or the
command exits 3) by load_catalogue_or_exit. The parser walk covers every
subcommand, so a new command that declares its own copy fails here."""

import argparse
import ast
import os

import pytest

from cli_runner import run_cli

import tfdet.cli
from tfdet.cli import arguments
from tfdet.cli.app import build_parser
from tfdet.cli.exitcodes import ENVIRONMENT, INVALID_INPUT, USAGE

SHARED_FLAGS = {"--executor": "executor", "--jobs": "executor", "--scheduler": "executor", "--out": "output",
                "--quiet": "quiet"}
CLI_DIR = os.path.dirname(os.path.abspath(tfdet.cli.__file__))


def _options(parser, path=()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _options(sub, path + (name,))
        else:
            yield path, action


OPTIONS = list(_options(build_parser()))


def test_every_shared_flag_comes_from_its_one_declaration():
    hand_made = ["%s %s" % (" ".join(path), flag) for path, action in OPTIONS for flag in action.option_strings
                 if flag in SHARED_FLAGS and getattr(action, arguments.SHARED, None) != SHARED_FLAGS[flag]]
    assert not hand_made, "declare these with tfdet.cli.arguments' add_executor/add_output_file/add_quiet"
    executors = {path for path, action in OPTIONS if "--executor" in action.option_strings}
    assert executors == {("probe",), ("diverge",), ("compare",), ("matrix",)}


EXECUTOR_COMMANDS = [["probe"], ["diverge", "--workload", "embedding"], ["compare", "--workload", "embedding", "--aa"],
                     ["matrix", "--versions", "2.21"]]


@pytest.mark.parametrize("command", EXECUTOR_COMMANDS, ids=lambda c: c[0])
def test_a_scheduler_without_dask_is_the_same_usage_error_everywhere(command, tmp_path):
    code, _, err = run_cli(*command + ["--scheduler", "tcp://nowhere:8786", "--out", str(tmp_path / "o")])
    assert code == USAGE and err == "tfdet: error: --scheduler needs --executor dask\n"


@pytest.mark.parametrize("command", EXECUTOR_COMMANDS, ids=lambda c: c[0])
def test_dask_missing_is_the_same_environment_error_everywhere(command, tmp_path, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "distributed" else real(name, *a))
    code, _, err = run_cli(*command + ["--executor", "dask", "--out", str(tmp_path / "o")])
    assert code == ENVIRONMENT and err == \
        "tfdet: error: --executor dask needs dask.distributed: pip install 'tfdet[dask]'\n"


def _calls(module):
    """(function, called name) of every call in a tfdet/cli module."""
    path = os.path.join(CLI_DIR, module)
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    found = []
    for function in ast.walk(tree):
        if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(function):
                if isinstance(node, ast.Call):
                    name = getattr(node.func, "attr", getattr(node.func, "id", None))
                    found.append((function.name, name, ast.unparse(node)))
    return found


# Loading a catalogue for another purpose than using it: `catalog check` reports a
# bad one as JSON; `catalog update` validates a user's text against the shipped switches.
OWN_LOADERS = {("catalog_cmd.py", "run_check"), ("catalog_update_cmd.py", "run_update")}


@pytest.mark.parametrize("module", sorted(n for n in os.listdir(CLI_DIR) if n.endswith(".py") and n != "arguments.py"))
def test_catalogue_loading_and_the_dask_check_live_in_arguments_only(module):
    copies = [text for function, name, text in _calls(module)
              if (name in ("default_catalogue", "load_user_catalogue") and (module, function) not in OWN_LOADERS)
              or (name == "find_spec" and "distributed" in text)]
    assert not copies, "%s: use arguments.load_catalogue_or_exit / check_executor: %s" % (module, copies)


def test_a_catalogue_that_does_not_load_is_exit_3(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("entries: [{id: 1}]\n")
    for command in (["catalog", "list"], ["report", "x.jsonl"]):
        code, _, err = run_cli(*command + ["--catalog", str(bad)])
        assert code == INVALID_INPUT and err.startswith("tfdet: error: ") and err.count("\n") >= 1
