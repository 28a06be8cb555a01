"""The `tfdet` command line: the parser of every command, and the mapping of
outcomes to the exit codes in tfdet.cli.exitcodes. Entered through
tfdet.cli.main, which makes Ctrl-C during these imports a quiet exit 130."""

import argparse
import difflib
import os
import re
import signal
import sys
import textwrap

from .. import __version__
from . import catalog_cmd, compare_cmd, diverge_cmd, locate_cmd, matrix_cmd, probe_cmd, report_cmd, scan_cmd, status_cmd
from .exitcodes import BROKEN_PIPE, INTERRUPTED, USAGE, CommandError

COMMANDS = (probe_cmd, catalog_cmd, report_cmd, status_cmd, scan_cmd, locate_cmd, diverge_cmd, compare_cmd,
            matrix_cmd)

# The list of commands in --help is built from the parsers the COMMANDS
# register (each module's HELP), so a new command module is listed by itself.
DESCRIPTION = """\
Find, measure and fix nondeterminism in TensorFlow.

%s

Exit codes: 0 ok, 1 a requested gate failed, 2 usage error, 3 invalid input
(bad catalogue, unknown op, bad results file), 4 environment problem,
5 output could not be written (disk full, permission, read-only),
130 interrupted, 141 the output pipe was closed (e.g. by head).
"""


class _UsageError(Exception):
    """A usage error, raised instead of exiting so main() reports it to its err stream."""

    def __init__(self, parser, message):
        super().__init__(message)
        self.parser = parser


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise _UsageError(self, message + _choice_hint(self, message))


def _choice_hint(parser, message):
    """'; did you mean list?' for an invalid choice close to a valid one."""
    match = re.search(r"invalid choice: '([^']*)'", message)
    if not match:
        return ""
    choices = [str(c) for action in parser._actions for c in (action.choices or ())]
    close = difflib.get_close_matches(match.group(1), choices, n=1)
    return "; did you mean %s?" % close[0] if close else ""


def _flag_hint(parser, extras):
    """'; did you mean --tf-version?' for the first unknown flag close to a real one."""
    flags = [flag for action in parser._actions for flag in action.option_strings]
    for extra in extras:
        close = difflib.get_close_matches(extra.split("=", 1)[0], flags, n=1) if extra.startswith("-") else []
        if close:
            return "; did you mean %s?" % close[0]
    return ""


def _subcommands(parser):
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _chosen(parser, args):
    """The deepest (sub)command parser the arguments selected: its usage is the one to show."""
    action = _subcommands(parser)
    while action is not None and getattr(args, action.dest, None) in action.choices:
        parser = action.choices[getattr(args, action.dest)]
        action = _subcommands(parser)
    return parser


def _command_lines(parser):
    """('tfdet catalog diff OLD_VERSION NEW_VERSION', help) for every (sub)command."""
    action = _subcommands(parser)
    if action is None:
        return []
    lines = []
    for choice in action._choices_actions:
        sub = action.choices[choice.dest]
        nested = _command_lines(sub)
        if nested:
            lines.extend(nested)
            continue
        operands = [_operand(a) for a in sub._actions if not a.option_strings
                    and not isinstance(a, argparse._SubParsersAction)]
        lines.append((" ".join([sub.prog] + operands), choice.help or ""))
    return lines


def _operand(action):
    name = action.metavar or action.dest
    return "[%s]" % name if action.nargs == "?" else name + "..." if action.nargs in ("+", "*") else name


def _command_list(lines, width=79, column=28):
    """Usage and help side by side, the help wrapped; a long usage puts its help below it."""
    text = []
    for usage, help_text in lines:
        wrapped = textwrap.wrap(help_text, width - column - 4) or [""]
        if len(usage) > column:
            text.append("  " + usage)
        else:
            text.append("  %-*s  %s" % (column, usage, wrapped.pop(0)))
        text.extend(" " * (column + 4) + more for more in wrapped)
    return "\n".join(text)


def build_parser():
    parser = _Parser(prog="tfdet", formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version="tfdet " + __version__)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        command.add_parser(commands)
    parser.description = DESCRIPTION % _command_list(_command_lines(parser))
    return parser


def run_main(argv=None, out=None, err=None):
    out = out or sys.stdout
    err = err or sys.stderr
    _ignore_file_size_signal()
    try:
        return _run(argv, out, err)
    except BrokenPipeError:  # e.g. `tfdet catalog list --json | head`: the reader has all it wants
        _quiet_stdout(out)
        return BROKEN_PIPE


def _ignore_file_size_signal():
    """A write past the file-size limit then fails with EFBIG, which the command
    reports (exit 5), instead of SIGXFSZ killing the process with a core dump."""
    try:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    except (AttributeError, ValueError):  # no such signal here, or not the main thread
        pass


def _run(argv, out, err):
    parser = build_parser()
    try:
        args, extras = parser.parse_known_args(argv)
        if extras:  # reported here, by the subcommand that was chosen, not by the top level
            chosen = _chosen(parser, args)
            chosen.error("unrecognized arguments: %s%s" % (" ".join(extras), _flag_hint(chosen, extras)))
    except _UsageError as exc:
        exc.parser.print_usage(err)
        err.write("%s: error: %s\n" % (exc.parser.prog, exc))
        return USAGE
    if not getattr(args, "run", None):
        parser.print_help(out)
        return USAGE
    args.err = err  # for warnings that must not mix with the command's output
    try:
        code = args.run(args, out)
        out.flush()  # a closed pipe shows here, inside the handler, not at interpreter exit
        return code
    except CommandError as exc:
        err.write("tfdet: error: %s\n" % exc)
        return exc.code
    except KeyboardInterrupt:
        err.write("tfdet: interrupted\n")
        return INTERRUPTED


def _quiet_stdout(out):
    """Point stdout at /dev/null so Python's final flush does not complain about the pipe."""
    if out is sys.stdout:
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
