"""argparse types shared by the commands: a bad value becomes a usage error
(exit 2) shown with the subcommand's own usage."""

import argparse
import math

from .. import catalog


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


def nothing_to_resume(what, path, hint):
    """The one line for --resume on a results file or directory that does not
    exist: nothing is started (a fresh full run in its place would be a surprise)."""
    from .exitcodes import USAGE, CommandError

    return CommandError("--resume: %s %s does not exist; %s" % (what, path, hint), USAGE)
