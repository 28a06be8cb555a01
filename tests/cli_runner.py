"""Run the tfdet command line in-process and capture what it says."""

import io

from tfdet.cli import main


def run_cli(*argv):
    """(exit code, stdout, stderr) of `tfdet ARGV...`; argparse's exits included."""
    out, err = io.StringIO(), io.StringIO()
    try:
        code = main(list(argv), out=out, err=err)
    except SystemExit as exc:  # argparse exits on usage errors
        code = exc.code
    return code, out.getvalue(), err.getvalue()
