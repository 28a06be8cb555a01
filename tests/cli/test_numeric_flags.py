"""Every number a command takes is checked against bounds that make sense for
it: 1e308, 1e20, NaN, infinity, negative and zero-where-a-count-is-wanted are
one argparse error line and exit 2 (issue 25: `--size 1e308` and `--runs 1e20`
were accepted). The walk covers every subcommand, so a new flag cannot skip it."""

import argparse

import pytest

from tfdet.cli import arguments
from cli_runner import run_cli

from tfdet.cli.app import _UsageError, build_parser
from tfdet.cli.exitcodes import USAGE

# Values no flag of tfdet should take: each is out of every Bounded range below or not finite.
BAD = ("nan", "inf", "-inf", "1e308", "1e20", "-1", "")


def _flags(parser, path=()):
    """(subcommand path, action) of every option and operand of every subcommand."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _flags(sub, path + (name,))
        elif not isinstance(action, argparse._HelpAction):
            yield path, action


FLAGS = list(_flags(build_parser()))


def _name(path, action):
    return " ".join(path + tuple(action.option_strings[:1] or [action.dest]))


def _takes_numbers(action):
    """A number parses through it: int, float, or a type that returns numbers (a list of learning rates)."""
    if action.type in (int, float):
        return True
    if action.type is None:
        return isinstance(action.default, (int, float)) and not isinstance(action.default, bool) \
            and action.nargs != 0
    try:
        value = action.type("0.5")
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        try:
            value = action.type("3")
        except (argparse.ArgumentTypeError, ValueError, TypeError):
            return False
    values = value if isinstance(value, list) else [value]
    return any(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values)


def test_the_walk_sees_the_numeric_flags():
    numeric = {_name(path, action) for path, action in FLAGS if _takes_numbers(action)}
    assert {"probe --size", "diverge --runs", "diverge --lr", "matrix --jobs", "status --seed"} <= numeric


@pytest.mark.parametrize("path, action", [(p, a) for p, a in FLAGS if _takes_numbers(a)],
                         ids=lambda x: x if isinstance(x, str) else None)
def test_every_numeric_flag_has_bounds_and_refuses_what_is_out_of_them(path, action, capsys):
    name = _name(path, action)
    assert action.type not in (None, int, float), "%s: give it a type from tfdet/cli/arguments.py" % name
    assert isinstance(action.type, arguments.Bounded) or action.type.__module__.startswith("tfdet.cli"), name
    parser = build_parser()
    for bad in BAD:
        argv = list(path) + ([action.option_strings[0], bad] if action.option_strings else [bad])
        with pytest.raises(_UsageError) as raised:  # what main() prints as one line, exit 2
            parser.parse_args(argv)
        message = str(raised.value)
        assert "\n" not in message and (action.option_strings or [action.dest])[0] in message, (name, bad)


# Each also fails later for another reason (an unknown op, --resume with --overwrite),
# so that a value let through shows as the wrong message, never as a run.
@pytest.mark.parametrize("flag, argv", [
    ("--size", ["probe", "--size", "1e308", "--ops", "no-such-op"]),
    ("--timeout", ["probe", "--timeout", "inf", "--ops", "no-such-op"]),
    ("--seed", ["probe", "--seed", "-5", "--ops", "no-such-op"]),
    ("--runs", ["diverge", "--workload", "embedding", "--runs", "100000000000000000000", "--resume", "--overwrite"]),
    ("--momentum", ["diverge", "--workload", "embedding", "--momentum", "nan", "--resume", "--overwrite"]),
    ("--lr", ["diverge", "--workload", "embedding", "--lr", "0.1,1e308", "--resume", "--overwrite"]),
    ("--max-repeats", ["matrix", "--max-repeats", "1e20", "--resume", "--overwrite"]),
])
def test_out_of_bounds_is_one_line_and_exit_2(flag, argv):
    code, out, err = run_cli(*argv)
    assert code == USAGE, err
    errors = [line for line in err.splitlines() if "error:" in line]
    assert len(errors) == 1 and flag in errors[0] and ("must be" in errors[0] or "expected" in errors[0]), err
    assert "Traceback" not in err


@pytest.mark.parametrize("kind, good, bad", [
    (arguments.runs, {"1": 1, "10000": 10000, "1e3": 1000}, ["0", "10001", "2.5", "1e20", "x"]),
    (arguments.size, {"0.001": 0.001, "100": 100.0, "0.5": 0.5}, ["0", "1e308", "nan", "100.5"]),
    (arguments.timeout, {"0.1": 0.1, "604800": 604800.0}, ["0", "-1", "inf", "604801"]),
    (arguments.momentum, {"0": 0.0, "0.9": 0.9}, ["1", "-0.1", "nan"]),
    (arguments.seed, {"0": 0, "4294967295": 4294967295}, ["-1", "4294967296"]),
])
def test_bounds_take_their_ends_and_refuse_beyond(kind, good, bad):
    for text, value in good.items():
        assert kind(text) == value and type(kind(text)) is type(value)
    for text in bad:
        with pytest.raises(argparse.ArgumentTypeError, match="must be|expected"):
            kind(text)
