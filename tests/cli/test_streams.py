"""Everything a command says goes through the two streams main() is given (out,
err): an in-process caller, a test or an embedding program captures all of it.
The walk reads every module of tfdet/cli with `ast` and fails on a new direct
write: sys.stdout or sys.stderr named, print(), or a rich Console without a file
(it writes to sys.stdout)."""

import ast
import os

import pytest

from cli_runner import run_cli

import tfdet.cli

CLI_DIR = os.path.dirname(os.path.abspath(tfdet.cli.__file__))

# (module, function) where the process's own streams may be named: the defaults of
# the two entry points, and app's quieting of a closed stdout at exit.
ALLOWED = {("__init__.py", "main"), ("app.py", "run_main"), ("app.py", "_quiet_stdout")}


def _direct_writes(path):
    """(function, line, what) of every direct use of the process's streams in one module."""
    tree = ast.parse(open(path, encoding="utf-8").read(), path)
    found = []

    def visit(node, function):
        for child in ast.iter_child_nodes(node):
            name = child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else function
            if isinstance(child, ast.Attribute) and isinstance(child.value, ast.Name) and child.value.id == "sys" \
                    and child.attr in ("stdout", "stderr", "__stdout__", "__stderr__"):
                found.append((function, child.lineno, "sys." + child.attr))
            elif isinstance(child, ast.ImportFrom) and child.module == "sys" and any(
                    alias.name in ("stdout", "stderr") for alias in child.names):
                found.append((function, child.lineno, "from sys import stdout/stderr"))
            elif isinstance(child, ast.Call) and isinstance(child.func, ast.Name) and child.func.id == "print":
                found.append((function, child.lineno, "print()"))
            elif isinstance(child, ast.Call) and getattr(child.func, "id", getattr(child.func, "attr", None)) \
                    == "Console" and not any(k.arg == "file" for k in child.keywords):
                found.append((function, child.lineno, "Console() without file="))
            visit(child, name)

    visit(tree, None)
    return found


MODULES = sorted(name for name in os.listdir(CLI_DIR) if name.endswith(".py"))


@pytest.mark.parametrize("module", MODULES)
def test_no_command_writes_around_the_injected_streams(module):
    writes = [(function, line, what) for function, line, what in _direct_writes(os.path.join(CLI_DIR, module))
              if (module, function) not in ALLOWED]
    assert not writes, "%s writes past out/err: %s" % (module, writes)


def test_the_walk_finds_a_direct_write(tmp_path):
    path = tmp_path / "command.py"
    path.write_text("import sys\nfrom rich.console import Console\n\ndef run(args, out):\n"
                    "    sys.stderr.write('x')\n    print('y')\n    Console().print('z')\n")
    assert [what for _, _, what in _direct_writes(str(path))] == ["sys.stderr", "print()", "Console() without file="]
    assert set(ALLOWED) <= {(m, f) for m in MODULES for f, _, _ in _direct_writes(os.path.join(CLI_DIR, m))}


def test_report_to_standard_output_goes_to_the_given_stream(tmp_path):
    import records as make

    results = make.write(tmp_path / "r.jsonl", make.header(), [make.case("bincount", "baseline", "varies")])
    code, out, err = run_cli("report", str(results), "-o", "-")
    assert code == 0, err
    assert out.lstrip().lower().startswith("<!doctype html") and "bincount" in out


def test_locates_note_about_its_own_options_goes_to_the_given_stream(tmp_path):
    code, out, err = run_cli("locate", str(tmp_path / "missing.py"), "--runs", "3")
    assert code == 3
    assert "tfdet locate: note: --runs went to the script" in err and "missing.py: no such file" in err
