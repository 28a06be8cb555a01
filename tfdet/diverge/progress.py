"""Progress of a diverge run: a rich bar (done/total, time left) on a
terminal, a plain line per training otherwise, nothing when quiet."""

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
        if not self.quiet:
            self.stream.write("tfdet diverge: %s\n" % text)
            self.stream.flush()

    def start(self, total, already_done, where):
        self.total, self.started = total, time.monotonic()
        note = " (%d already in the results file)" % already_done if already_done else ""
        self.message("%d training%s to run on %s%s" % (total, "" if total == 1 else "s", where, note))
        if self.tty and not self.quiet and total:
            from ..executor.bar import start_bar

            self._bar, self._task = start_bar(self.stream, "training", total)

    def finished(self, training, record):
        self.done += 1
        if self.quiet:
            return
        what = "%s lr=%g %s %s #%d: %s" % (training.workload, training.lr, training.condition, training.mode,
                                           training.run, record.outcome)
        if record.outcome != "ok":
            what += " (%s)" % record.error
        if self._bar is not None:
            self._bar.advance(self._task)
            self._bar.update(self._task, description=what if record.outcome == "ok" else "training")
            if record.outcome != "ok":
                self._bar.console.print(what, markup=False)
            return
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done)
        self.stream.write("[%d/%d] %s (%.0f s, ~%.0f s left)\n" % (self.done, self.total, what, elapsed, left))
        self.stream.flush()

    def close(self):
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
