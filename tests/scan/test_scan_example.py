"""The README's scan example, as a user runs it: examples/scan/make_text_model.py
builds text_model.keras, and `tfdet scan` on it prints what the README shows,
read from the README itself so the two cannot drift apart."""

import io
import os
import re
import runpy

import pytest

pytest.importorskip("tensorflow")
pytest.importorskip("keras")

from tfdet.cli.app import run_main  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "examples", "scan", "make_text_model.py")


def _readme_example():
    """(commands, output) of the README's block that runs make_text_model.py."""
    with open(os.path.join(ROOT, "docs", "topics", "scan.md")) as handle:
        text = handle.read()
    block = re.search(r"```\n(\$ python examples/scan/make_text_model\.py.*?)```", text, re.S).group(1)
    lines = block.splitlines()
    commands = [line[2:] for line in lines if line.startswith("$ ")]
    return commands, "\n".join(line for line in lines if not line.startswith("$ ")) + "\n"


@pytest.mark.slow  # traces the model's training step (~10 s)
def test_the_readme_scan_example_is_what_the_shipped_script_and_the_scan_print(tmp_path, monkeypatch):
    commands, shown = _readme_example()
    assert commands[0] == "python examples/scan/make_text_model.py text_model.keras"
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", [SCRIPT, "text_model.keras"])
    runpy.run_path(SCRIPT, run_name="__main__")
    monkeypatch.setenv("COLUMNS", "100")  # the README's block is 100 columns wide
    out, err = io.StringIO(), io.StringIO()
    assert commands[1].startswith("tfdet ")
    assert run_main(commands[1].split()[1:], out, err) == 0, err.getvalue()
    assert out.getvalue() == shown
