"""The `tfdet` command line. Thin: parse arguments, call the library, map
outcomes to the exit codes in tfdet.cli.exitcodes."""

import argparse
import sys

from .. import __version__
from . import catalog_cmd, probe_cmd, report_cmd
from .exitcodes import INTERRUPTED, USAGE, CommandError

COMMANDS = (probe_cmd, catalog_cmd, report_cmd)

DESCRIPTION = """\
Find, measure and fix nondeterminism in TensorFlow.

  tfdet probe                   measure what varies on this machine, and the cost
  tfdet catalog list            ops known to vary in your TF version
  tfdet catalog show NAME       everything known about one op or API
  tfdet report RESULTS -o FILE  an HTML page of probe results, checked against the catalogue

Exit codes: 0 ok, 1 a requested gate failed, 2 usage error, 3 invalid input
(bad catalogue, unknown op, bad results file), 4 environment problem,
130 interrupted.
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        self.exit(USAGE, "%s: error: %s\n" % (self.prog, message))


def build_parser():
    parser = _Parser(prog="tfdet", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version="tfdet " + __version__)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for command in COMMANDS:
        command.add_parser(commands)
    return parser


def main(argv=None, out=None, err=None):
    out = out or sys.stdout
    err = err or sys.stderr
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "run", None):
        parser.print_help(out)
        return USAGE
    try:
        return args.run(args, out)
    except CommandError as exc:
        err.write("tfdet: error: %s\n" % exc)
        return exc.code
    except KeyboardInterrupt:
        err.write("tfdet: interrupted\n")
        return INTERRUPTED
