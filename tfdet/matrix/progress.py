"""Progress of a matrix run: a rich bar (versions done/total) on a terminal, a
plain line per version otherwise, nothing when quiet."""

import sys
import time


class Progress(object):
    def __init__(self, stream=None, quiet=False, tty=None):
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = self.stream.isatty() if tty is None else tty
        self.total = self.done = 0
        self.started = time.monotonic()
        self._bar = self._task = None

    def message(self, text):
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.console.print("tfdet matrix: " + text, markup=False)
        else:
            self.stream.write("tfdet matrix: %s\n" % text)
            self.stream.flush()

    def start(self, total, skipped, where):
        self.total, self.started = total, time.monotonic()
        note = " (%d already complete, kept)" % skipped if skipped else ""
        self.message("%d TF version%s to do on %s%s" % (total, "" if total == 1 else "s", where, note))
        if self.tty and not self.quiet and total:
            from ..executor.bar import start_bar

            self._bar, self._task = start_bar(self.stream, "TF versions", total, time_left=False)

    def finished(self, tf, line):
        self.done += 1
        if self.quiet:
            return
        if self._bar is not None:
            self._bar.advance(self._task)
            self._bar.console.print("TF %s: %s" % (tf, line), markup=False)
            return
        self.stream.write("[%d/%d] TF %s: %s (%.0f s)\n" % (self.done, self.total, tf, line,
                                                           time.monotonic() - self.started))
        self.stream.flush()

    def close(self):
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
