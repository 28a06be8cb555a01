"""What the commands share on their command lines: argparse types (a bad value
becomes a usage error, exit 2, shown with the subcommand's own usage), the flags
several commands take (--executor/--jobs/--scheduler, --out, --quiet), declared
here once, and loading the catalogue (a bad one is exit 3)."""

import argparse
import glob
import importlib.util
import math
import os

from .. import catalog
from .exitcodes import ENVIRONMENT, INVALID_INPUT, USAGE, CommandError


def tf_version(text):
    """A TensorFlow version such as 2.6 or 2.21.0; anything else is a usage error."""
    try:
        catalog.tf_minor(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


class Bounded(object):
    """An argparse type for a number between bounds that make sense for its flag:
    anything else (not a number, NaN, infinity, 1e308, negative, zero where a
    count is wanted) is a usage error naming the range. Every int or float flag
    of every command takes one (tests/cli/test_numeric_flags.py walks them)."""

    def __init__(self, kind, low, high, low_open=False, high_open=False):
        self.kind, self.low, self.high = kind, low, high
        self.low_open, self.high_open = low_open, high_open
        self.__name__ = kind.__name__  # what argparse names the type in its own messages

    def describe(self):
        return "%s %s and %s %s" % ("greater than" if self.low_open else "at least", _show(self.low),
                                    "less than" if self.high_open else "at most", _show(self.high))

    def __call__(self, text):
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError("expected %s, got %r" % (
                "a whole number" if self.kind is int else "a number", text)) from None
        if math.isnan(value) or math.isinf(value):
            raise argparse.ArgumentTypeError("expected a finite number, got %r" % text)
        if self.kind is int:
            try:
                value = int(text)
            except ValueError:  # 1e3 is a whole number; 2.5 is not
                if not value.is_integer():
                    raise argparse.ArgumentTypeError("expected a whole number, got %r" % text) from None
                value = int(value)
        too_low = value <= self.low if self.low_open else value < self.low
        too_high = value >= self.high if self.high_open else value > self.high
        if too_low or too_high:
            raise argparse.ArgumentTypeError("must be %s, got %s" % (self.describe(), text))
        return value


def _show(number):
    return "%d" % number if float(number).is_integer() and abs(number) < 1e15 else "%g" % number


DAY, WEEK = 86400.0, 7 * 86400.0

# Counts and sizes. The ceilings are far beyond any sensible run and keep a
# typo (1e20 runs, a 1e308 size) from starting something that cannot finish.
positive_int = Bounded(int, 1, 10 ** 6)  # a generic count
runs = Bounded(int, 1, 10000)  # trainings per cell, runs per process
max_repeats = Bounded(int, 1, 10 ** 6)
processes = Bounded(int, 1, 256)  # processes per probe mode
jobs = Bounded(int, 1, 1024)  # processes or Dask workers at once
threads = Bounded(int, 1, 4096)
rounds = Bounded(int, 1, 1000)
epochs = Bounded(int, 1, 10 ** 5)
batch_size = Bounded(int, 1, 10 ** 7)
steps = Bounded(int, 1, 10 ** 9)
max_bytes = Bounded(int, 1, 2 ** 50)  # a PiB
seed = Bounded(int, 0, 2 ** 32 - 1)  # what numpy.random.RandomState takes
# The probe's case sizes are about 1e5-1e6 elements times this: 1e-3 still gives
# every case an element, 100 is some 1e8 (gigabytes per array).
size = Bounded(float, 1e-3, 100.0)
timeout = Bounded(float, 0.0, WEEK, low_open=True)  # seconds
momentum = Bounded(float, 0.0, 1.0, high_open=True)  # SGD momentum: 1 or more diverges
learning_rate = Bounded(float, 0.0, 1000.0, low_open=True)
positive_float = Bounded(float, 0.0, 10.0 ** 6, low_open=True)  # a generic amount


def newest_or_new(args, patterns, new_name, missing):
    """--out; else, with --resume, the newest path here matching one of `patterns`
    (none: CommandError `missing`, exit USAGE); else `new_name`."""
    if args.out:
        return args.out
    if args.resume:
        found = sorted((path for pattern in patterns for path in glob.glob(pattern)), key=os.path.getmtime)
        if not found:
            raise CommandError(missing, USAGE)
        return found[-1]
    return new_name


def nothing_to_resume(what, path, hint):
    """The one line for --resume on a results file or directory that does not
    exist: nothing is started (a fresh full run in its place would be a surprise)."""
    return CommandError("--resume: %s %s does not exist; %s" % (what, path, hint), USAGE)


# -- flags several commands take, declared once ------------------------------------

# Every action the helpers below declare carries this attribute (its value: which
# helper), so a test can tell a shared flag from a hand-declared copy.
SHARED = "tfdet_shared"


def _shared(action, helper):
    setattr(action, SHARED, helper)
    return action


def add_executor(parser, jobs_help, jobs_default=1, executor_help=None, scheduler_help=None):
    """--executor (local or dask), --jobs N and --scheduler ADDRESS; check_executor(args)
    then refuses the combinations that cannot work."""
    from ..executor import EXECUTORS

    _shared(parser.add_argument(
        "--executor", choices=EXECUTORS, default="local",
        help=executor_help or "local: a process pool; dask: a Dask cluster (a LocalCluster without --scheduler)"),
        "executor")
    _shared(parser.add_argument("--jobs", type=jobs, default=jobs_default, metavar="N", help=jobs_help), "executor")
    _shared(parser.add_argument("--scheduler", metavar="ADDRESS",
                                help=scheduler_help or "the Dask scheduler, e.g. tcp://host:8786"), "executor")


def check_executor(args):
    """--scheduler without --executor dask is a usage error (exit 2); --executor dask
    without dask.distributed installed an environment one (exit 4)."""
    if args.scheduler and args.executor != "dask":
        raise CommandError("--scheduler needs --executor dask", USAGE)
    if args.executor == "dask" and importlib.util.find_spec("distributed") is None:
        raise CommandError("--executor dask needs dask.distributed: pip install 'tfdet[dask]'", ENVIRONMENT)


def add_output_file(parser, help, default=None, metavar="FILE"):
    """--out: where a command writes its results (a file, or a directory with metavar DIR)."""
    return _shared(parser.add_argument("--out", default=default, metavar=metavar, help=help), "output")


def add_quiet(parser, help="no progress on stderr"):
    """--quiet: no progress (and, where a command says so, no summary)."""
    return _shared(parser.add_argument("--quiet", action="store_true", help=help), "quiet")


def load_catalogue_or_exit(path=None):
    """The shipped catalogue, or the user's file or directory at `path`; one that
    does not load is one line and exit 3 (invalid input), for every command alike."""
    try:
        return catalog.load_user_catalogue(path) if path else catalog.default_catalogue()
    except catalog.CatalogError as exc:
        raise CommandError(str(exc), INVALID_INPUT) from None
