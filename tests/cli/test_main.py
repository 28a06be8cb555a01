"""The top level of `tfdet`: --help, usage errors with did-you-mean, a closed output pipe."""

import io
import os
import shlex
import subprocess
import sys

import pytest
import yaml

from cli_runner import run_cli as run
from tfdet.cli import main
from tfdet.cli.exitcodes import BROKEN_PIPE, OK, USAGE

from catalog_fixtures import GOOD_ENTRY


def test_help_lists_every_command():
    done = subprocess.run([sys.executable, "-m", "tfdet", "--help"], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, COLUMNS="80"))
    assert done.returncode == OK and done.stderr == ""
    listed = [line.split()[:3] for line in done.stdout.splitlines() if line.startswith("  tfdet ")]
    commands = [" ".join(words[1:3] if words[1] == "catalog" else words[1:2]) for words in listed]
    assert commands == [
        "probe", "catalog list", "catalog show", "catalog diff", "catalog check", "catalog update", "report", "status", "scan", "locate",
        "diverge", "compare", "matrix"]
    assert "141" in done.stdout and max(len(line) for line in done.stdout.splitlines()) <= 80


@pytest.mark.parametrize("argv, usage, hint", [
    (["catalog", "list", "--tf-versoin", "2.6"], "usage: tfdet catalog list", "did you mean --tf-version?"),
    (["catalog", "list", "--tf-versoin=2.6"], "usage: tfdet catalog list", "did you mean --tf-version?"),
    (["catalog", "show", "bincount", "--jsno"], "usage: tfdet catalog show", "did you mean --json?"),
    (["catalog", "lis"], "usage: tfdet catalog", "did you mean list?"),
    (["catalgo", "list"], "usage: tfdet [-h]", "did you mean catalog?"),
    (["catalog", "list", "--device", "gpuu"], "usage: tfdet catalog list", "did you mean gpu?"),
    (["probe", "--modez", "baseline"], "usage: tfdet probe", "did you mean --modes?"),
    (["report", "x.jsonl", "--outt", "r.html"], "usage: tfdet report", "did you mean --output?"),
])
def test_usage_errors_show_the_subcommand_usage_and_a_hint(argv, usage, hint):
    code, out, err = run(*argv)
    assert code == USAGE and out == ""
    assert err.startswith(usage + " ") or err.startswith(usage + "\n")
    assert err.rstrip().endswith(hint)
    assert "Traceback" not in err


def test_usage_error_without_a_close_match_gives_no_hint():
    code, _, err = run("catalog", "list", "--zzzzzz")
    assert code == USAGE and "unrecognized arguments: --zzzzzz\n" in err and "did you mean" not in err


class _ClosedPipe(io.StringIO):
    def write(self, text):
        raise BrokenPipeError(32, "Broken pipe")


def test_a_closed_output_stream_ends_quietly_in_process():
    err = io.StringIO()
    assert main(["catalog", "list", "--tf-version", "2.6"], out=_ClosedPipe(), err=err) == BROKEN_PIPE
    assert err.getvalue() == ""


@pytest.fixture(scope="module")
def big_catalogue(tmp_path_factory):
    """Output much larger than a pipe's buffer, so the writer is still writing when head exits."""
    entries = []
    for n in range(150):
        entry = dict(GOOD_ENTRY, id="big-op-%d" % n, apis=["tf.big.op%d" % n], raw_ops=["BigOp%d" % n])
        entry["devices"] = dict(GOOD_ENTRY["devices"], cpu=[{
            "versions": ">=1.14", "status": "nondeterministic", "sources": ["tf-issue:1"],
            "workaround": "a long workaround " * 100}])
        entries.append(entry)
    path = tmp_path_factory.mktemp("big") / "big.yaml"
    path.write_text(yaml.safe_dump({"schema_version": 1, "entries": entries}))
    return str(path)


@pytest.mark.parametrize("output", [["--json"], []])
def test_piping_into_head_ends_quietly(big_catalogue, output):
    command = ["tfdet", "catalog", "list", "--catalog", big_catalogue, "--tf-version", "2.6", "--device", "cpu"]
    script = "%s | head -1 >/dev/null; exit ${PIPESTATUS[0]}" % " ".join(map(shlex.quote, command + output))
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    assert done.stderr == ""
    assert done.returncode == BROKEN_PIPE
